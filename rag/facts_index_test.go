package rag_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

func countOf(t *testing.T, e *env, f rag.Filter) int {
	t.Helper()
	n, err := e.index.Count(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// longTurn is three paragraphs on three topics, ~300 bytes each.
func longTurn() string {
	return strings.Join([]string{
		strings.Repeat("The garden needs tomatoes, basil and compost in spring. ", 5),
		strings.Repeat("The invoice for the kubernetes cluster is due on Friday. ", 5),
		strings.Repeat("Grandma's recipe uses flour, butter and cinnamon sugar. ", 5),
	}, "\n\n")
}

// A long turn is indexed in passages and comes back once, with the
// matching passage, its offsets and elision marks.
func TestIndexerPassages(t *testing.T) {
	e := newEnv(t, nil)
	e.ixr.PassageTokens = 75 // 300 bytes: one paragraph a passage
	ctx := context.Background()
	long := longTurn()
	e.store.add("t", "c", "u", "a", "hello", long, "short answer about something else")
	e.drain(t)
	key := rag.Filter{Tenant: "t", ChatIDs: []string{"c"}, Kinds: []string{memory.KindTurn}}
	if n := countOf(t, e, key); n != 5 {
		t.Fatalf("turn points = %d, want 1 + 3 passages + 1", n)
	}
	got, err := e.ret.Retrieve(ctx, rag.Request{Tenant: "t", ChatID: "c", Query: "when is the kubernetes invoice due?", K: 3})
	if err != nil {
		t.Fatal(err)
	}
	var hit *rag.Turn
	for i, tr := range got {
		if tr.Seq == 2 {
			if hit != nil {
				t.Fatalf("turn 2 came back twice: %v", seqsOf(got))
			}
			hit = &got[i]
		}
	}
	if hit == nil || len(hit.Passages) == 0 {
		t.Fatalf("long turn not found by its passage: %+v", got)
	}
	p := hit.Passages[0]
	if len(hit.Passages) > rag.MaxPassagesPerTurn || hit.TurnBytes != len(long) || long[p.From:p.To] != p.Text {
		t.Fatalf("passage %+v of a %d-byte turn (turn bytes %d)", p, len(long), hit.TurnBytes)
	}
	best := hit.Passages[0]
	for _, q := range hit.Passages {
		if q.Score > best.Score {
			best = q
		}
	}
	if !strings.Contains(best.Text, "kubernetes") || strings.Contains(best.Text, "tomatoes") {
		t.Errorf("best passage = %q, want the invoice paragraph", best.Text)
	}
	if !strings.Contains(hit.Content, rag.Elision) || !strings.Contains(hit.Content, strings.TrimSpace(best.Text)) || len(hit.Content) >= len(long) {
		t.Errorf("content = %q, want the passage(s) with elision marks", hit.Content)
	}
	for _, tr := range got {
		if tr.Seq != 2 && len(tr.Passages) != 0 {
			t.Errorf("a short turn has passages: %+v", tr)
		}
	}
}

// Facts are indexed (dated, flagged when superseded) and retrieved with
// their fields; a superseded fact ranks below the current one even when it
// matches the question better.
func TestIndexerFactsAndSupersession(t *testing.T) {
	e := newEnv(t, nil)
	e.ixr.Kinds = []memory.WorkKind{memory.IndexFacts}
	ctx := context.Background()
	e.store.add("t", "c", "u", "a", filler(6, "moving")...)
	k := memory.ChatKey{Tenant: "t", ChatID: "c"}
	day := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	old := memory.Fact{Text: "The user lives in Berlin", Seqs: []int64{2}, ValidAt: day}
	cur := memory.Fact{Text: "The user moved and now lives in Munich", Seqs: []int64{4, 5}, ValidAt: day.AddDate(0, 1, 0)}
	e.store.addFacts(k, old, cur, memory.Fact{Text: "The user likes cycling", Seqs: []int64{3}, ValidAt: day})
	if n := e.drain(t); n != 6+3 {
		t.Fatalf("indexed %d, want 6 turns and 3 facts", n)
	}
	if n := countOf(t, e, rag.Filter{Tenant: "t", Kinds: []string{memory.KindFact}}); n != 3 {
		t.Fatalf("fact points = %d, want 3", n)
	}
	facts := rag.Request{Tenant: "t", ChatID: "c", Query: "does the user live in Berlin?", K: 3, Kinds: []string{memory.KindFact}}
	byScore := func() []rag.Turn {
		got, err := e.ret.Retrieve(ctx, facts)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortStableFunc(got, func(a, b rag.Turn) int { return int((b.Score - a.Score) * 1e9) })
		return got
	}
	got := byScore()
	if len(got) != 3 || !strings.Contains(got[0].Content, "Berlin") || got[0].Kind != memory.KindFact {
		t.Fatalf("before supersession: %+v, want Berlin first", got)
	}
	oldID := memory.FactID("t", "c", old.Seqs, old.Text)
	curID := memory.FactID("t", "c", cur.Seqs, cur.Text)
	if f := got[0].Fact; f == nil || f.ID != oldID || !slices.Equal(f.Seqs, []int64{2}) || !f.ValidAt.Equal(day) || f.Superseded {
		t.Fatalf("fact hit fields: %+v", got[0])
	}
	if err := e.store.SupersedeFacts(ctx, k, map[string]string{oldID: curID}); err != nil {
		t.Fatal(err)
	}
	if n := e.drain(t); n != 1 {
		t.Fatalf("re-indexed %d, want the superseded fact", n)
	}
	got = byScore()
	at := slices.IndexFunc(got, func(t rag.Turn) bool { return t.Fact != nil && t.Fact.ID == oldID })
	if len(got) != 3 || got[0].Fact == nil || got[0].Fact.ID != curID || at < 1 || !got[at].Fact.Superseded {
		t.Fatalf("after supersession: %+v, want Munich, then Berlin flagged", got)
	}
	// valid_at filters facts inside the index.
	facts.Since = day.AddDate(0, 0, 15)
	if got := byScore(); len(got) != 1 || got[0].Fact == nil || got[0].Fact.ID != curID {
		t.Fatalf("facts valid since mid-March: %+v", got)
	}
}

// A tombstoned turn found in the backlog takes its points (all passages)
// and the facts citing it out of the index; DeleteItems drops facts and
// episodes by id.
func TestIndexerForgetsTombstones(t *testing.T) {
	e := newEnv(t, nil)
	e.ixr.Kinds = []memory.WorkKind{memory.IndexFacts}
	e.ixr.PassageTokens = 75
	ctx := context.Background()
	k := memory.ChatKey{Tenant: "t", ChatID: "c"}
	e.store.add("t", "c", "u", "a", "first", longTurn(), "third", "fourth")
	e.store.addFacts(k, memory.Fact{Text: "invoice due Friday", Seqs: []int64{2}},
		memory.Fact{Text: "garden and invoice", Seqs: []int64{1, 2}}, memory.Fact{Text: "third and fourth", Seqs: []int64{3, 4}})
	e.drain(t)
	chat := rag.Filter{Tenant: "t", ChatIDs: []string{"c"}}
	if n := countOf(t, e, chat); n != 3+3+3 {
		t.Fatalf("points = %d, want 3 turns, 3 passages, 3 facts", n)
	}
	e.store.forget(k, 2)
	if n := e.drain(t); n != 1 {
		t.Fatalf("drained %d, want the tombstone", n)
	}
	if e.store.unindexed() != 0 {
		t.Fatal("tombstone left in the backlog")
	}
	if n := countOf(t, e, rag.Filter{Tenant: "t", ChatIDs: []string{"c"}, FromSeq: 2, ToSeq: 2}); n != 0 {
		t.Fatalf("points of the forgotten turn left: %d", n)
	}
	if n := countOf(t, e, rag.Filter{Tenant: "t", ChatIDs: []string{"c"}, Kinds: []string{memory.KindFact}}); n != 1 {
		t.Fatalf("facts left = %d, want the one not citing turn 2", n)
	}
	if n := countOf(t, e, rag.Filter{Tenant: "t", ChatIDs: []string{"c"}, Kinds: []string{memory.KindTurn}}); n != 3 {
		t.Fatalf("turns left = %d, want 3", n)
	}
	if err := rag.DeleteItems(ctx, e.index, k); err != nil || countOf(t, e, chat) != 4 {
		t.Fatalf("DeleteItems without ids deleted something: %v", err)
	}
	left := memory.FactID("t", "c", []int64{3, 4}, "third and fourth")
	if err := rag.DeleteItems(ctx, e.index, k, left); err != nil {
		t.Fatal(err)
	}
	if n := countOf(t, e, chat); n != 3 {
		t.Fatalf("after DeleteItems: %d points, want the 3 turns", n)
	}
}

// Near-duplicate hits: the better-ranked one is kept, unless switched off.
func TestNearDuplicatesDropped(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	turns := filler(12, "gardening")
	turns[1] = "The deploy key lives in vault at secret/deploy/prod"
	turns[5] = "the deploy key lives in vault at secret/deploy/prod!"
	turns[8] = "Reminder: the deploy key lives in the vault at secret/deploy/prod"
	turns[10] = "Rotate the deploy key in vault every month"
	e.store.add("t", "c", "u", "a", turns...)
	e.drain(t)
	req := rag.Request{Tenant: "t", ChatID: "c", Query: "where does the deploy key live in vault?", K: 4}
	got, err := e.ret.Retrieve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	dups := 0
	for _, tr := range got {
		if strings.Contains(tr.Content, "secret/deploy/prod") {
			dups++
		}
	}
	if dups != 1 || len(got) != 4 {
		t.Fatalf("default: %d copies of the deploy-key turn in %v, want 1 of 4 hits", dups, seqsOf(got))
	}
	e.ret.NearDuplicate = -1
	got, err = e.ret.Retrieve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	dups = 0
	for _, tr := range got {
		if strings.Contains(tr.Content, "secret/deploy/prod") {
			dups++
		}
	}
	if dups != 3 {
		t.Fatalf("switched off: %d copies in %v, want 3", dups, seqsOf(got))
	}
}

// Of two near-copies in one chat, the later one holds ("Speckled mug,
// £28.00 …", then after a price rise the same listing at £32.00): it is
// the one shown, in the place the better-ranked older copy earned.
func TestLaterNearCopyStandsIn(t *testing.T) {
	e := newEnv(t, nil)
	listing := "Thrown on the wheel in our studio, this mug holds 350 ml, glazed in Marsh Grey with iron speckles, dishwasher and microwave safe."
	turns := filler(12, "gardening")
	turns[1] = "Speckled mug, £28.00. " + listing
	turns[8] = "Understood, updated: Speckled mug, £32.00. " + listing // longer: it matches a little less
	e.store.add("t", "c", "u", "a", turns...)
	e.drain(t)
	req := rag.Request{Tenant: "t", ChatID: "c", Query: "a caption for the speckled mug", K: 3}
	got, err := e.ret.Retrieve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if copies := seqsHolding(got, "Speckled mug"); len(copies) != 1 || copies[0] != 9 {
		t.Fatalf("copies of the listing shown: %v in %v, want the later one (9) alone", copies, seqsOf(got))
	}
	// A later copy without a word the query found in the earlier one is
	// another answer: the better match stays.
	req.Query = "the mug at £28.00"
	if got, err = e.ret.Retrieve(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if copies := seqsHolding(got, "Speckled mug"); len(copies) != 1 || copies[0] != 2 {
		t.Fatalf("asked for £28.00: copies %v in %v, want the earlier one (2) alone", copies, seqsOf(got))
	}
}

// seqsHolding are the seqs of the retrieved turns whose content holds s.
func seqsHolding(got []rag.Turn, s string) []int64 {
	var out []int64
	for _, tr := range got {
		if strings.Contains(tr.Content, s) {
			out = append(out, tr.Seq)
		}
	}
	return out
}
