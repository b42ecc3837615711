package lex

import "strings"

// HasPhrase reports whether text (lower case) holds phrase between word
// boundaries: "8" is not in "18:00", "berlin" not in "berliner". A byte of
// a multi-byte rune counts as a word byte, so a phrase never matches inside
// a word of another script.
func HasPhrase(text, phrase string) bool {
	for from := 0; phrase != ""; {
		i := strings.Index(text[from:], phrase)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(phrase)
		if (i == 0 || !wordByte(text[i-1])) && (end == len(text) || !wordByte(text[end])) {
			return true
		}
		from = i + 1
	}
	return false
}

func wordByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80 }
