package truncation

import (
	"context"
	"strings"
	"testing"
)

// text100KB is about 100 KB of mixed prose (ASCII, accents, CJK, emoji).
var text100KB = func() string {
	var b strings.Builder
	for b.Len() < 100_000 {
		b.WriteString(prose)
	}
	return b.String()
}()

func BenchmarkTruncate100KB(b *testing.B) {
	for _, bc := range []struct {
		name string
		o    Options
	}{
		{"hard_chars", Options{Strategy: Hard, MaxChars: 1000}},
		{"middle_chars", Options{Strategy: Middle, MaxChars: 1000}},
		{"hard_tokens", Options{Strategy: Hard, MaxTokens: 1000}},
		{"middle_tokens", Options{Strategy: Middle, MaxTokens: 1000}},
		{"middle_both", Options{Strategy: Middle, MaxChars: 1000, MaxTokens: 250}},
		{"semantic_chars", Options{Strategy: Semantic, MaxChars: 1000, Query: "latency cache", Scorer: lengthScorer{}}},
		{"semantic_tokens", Options{Strategy: Semantic, MaxTokens: 250, Query: "latency cache", Scorer: lengthScorer{}}},
		{"fits_tokens", Options{Strategy: Middle, MaxTokens: 100_000}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(text100KB)))
			b.ReportAllocs()
			for b.Loop() {
				Truncate(context.Background(), text100KB, bc.o)
			}
		})
	}
}
