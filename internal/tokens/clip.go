package tokens

import "github.com/contextd/contextd/internal/lex"

// Clip cuts s to at most maxTokens cl100k tokens the way lex.Clip cuts
// to bytes: at a sentence end, a clause break or a word boundary,
// marked with one "…". It searches the longest such cut that fits.
func Clip(s string, maxTokens int) string {
	if maxTokens <= 0 {
		return ""
	}
	if Count(s) <= maxTokens {
		return s
	}
	lo, hi := 0, len(s) // the longest byte cap whose clip fits lies in [lo, hi)
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if Count(lex.Clip(s, mid)) <= maxTokens {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lex.Clip(s, lo)
}
