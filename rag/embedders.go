package rag

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Sentinels the engine maps to `degraded` reasons; match with errors.Is.
var (
	// ErrEmbedder: the embedder failed, timed out or answered malformed
	// (wrong count or dimension). Reported as embedder_unavailable.
	ErrEmbedder = errors.New("embedder unavailable")
	// ErrIndexUnavailable: the vector index failed. Reported as
	// vector_store_unavailable.
	ErrIndexUnavailable = errors.New("vector index unavailable")
)

// Dimensioner is implemented by embedders that know their vector size.
type Dimensioner interface {
	Dimensions() int
}

// Guarded wraps an embedder so a bad remote cannot corrupt the index: each
// call gets a deadline, texts go in batches of BatchSize, and an answer with
// the wrong number of vectors, a wrong dimension or non-finite values is an
// error wrapping ErrEmbedder (so the indexer leaves the turns in its
// backlog). Every error it returns wraps ErrEmbedder.
type Guarded struct {
	Inner Embedder
	// Dim is the expected dimension; 0 = not checked (remote.New always
	// sets it). Not changed after construction, so Guarded is safe for
	// concurrent use.
	Dim       int
	Timeout   time.Duration // per call; 0 = none
	BatchSize int           // 0 = everything in one call
	// Name appears in errors ("openai", "ollama").
	Name string
}

// Dimensions returns the expected vector size (0 while unknown).
func (g *Guarded) Dimensions() int { return g.Dim }

// EmbedDocuments embeds texts in batches, checking every answer.
func (g *Guarded) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	bs := g.BatchSize
	if bs <= 0 {
		bs = len(texts)
	}
	for start := 0; start < len(texts); start += bs {
		end := min(start+bs, len(texts))
		// A copy: langchaingo rewrites newlines in the slice it is given.
		batch := append([]string(nil), texts[start:end]...)
		vecs, err := g.call(ctx, func(ctx context.Context) ([][]float32, error) {
			return g.Inner.EmbedDocuments(ctx, batch)
		})
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(batch) {
			return nil, fmt.Errorf("%w: %s returned %d vectors for %d texts", ErrEmbedder, g.name(), len(vecs), len(batch))
		}
		for i, v := range vecs {
			if err := g.check(v); err != nil {
				return nil, fmt.Errorf("%w (text %d)", err, start+i)
			}
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// EmbedQuery embeds one text, checking the answer.
func (g *Guarded) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vecs, err := g.call(ctx, func(ctx context.Context) ([][]float32, error) {
		v, err := g.Inner.EmbedQuery(ctx, text)
		return [][]float32{v}, err
	})
	if err != nil {
		return nil, err
	}
	if err := g.check(vecs[0]); err != nil {
		return nil, err
	}
	return vecs[0], nil
}

func (g *Guarded) name() string {
	if g.Name != "" {
		return g.Name
	}
	return "embedder"
}

// call runs f under the per-call deadline and turns panics (a client
// indexing an empty answer) and errors into ErrEmbedder.
func (g *Guarded) call(ctx context.Context, f func(context.Context) ([][]float32, error)) (vecs [][]float32, err error) {
	if g.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.Timeout)
		defer cancel()
	}
	defer func() {
		if r := recover(); r != nil {
			vecs, err = nil, fmt.Errorf("%w: %s: malformed answer (%v)", ErrEmbedder, g.name(), r)
		}
	}()
	vecs, err = f(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %s: %w (timeout %s)", ErrEmbedder, g.name(), ctx.Err(), g.Timeout)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrEmbedder, g.name(), err)
	}
	return vecs, nil
}

func (g *Guarded) check(v []float32) error {
	if len(v) == 0 {
		return fmt.Errorf("%w: %s returned an empty vector", ErrEmbedder, g.name())
	}
	if g.Dim > 0 && len(v) != g.Dim {
		return fmt.Errorf("%w: %s returned a %d-dimensional vector, expected %d (check embedder.dimensions and the model)",
			ErrEmbedder, g.name(), len(v), g.Dim)
	}
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%w: %s returned a non-finite value", ErrEmbedder, g.name())
		}
	}
	return nil
}
