package tokens

import (
	"unicode"
	"unicode/utf8"
)

// This file is a hand-written equivalent of the cl100k pre-tokenizer regex
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// as executed by the codec (regexp2 with the engine that regexp2cg generated
// for this pattern: codec/regexp.gen.go in github.com/tiktoken-go/tokenizer).
// Character classes are those of regexp2: \s is unicode.IsSpace, \p{L} and
// \p{N} are the Go unicode tables. The scanner works on bytes of valid UTF-8.

// codecQuirks selects the codec's engine over real regex semantics. The
// engine that regexp2cg generated for this pattern, which the codec runs,
// differs from a backtracking engine (tiktoken, regexp2's interpreter) in
// two places:
//   - `\s*[\r\n]+` backtracks \s* to the FIRST \r or \n of the whitespace
//     run (helpers.IndexOfAny2), so "\n \n" splits as "\n", " \n" where
//     tiktoken keeps "\n \n" whole;
//   - its ASCII bitmaps leave out DEL (U+007F) from [^\r\n\p{L}\p{N}] and
//     [^\s\p{L}\p{N}], so no alternative matches at a DEL and the engine
//     skips it: DEL yields no token.
//
// Count must equal the codec, so the quirks are on; the other mode is kept,
// and tested against regexp2's interpreter, in case the codec is fixed.
const codecQuirks = true

// Character class bits.
const (
	clL   uint8 = 1 << iota // \p{L}
	clN                     // \p{N}
	clS                     // \s
	clNL                    // \r or \n (also has clS)
	clDEL                   // U+007F, in no class of the codec's engine
)

func classOf(r rune) uint8 {
	switch {
	case r == '\r' || r == '\n':
		return clS | clNL
	case unicode.IsSpace(r):
		return clS
	case unicode.IsLetter(r):
		return clL
	case unicode.IsNumber(r):
		return clN
	case r == 0x7f:
		return clDEL
	}
	return 0
}

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for b := range t {
		t[b] = classOf(rune(b))
	}
	return t
}()

// classAt returns the class and byte size of the rune at s[i].
func classAt(s string, i int) (uint8, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return classOf(r), n
}

// spanLetters returns the end of the run of \p{L} runes starting at i.
func spanLetters(s string, i int) int {
	for i < len(s) {
		if b := s[i]; b < utf8.RuneSelf {
			if asciiClass[b]&clL == 0 {
				break
			}
			i++
			continue
		}
		c, n := classAt(s, i)
		if c&clL == 0 {
			break
		}
		i += n
	}
	return i
}

// nextPiece returns the bounds of the next pre-tokenizer piece at or after
// i (i < len(s)); start > i when the codec's engine skips DELs (then the
// piece may be empty, at the end of s). quirks selects the codec's engine
// over real regex semantics (see codecQuirks).
func nextPiece(s string, i int, quirks bool) (start, end int) {
	if quirks {
		for i < len(s) && s[i] == 0x7f {
			i++
		}
		if i == len(s) {
			return i, i
		}
	}
	return i, pieceEnd(s, i, quirks)
}

// pieceEnd returns the end of the piece that starts at i: the first of the
// pattern's alternatives that matches there, in the pattern's order.
func pieceEnd(s string, i int, quirks bool) int {
	if s[i] == '\'' && i+1 < len(s) {
		if end := contractionEnd(s, i); end > 0 {
			return end
		}
	}
	c0, n0 := classAt(s, i)
	if !quirks {
		c0 &^= clDEL
	}

	// [^\r\n\p{L}\p{N}]?\p{L}+
	if c0&clL != 0 {
		return spanLetters(s, i+n0)
	}
	if c0&(clN|clNL|clDEL) == 0 && i+n0 < len(s) {
		if c1, n1 := classAt(s, i+n0); c1&clL != 0 {
			return spanLetters(s, i+n0+n1)
		}
	}

	// \p{N}{1,3}
	if c0&clN != 0 {
		return spanNumbers(s, i+n0)
	}

	//  ?[^\s\p{L}\p{N}]+[\r\n]*
	if end := punctEnd(s, i, quirks); end >= 0 {
		return end
	}

	if c0&clS == 0 {
		// Unreachable: DEL was skipped, and every other rune is a letter,
		// a number, a space or punctuation. Consume one rune so the caller
		// always progresses.
		return i + n0
	}
	return spaceEnd(s, i, quirks)
}

// contractionEnd matches (?i:'s|'t|'re|'ve|'m|'ll|'d) at i, an
// apostrophe (the engine also folds ſ, U+017F, to s): its end, or 0.
func contractionEnd(s string, i int) int {
	switch s[i+1] {
	case 's', 'S', 't', 'T', 'm', 'M', 'd', 'D':
		return i + 2
	case 'r', 'R', 'v', 'V':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return i + 3
		}
	case 'l', 'L':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return i + 3
		}
	case 0xC5: // ſ is C5 BF
		if i+2 < len(s) && s[i+2] == 0xBF {
			return i + 3
		}
	}
	return 0
}

// spanNumbers returns the end of \p{N}{1,3} whose first rune ends at j.
func spanNumbers(s string, j int) int {
	for k := 1; k < 3 && j < len(s); k++ {
		c, n := classAt(s, j)
		if c&clN == 0 {
			break
		}
		j += n
	}
	return j
}

// punctEnd matches ` ?[^\s\p{L}\p{N}]+[\r\n]*` at i: its end, or -1.
func punctEnd(s string, i int, quirks bool) int {
	j := i
	if s[j] == ' ' {
		j++
	}
	k := j
	for k < len(s) {
		c, n := classAt(s, k)
		if !quirks {
			c &^= clDEL
		}
		if c != 0 {
			break
		}
		k += n
	}
	if k == j {
		return -1
	}
	for k < len(s) && (s[k] == '\r' || s[k] == '\n') {
		k++
	}
	return k
}

// spaceEnd matches the whitespace alternatives at i, a space rune:
// \s*[\r\n]+, \s+(?!\S) and \s+, scanning the run of \s once.
func spaceEnd(s string, i int, quirks bool) int {
	end, last := i, i // end of run; start of its last rune
	firstNL, lastNLAt := -1, -1
	for end < len(s) {
		c, n := classAt(s, end)
		if c&clS == 0 {
			break
		}
		if c&clNL != 0 {
			if firstNL < 0 {
				firstNL = end
			}
			lastNLAt = end
		}
		last = end
		end += n
	}

	// \s*[\r\n]+
	if firstNL >= 0 {
		if !quirks {
			return lastNLAt + 1
		}
		k := firstNL
		for k < len(s) && (s[k] == '\r' || s[k] == '\n') {
			k++
		}
		return k
	}
	// \s+(?!\S): the whole run at the end of input, else all but its last
	// rune if that leaves at least one.
	if end == len(s) || last > i {
		if end == len(s) {
			return end
		}
		return last
	}
	// \s+
	return end
}
