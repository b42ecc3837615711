package indextest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// runFacts covers facts and passages beside turns and episodes: identity,
// payload, the kinds and time filters inside the query, and the deletes a
// forgotten turn needs (by seq, by citing seq, by item id).
func runFacts(t *testing.T, open func(t *testing.T) rag.Index) {
	t.Run("FactsBesideTurnsAndEpisodes", func(t *testing.T) { testFactsBeside(t, open(t)) })
	t.Run("FactFiltersBeforeTopK", func(t *testing.T) { testFactFilters(t, open(t)) })
	t.Run("Passages", func(t *testing.T) { testPassages(t, open(t)) })
	t.Run("ForgetTurn", func(t *testing.T) { testForgetTurn(t, open(t)) })
}

func fact(chat, id string, seqs []int64, dense []float32, valid time.Time) rag.Point {
	return rag.Point{Tenant: "t", UserID: "u", ChatID: chat, Agent: "a", Kind: memory.KindFact,
		Seq: seqs[0], Seqs: seqs, FactID: id, ValidAt: valid, CreatedAt: valid,
		Content: "fact " + id, Dense: dense, Sparse: sparse(7, 1)}
}

func passage(chat string, seq int64, n, from, to, total int, dense []float32) rag.Point {
	p := point("t", "u", chat, "a", seq, dense, sparse(7, 1))
	p.Passage, p.PassageFrom, p.PassageTo, p.TurnBytes = n, from, to, total
	p.Content = strings.Repeat(string(rune('a'+n)), to-from) // the passage: to-from bytes
	return p
}

// A turn, an episode and two facts all at seq 3 are four points; a fact's
// identity is its id; its fields come back.
func testFactsBeside(t *testing.T, ix rag.Index) {
	valid := t0.Add(2 * time.Hour)
	a := fact("c", "f-a", []int64{3, 5}, unit(0), valid)
	b := fact("c", "f-b", []int64{3}, unit(1), valid)
	upsert(t, ix, point("t", "u", "c", "a", 3, unit(0), sparse(7, 1)),
		episode("c", 3, 9, unit(0), t0, t0.Add(time.Hour)), a, b)
	a.Superseded = true
	a.Content = "fact f-a, updated"
	upsert(t, ix, a)
	if n := count(t, ix, rag.Filter{Tenant: "t"}); n != 4 {
		t.Fatalf("count = %d, want a turn, an episode and two facts", n)
	}
	for _, tc := range []struct {
		kinds []string
		want  int
	}{
		{[]string{memory.KindFact}, 2},
		{[]string{memory.KindTurn, memory.KindFact}, 3},
		{[]string{memory.KindEpisode, memory.KindFact}, 3},
		{[]string{memory.KindTurn, memory.KindEpisode}, 2},
	} {
		if n := count(t, ix, rag.Filter{Tenant: "t", Kinds: tc.kinds}); n != tc.want {
			t.Errorf("count of kinds %v = %d, want %d", tc.kinds, n, tc.want)
		}
	}
	hits := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t", Kinds: []string{memory.KindFact}}, Dense: unit(0), Limit: 5, ScoreThreshold: 0.5})
	if len(hits) != 1 {
		t.Fatalf("fact hits = %d, want 1: %v", len(hits), keys(hits))
	}
	h := hits[0]
	if h.Kind != memory.KindFact || h.FactID != "f-a" || h.Seq != 3 || !slices.Equal(h.Seqs, []int64{3, 5}) ||
		!h.ValidAt.Equal(valid) || !h.Superseded || h.Content != a.Content {
		t.Fatalf("fact hit = %+v", h.Point)
	}
	all := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t"}, Dense: unit(1), Sparse: sparse(7, 1), Limit: 10})
	if len(all) != 4 {
		t.Fatalf("all kinds: %d hits, want 4", len(all))
	}
	for _, h := range all { // asked again (a backend may now answer from a cache)
		if h.Kind == memory.KindFact && h.FactID == "f-b" && (h.Superseded || !slices.Equal(h.Seqs, []int64{3})) {
			t.Fatalf("fact f-b asked again = %+v", h.Point)
		}
	}
}

// The best matches are turns and facts outside the range: kinds and
// valid_at filtered after top-k would return nothing.
func testFactFilters(t *testing.T, ix rag.Index) {
	var pts []rag.Point
	for s := int64(1); s <= 12; s++ {
		pts = append(pts, point("t", "u", "c", "a", s, cosVec(0.99-float64(s)/1000), sparse(7, 1)))
	}
	for i, c := range []float64{0.95, 0.9, 0.85, 0.8, 0.7} {
		// The best facts (i < 2) are valid early, outside [since, until].
		valid := t0.Add(time.Duration(i) * 24 * time.Hour)
		pts = append(pts, fact("c", "f"+string(rune('0'+i)), []int64{int64(i + 1)}, cosVec(c), valid))
	}
	upsert(t, ix, pts...)
	facts := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t", Kinds: []string{memory.KindFact}}, Dense: unit(0), Limit: 2, Prefetch: 2})
	if len(facts) != 2 || facts[0].FactID != "f0" || facts[1].FactID != "f1" {
		t.Fatalf("fact hits = %+v, want f0, f1", facts)
	}
	since, until := t0.Add(47*time.Hour), t0.Add(97*time.Hour)
	ranged := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t", Kinds: []string{memory.KindFact}, Since: since, Until: until}, Dense: unit(0), Limit: 2, Prefetch: 2})
	if len(ranged) != 2 || ranged[0].FactID != "f2" || ranged[1].FactID != "f3" {
		t.Fatalf("facts valid in range = %v, want f2, f3", ranged)
	}
	if n := count(t, ix, rag.Filter{Tenant: "t", Kinds: []string{memory.KindFact}, Since: since}); n != 3 {
		t.Fatalf("facts valid since day 2 = %d, want 3", n)
	}
}

