package rag_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/index/embedded"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// BenchmarkQuery700FactsPassages is BenchmarkQuery700 with what facts and
// passages add: every tenth of the 700 turns is long (~1,500 bytes,
// indexed in passages), and 150 facts are indexed beside them. "all-kinds"
// ranks turns (passages grouped), facts and near-duplicates; "turns-only"
// queries the same index for turns alone.
func BenchmarkQuery700FactsPassages(b *testing.B) {
	ctx := context.Background()
	emb := rag.NewHashingEmbedder(384)
	sp := rag.NewSparseEncoder()
	idx, err := embedded.Open(ctx, filepath.Join(b.TempDir(), "v.db"), 384)
	if err != nil {
		b.Fatal(err)
	}
	defer idx.Close()
	s := newSynth(1)
	vectors := func(pts []rag.Point, texts func(i int) string) {
		for i := range pts {
			pts[i].Dense, pts[i].Sparse = emb.Embed(texts(i)), sp.EncodeDocument(texts(i))
		}
	}
	load := func(tenant, chat string, n int, facts int) {
		c := memory.Chat{Tenant: tenant, ID: chat, UserID: "u", Agent: "a"}
		var pts []rag.Point
		for i := 1; i <= n; i++ {
			text := s.turn()
			if i%10 == 0 {
				var paras []string
				for len(strings.Join(paras, "\n\n")) < 1500 {
					paras = append(paras, s.turn()+". "+s.turn()+".")
				}
				text = strings.Join(paras, "\n\n")
			}
			m := memory.Message{Seq: int64(i), Role: memory.RoleUser, Content: text, CreatedAt: time.Unix(int64(i)*60, 0)}
			pts = append(pts, rag.TurnPoints(c, m, 0)...)
		}
		for i := 1; i <= facts; i++ {
			seq := int64(i * n / (facts + 1))
			f := memory.Fact{ID: fmt.Sprint("f", i), Text: s.turn(), Seqs: []int64{seq}, ValidAt: time.Unix(seq*60, 0),
				SupersededBy: map[bool]string{true: "newer"}[i%7 == 0]}
			pts = append(pts, rag.FactPoint(c, f))
		}
		vectors(pts, func(i int) string { return pts[i].Content })
		if err := idx.Upsert(ctx, pts); err != nil {
			b.Fatal(err)
		}
	}
	load("t", "big", 700, 150)
	for i := 0; i < 30; i++ {
		load(fmt.Sprint("t", i%3), fmt.Sprint("other", i), 200, 40)
	}
	queries := make([]string, 64)
	for i := range queries {
		queries[i] = s.turn()
	}
	ret := &rag.Retriever{Embedder: emb, Sparse: sp, Index: idx}
	for _, c := range []struct {
		name  string
		kinds []string
	}{{"turns-only", []string{memory.KindTurn}}, {"all-kinds", nil}} {
		b.Run(c.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				hits, err := ret.Retrieve(ctx, rag.Request{Tenant: "t", ChatID: "big", Query: queries[i%len(queries)], K: 5,
					ExcludeFromSeq: 691, Kinds: c.kinds})
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
