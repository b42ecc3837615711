package sqlbatch

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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

// PrepareFacts checks and normalises the facts of an episode of chat
// (tenant, chatID) whose last seq is lastSeq, as every store keeps them:
// ChatID and EpisodeID set, Seqs sorted and de-duplicated, ID computed with
// memory.FactID when empty, Kind "other" when empty, microsecond UTC times
// (CreatedAt now when zero). A fact without text or seqs, with a seq
// outside 1..lastSeq, or with text a SQL store cannot hold is an error
// wrapping memory.ErrConflict.
func PrepareFacts(tenant, chatID, episodeID string, lastSeq int64, facts []memory.Fact, now time.Time) ([]memory.Fact, error) {
	out := make([]memory.Fact, 0, len(facts))
	for i, f := range facts {
		f.Seqs = slices.Compact(slices.Sorted(slices.Values(f.Seqs)))
		if strings.TrimSpace(f.Text) == "" || len(f.Seqs) == 0 {
			return nil, fmt.Errorf("fact %d: empty text or no seqs: %w", i, memory.ErrConflict)
		}
		if f.Seqs[0] < 1 || f.Seqs[len(f.Seqs)-1] > lastSeq {
			return nil, fmt.Errorf("fact %d: seqs %v outside 1..%d: %w", i, f.Seqs, lastSeq, memory.ErrConflict)
		}
		for _, s := range []string{f.ID, f.Text, f.Kind, f.Source, f.SupersededBy, episodeID} {
			if err := CheckText(s); err != nil {
				return nil, fmt.Errorf("fact %d: %w: %w", i, err, memory.ErrConflict)
			}
		}
		f.ChatID, f.EpisodeID = chatID, episodeID
		if f.ID == "" {
			f.ID = memory.FactID(tenant, chatID, f.Seqs, f.Text)
		}
		if f.Kind == "" {
			f.Kind = memory.FactOther
		}
		if f.CreatedAt.IsZero() {
			f.CreatedAt = now
		}
		f.CreatedAt = f.CreatedAt.UTC().Truncate(time.Microsecond)
		f.ValidAt = f.ValidAt.UTC().Truncate(time.Microsecond)
		out = append(out, f)
	}
	return out, nil
}

// WithoutSeqs drops the facts citing any of the seqs (deleted turns).
func WithoutSeqs(facts []memory.Fact, gone map[int64]bool) []memory.Fact {
	if len(gone) == 0 {
		return facts
	}
	return slices.DeleteFunc(facts, func(f memory.Fact) bool {
		return slices.ContainsFunc(f.Seqs, func(s int64) bool { return gone[s] })
	})
}

// PrepareRebuild checks a rebuilt episode's summaries as PrepareEpisodes
// does and returns its summary JSON.
func PrepareRebuild(e *memory.Episode) ([]byte, error) {
	for _, s := range []string{e.ID, e.Short, e.Model, e.PromptVersion} {
		if err := CheckText(s); err != nil {
			return nil, fmt.Errorf("episode %s: %w: %w", e.ID, err, memory.ErrConflict)
		}
	}
	e.Summary.UpdatedAt = e.Summary.UpdatedAt.UTC()
	e.Summary.Normalize()
	js, err := json.Marshal(e.Summary)
	if err != nil {
		return nil, fmt.Errorf("episode %s: encode summary: %w", e.ID, err)
	}
	if HasEscapedNUL(js) {
		return nil, fmt.Errorf("episode %s: summary contains a NUL character: %w", e.ID, memory.ErrConflict)
	}
	return js, nil
}

// FirstSeq is the smallest seq of a set of seqs (0 when it is empty).
func FirstSeq(seqs map[int64]bool) int64 {
	var first int64
	for q := range seqs {
		if first == 0 || q < first {
			first = q
		}
	}
	return first
}