// A long turn's passages are points of their own (identity: seq and
// passage) carrying their offsets; a seq range holds all of them.
func testPassages(t *testing.T, ix rag.Index) {
	ps := []rag.Point{
		passage("c", 7, 0, 0, 10, 30, unit(1)),
		passage("c", 7, 1, 10, 20, 30, unit(0)),
		passage("c", 7, 2, 20, 30, 30, unit(2)),
		point("t", "u", "c", "a", 8, unit(3), sparse(7, 1)),
	}
	upsert(t, ix, ps...)
	upsert(t, ix, ps[1])
	if n := count(t, ix, rag.Filter{Tenant: "t"}); n != 4 {
		t.Fatalf("count = %d, want three passages and a turn", n)
	}
	if n := count(t, ix, rag.Filter{Tenant: "t", FromSeq: 7, ToSeq: 7}); n != 3 {
		t.Fatalf("count of seq 7 = %d, want its three passages", n)
	}
	hits := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t"}, Dense: unit(0), Limit: 1, ScoreThreshold: 0.5})
	if len(hits) != 1 {
		t.Fatalf("hits = %v, want passage 1 of seq 7", keys(hits))
	}
	h := hits[0]
	if h.Seq != 7 || h.Passage != 1 || h.PassageFrom != 10 || h.PassageTo != 20 || h.TurnBytes != 30 || h.Content != "bbbbbbbbbb" || h.IsWhole() {
		t.Fatalf("passage hit = %+v", h.Point)
	}
	first := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t"}, Dense: unit(1), Limit: 1, ScoreThreshold: 0.5})
	if len(first) != 1 || first[0].Passage != 0 || first[0].PassageTo != 10 || first[0].TurnBytes != 30 || first[0].IsWhole() {
		t.Fatalf("first passage hit = %+v", first)
	}
	whole := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t"}, Dense: unit(3), Limit: 1, ScoreThreshold: 0.5})
	if len(whole) != 1 || whole[0].Seq != 8 || !whole[0].IsWhole() || whole[0].PassageTo != len(whole[0].Content) {
		t.Fatalf("whole turn hit = %+v", whole)
	}
}

// Forgetting turn 5: its passages go (by seq range, turns only), then the
// facts citing it (CitingSeq); ItemIDs deletes episodes and facts by id.
// None of these filters touches another kind.
func testForgetTurn(t *testing.T, ix rag.Index) {
	ctx := context.Background()
	upsert(t, ix,
		point("t", "u", "c", "a", 4, unit(0), sparse(7, 1)),
		passage("c", 5, 0, 0, 10, 20, unit(0)), passage("c", 5, 1, 10, 20, 20, unit(0)),
		point("t", "u", "c", "a", 6, unit(0), sparse(7, 1)),
		point("t", "u", "other", "a", 5, unit(0), sparse(7, 1)),
		episode("c", 1, 9, unit(0), t0, t0.Add(time.Hour)),
		fact("c", "f-5", []int64{5}, unit(0), t0), fact("c", "f-45", []int64{4, 5}, unit(0), t0),
		fact("c", "f-46", []int64{4, 6}, unit(0), t0), fact("other", "f-5", []int64{5}, unit(0), t0),
	)
	del := func(f rag.Filter) {
		t.Helper()
		if err := ix.Delete(ctx, f); err != nil {
			t.Fatalf("Delete(%+v): %v", f, err)
		}
	}
	chat := []string{"c"}
	del(rag.Filter{Tenant: "t", ChatIDs: chat, Kinds: []string{memory.KindTurn}, FromSeq: 5, ToSeq: 5})
	if n := count(t, ix, rag.Filter{Tenant: "t", ChatIDs: chat, Kinds: []string{memory.KindTurn}}); n != 2 {
		t.Fatalf("turns left = %d, want seqs 4 and 6", n)
	}
	del(rag.Filter{Tenant: "t", ChatIDs: chat, CitingSeq: 5})
	left := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t", ChatIDs: chat, Kinds: []string{memory.KindFact}}, Dense: unit(0), Limit: 10})
	if len(left) != 1 || left[0].FactID != "f-46" {
		t.Fatalf("facts left = %+v, want f-46", left)
	}
	if n := count(t, ix, rag.Filter{Tenant: "t", ChatIDs: chat}); n != 4 {
		t.Fatalf("points of c left = %d, want 2 turns, the episode, f-46", n)
	}
	del(rag.Filter{Tenant: "t", ChatIDs: chat, ItemIDs: []string{"ep-c", "f-46", "f-unknown"}})
	if n := count(t, ix, rag.Filter{Tenant: "t", ChatIDs: chat}); n != 2 {
		t.Fatalf("points of c left = %d, want turns 4 and 6", n)
	}
	if n := count(t, ix, rag.Filter{Tenant: "t", ChatIDs: []string{"other"}}); n != 2 {
		t.Fatalf("another chat lost points: %d left, want 2", n)
	}
}
