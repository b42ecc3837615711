package rag_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/contextd/contextd/index/embedded"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// BenchmarkQuery700Episodes is BenchmarkQuery700 with episodes: the 700
// turns of the chat are also 25 episodes of 28 turns (short summaries
// indexed beside them), and retrieval ranks both and drills into the best
// two episodes for their own turns. "turns-only" is the same index queried
// for turns alone, the baseline.
func BenchmarkQuery700Episodes(b *testing.B) {
	ctx := context.Background()
	emb := rag.NewHashingEmbedder(384)
	sp := rag.NewSparseEncoder()
	idx, err := embedded.Open(ctx, filepath.Join(b.TempDir(), "v.db"), 384)
	if err != nil {
		b.Fatal(err)
	}
	defer idx.Close()
	s := newSynth(1)
	point := func(tenant, chat string, seq int64, text string) rag.Point {
		return rag.Point{Tenant: tenant, UserID: "u", ChatID: chat, Agent: "a", Seq: seq, Role: "user", Content: text,
			CreatedAt: time.Unix(seq*60, 0), Dense: emb.Embed(text), Sparse: sp.EncodeDocument(text)}
	}
	var pts []rag.Point
	for i := int64(1); i <= 700; i++ {
		pts = append(pts, point("t", "big", i, s.turn()))
	}
	for from := int64(1); from <= 700; from += 28 {
		text := s.turn() + " " + s.turn()
		p := point("t", "big", from, text)
		p.Role, p.Kind, p.EpisodeID, p.FromSeq, p.ToSeq = "", memory.KindEpisode, fmt.Sprint("ep", from), from, min(from+27, 700)
		p.StartedAt, p.EndedAt = time.Unix(from*60, 0), time.Unix(p.ToSeq*60, 0)
		p.CreatedAt = p.EndedAt
		pts = append(pts, p)
	}
	if err := idx.Upsert(ctx, pts); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		var other []rag.Point
		for j := int64(1); j <= 200; j++ {
			other = append(other, point(fmt.Sprint("t", i%3), fmt.Sprint("other", i), j, s.turn()))
		}
		if err := idx.Upsert(ctx, other); err != nil {
			b.Fatal(err)
		}
	}
	queries := make([]string, 64)
	for i := range queries {
		queries[i] = s.turn()
	}
	ret := &rag.Retriever{Embedder: emb, Sparse: sp, Index: idx}
	for _, c := range []struct {
		name  string
		kinds []string
		drill int
	}{{"turns-only", []string{memory.KindTurn}, 0}, {"with-episodes", nil, 2}} {
		b.Run(c.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				hits, err := ret.Retrieve(ctx, rag.Request{Tenant: "t", ChatID: "big", Query: queries[i%len(queries)], K: 5,
					ExcludeFromSeq: 691, Kinds: c.kinds, Drill: c.drill})
				if err != nil || len(hits) == 0 {
					b.Fatal(err, len(hits))
				}
				lat = append(lat, time.Since(start))
			}
			b.ReportMetric(float64(pct(lat, 0.50).Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(pct(lat, 0.95).Microseconds())/1000, "p95-ms")
		})
	}
}
