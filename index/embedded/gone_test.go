package embedded

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// TestHitDroppedWhenItsRowGoes: an episode hit whose payload was read (here:
// cached) but whose row is deleted before its own fields are read is left
// out of the answer; the query does not fail.
func TestHitDroppedWhenItsRowGoes(t *testing.T) {
	ctx := context.Background()
	ix, err := Open(ctx, filepath.Join(t.TempDir(), "v.db"), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	base := rag.Point{Tenant: "t", ChatID: "c", Role: "user", CreatedAt: at, Dense: []float32{1, 0, 0, 0}}
	turn, ep := base, base
	turn.Seq, turn.Content = 1, "a turn"
	ep.Seq, ep.Kind, ep.EpisodeID, ep.ToSeq, ep.StartedAt, ep.EndedAt, ep.Content = 1, memory.KindEpisode, "ep-1", 4, at, at, "an episode"
	if err := ix.Upsert(ctx, []rag.Point{turn, ep}); err != nil {
		t.Fatal(err)
	}
	q := rag.Query{Filter: rag.Filter{Tenant: "t"}, Dense: []float32{1, 0, 0, 0}, Limit: 10}
	qv := make([]int8, 4)
	dq := &denseQuery{qv: qv, qscale: quantise(q.Dense, qv)}
	hits, _, err := ix.rank(q, dq, rag.SparseVector{}, 40)
	if err != nil || len(hits.hits) != 2 {
		t.Fatalf("rank: %d hits, %v", len(hits.hits), err)
	}
	// The episode's payload is cached without its own fields, then its row
	// is deleted behind the index's back, as a rebuild would meanwhile.
	for _, h := range hits.keys {
		if keyKind(h.key) == kindEpisode {
			ix.payloads.put(ix.payloads.getAll(func(int) payloadKey { return payloadKey{} }, nil, nil),
				payloadKey{"t", "c", h.key}, payload{ok: true, role: "user", content: "an episode", created: at.UnixNano()})
		}
	}
	if _, err := ix.db.ExecContext(ctx, `DELETE FROM points WHERE seq < 0`); err != nil {
		t.Fatal(err)
	}
	got, err := ix.fill(ctx, "t", hits)
	if err != nil {
		t.Fatalf("fill with an episode deleted meanwhile: %v", err)
	}
	if len(got) != 1 || got[0].Kind == memory.KindEpisode || got[0].Content != "a turn" {
		t.Fatalf("hits %+v, want the turn alone", got)
	}
}
