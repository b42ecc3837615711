package lex

import (
	"strings"
	"testing"
)

// coverageRef is Coverage as it was written first (in engine): every word of the
// lower-cased text, then each term against them. Coverage must agree.
func coverageRef(terms []string, text string) float64 {
	if len(terms) == 0 {
		return 0
	}
	ws := Fields(text)
	n := 0
	for _, t := range terms {
		for _, w := range ws {
			if strings.HasPrefix(w, t) {
				n++
				break
			}
		}
	}
	return float64(n) / float64(len(terms))
}

func TestCoverage(t *testing.T) {
	for _, tc := range []struct {
		terms []string
		text  string
		want  float64
	}{
		{[]string{"christen", "boat"}, "The Boat was christened in May", 1},
		{[]string{"vault", "key"}, "the deploy KEY", 0.5},
		{[]string{"köln"}, "Grüße aus KÖLN!", 1},
		{[]string{"x"}, "", 0},
		{nil, "anything", 0},
		{[]string{"ab", "ab"}, "abc", 1}, // a repeated term counts each time
	} {
		if got := Coverage(tc.terms, tc.text); got != tc.want {
			t.Errorf("Coverage(%q, %q) = %v, want %v", tc.terms, tc.text, got, tc.want)
		}
	}
}

func FuzzCoverage(f *testing.F) {
	f.Add("deploy key vault", "The deploy key lives in VAULT at secret/deploy/prod")
	f.Add("straße über", "STRASSE Über \xff\xfe ünd")
	f.Add("a1 b2 c3", "A1B2 c3-d4")
	f.Fuzz(func(t *testing.T, q, text string) {
		terms := QueryTerms(q)
		if got, want := Coverage(terms, text), coverageRef(terms, text); got != want {
			t.Fatalf("Coverage(%q, %q) = %v, the reference %v", terms, text, got, want)
		}
	})
}
