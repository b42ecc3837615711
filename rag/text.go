package rag

import (
	"strings"
	"unicode"
)

// words splits text into lowercase runs of unicode letters and digits.
// Scripts written without spaces (Han, Hiragana, Katakana) are emitted as
// overlapping character bigrams (a lone character as itself), so that
// lexical matching works on them at all. A word already lowercase ASCII
// (most of them) is a slice of text, not a copy: this runs for every turn
// indexed and every hit compared.
func words(text string) []string {
	var out []string
	var cjk []rune
	start, plain := -1, true // the current word's start; whether it is lowercase ASCII
	flushWord := func(end int) {
		if start < 0 {
			return
		}
		w := text[start:end]
		if !plain {
			w = lowerWord(w)
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
		case isCJK(r):
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

func lowerWord(w string) string {
	var b strings.Builder
	b.Grow(len(w))
	for _, r := range w {
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

func isCJK(r rune) bool {
	if r < 0x2E80 { // below the CJK radicals: Latin, Cyrillic, ... (most text); skips the table lookups
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}

// fnv1a64 is FNV-1a over s, starting from seed (pass fnvOffset64 for the
// standard hash); inlined so hashing n-grams allocates nothing.
func fnv1a64(seed uint64, s string) uint64 {
	h := seed
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return h
}

func fnv1a32(s string) uint32 {
	h := uint32(fnvOffset32)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= fnvPrime32
	}
	return h
}

const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
	fnvOffset32 = 2166136261
	fnvPrime32  = 16777619
)
