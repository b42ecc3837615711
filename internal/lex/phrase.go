package lex

import "strings"

// HasPhrase reports whether text (lower case) holds phrase between word
// boundaries: "8" is not in "18:00", "berlin" not in "berliner". A byte of
// a multi-byte rune counts as a word byte, so a phrase never matches inside
// a word of another script.
func HasPhrase(text, phrase string) bool { return PhraseIndex(text, phrase) >= 0 }

// PhraseIndex is where phrase first occurs in text as HasPhrase finds it
// (not inside a longer word or number), -1 when it does not.
func PhraseIndex(text, phrase string) int {
	for from := 0; phrase != ""; {
		i := strings.Index(text[from:], phrase)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(phrase)
		if (i == 0 || !wordByte(text[i-1])) && (end == len(text) || !wordByte(text[end])) {
			return i
		}
		from = i + 1
	}
	return -1
}

func wordByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80 }
