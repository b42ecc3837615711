package rag

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// SentenceScorer scores sentences by their cosine similarity to a query,
// for the "semantic" truncation strategy (it satisfies truncation.Scorer).
// With the hashing embedder the similarity is lexical (shared words and
// word fragments), which is what keeps the sentences mentioning the query's
// terms.
type SentenceScorer struct {
	Embedder Embedder
}

// Score returns one score in [-1, 1] per sentence (0 for an empty one).
func (s SentenceScorer) Score(ctx context.Context, query string, sentences []string) ([]float64, error) {
	if len(sentences) == 0 {
		return nil, nil
	}
	q, err := s.Embedder.EmbedQuery(ctx, TruncateQuery(query))
	if err != nil {
		return nil, fmt.Errorf("score sentences: %w", AsEmbedderError(err))
	}
	vs, err := s.Embedder.EmbedDocuments(ctx, sentences)
	if err != nil {
		return nil, fmt.Errorf("score sentences: %w", AsEmbedderError(err))
	}
	if len(vs) != len(sentences) {
		return nil, fmt.Errorf("%w: score sentences: %d vectors for %d sentences", ErrEmbedder, len(vs), len(sentences))
	}
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = Cosine(q, v)
	}
	return out, nil
}

// Cosine is the cosine similarity of a and b (0 when either is zero or the
// sizes differ).
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// AsEmbedderError makes err match ErrEmbedder (once): what an embedder
// returns, as its callers (the retriever, the indexer) report it.
func AsEmbedderError(err error) error {
	if errors.Is(err, ErrEmbedder) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrEmbedder, err)
}
