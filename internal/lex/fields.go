package lex

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Fields splits s into lowercase runs of ASCII letters and digits and any
// non-ASCII rune: what ranking reads. Unlike Runs, a non-ASCII rune never
// ends a field (a curly apostrophe or a dash joins its neighbours, CJK is
// not cut into bigrams) and nothing is stemmed; ranking only asks whether
// a text holds a query's words (Coverage), by prefix.
func Fields(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	})
}

// IsRankStopword reports whether the field w is one ranking ignores in a
// query: function words and the words of asking ("please", "tell").
func IsRankStopword(w string) bool { return rankStopwords[w] }

// rankStopwords are ContainmentStopwords and the words of asking.
var rankStopwords = func() map[string]bool {
	m := Set(`ok okay please tell know`)
	for w := range containmentStopwords {
		m[w] = true
	}
	return m
}()

// IsContainmentStopword reports whether the ASCII run w is one the
// evaluation's answer-token containment leaves out of an answer (the
// protocol's list; ranking leaves out these and a few more).
func IsContainmentStopword(w string) bool { return containmentStopwords[w] }

var containmentStopwords = Set(`a an the of to in on at for and or but is are was were be been being do does did
	what when where who whom which why how with from by as that this these those it its i you he she they we me my
	your his her their our about has have had will would can could any some into than then there here just not no yes`)

// QueryTerms are the query's distinct content fields, in order: two bytes
// or more, not rank stopwords.
func QueryTerms(q string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range Fields(q) {
		if len(w) < 2 || rankStopwords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// Coverage is the share of terms that text holds (a field, or a field
// starting with the term: "christened" holds "christen").
// It reads text's fields (as Fields does) one at a time into one buffer:
// it runs for every ranking candidate of every request.
func Coverage(terms []string, text string) float64 {
	if len(terms) == 0 {
		return 0
	}
	var held [32]bool
	var found []bool
	if len(terms) <= len(held) {
		found = held[:len(terms)]
	} else {
		found = make([]bool, len(terms))
	}
	n := 0
	var buf [64]byte
	w := buf[:0]
	check := func() {
		for i, t := range terms {
			if !found[i] && len(w) >= len(t) && string(w[:len(t)]) == t { // HasPrefix, without a string of w
				found[i] = true
				n++
			}
		}
		w = w[:0]
	}
	for _, r := range text {
		r = unicode.ToLower(r)
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 {
			w = utf8.AppendRune(w, r)
			continue
		}
		if len(w) > 0 {
			check()
		}
	}
	if len(w) > 0 {
		check()
	}
	return float64(n) / float64(len(terms))
}

// ASCIIRuns are the runs of [a-z0-9] of the lowercased s: the evaluation
// protocol's answer tokens for containment. Unlike Fields, a non-ASCII
// rune ends a run ("don’t" is "don", "t" as "don't" is).
func ASCIIRuns(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
}
