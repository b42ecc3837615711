package facts

import (
	"regexp"
	"testing"

	"github.com/contextd/contextd/internal/lex"
)

// vocativeRef is the expression vocativeEnd replaced: the oracle.
var vocativeRef = regexp.MustCompile(`^[A-Z][a-z]+(?: [A-Z][a-z]+)?[,!]\s+`)

var scanSeeds = []string{
	"", "Mel, I went", "Mel Smith! hi", "Mel Smith hi", "Mel,x", "M, a", "Okay, use h = 0.25 instead", "So my sister lives in Oslo",
	"Please always reply in French", "We'll go with Postgres", "I'm going to Lisbon next week", "Next week, I start a job",
	"We've been training for months", "I really love hiking", "I can't stand mornings", "oK use x = 1", "okuse it", "ſo my dog is old",
}

func FuzzVocativeEnd(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := 0
		if m := vocativeRef.FindStringIndex(s); m != nil {
			want = m[1]
		}
		if got := vocativeEnd(s); got != want {
			t.Fatalf("vocativeEnd(%q) = %d, want %d", s, got, want)
		}
	})
}

// FuzzPreChecks: lead and also refuse a sentence only when the pattern's
// expression does not match it.
func FuzzPreChecks(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !isASCII(s) {
			return
		}
		v := newView(s, lex.Words(s))
		for i, pt := range patterns {
			if holdsAny(v.norm, pt.need) && !v.mayMatch(i) && pt.re.MatchString(s) {
				t.Fatalf("pattern %d refuses %q, which it matches (%q)", i, s, pt.re.FindString(s))
			}
		}
	})
}

func TestViewHoldsEveryPattern(t *testing.T) {
	if len(patterns) > len(view{}.held) {
		t.Fatalf("%d patterns, view.held has room for %d", len(patterns), len(view{}.held))
	}
}
