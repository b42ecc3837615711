package indextest

import (
	"context"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// runEpisodes covers episodes beside turns (identity, kinds, payload) and
// the filters applied inside the query: time range and seq range.
func runEpisodes(t *testing.T, open func(t *testing.T) rag.Index) {
	t.Run("EpisodesBesideTurns", func(t *testing.T) { testEpisodesBesideTurns(t, open(t)) })
	t.Run("TimeFilterBeforeTopK", func(t *testing.T) { testTimeFilterBeforeTopK(t, open(t)) })
	t.Run("SeqRangeDrillDown", func(t *testing.T) { testSeqRange(t, open(t)) })
	t.Run("UntruncatedIsComplete", func(t *testing.T) { testUntruncatedIsComplete(t, open(t)) })
	t.Run("EpisodesErased", func(t *testing.T) { testEpisodesErased(t, open(t)) })
}

func episode(chat string, from, to int64, dense []float32, start, end time.Time) rag.Point {
	return rag.Point{Tenant: "t", UserID: "u", ChatID: chat, Agent: "a", Seq: from, Kind: memory.KindEpisode,
		EpisodeID: "ep-" + chat, FromSeq: from, ToSeq: to, StartedAt: start, EndedAt: end, CreatedAt: end,
		Content: "the short summary of " + chat, Dense: dense, Sparse: sparse(7, 1)}
}

// An episode starting at seq 3 and the turn at seq 3 are two points; kinds
// select them; the episode's fields come back; upserting it again keeps one.
func testEpisodesBesideTurns(t *testing.T, ix rag.Index) {
	start, end := t0.Add(time.Hour), t0.Add(3*time.Hour)
	ep := episode("c", 3, 9, unit(0), start, end)
	upsert(t, ix, point("t", "u", "c", "a", 3, unit(0), sparse(7, 1)), ep)
	upsert(t, ix, ep)
	if n := count(t, ix, rag.Filter{Tenant: "t"}); n != 2 {
		t.Fatalf("count = %d, want the turn and the episode", n)
	}
	if n := count(t, ix, rag.Filter{Tenant: "t", Kinds: []string{memory.KindEpisode}}); n != 1 {
		t.Fatalf("episodes = %d, want 1", n)
	}
	hits := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t", Kinds: []string{memory.KindEpisode}}, Dense: unit(0), Limit: 5})
	if len(hits) != 1 {
		t.Fatalf("episode hits = %d, want 1", len(hits))
	}
	h := hits[0]
	if h.Kind != memory.KindEpisode || h.EpisodeID != "ep-c" || h.Seq != 3 || h.FromSeq != 3 || h.ToSeq != 9 ||
		!h.StartedAt.Equal(start) || !h.EndedAt.Equal(end) || h.Content != ep.Content {
		t.Fatalf("episode hit = %+v", h.Point)
	}
	turns := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t", Kinds: []string{memory.KindTurn}}, Dense: unit(0), Limit: 5})
	if len(turns) != 1 || turns[0].Kind == memory.KindEpisode || turns[0].Content != "t/c/3" {
		t.Fatalf("turn hits = %+v", turns)
	}
	both := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t"}, Dense: unit(0), Sparse: sparse(7, 1), Limit: 5})
	if len(both) != 2 {
		t.Fatalf("both kinds: %d hits, want 2", len(both))
	}
	for _, h := range both { // asked again (a backend may now answer from a cache)
		if h.Kind == memory.KindEpisode && (h.EpisodeID != "ep-c" || h.ToSeq != 9 || !h.StartedAt.Equal(start)) {
			t.Fatalf("episode hit asked again = %+v", h.Point)
		}
	}
}

// The best-matching turns lie outside the time range: a filter applied
// after top-k would return nothing; applied inside the query it returns
// the best turns of the range.
func testTimeFilterBeforeTopK(t *testing.T, ix rag.Index) {
	var pts []rag.Point
	for s := int64(1); s <= 20; s++ {
		c := 0.9 // seqs 1..10: weaker matches, inside the range
		if s > 10 {
			c = 0.99 // seqs 11..20: best matches, outside the range
		}
		pts = append(pts, point("t", "u", "c", "a", s, cosVec(c-float64(s%10)/1000), rag.SparseVector{}))
	}
	upsert(t, ix, pts...)
	since, until := t0.Add(1*time.Minute), t0.Add(10*time.Minute)
	hits := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t", Since: since, Until: until}, Dense: unit(0), Limit: 5, Prefetch: 5})
	if len(hits) != 5 {
		t.Fatalf("hits = %d, want 5 from inside the range", len(hits))
	}
	for _, h := range hits {
		if h.Seq > 10 || h.CreatedAt.Before(since) || h.CreatedAt.After(until) {
			t.Fatalf("hit %d at %v is outside [%v, %v]", h.Seq, h.CreatedAt, since, until)
		}
	}
	if n := count(t, ix, rag.Filter{Tenant: "t", Since: t0.Add(15 * time.Minute)}); n != 6 {
		t.Fatalf("count since minute 15 = %d, want 6", n)
	}
	// An episode matches when its span overlaps the range.
	upsert(t, ix, episode("c", 1, 20, unit(0), t0.Add(-time.Hour), t0.Add(30*time.Minute)))
	eps := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t", Kinds: []string{memory.KindEpisode}, Since: since, Until: until}, Dense: unit(0), Limit: 5})
	if len(eps) != 1 {
		t.Fatalf("overlapping episode: %d hits, want 1", len(eps))
	}
	late := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t", Kinds: []string{memory.KindEpisode}, Since: t0.Add(2 * time.Hour)}, Dense: unit(0), Limit: 5})
	if len(late) != 0 {
		t.Fatalf("episode ended before since: %d hits, want 0", len(late))
	}
}

// FromSeq/ToSeq keep the turns of one stretch (drilling into an episode).
func testSeqRange(t *testing.T, ix rag.Index) {
	var pts []rag.Point
	for s := int64(1); s <= 12; s++ {
		pts = append(pts, point("t", "u", "c", "a", s, cosVec(0.5+float64(s)/100), sparse(3, 1)))
	}
	upsert(t, ix, pts...)
	hits := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t", ChatIDs: []string{"c"}, FromSeq: 4, ToSeq: 6}, Dense: unit(0), Sparse: sparse(3, 1), Limit: 10})
	if len(hits) != 3 {
		t.Fatalf("hits = %d, want seqs 4..6", len(hits))
	}
	for _, h := range hits {
		if h.Seq < 4 || h.Seq > 6 {
			t.Fatalf("hit %d outside 4..6", h.Seq)
		}
	}
}

// A query answered with fewer hits than its Limit has returned every
// point that qualifies: a narrower filter (a stretch of turns, as a drill
// into an episode asks) with the same vectors finds no other.
func testUntruncatedIsComplete(t *testing.T, ix rag.Index) {
	var pts []rag.Point
	want := map[int64]bool{}
	for s := int64(1); s <= 12; s++ {
		dense, sp := unit(2), sparse(11, 1) // cos 0, no shared term: neither side
		if s%4 == 0 {
			dense = cosVec(0.9) // dense, above the threshold
		}
		if s%3 == 0 {
			sp = sparse(77, 1) // sparse
		}
		if s%5 == 0 {
			dense = cosVec(0.3) // dense, below it
		}
		want[s] = s%3 == 0 || s%4 == 0 && s%5 != 0
		pts = append(pts, point("t", "u", "c", "a", s, dense, sp))
	}
	upsert(t, ix, pts...)
	q := rag.Query{Filter: rag.Filter{Tenant: "t", ChatIDs: []string{"c"}}, Dense: unit(0), Sparse: sparse(77, 1), Limit: 50, ScoreThreshold: 0.5}
	var all map[int64]bool
	for _, prefetch := range []int{0, 1} { // a Prefetch under Limit is raised to it
		q.Prefetch, all = prefetch, map[int64]bool{}
		for _, h := range query(t, ix, q) {
			all[h.Seq] = true
		}
		for s := int64(1); s <= 12; s++ {
			if all[s] != want[s] {
				t.Errorf("prefetch %d: seq %d returned %v, want %v (every qualifying point, no other)", prefetch, s, all[s], want[s])
			}
		}
	}
	for _, r := range [][2]int64{{1, 6}, {4, 9}, {7, 12}} {
		n := q
		n.Filter.FromSeq, n.Filter.ToSeq, n.Filter.Kinds, n.Limit = r[0], r[1], []string{memory.KindTurn}, 2
		for _, h := range query(t, ix, n) {
			if !all[h.Seq] {
				t.Errorf("seqs %d..%d: turn %d, which the whole chat's query did not return", r[0], r[1], h.Seq)
			}
		}
	}
}

// Erasing a chat or a user erases its episodes too.
func testEpisodesErased(t *testing.T, ix rag.Index) {
	upsert(t, ix, point("t", "u", "c1", "a", 1, unit(0), rag.SparseVector{}), episode("c1", 1, 4, unit(1), t0, t0.Add(time.Hour)),
		point("t", "u", "c2", "a", 1, unit(0), rag.SparseVector{}), episode("c2", 1, 4, unit(1), t0, t0.Add(time.Hour)))
	if err := ix.Delete(context.Background(), rag.Filter{Tenant: "t", ChatIDs: []string{"c1"}}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, ix, rag.Filter{Tenant: "t", ChatIDs: []string{"c1"}}); n != 0 {
		t.Fatalf("after erasing c1: %d points left", n)
	}
	if err := ix.Delete(context.Background(), rag.Filter{Tenant: "t", UserID: "u"}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, ix, rag.Filter{Tenant: "t"}); n != 0 {
		t.Fatalf("after erasing the user: %d points left", n)
	}
}
