package embedded

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// Facts, passages and episodes keep what filters and hits need across a
// restart (the in-memory items are rebuilt from the file), and the keys of
// the three kinds never collide.
func TestFactsAndPassagesSurviveRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v.db")
	ix, err := Open(ctx, path, 4)
	if err != nil {
		t.Fatal(err)
	}
	valid := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	base := rag.Point{Tenant: "t", UserID: "u", ChatID: "c", Agent: "a", Role: "user", CreatedAt: valid, Dense: []float32{1, 0, 0, 0}}
	pts := []rag.Point{base, base, base, base, base}
	pts[0].Seq, pts[0].Passage, pts[0].PassageTo, pts[0].TurnBytes, pts[0].Content = 2, 0, 4, 8, "abcd"
	pts[1].Seq, pts[1].Passage, pts[1].PassageFrom, pts[1].PassageTo, pts[1].TurnBytes, pts[1].Content = 2, 1, 4, 8, 8, "efgh"
	pts[2].Seq, pts[2].Kind, pts[2].EpisodeID, pts[2].ToSeq, pts[2].StartedAt, pts[2].EndedAt, pts[2].Content =
		2, memory.KindEpisode, "ep-1", 9, valid, valid.Add(time.Hour), "episode"
	pts[3].Seq, pts[3].Kind, pts[3].FactID, pts[3].Seqs, pts[3].ValidAt, pts[3].Superseded, pts[3].Content =
		2, memory.KindFact, "f-1", []int64{2, 3}, valid, true, "fact one"
	pts[4].Seq, pts[4].Kind, pts[4].FactID, pts[4].Seqs, pts[4].ValidAt, pts[4].Content =
		3, memory.KindFact, "f-2", []int64{3}, valid.Add(time.Minute), "fact two"
	if err := ix.Upsert(ctx, pts); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if ix, err = Open(ctx, path, 4); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, tc := range []struct {
		f    rag.Filter
		want int
	}{
		{rag.Filter{Tenant: "t"}, 5},
		{rag.Filter{Tenant: "t", CitingSeq: 3}, 2},
		{rag.Filter{Tenant: "t", CitingSeq: 2}, 1},
		{rag.Filter{Tenant: "t", ItemIDs: []string{"ep-1", "f-2"}}, 2},
		{rag.Filter{Tenant: "t", FromSeq: 3, ToSeq: 3}, 1}, // f-2: a fact's first seq
		{rag.Filter{Tenant: "t", Kinds: []string{memory.KindTurn}, FromSeq: 2, ToSeq: 2}, 2},
		{rag.Filter{Tenant: "t", Kinds: []string{memory.KindFact}, Since: valid.Add(time.Second)}, 1},
	} {
		if n, err := ix.Count(ctx, tc.f); err != nil || n != tc.want {
			t.Errorf("Count(%+v) = %d, %v; want %d", tc.f, n, err, tc.want)
		}
	}
	hits, err := ix.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t"}, Dense: []float32{1, 0, 0, 0}, Limit: 10})
	if err != nil || len(hits) != 5 {
		t.Fatalf("hits %d, %v; want 5", len(hits), err)
	}
	for _, h := range hits {
		switch {
		case h.FactID == "f-1" && (!h.Superseded || !slices.Equal(h.Seqs, []int64{2, 3}) || !h.ValidAt.Equal(valid) || h.Seq != 2):
			t.Errorf("fact after restart: %+v", h.Point)
		case h.Kind == "" && h.Passage == 1 && (h.PassageFrom != 4 || h.PassageTo != 8 || h.TurnBytes != 8 || h.Content != "efgh"):
			t.Errorf("passage after restart: %+v", h.Point)
		case h.Kind == "" && h.Passage == 0 && (h.PassageFrom != 0 || h.PassageTo != 4 || h.TurnBytes != 8):
			t.Errorf("first passage after restart: %+v", h.Point)
		case h.Kind == memory.KindEpisode && (h.EpisodeID != "ep-1" || h.ToSeq != 9 || h.Seq != 2):
			t.Errorf("episode after restart: %+v", h.Point)
		}
	}
	if err := ix.Delete(ctx, rag.Filter{Tenant: "t", CitingSeq: 3}); err != nil {
		t.Fatal(err)
	}
	if err := ix.Delete(ctx, rag.Filter{Tenant: "t", Kinds: []string{memory.KindTurn}, FromSeq: 2, ToSeq: 2}); err != nil {
		t.Fatal(err)
	}
	ix.mu.RLock()
	n, items := ix.n, len(ix.tenants["t"].chats["c"].items)
	ix.mu.RUnlock()
	if n != 1 || items != 1 {
		t.Errorf("after deletes: %d points and %d items in RAM, want the episode alone", n, items)
	}
}

func TestKeysOfKindsAreDisjoint(t *testing.T) {
	for _, tc := range []struct {
		key  int64
		kind pointKind
	}{
		{turnKey(1, 0), kindTurn}, {turnKey(maxSeq, maxPassage), kindTurn},
		{-1, kindEpisode}, {-maxSeq, kindEpisode},
		{factKey(""), kindFact}, {factKey("f-1"), kindFact}, {factKeyTop, kindFact}, {factKeyTop - (1<<62 - 1), kindFact},
	} {
		if got := keyKind(tc.key); got != tc.kind {
			t.Errorf("keyKind(%d) = %d, want %d", tc.key, got, tc.kind)
		}
	}
	if seq, p := turnOf(turnKey(12345, 77)); seq != 12345 || p != 77 {
		t.Errorf("turnOf = %d, %d", seq, p)
	}
}
