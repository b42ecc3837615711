package storetest

// Rebuilding only what a deleted message touched (issue 40): the chat
// keeps the smallest seq deleted since its summary was clean, CleanSummary
// finds the last record before it, a rebuild write keeps the chain up to
// that record and writes the rest anew.

import (
	"errors"
	"strconv"
	"testing"

	"github.com/contextd/contextd/memory"
)

// chainChat appends 40 turns and a chain of records each adding 10 (to 10,
// 20, 30, 40) and returns their ids, oldest first.
func chainChat(t *testing.T, s memory.Backend, k memory.ChatKey) []string {
	t.Helper()
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("c", 40)})
	var ids []string
	for to := int64(10); to <= 40; to += 10 {
		rec, err := memory.AppendSummary(ctxT(t), s, k, to-10, memory.SummaryRecord{Summary: sampleSummary(1, to, "to "+itoa(to)), FromSeq: to - 9, ToSeq: to})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.ID)
	}
	return ids
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// cleanID is CleanSummary's record id ("" for none).
func cleanID(t *testing.T, s memory.Backend, k memory.ChatKey) string {
	t.Helper()
	rec, err := s.CleanSummary(ctxT(t), k)
	if err != nil {
		t.Fatal(err)
	}
	if rec == nil {
		return ""
	}
	return rec.ID
}

// testCleanSummary: the head while clean; while dirty, the last record
// ending before the smallest seq deleted since, however the deletions
// came (in order, out of order, one found by a summary extension).
func testCleanSummary(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	k := key("t1", "clean")
	ids := chainChat(t, s, k)
	if got := cleanID(t, s, k); got != ids[3] {
		t.Errorf("clean chat: %q, want the head %q", got, ids[3])
	}
	del := func(seq int) {
		t.Helper()
		if _, err := s.DeleteMessage(ctx, k, "c-"+itoa(int64(seq))); err != nil {
			t.Fatal(err)
		}
	}
	del(35) // in the head's stretch
	if got := cleanID(t, s, k); got != ids[2] {
		t.Errorf("after deleting 35: %q, want the record to 30 %q", got, ids[2])
	}
	del(38) // later: the smallest stays
	if got := cleanID(t, s, k); got != ids[2] {
		t.Errorf("after deleting 38: %q, want the record to 30 %q", got, ids[2])
	}
	del(20) // the last seq of the record to 20: it holds it
	if got := cleanID(t, s, k); got != ids[0] {
		t.Errorf("after deleting 20: %q, want the record to 10 %q", got, ids[0])
	}
	del(3)
	if got := cleanID(t, s, k); got != "" {
		t.Errorf("after deleting 3: %q, want none", got)
	}
	// A record that names no turns of its own is judged by its coverage.
	k0 := key("t1", "clean-unnamed")
	mustAppend(t, s, memory.AppendRequest{Chat: k0, Messages: turns("u", 20)})
	if _, err := memory.AppendSummary(ctx, s, k0, 0, memory.SummaryRecord{Summary: sampleSummary(1, 20, "all")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteMessage(ctx, k0, "u-5"); err != nil {
		t.Fatal(err)
	}
	if got := cleanID(t, s, k0); got != "" {
		t.Errorf("a record covering 1..20 without from_seq..to_seq, 5 deleted: %q, want none", got)
	}
	if _, err := s.CleanSummary(ctx, key("t1", "nope")); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("unknown chat: %v, want ErrNotFound", err)
	}

	// Once clean, a deletion past the cursor leaves the whole chain clean;
	// a record written over a turn deleted meanwhile is not.
	c := mustChat(t, s, k)
	if err := rebuildSummary(ctx, s, k, 40, c.DirtyMark, "", []memory.SummaryRecord{{Summary: sampleSummary(1, 40, "rebuilt"), FromSeq: 1, ToSeq: 40}}); err != nil {
		t.Fatal(err)
	}
	head, _ := s.SummaryHead(ctx, k)
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("d", 5)})
	if _, err := s.DeleteMessage(ctx, k, "d-3"); err != nil { // seq 43
		t.Fatal(err)
	}
	if got := cleanID(t, s, k); got != head.ID {
		t.Errorf("deleted past the cursor: %q, want the head %q", got, head.ID)
	}
	c = mustChat(t, s, k)
	if err := rebuildSummary(ctx, s, k, 40, c.DirtyMark, head.ID, nil); err != nil {
		t.Fatal(err)
	}
	if c := mustChat(t, s, k); c.SummaryDirty {
		t.Fatalf("chat %+v still dirty", c)
	}
	ext, err := memory.AppendSummary(ctx, s, k, 40, memory.SummaryRecord{Summary: sampleSummary(1, 45, "read 43"), FromSeq: 41, ToSeq: 45})
	if err != nil {
		t.Fatal(err)
	}
	if c := mustChat(t, s, k); !c.SummaryDirty {
		t.Fatalf("a record over a tombstone left the chat clean: %+v", c)
	}
	if got := cleanID(t, s, k); got != head.ID || got == ext.ID {
		t.Errorf("record over the tombstone 43: clean %q, want %q", got, head.ID)
	}
}

