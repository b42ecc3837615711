package lex

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

var ellipsisRe = regexp.MustCompile(`(?:\s*(?:\.{3,}|…))+`)

// Ellipses writes each run of ellipses ("...", "…", with the spaces
// before them) as one "…".
func Ellipses(s string) string { return ellipsisRe.ReplaceAllString(s, "…") }

// Clip shortens s to at most max bytes: at the last sentence end that
// keeps more than half of it, else at the last clause break (, ; : —), else
// at the last word boundary; a cut that is not at a sentence end is marked
// with one "…" (an existing trailing ellipsis is not doubled). Never cuts
// inside a word unless s is a single word longer than max.
func Clip(s string, max int) string {
	s = Tidy(s)
	if len(s) <= max || max <= 0 {
		return s
	}
	const mark = "…"
	room := max - len(mark)
	if room <= 0 {
		return ""
	}
	cut := s[:room+1] // one byte more: a space right after the cut counts
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	if i := lastSentenceEnd(s, len(cut)); i > max/2 {
		return strings.TrimSpace(cut[:i])
	}
	if i := strings.LastIndexAny(cut, ",;:—"); i > max/2 {
		return strings.TrimRight(cut[:i], " ,;:—…") + mark // "…," would end "……"
	}
	if i := strings.LastIndexByte(cut, ' '); i > 0 {
		return strings.TrimRight(cut[:i], " ,;:—…") + mark
	}
	cut = cut[:min(len(cut), room)]
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	return strings.TrimRight(cut, mark) + mark // "00000000…0000" cut after its "…"
}

// Tidy collapses white space and runs of ellipses.
func Tidy(s string) string {
	return Ellipses(strings.Join(strings.Fields(s), " "))
}

// lastSentenceEnd is the byte offset just after the last ".", "!" or "?"
// within s[:n] that ends a sentence of s: followed, in s, by a space or
// its end (0: none). The whole text is read past n, so a "!" inside
// "0!000" is not taken for an end because the cut falls right after it.
func lastSentenceEnd(s string, n int) int {
	for i := min(n, len(s)) - 1; i >= 0; i-- {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && (i+1 == len(s) || s[i+1] == ' ') {
			return i + 1
		}
	}
	return 0
}
