package rag_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/index/embedded"
	"github.com/contextd/contextd/rag"
)

// synthTurn makes a chat-like turn of 8-40 words from a 3,000-word
// vocabulary (Zipf-distributed, like real text) so postings and n-grams
// have realistic shapes.
type synth struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

func newSynth(seed uint64) *synth {
	r := rand.New(rand.NewPCG(seed, 7))
	vocab := make([]string, 3000)
	syll := []string{"ka", "lo", "mi", "ne", "ra", "tu", "se", "po", "di", "gan", "ter", "vel", "os", "qui", "bra"}
	for i := range vocab {
		var b strings.Builder
		for n := 1 + r.IntN(4); n > 0; n-- {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		vocab[i] = b.String()
	}
	return &synth{r: r, zipf: rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1)), vocab: vocab}
}

func (s *synth) turn() string {
	n := 8 + s.r.IntN(33)
	w := make([]string, n)
	for i := range w {
		w[i] = s.vocab[s.zipf.Uint64()]
	}
	return strings.Join(w, " ")
}

func pct(d []time.Duration, p float64) time.Duration {
	slices.Sort(d)
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

// BenchmarkQuery700 measures one retrieval (hashing embed of the query,
// sparse encoding, hybrid query, over-fetch for the recent window) on a
// 700-turn chat, with 30 other chats (6,000 more turns) in the index.
func BenchmarkQuery700(b *testing.B) {
	ctx := context.Background()
	emb := rag.NewHashingEmbedder(384)
	sp := rag.NewSparseEncoder()
	idx, err := embedded.Open(ctx, filepath.Join(b.TempDir(), "v.db"), 384)
	if err != nil {
		b.Fatal(err)
	}
	defer idx.Close()
	s := newSynth(1)
	load := func(tenant, chat string, n int) {
		pts := make([]rag.Point, 0, n)
		for i := 1; i <= n; i++ {
			text := s.turn()
			pts = append(pts, rag.Point{Tenant: tenant, UserID: "u", ChatID: chat, Agent: "a", Seq: int64(i),
				Role: "user", Content: text, CreatedAt: time.Unix(int64(i), 0), Dense: emb.Embed(text), Sparse: sp.EncodeDocument(text)})
		}
		if err := idx.Upsert(ctx, pts); err != nil {
			b.Fatal(err)
		}
	}
	load("t", "big", 700)
	for i := 0; i < 30; i++ {
		load(fmt.Sprint("t", i%3), fmt.Sprint("other", i), 200)
	}
	queries := make([]string, 64)
	for i := range queries {
		queries[i] = s.turn()
	}
	ret := &rag.Retriever{Embedder: emb, Sparse: sp, Index: idx}

	b.Run("retrieve", func(b *testing.B) {
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			start := time.Now()
			hits, err := ret.Retrieve(ctx, rag.Request{Tenant: "t", ChatID: "big", Query: queries[i%len(queries)], K: 5, ExcludeFromSeq: 691})
			if err != nil || len(hits) == 0 {
				b.Fatal(err, len(hits))
			}
			lat = append(lat, time.Since(start))
		}
		b.ReportMetric(float64(pct(lat, 0.50).Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(pct(lat, 0.95).Microseconds())/1000, "p95-ms")
	})
	b.Run("index-query", func(b *testing.B) {
		qs := make([]rag.Query, len(queries))
		for i, q := range queries {
			qs[i] = rag.Query{Filter: rag.Filter{Tenant: "t", ChatIDs: []string{"big"}}, Dense: emb.Embed(q), Sparse: sp.EncodeQuery(q), Limit: 5}
		}
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			start := time.Now()
			if _, err := idx.Query(ctx, qs[i%len(qs)]); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		b.ReportMetric(float64(pct(lat, 0.50).Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(pct(lat, 0.95).Microseconds())/1000, "p95-ms")
	})
}

// BenchmarkIndexer measures draining a backlog of 20 chats × 250 turns
// with the hashing embedder into the embedded index (SQLite file included).
func BenchmarkIndexer(b *testing.B) {
	s := newSynth(2)
	var turns int
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := newEnv(b, rag.NewHashingEmbedder(384))
		e.ixr.BatchSize = 64
		for c := 0; c < 20; c++ {
			texts := make([]string, 250)
			for j := range texts {
				texts[j] = s.turn()
			}
			e.store.add("t", fmt.Sprint("c", c), "u", "a", texts...)
		}
		b.StartTimer()
		start := time.Now()
		n := e.drain(b)
		elapsed += time.Since(start)
		turns += n
		if n != 5000 {
			b.Fatalf("indexed %d", n)
		}
	}
	b.ReportMetric(float64(turns)/elapsed.Seconds(), "turns/s")
}