// testRebuildSummary: the records up to keep stay, the newer ones go, the
// new ones chain on keep; the cursor and keep are checked; the mark is
// cleared unless a message was deleted meanwhile.
func testRebuildSummary(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	k := key("t1", "rebuild")
	ids := chainChat(t, s, k)
	if _, err := s.DeleteMessage(ctx, k, "c-25"); err != nil {
		t.Fatal(err)
	}
	c := mustChat(t, s, k)
	recs := []memory.SummaryRecord{
		{Summary: sampleSummary(1, 30, "again to 30"), FromSeq: 21, ToSeq: 30},
		{Summary: sampleSummary(1, 40, "again to 40"), FromSeq: 31, ToSeq: 40},
	}
	for _, tc := range []struct {
		name   string
		cursor int64
		keep   string
		recs   []memory.SummaryRecord
		want   error
	}{
		{"stale cursor", 30, ids[1], recs, memory.ErrCursorMoved},
		{"unknown record", 40, "00000000-0000-0000-0000-000000000000", recs, memory.ErrConflict},
		{"nothing written on a record not the head", 40, ids[1], nil, memory.ErrConflict},
		{"short of the cursor", 40, ids[1], recs[:1], memory.ErrConflict},
		{"out of order", 40, ids[1], []memory.SummaryRecord{recs[1], recs[0]}, memory.ErrConflict},
		{"an empty chain cannot cover to the cursor", 40, "", nil, memory.ErrConflict},
	} {
		if err := rebuildSummary(ctx, s, k, tc.cursor, c.DirtyMark, tc.keep, tc.recs); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if err := rebuildSummary(ctx, s, key("t1", "nope"), 0, 0, "", nil); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("unknown chat: %v, want ErrNotFound", err)
	}
	if _, err := s.DeleteMessage(ctx, k, "c-33"); err != nil { // meanwhile
		t.Fatal(err)
	}
	if err := rebuildSummary(ctx, s, k, 40, c.DirtyMark, ids[1], recs); err != nil {
		t.Fatal(err)
	}
	chain, err := s.SummaryChain(ctx, k)
	if err != nil || len(chain) != 4 {
		t.Fatalf("chain %+v, %v", chain, err)
	}
	if chain[3].ID != ids[0] || chain[2].ID != ids[1] || chain[1].Narrative != "again to 30" || chain[0].Narrative != "again to 40" {
		t.Errorf("chain %v %v %v %v", chain[3].Narrative, chain[2].Narrative, chain[1].Narrative, chain[0].Narrative)
	}
	if chain[1].ParentID == nil || *chain[1].ParentID != ids[1] || chain[1].Depth != 2 ||
		chain[0].ParentID == nil || *chain[0].ParentID != chain[1].ID || chain[0].Depth != 3 {
		t.Errorf("new records not chained on the kept one: %+v", chain[:2])
	}
	if head, _ := s.SummaryHead(ctx, k); head == nil || head.ID != chain[0].ID {
		t.Errorf("head %+v, want the last new record", head)
	}
	again := mustChat(t, s, k)
	if !again.SummaryDirty || again.SummaryCursor != 40 {
		t.Fatalf("after a rebuild that missed a delete: %+v, want still dirty at 40", again)
	}
	// The smallest seq is kept over the missed delete: conservative.
	if got := cleanID(t, s, k); got != ids[1] {
		t.Errorf("clean record %q, want the record to 20 %q", got, ids[1])
	}
	if err := rebuildSummary(ctx, s, k, 40, again.DirtyMark, chain[1].ID, []memory.SummaryRecord{{Summary: sampleSummary(1, 40, "third"), FromSeq: 31, ToSeq: 40}}); err != nil {
		t.Fatal(err)
	}
	if c := mustChat(t, s, k); c.SummaryDirty || c.SummaryCursor != 40 {
		t.Errorf("chat %+v, want clean at 40", c)
	}
	if chain, _ := s.SummaryChain(ctx, k); len(chain) != 4 || chain[0].Narrative != "third" {
		t.Errorf("chain after the second rebuild: %d records, head %q", len(chain), chain[0].Narrative)
	}
	// Extensions continue the rebuilt chain; their records move forward.
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("e", 2)})
	if next, err := memory.AppendSummary(ctx, s, k, 40, memory.SummaryRecord{Summary: sampleSummary(1, 42, "more")}); err != nil || next.Depth != 4 {
		t.Errorf("AppendSummary after a rebuild: %+v, %v", next, err)
	}
	extensionRules(t, s, k)
}

// extensionRules: on testRebuildSummary's chain, at cursor 42 of 42 turns,
// an extension writes at least one record and moves the cursor forward.
func extensionRules(t *testing.T, s memory.Backend, k memory.ChatKey) {
	t.Helper()
	ctx := ctxT(t)
	if _, err := s.WriteSummary(ctx, k, memory.SummaryWrite{Kind: memory.SummaryExtend, ExpectCursor: 42}); !errors.Is(err, memory.ErrConflict) {
		t.Errorf("an extension without a record: %v, want ErrConflict", err)
	}
	two, err := s.WriteSummary(ctx, k, memory.SummaryWrite{Kind: memory.SummaryExtend, ExpectCursor: 42, Recs: []memory.SummaryRecord{
		{Summary: sampleSummary(1, 42, "to 42")}, {Summary: sampleSummary(1, 42, "again to 42")}}})
	if !errors.Is(err, memory.ErrConflict) {
		t.Errorf("an extension not moving forward: %+v, %v; want ErrConflict", two, err)
	}
	if head, _ := s.SummaryHead(ctx, k); head == nil || head.CoveredToSeq != 42 || head.Depth != 4 {
		t.Errorf("head after a refused extension: %+v, want the record to 42", head)
	}
}
