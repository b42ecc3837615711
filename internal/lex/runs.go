package lex

import (
	"strings"
	"unicode"
)

// Runs splits text into lowercase runs of unicode letters, digits and
// combining marks. Scripts written without spaces (Han, Hiragana,
// Katakana) are emitted as overlapping character bigrams (a lone character
// as itself), so that lexical matching works on them at all. A run already
// lowercase ASCII (most of them) is a slice of text, not a copy: this runs
// for every turn indexed and every hit compared.
func Runs(text string) []string {
	var out []string
	var cjk []rune
	start, plain := -1, true // the current word's start; whether it is lowercase ASCII
	flushWord := func(end int) {
		if start < 0 {
			return
		}
		w := text[start:end]
		if !plain {
			w = Lower(w)
		}
		out = append(out, w)
		start, plain = -1, true
	}
	flushCJK := func() {
		switch len(cjk) {
		case 0:
		case 1:
			out = append(out, string(cjk))
		default:
			for i := 0; i+1 < len(cjk); i++ {
				out = append(out, string(cjk[i:i+2]))
			}
		}
		cjk = cjk[:0]
	}
	for i, r := range text {
		switch {
		case IsCJK(r):
			flushWord(i)
			cjk = append(cjk, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			flushCJK()
			if start < 0 {
				start = i
			}
			if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
				plain = false
			}
		default:
			flushWord(i)
			flushCJK()
		}
	}
	flushWord(len(text))
	flushCJK()
	return out
}

// Lower lowercases w rune by rune (unicode.ToLower), as Runs does.
func Lower(w string) string {
	var b strings.Builder
	b.Grow(len(w))
	for _, r := range w {
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// IsCJK reports whether r is of a script written without spaces (Han,
// Hiragana, Katakana), which Runs splits into bigrams.
func IsCJK(r rune) bool {
	if r < 0x2E80 { // below the CJK radicals: Latin, Cyrillic, ... (most text); skips the table lookups
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}
