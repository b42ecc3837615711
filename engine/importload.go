package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/contextd/contextd/memory"
)

// loader loads checked dump records, leaving out what cites a deleted
// turn: the store's tombstones are the truth, whatever the dump says (a
// dump taken before a delete still holds the turn's facts and summaries).
// A summary, episode or profile item over a turn the dump itself shows
// deleted is the source's rebuild, made without the turn (an export leaves
// out what waits for one), and is kept; a fact citing a deleted turn never
// is.
type loader struct {
	s   *Transfer
	res ImportResult
	// tombs caches each chat's tombstoned seqs, ascending; a loaded
	// message drops its chat's entry.
	tombs map[memory.ChatKey][]int64
	// dumped: the seqs the dump itself shows deleted, by chat.
	dumped map[memory.ChatKey]map[int64]bool
	// chainCut: chats whose summary chain lost a record; the records after
	// it cannot continue the chain and go too.
	chainCut map[memory.ChatKey]bool
}

func newLoader(s *Transfer) *loader {
	return &loader{s: s, tombs: map[memory.ChatKey][]int64{}, dumped: map[memory.ChatKey]map[int64]bool{},
		chainCut: map[memory.ChatKey]bool{}}
}

func (l *loader) load(ctx context.Context, rec memory.DumpRecord) error {
	keep, err := l.keep(ctx, rec)
	if err != nil || !keep {
		return err
	}
	added, err := l.s.dumper.Load(ctx, rec)
	if err != nil {
		return err
	}
	if rec.Type == memory.DumpMessage {
		key := memory.ChatKey{Tenant: rec.Tenant, ChatID: rec.ChatID}
		delete(l.tombs, key)
		if rec.Message.Deleted {
			if l.dumped[key] == nil {
				l.dumped[key] = map[int64]bool{}
			}
			l.dumped[key][rec.Message.Seq] = true
		}
	}
	if added {
		l.res.Added++
	} else {
		l.res.Present++
	}
	return nil
}

// keep drops (and counts) a record citing a deleted turn; an episode over
// one is kept marked for rebuild (the worker summarises it again without
// the turn; until then no read serves its summaries), and a profile loses
// the items sourced from one.
func (l *loader) keep(ctx context.Context, rec memory.DumpRecord) (bool, error) {
	key := memory.ChatKey{Tenant: rec.Tenant, ChatID: rec.ChatID}
	switch rec.Type {
	case memory.DumpSummaryRecord:
		r := rec.Summary
		cut, err := l.covers(ctx, key, r.CoveredFromSeq, r.CoveredToSeq, false)
		if err != nil {
			return false, err
		}
		if cut || l.chainCut[key] {
			l.chainCut[key] = true
			l.res.Dropped++
			return false, nil
		}
	case memory.DumpEpisode:
		e := rec.Episode
		over, err := l.covers(ctx, key, e.FromSeq, e.ToSeq, false)
		if err != nil {
			return false, err
		}
		if over && !e.Rebuild {
			e.Rebuild = true
			l.res.Rebuild++
		}
	case memory.DumpFact:
		for _, q := range rec.Fact.Seqs {
			if dead, err := l.covers(ctx, key, q, q, true); err != nil || dead {
				if dead {
					l.res.Dropped++
				}
				return false, err
			}
		}
	case memory.DumpProfile:
		return true, l.pruneProfile(ctx, rec.Tenant, rec.Profile)
	}
	return true, nil
}

// pruneProfile removes the items sourced from a deleted turn.
func (l *loader) pruneProfile(ctx context.Context, tenant string, st *memory.ProfileState) error {
	var ferr error
	gone := st.WithoutSources(func(src memory.Source) bool {
		dead, err := l.covers(ctx, memory.ChatKey{Tenant: tenant, ChatID: src.ChatID}, src.FromSeq, src.ToSeq, false)
		if err != nil && ferr == nil {
			ferr = err
		}
		return dead
	})
	l.res.Dropped += len(gone)
	return ferr
}

// covers reports whether the chat holds a tombstone in from..to (a chat
// not stored has none); unless strict, one the dump shows deleted too is
// no matter.
func (l *loader) covers(ctx context.Context, key memory.ChatKey, from, to int64, strict bool) (bool, error) {
	tombs, ok := l.tombs[key]
	if !ok {
		var err error
		if tombs, err = l.tombstones(ctx, key); err != nil {
			return false, err
		}
		l.tombs[key] = tombs
	}
	i, _ := slices.BinarySearch(tombs, from)
	for ; i < len(tombs) && tombs[i] <= to; i++ {
		if strict || !l.dumped[key][tombs[i]] {
			return true, nil
		}
	}
	return false, nil
}

// tombstones reads the chat's tombstoned seqs.
func (l *loader) tombstones(ctx context.Context, key memory.ChatKey) ([]int64, error) {
	out := []int64{}
	for after := int64(0); ; {
		msgs, err := l.s.store.Messages(ctx, key, after, 1000)
		if errors.Is(err, memory.ErrNotFound) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read the chat's tombstones: %w", err)
		}
		for _, m := range msgs {
			if m.Deleted {
				out = append(out, m.Seq)
			}
		}
		if len(msgs) < 1000 {
			return out, nil
		}
		after = msgs[len(msgs)-1].Seq
	}
}
