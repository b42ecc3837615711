package engine

import (
	"time"

	"github.com/contextd/contextd/memory"
)

// timeRange is a request's since/until: retrieval keeps only turns and
// episodes in that range, inside the index query (never after top-k). It
// never touches the recent window.
type timeRange struct {
	since, until time.Time
}

// parseTimeRange validates since/until (RFC 3339, either may be empty).
func parseTimeRange(since, until string) (timeRange, error) {
	var r timeRange
	var err error
	if since != "" {
		if r.since, err = time.Parse(time.RFC3339, since); err != nil {
			return r, invalid("since", "invalid_time", "%q is not an RFC 3339 time (e.g. 2024-05-08T00:00:00Z)", truncateForError(since))
		}
	}
	if until != "" {
		if r.until, err = time.Parse(time.RFC3339, until); err != nil {
			return r, invalid("until", "invalid_time", "%q is not an RFC 3339 time (e.g. 2024-05-08T23:59:59Z)", truncateForError(until))
		}
	}
	if !r.since.IsZero() && !r.until.IsZero() && r.since.After(r.until) {
		return r, invalid("since", "invalid_value", "since (%s) is after until (%s)", since, until)
	}
	return r, nil
}

// parseKinds validates search kinds: any of turn, episode (empty: both).
func parseKinds(kinds []string) error {
	for _, k := range kinds {
		if k != memory.KindTurn && k != memory.KindEpisode && k != memory.KindFact {
			return invalid("kinds", "invalid_value", "%q is not one of turn, episode, fact", truncateForError(k))
		}
	}
	return nil
}
