package rag_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/contextd/contextd/rag"
)

// rawEmbedder answers whatever fn returns.
type rawEmbedder struct {
	fn func(ctx context.Context, texts []string) ([][]float32, error)
}

func (r rawEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return r.fn(ctx, texts)
}
func (r rawEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := r.fn(ctx, []string{text})
	return v[0], err // panics on an empty answer, like langchaingo's EmbedQuery
}

func TestGuarded(t *testing.T) {
	vec := func(n int, x float32) []float32 {
		v := make([]float32, n)
		v[0] = x
		return v
	}
	for _, tc := range []struct {
		name string
		fn   func(ctx context.Context, texts []string) ([][]float32, error)
		ok   bool
	}{
		{"good", func(_ context.Context, texts []string) ([][]float32, error) {
			out := make([][]float32, len(texts))
			for i := range out {
				out[i] = vec(4, 1)
			}
			return out, nil
		}, true},
		{"too few", func(_ context.Context, texts []string) ([][]float32, error) {
			return [][]float32{vec(4, 1)}, nil
		}, false},
		{"empty answer", func(context.Context, []string) ([][]float32, error) { return nil, nil }, false},
		{"wrong dim", func(_ context.Context, texts []string) ([][]float32, error) {
			out := make([][]float32, len(texts))
			for i := range out {
				out[i] = vec(5, 1)
			}
			return out, nil
		}, false},
		{"NaN", func(_ context.Context, texts []string) ([][]float32, error) {
			out := make([][]float32, len(texts))
			for i := range out {
				out[i] = vec(4, float32(math.NaN()))
			}
			return out, nil
		}, false},
		{"error", func(context.Context, []string) ([][]float32, error) { return nil, errors.New("refused") }, false},
		{"hangs", func(ctx context.Context, _ []string) ([][]float32, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &rag.Guarded{Inner: rawEmbedder{tc.fn}, Dim: 4, Timeout: 50 * time.Millisecond, BatchSize: 2}
			vs, err := g.EmbedDocuments(context.Background(), []string{"a", "b", "c"})
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, rag.ErrEmbedder)) {
				t.Errorf("EmbedDocuments: %v", err)
			}
			if tc.ok && len(vs) != 3 {
				t.Errorf("got %d vectors", len(vs))
			}
			_, err = g.EmbedQuery(context.Background(), "q")
			if tc.name == "too few" {
				return // one text in, one vector out: fine
			}
			if tc.ok != (err == nil) || (err != nil && !errors.Is(err, rag.ErrEmbedder)) {
				t.Errorf("EmbedQuery: %v", err)
			}
		})
	}
}
