package truncation

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds a small approximate grapheme segmenter (user-perceived
// characters, UAX #29) built on the unicode package, since the module adds
// no segmentation library. It never splits a rune and keeps together:
//   - CR LF;
//   - a base and its Extend/SpacingMark runes: Mn, Me, Mc, ZWJ U+200D,
//     ZWNJ U+200C, variation selectors (U+FE00–FE0F, U+E0100–E01EF),
//     emoji skin-tone modifiers U+1F3FB–1F3FF, tag characters
//     U+E0020–E007F (subdivision flags), halfwidth kana voicing marks;
//   - ZWJ sequences: after a ZWJ, a pictograph (category So or the
//     U+1F000–1FAFF block) joins the cluster (emoji families, professions);
//   - regional indicators, in pairs (flags);
//   - Hangul conjoining jamo sequences (L, V, T, LV, LVT).
// Known limits: Prepend characters (GB9b, e.g. some Indic signs written
// before the base) start their own cluster; Extended_Pictographic is
// approximated by So + the emoji block, so a ZWJ followed by a rare
// non-So pictograph breaks, and a ZWJ between two non-emoji letters does
// not join them (which matches UAX #29); Indic conjunct rules (GB9c,
// Unicode 15.1) are not applied, so a virama + consonant starts a new
// cluster. Controls (Cc, Cf other than the joiners above, Zl, Zp) are
// always clusters of their own, as in UAX #29.

// sanitize returns s with every invalid UTF-8 byte replaced by U+FFFD, so
// that everything downstream works on valid text and emits valid text.
func sanitize(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s { // range yields U+FFFD for each invalid byte
		b.WriteRune(r)
	}
	return b.String()
}

// boundaries returns the byte offsets of the cluster boundaries of s,
// starting with 0 and ending with len(s): cluster i is s[b[i]:b[i+1]].
// s must be valid UTF-8 (see sanitize).
func boundaries(s string) []int {
	b := make([]int, 1, len(s)+1) // an upper bound: never regrows
	for i := 0; i < len(s); {
		i = clusterEnd(s, i)
		b = append(b, i)
	}
	return b
}

// clusterCount is the number of grapheme clusters in s (valid UTF-8).
func clusterCount(s string) int {
	n := 0
	for i := 0; i < len(s); n++ {
		i = clusterEnd(s, i)
	}
	return n
}

// clusterEnd returns the end offset of the cluster that starts at i.
func clusterEnd(s string, i int) int {
	// Fast path: an ASCII rune other than CR followed by ASCII (or the end)
	// is a cluster of its own, since no joiner or mark is ASCII.
	if c := s[i]; c < utf8.RuneSelf && c != '\r' && (i+1 == len(s) || s[i+1] < utf8.RuneSelf) {
		return i + 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	j := i + size
	switch {
	case r == '\r':
		if j < len(s) && s[j] == '\n' {
			return j + 1
		}
		return j
	case isControl(r):
		return j
	case isRegional(r):
		if r2, size2 := utf8.DecodeRuneInString(s[j:]); j < len(s) && isRegional(r2) {
			j += size2
		}
	case hangulType(r) != hNone:
		j = hangulEnd(s, r, j)
	}
	prev := r
	for j < len(s) {
		r2, size2 := utf8.DecodeRuneInString(s[j:])
		if !isExtend(r2) && !(prev == zwj && isPictograph(r2)) {
			break
		}
		prev = r2
		j += size2
	}
	return j
}

const zwj = '\u200D'

// isControl: the Control class of UAX #29 (CR and LF handled by the
// caller), minus the joiners and tags, which extend.
func isControl(r rune) bool {
	switch {
	case r == '\n':
		return true
	case r == zwj || r == '\u200C' || (r >= 0xE0020 && r <= 0xE007F):
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp)
}

// isExtend: runes that never start a cluster after a non-control base.
func isExtend(r rune) bool {
	switch {
	case r < 0x300:
		return false
	case r == zwj || r == '\u200C',
		r >= 0xFE00 && r <= 0xFE0F,
		r >= 0x1F3FB && r <= 0x1F3FF,
		r >= 0xE0020 && r <= 0xE007F,
		r >= 0xE0100 && r <= 0xE01EF,
		r == 0xFF9E || r == 0xFF9F:
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc)
}

func isRegional(r rune) bool { return r >= 0x1F1E6 && r <= 0x1F1FF }

// isPictograph approximates Extended_Pictographic.
func isPictograph(r rune) bool {
	return (r >= 0x1F000 && r <= 0x1FAFF) || (r >= 0x2000 && unicode.Is(unicode.So, r))
}

type hangul int

const (
	hNone hangul = iota
	hL
	hV
	hT
	hLV
	hLVT
)

func hangulType(r rune) hangul {
	switch {
	case r >= 0x1100 && r <= 0x115F, r >= 0xA960 && r <= 0xA97C:
		return hL
	case r >= 0x1160 && r <= 0x11A7, r >= 0xD7B0 && r <= 0xD7C6:
		return hV
	case r >= 0x11A8 && r <= 0x11FF, r >= 0xD7CB && r <= 0xD7FB:
		return hT
	case r >= 0xAC00 && r <= 0xD7A3:
		if (r-0xAC00)%28 == 0 {
			return hLV
		}
		return hLVT
	}
	return hNone
}

// hangulEnd extends a cluster that starts with Hangul rune first (already
// consumed up to j) over the jamo that may follow it (GB6–GB8).
func hangulEnd(s string, first rune, j int) int {
	prev := hangulType(first)
	for j < len(s) {
		r, size := utf8.DecodeRuneInString(s[j:])
		t := hangulType(r)
		ok := false
		switch prev {
		case hL:
			ok = t == hL || t == hV || t == hLV || t == hLVT
		case hV, hLV:
			ok = t == hV || t == hT
		case hT, hLVT:
			ok = t == hT
		}
		if !ok {
			return j
		}
		prev = t
		j += size
	}
	return j
}

// isSpaceCluster reports whether cluster c is whitespace only.
func isSpaceCluster(c string) bool {
	for _, r := range c {
		if !unicode.IsSpace(r) {
			return false
		}
	}
	return c != ""
}
