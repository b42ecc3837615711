package rag_test

import (
	"context"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// Coarse to fine: an episode that matches is drilled into for its own best
// turns; since/until and kinds reach the index query.
func TestRetrieveDrillsIntoEpisodesAndFiltersByTime(t *testing.T) {
	ctx := context.Background()
	e, _ := drillChat(t, 30, 15, 10, 20, "A visit to the lighthouse on the coast.")
	req := rag.Request{Tenant: "t", ChatID: "c", Query: "lighthouse visit", K: 1, Kinds: []string{memory.KindEpisode}, Drill: 1}
	counting := &queryCounter{Embedder: e.ret.Embedder}
	e.ret.Embedder = counting
	hits, err := e.ret.Retrieve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if counting.n != 1 {
		t.Errorf("the query was embedded %d times for the hits and one drill, want once", counting.n)
	}
	var gotEpisode, gotTurn bool
	for _, h := range hits {
		gotEpisode = gotEpisode || h.Kind == memory.KindEpisode && h.Episode.ID == "e1" && h.Episode.ToSeq == 20
		gotTurn = gotTurn || h.Kind != memory.KindEpisode && h.Seq == 15
		if h.Kind != memory.KindEpisode && (h.Seq < 10 || h.Seq > 20) {
			t.Errorf("drilled turn %d outside the episode 10..20", h.Seq)
		}
	}
	if !gotEpisode || !gotTurn {
		t.Fatalf("want the episode and its lighthouse turn (15): %+v", hits)
	}
	// A time range that ends before every turn and the episode: nothing.
	req = rag.Request{Tenant: "t", ChatID: "c", Query: "lighthouse", K: 5, Until: fakeT0.Add(-time.Hour)}
	if hits, err := e.ret.Retrieve(ctx, req); err != nil || len(hits) != 0 {
		t.Fatalf("until before everything: %d hits, %v", len(hits), err)
	}
}

// queryCounter counts the queries embedded.
type queryCounter struct {
	rag.Embedder
	n int
}

func (q *queryCounter) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	q.n++
	return q.Embedder.EmbedQuery(ctx, text)
}

// queryCount counts the index queries.
type queryCount struct {
	rag.Index
	n int
}

func (q *queryCount) Query(ctx context.Context, query rag.Query) ([]rag.Hit, error) {
	q.n++
	return q.Index.Query(ctx, query)
}

// An episode whose every turn is a hit already is not queried again: the
// drill could add no turn (a small chat, where the hits hold it all).
func TestRetrieveSkipsTheDrillWhenTheHitsHoldTheEpisode(t *testing.T) {
	e, counting := drillChat(t, 6, 3, 1, 6, "A visit to the lighthouse and the garden.")
	for _, tc := range []struct {
		k, queries int
	}{
		{k: 20, queries: 1}, // every turn a hit: no drill query
		{k: 2, queries: 2},  // the episode and one turn: drilled
	} {
		counting.n = 0
		episode, turns := retrieveCounted(t, e, rag.Request{Tenant: "t", ChatID: "c", Query: "lighthouse garden", K: tc.k, Drill: 1})
		if !episode || !turns[3] || counting.n != tc.queries {
			t.Errorf("k=%d: episode %v, turn 3 %v, %d index queries; want both and %d queries", tc.k, episode, turns[3], counting.n, tc.queries)
		}
	}
}

// A search that returned every qualifying point (fewer than asked, none
// dropped) is not drilled: the drill's narrower query could return only
// hits or excluded turns. A search that did cut (k) is drilled as before.
func TestRetrieveSkipsTheDrillAfterACompleteSearch(t *testing.T) {
	ctx := context.Background()
	e, counting := drillChat(t, 30, 15, 10, 20, "A visit to the lighthouse on the coast.")
	const threshold = 0.5 // the default: the filler turns neither share a term nor come close
	for _, tc := range []struct {
		k, queries int
	}{
		{k: 20, queries: 1}, // the episode and turn 15: all that qualifies
		{k: 1, queries: 2},  // the episode alone: cut at k, drilled
	} {
		counting.n = 0
		episode, have := retrieveCounted(t, e, rag.Request{Tenant: "t", ChatID: "c", Query: "lighthouse visit", K: tc.k, Threshold: threshold, Drill: 1})
		if !episode || !have[15] || counting.n != tc.queries {
			t.Errorf("k=%d: episode %v, turn 15 %v, %d index queries; want both and %d queries", tc.k, episode, have[15], counting.n, tc.queries)
		}
		// What the drill would have asked: nothing the hits lack.
		q, err := e.emb.EmbedQuery(ctx, "lighthouse visit")
		if err != nil {
			t.Fatal(err)
		}
		drill, err := e.index.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t", ChatIDs: []string{"c"}, Kinds: []string{memory.KindTurn}, FromSeq: 10, ToSeq: 20},
			Dense: q, Sparse: rag.NewSparseEncoder().EncodeQuery("lighthouse visit"), Limit: 18, ScoreThreshold: threshold})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range drill {
			if !have[h.Seq] {
				t.Errorf("k=%d: the drill's query finds turn %d, which the hits lack", tc.k, h.Seq)
			}
		}
	}
}

// drillChat indexes chat c: n filler turns, turn at (1-based) about a
// lighthouse, and episode e1 over from..to; the index queries are counted.
func drillChat(t *testing.T, n, at int, from, to int64, episode string) (*env, *queryCount) {
	t.Helper()
	e := newEnv(t, nil)
	turns := filler(n, "gardening")
	turns[at-1] = "the lighthouse keeper showed us the lamp room and the fog horn"
	e.store.add("t", "c", "u", "a", turns...)
	e.drain(t)
	e.episode(t, from, to, episode)
	counting := &queryCount{Index: e.ret.Index}
	e.ret.Index = counting
	return e, counting
}

// retrieveCounted retrieves req and says whether an episode came back, and
// which turns.
func retrieveCounted(t *testing.T, e *env, req rag.Request) (episode bool, turns map[int64]bool) {
	t.Helper()
	hits, err := e.ret.Retrieve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	turns = map[int64]bool{}
	for _, h := range hits {
		episode = episode || h.Kind == memory.KindEpisode
		if h.Kind != memory.KindEpisode {
			turns[h.Seq] = true
		}
	}
	return episode, turns
}

// episode indexes episode e1 of chat c over from..to, its short summary
// text.
func (e *env) episode(t *testing.T, from, to int64, text string) {
	t.Helper()
	ctx := context.Background()
	ep := rag.Point{Tenant: "t", UserID: "u", ChatID: "c", Agent: "a", Seq: from, Kind: memory.KindEpisode, EpisodeID: "e1",
		FromSeq: from, ToSeq: to, StartedAt: fakeT0, EndedAt: fakeT0.Add(time.Hour), CreatedAt: fakeT0.Add(time.Hour),
		Content: text}
	vecs, err := e.emb.EmbedDocuments(ctx, []string{text})
	if err != nil {
		t.Fatal(err)
	}
	ep.Dense, ep.Sparse = vecs[0], rag.NewSparseEncoder().EncodeDocument(text)
	if err := e.index.Upsert(ctx, []rag.Point{ep}); err != nil {
		t.Fatal(err)
	}
}
