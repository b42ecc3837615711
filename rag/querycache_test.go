package rag_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contextd/contextd/rag"
)

// slowEmbedder stands in for a remote embedder: every call costs delay.
type slowEmbedder struct {
	delay time.Duration
	calls atomic.Int32
	fail  atomic.Bool
	dim   int
}

func (s *slowEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, err := s.EmbedQuery(ctx, t)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (s *slowEmbedder) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	s.calls.Add(1)
	time.Sleep(s.delay)
	if s.fail.Load() {
		return nil, errors.New("down")
	}
	v := make([]float32, s.dim)
	v[len(text)%s.dim] = 1
	return v, nil
}

func TestQueryCacheHitsBoundAndIdentity(t *testing.T) {
	ctx := context.Background()
	inner := &slowEmbedder{dim: 4}
	var hits, misses int
	c := rag.NewQueryCache(inner, "openai|m1|http://a|4", 2)
	c.OnLookup = func(hit bool) {
		if hit {
			hits++
		} else {
			misses++
		}
	}
	for range 3 {
		if _, err := c.EmbedQuery(ctx, "where is the hotel"); err != nil {
			t.Fatal(err)
		}
	}
	if inner.calls.Load() != 1 || hits != 2 || misses != 1 {
		t.Fatalf("repeat: calls %d hits %d misses %d, want 1/2/1", inner.calls.Load(), hits, misses)
	}
	// Bound: a third distinct query evicts the least recently used.
	c.EmbedQuery(ctx, "q2")
	c.EmbedQuery(ctx, "where is the hotel") // touch: q2 is now the oldest
	c.EmbedQuery(ctx, "q3")
	if c.Len() != 2 {
		t.Fatalf("len %d, want the bound 2", c.Len())
	}
	before := inner.calls.Load()
	c.EmbedQuery(ctx, "where is the hotel")
	if inner.calls.Load() != before {
		t.Error("recently used entry was evicted")
	}
	c.EmbedQuery(ctx, "q2")
	if inner.calls.Load() != before+1 {
		t.Error("least recently used entry was not evicted")
	}
	// Errors are not cached.
	inner.fail.Store(true)
	if _, err := c.EmbedQuery(ctx, "new"); err == nil {
		t.Fatal("want the embedder's error")
	}
	inner.fail.Store(false)
	if _, err := c.EmbedQuery(ctx, "new"); err != nil {
		t.Fatalf("error was cached: %v", err)
	}
	// Documents are never cached.
	before = inner.calls.Load()
	c.EmbedDocuments(ctx, []string{"where is the hotel"})
	if inner.calls.Load() != before+1 {
		t.Error("EmbedDocuments must reach the embedder")
	}
}

// A cache built for another embedder configuration (the key's identity
// differs) never serves the old model's vectors, even over the same store.
func TestQueryCacheKeyIncludesEmbedderConfig(t *testing.T) {
	ctx := context.Background()
	m1, m2 := &slowEmbedder{dim: 4}, &slowEmbedder{dim: 8}
	c1 := rag.NewQueryCache(m1, "openai|m1|http://a|4", 8)
	c2 := rag.NewQueryCache(m2, "openai|m2|http://a|8", 8)
	v1, _ := c1.EmbedQuery(ctx, "same text")
	v2, _ := c2.EmbedQuery(ctx, "same text")
	if len(v1) != 4 || len(v2) != 8 || m2.calls.Load() != 1 {
		t.Fatalf("vectors %d/%d, calls to the new model %d", len(v1), len(v2), m2.calls.Load())
	}
}

// A repeated query against a 50 ms embedder: the first costs the round
// trip, the rest come from the cache (compare ns/op with the uncached run).
func BenchmarkQueryCacheRepeated50ms(b *testing.B) {
	for _, cached := range []bool{false, true} {
		name := "uncached"
		if cached {
			name = "cached"
		}
		b.Run(name, func(b *testing.B) {
			var e rag.Embedder = &slowEmbedder{delay: 50 * time.Millisecond, dim: 4}
			if cached {
				e = rag.NewQueryCache(e, "fake|50ms", 1024)
			}
			ctx := context.Background()
			for b.Loop() {
				if _, err := e.EmbedQuery(ctx, "which hotel did we book?"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
