package qdrant

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/contextd/contextd/index/qdrant/qdranttest"
	"github.com/contextd/contextd/rag"
)

// These measure the adapter plus gRPC plus the fake's brute-force search on
// loopback: a floor for the client side, not a Qdrant figure.

func benchIndex(b *testing.B, n, d int) *Index {
	srv := qdranttest.Start(b)
	ix, err := New(context.Background(), Config{Addr: srv.Addr(), Dim: d, Timeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ix.Close() })
	r := rand.New(rand.NewPCG(1, 2))
	pts := make([]rag.Point, n)
	for i := range pts {
		pts[i] = randPoint(r, d, int64(i+1))
	}
	if err := ix.Upsert(context.Background(), pts); err != nil {
		b.Fatal(err)
	}
	return ix
}

func randPoint(r *rand.Rand, d int, seq int64) rag.Point {
	v := make([]float32, d)
	for j := range v {
		v[j] = r.Float32()*2 - 1
	}
	return rag.Point{Tenant: "t", UserID: "u", ChatID: "c", Agent: "a", Seq: seq, Role: "user",
		Content: "some turn content", CreatedAt: time.Now(), Dense: v,
		Sparse: rag.SparseVector{Indices: []uint32{uint32(r.IntN(50)), uint32(50 + r.IntN(50))}, Values: []float32{1, 1}}}
}

func BenchmarkQuery1kDim384(b *testing.B) {
	ix := benchIndex(b, 1000, 384)
	r := rand.New(rand.NewPCG(3, 4))
	q := randPoint(r, 384, 0)
	query := rag.Query{Filter: rag.Filter{Tenant: "t", ChatIDs: []string{"c"}}, Dense: q.Dense, Sparse: q.Sparse, Limit: 5, ScoreThreshold: 0.1}
	b.ResetTimer()
	for b.Loop() {
		if _, err := ix.Query(context.Background(), query); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUpsert64Dim384(b *testing.B) {
	ix := benchIndex(b, 0, 384)
	r := rand.New(rand.NewPCG(5, 6))
	batch := make([]rag.Point, 64)
	seq := int64(0)
	b.ResetTimer()
	for b.Loop() {
		for i := range batch {
			seq++
			batch[i] = randPoint(r, 384, seq)
		}
		if err := ix.Upsert(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
}
