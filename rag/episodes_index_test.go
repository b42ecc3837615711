package rag_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/contextd/contextd/jobs/index"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// recIndex records upserts and deletes; it can fail upserts.
type recIndex struct {
	rag.Index
	mu      sync.Mutex
	points  []rag.Point
	deletes []rag.Filter
	fail    error
}

func (x *recIndex) Upsert(_ context.Context, ps []rag.Point) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.fail != nil {
		return x.fail
	}
	x.points = append(x.points, ps...)
	return nil
}

func (x *recIndex) Delete(_ context.Context, f rag.Filter) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.deletes = append(x.deletes, f)
	return nil
}

func (x *recIndex) episodes() []rag.Point {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []rag.Point
	for _, p := range x.points {
		if p.Kind == memory.KindEpisode {
			out = append(out, p)
		}
	}
	return out
}

// TestIndexerEpisodes: closed episodes are upserted as episode points (the
// short summary as content, range and dates in plain fields) and marked;
// an index outage leaves them in the backlog.
func TestIndexerEpisodes(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t, t.TempDir())
	appendTurns(t, st, "t", "c", "u", filler(12, "moving")...)
	t0 := time.Date(2023, 5, 3, 9, 0, 0, 0, time.UTC)
	eps, err := st.CloseEpisodes(ctx, memory.ChatKey{Tenant: "t", ChatID: "c"}, 0, []memory.Episode{
		{FromSeq: 1, ToSeq: 6, StartedAt: t0, EndedAt: t0.Add(time.Hour), Short: "They planned the Lisbon move.",
			Summary: memory.Summary{Topics: []string{"lisbon move"}, Decisions: []string{"move in May"}}},
		{FromSeq: 7, ToSeq: 9, StartedAt: t0.Add(48 * time.Hour), EndedAt: t0.Add(49 * time.Hour), Short: ""},
	})
	if err != nil {
		t.Fatal(err)
	}
	idx := &recIndex{fail: errors.New("index down")}
	ixr := &index.Indexer{Store: st, Embedder: rag.NewHashingEmbedder(64), Index: idx, Owner: "it", Kinds: []memory.WorkKind{memory.IndexEpisodes}}
	if _, err := ixr.DrainOnce(ctx); !errors.Is(err, rag.ErrIndexUnavailable) {
		t.Fatalf("drain with the index down: %v", err)
	}
	idx.fail = nil
	n, err := ixr.DrainOnce(ctx)
	if err != nil || n != 12+2 {
		t.Fatalf("drain: %d %v, want 12 turns + 2 episodes", n, err)
	}
	got := idx.episodes()
	if len(got) != 1 {
		t.Fatalf("%d episode points, want 1 (the one without a short summary is marked, not indexed)", len(got))
	}
	p := got[0]
	if p.Tenant != "t" || p.ChatID != "c" || p.UserID != "u" || p.Agent != "a" || p.Seq != 1 || p.FromSeq != 1 || p.ToSeq != 6 ||
		p.EpisodeID != eps[0].ID || p.Content != "They planned the Lisbon move." || !p.StartedAt.Equal(t0) ||
		!p.EndedAt.Equal(t0.Add(time.Hour)) || !p.CreatedAt.Equal(p.EndedAt) || len(p.Dense) != 64 || len(p.Sparse.Indices) == 0 {
		t.Errorf("episode point %+v", p)
	}
	if text := rag.EpisodeText(eps[0]); text != "They planned the Lisbon move. lisbon move move in May" {
		t.Errorf("episode text %q", text)
	}
	if left, _ := st.Pending(ctx, memory.IndexEpisodes, 0); len(left) != 0 {
		t.Errorf("backlog left: %v", left)
	}
	if n, err := ixr.DrainOnce(ctx); err != nil || n != 0 || len(idx.episodes()) != 1 {
		t.Errorf("second drain: %d %v", n, err)
	}
	if !slices.ContainsFunc(idx.points, func(p rag.Point) bool { return p.Kind == "" && p.Seq == 12 }) {
		t.Error("turns not indexed")
	}
}
