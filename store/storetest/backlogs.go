package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/contextd/contextd/memory"
)

// The backlogs of derived work (memory.Backlogs) are one role taking a
// kind; these helpers say in a word what a kind's old method said, so the
// kinds' tests read as they did.

// pendingChats lists the chats with work of kind.
func pendingChats(ctx context.Context, b memory.Backlogs, kind memory.WorkKind, limit int) ([]memory.Chat, error) {
	ps, err := b.Pending(ctx, kind, limit)
	if err != nil {
		return nil, err
	}
	out := make([]memory.Chat, len(ps))
	for i, p := range ps {
		out[i] = p.Chat
	}
	return out, nil
}

// doneIDs marks items of one chat indexed: ErrNotFound when Done reports
// the chat gone.
func doneIDs(ctx context.Context, b memory.Backlogs, kind memory.WorkKind, key memory.ChatKey, ids []string) error {
	gone, err := b.Done(ctx, kind, []memory.Mark{{Chat: key, IDs: ids}})
	if err != nil {
		return err
	}
	if slices.Contains(gone, key) {
		return fmt.Errorf("chat %s/%s: %w", key.Tenant, key.ChatID, memory.ErrNotFound)
	}
	if len(gone) != 0 {
		return fmt.Errorf("done %s of %v: gone %v", kind, key, gone)
	}
	return nil
}

// drawn moves facts cursors (DrawFacts), which reports no chat gone.
func drawn(ctx context.Context, b memory.Backlogs, marks []memory.Mark) error {
	gone, err := b.Done(ctx, memory.DrawFacts, marks)
	if err == nil && len(gone) != 0 {
		err = fmt.Errorf("done draw_facts: gone %v, want none", gone)
	}
	return err
}

// merged records the chat's summary merged up to seq (MergeProfile).
func merged(ctx context.Context, b memory.Backlogs, key memory.ChatKey, seq int64) error {
	_, err := b.Done(ctx, memory.MergeProfile, []memory.Mark{{Chat: key, ToSeq: seq}})
	return err
}

// remerge makes the chat's summary profile work again (ToSeq 0).
func remerge(ctx context.Context, b memory.Backlogs, key memory.ChatKey) error {
	return merged(ctx, b, key, 0)
}

// forgetDone drops the Deletion row of the chat's seq (SweepDeletions).
func forgetDone(ctx context.Context, b memory.Backlogs, key memory.ChatKey, seq int64) error {
	_, err := b.Done(ctx, memory.SweepDeletions, []memory.Mark{{Chat: key, Seqs: []int64{seq}}})
	return err
}

// testBacklogKinds: every kind is listed, marked and (index kinds) reset
// through the one role; a kind the store does not keep, or Reset of a
// kind that is not indexed, is ErrUnknownWork; no marks is no write and
// no error; an index kind's item marks of an unknown chat report it gone.
func testBacklogKinds(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	for _, k := range memory.WorkKinds {
		if l, err := s.Pending(ctx, k, 0); err != nil || l == nil || len(l) != 0 {
			t.Errorf("Pending(%s) on an empty store = %v, %v", k, l, err)
		}
		if gone, err := s.Done(ctx, k, nil); err != nil || len(gone) != 0 {
			t.Errorf("Done(%s, nil) = %v, %v", k, gone, err)
		}
		err := s.Reset(ctx, k)
		if k.Indexed() && err != nil {
			t.Errorf("Reset(%s) = %v", k, err)
		}
		if !k.Indexed() && !errors.Is(err, memory.ErrUnknownWork) {
			t.Errorf("Reset(%s) = %v, want ErrUnknownWork", k, err)
		}
	}
	bogus := memory.WorkKind("bogus")
	if _, err := s.Pending(ctx, bogus, 0); !errors.Is(err, memory.ErrUnknownWork) {
		t.Errorf("Pending(bogus) = %v, want ErrUnknownWork", err)
	}
	if _, err := s.Done(ctx, bogus, []memory.Mark{{Chat: key("t1", "c")}}); !errors.Is(err, memory.ErrUnknownWork) {
		t.Errorf("Done(bogus) = %v, want ErrUnknownWork", err)
	}
	unknown := key("t1", "nope")
	for _, k := range memory.IndexKinds {
		gone, err := s.Done(ctx, k, []memory.Mark{{Chat: unknown, IDs: []string{"x"}, Seqs: []int64{1}}})
		if err != nil || len(gone) != 1 || gone[0] != unknown {
			t.Errorf("Done(%s) of an unknown chat = gone %v, %v; want it gone", k, gone, err)
		}
	}
	for _, k := range slices.DeleteFunc(slices.Clone(memory.WorkKinds), memory.WorkKind.Indexed) {
		if gone, err := s.Done(ctx, k, []memory.Mark{{Chat: unknown, Seqs: []int64{1}, ToSeq: 1}}); err != nil || len(gone) != 0 {
			t.Errorf("Done(%s) of an unknown chat = gone %v, %v; want it skipped", k, gone, err)
		}
	}
}
