package rag

import (
	"context"
	"math"

	"github.com/contextd/contextd/internal/lex"
)

// HashingEmbedder is contextd's offline default embedder: a feature-hashing
// bag of words and character n-grams. It needs no model and no network and
// is fully deterministic, but it is LEXICAL, not semantic: texts are close
// when they share words or word fragments ("deploy"/"deployment" are close,
// "car"/"automobile" are not). Use an OpenAI-compatible or Ollama embedder
// for semantic recall; the sparse (BM25) side of hybrid search covers exact
// terms either way.
//
// Features: each word (lowercased letters/digits) and the 3-, 4- and 5-grams
// of the word wrapped in boundary markers ("<word>"), hashed with FNV-1a
// into Dimensions buckets with a hash-derived sign (so collisions cancel out
// on average instead of piling up). A word's weight is sublinear in its
// count (1 + ln tf); its n-grams share one word's worth of weight. The
// vector is L2-normalised, so a dot product is the cosine similarity. Empty
// text gives the zero vector.
type HashingEmbedder struct {
	dim int
}

// NewHashingEmbedder returns a hashing embedder with dim buckets (384 when
// dim <= 0).
func NewHashingEmbedder(dim int) *HashingEmbedder {
	if dim <= 0 {
		dim = DefaultHashingDimensions
	}
	return &HashingEmbedder{dim: dim}
}

// DefaultHashingDimensions is the hashing embedder's default vector size.
const DefaultHashingDimensions = 384

// Dimensions returns the vector size.
func (h *HashingEmbedder) Dimensions() int { return h.dim }

// EmbedDocuments embeds each text.
func (h *HashingEmbedder) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = h.Embed(t)
	}
	return out, nil
}

// EmbedQuery embeds one text (queries and documents are treated alike).
func (h *HashingEmbedder) EmbedQuery(_ context.Context, text string) ([]float32, error) {
	return h.Embed(text), nil
}

const (
	wordSeed  = fnvOffset64
	gramSeed  = fnvOffset64 ^ 0x9e3779b97f4a7c15 // separate namespace from words
	minGram   = 3
	maxGram   = 5
	gramShare = 1.0 // total weight of a word's n-grams relative to the word
)

// Embed returns the vector of text.
func (h *HashingEmbedder) Embed(text string) []float32 {
	v := make([]float32, h.dim)
	ws := lex.Runs(text)
	if len(ws) == 0 {
		return v
	}
	tf := make(map[string]int, len(ws))
	order := make([]string, 0, len(ws)) // first-seen order keeps float sums deterministic
	for _, w := range ws {
		if tf[w] == 0 {
			order = append(order, w)
		}
		tf[w]++
	}
	var offs [64]int
	for _, w := range order {
		weight := float32(1 + math.Log(float64(tf[w])))
		h.add(v, fnv1a64(wordSeed, w), weight)

		// n-grams of "<w>", on rune boundaries.
		padded := "<" + w + ">"
		o := offs[:0]
		for i := range padded {
			o = append(o, i)
		}
		o = append(o, len(padded))
		runes := len(o) - 1
		grams := 0
		for n := minGram; n <= maxGram; n++ {
			if runes >= n {
				grams += runes - n + 1
			}
		}
		if grams == 0 {
			continue
		}
		gw := weight * float32(gramShare/math.Sqrt(float64(grams)))
		for n := minGram; n <= maxGram; n++ {
			for i := 0; i+n <= runes; i++ {
				h.add(v, fnv1a64(gramSeed, padded[o[i]:o[i+n]]), gw)
			}
		}
	}
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s > 0 {
		inv := float32(1 / math.Sqrt(s))
		for i := range v {
			v[i] *= inv
		}
	}
	return v
}

func (h *HashingEmbedder) add(v []float32, hash uint64, w float32) {
	// Bucket from the low bits, sign from a high bit (independent enough).
	b := int(hash % uint64(h.dim))
	if hash>>63 == 1 {
		w = -w
	}
	v[b] += w
}
