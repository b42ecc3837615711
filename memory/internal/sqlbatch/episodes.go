package sqlbatch

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/contextd/contextd/memory"
)

// PrepareEpisodes checks that eps continue a chat whose last closed episode
// ends at expectTo and whose last seq is lastSeq — in seq order,
// contiguous, within 1..lastSeq — and fills ID (when empty), Turns,
// CreatedAt and microsecond UTC times, as every store keeps them. It
// returns each episode's summary JSON. Errors wrap memory.ErrConflict.
func PrepareEpisodes(expectTo, lastSeq int64, eps []memory.Episode, now time.Time) ([][]byte, error) {
	out := make([][]byte, len(eps))
	next := expectTo + 1
	for i := range eps {
		e := &eps[i]
		if e.FromSeq != next || e.ToSeq < e.FromSeq || e.ToSeq > lastSeq {
			return nil, fmt.Errorf("episode %d..%d does not continue at %d within last_seq %d: %w", e.FromSeq, e.ToSeq, next, lastSeq, memory.ErrConflict)
		}
		next = e.ToSeq + 1
		for _, s := range []string{e.ID, e.Short, e.Model, e.PromptVersion} {
			if err := CheckText(s); err != nil {
				return nil, fmt.Errorf("episode %d..%d: %w: %w", e.FromSeq, e.ToSeq, err, memory.ErrConflict)
			}
		}
		if e.ID == "" {
			e.ID = NewID()
		}
		e.Turns = int(e.ToSeq - e.FromSeq + 1)
		e.CreatedAt = now.UTC().Truncate(time.Microsecond)
		e.StartedAt = e.StartedAt.UTC().Truncate(time.Microsecond)
		e.EndedAt = e.EndedAt.UTC().Truncate(time.Microsecond)
		e.Summary.UpdatedAt = e.Summary.UpdatedAt.UTC()
		e.Summary.Normalize()
		js, err := json.Marshal(e.Summary)
		if err != nil {
			return nil, fmt.Errorf("episode %d..%d: encode summary: %w", e.FromSeq, e.ToSeq, err)
		}
		if HasEscapedNUL(js) {
			return nil, fmt.Errorf("episode %d..%d: summary contains a NUL character: %w", e.FromSeq, e.ToSeq, memory.ErrConflict)
		}
		out[i] = js
	}
	return out, nil
}
