package lex

import (
	"slices"
	"strings"
	"testing"
)

// TestSplittersDiffer pins how the splitters read the same text apart:
// each difference is on purpose (see the package comment).
func TestSplittersDiffer(t *testing.T) {
	for _, tc := range []struct {
		name, in                   string
		runs, words, fields, ascii string
	}{
		{"apostrophe", "Don't stop", "don|t|stop", "don't|stop", "don|t|stop", "don|t|stop"},
		{"curly apostrophe", "Don’t stop", "don|t|stop", "don|t|stop", "don’t|stop", "don|t|stop"},
		{"hyphen and underscore", "e-mail my_file", "e|mail|my|file", "e-mail|my_file", "e|mail|my|file", "e|mail|my|file"},
		{"accents", "Grüße aus KÖLN", "grüße|aus|köln", "grüße|aus|köln", "grüße|aus|köln", "gr|e|aus|k|ln"},
		{"cjk", "東京都", "東京|京都", "東京都", "東京都", ""},
		{"dash joins fields", "a—b", "a|b", "a|b", "a—b", "a|b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				fn   string
				got  []string
				want string
			}{
				{"Runs", Runs(tc.in), tc.runs},
				{"Words", Words(tc.in), tc.words},
				{"Fields", Fields(tc.in), tc.fields},
				{"ASCIIRuns", ASCIIRuns(tc.in), tc.ascii},
			} {
				if got := strings.Join(c.got, "|"); got != c.want {
					t.Errorf("%s(%q) = %q, want %q", c.fn, tc.in, got, c.want)
				}
			}
		})
	}
}

func TestTermsAndKeywords(t *testing.T) {
	in := "I don't like the deployments we're running"
	if got, want := strings.Join(Terms(in), "|"), "like|deployment|re|run"; got != want {
		t.Errorf("Terms = %q, want %q", got, want)
	}
	if got, want := strings.Join(Keywords(in), "|"), "deployments|running"; got != want {
		t.Errorf("Keywords = %q, want %q", got, want)
	}
	if got, want := strings.Join(QueryTerms("Please tell me about the deployments"), "|"), "deployments"; got != want {
		t.Errorf("QueryTerms = %q, want %q", got, want)
	}
}

func TestVariants(t *testing.T) {
	tests := []struct {
		query, doc string // one word each, unstemmed
		meet       bool
	}{
		{"collection", "collecting", true},
		{"collecting", "collection", true},
		{"delivery", "delivered", true},
		{"deliveries", "deliver", true},
		{"walker", "walks", true},
		{"payment", "paying", true},
		{"confirmation", "confirmed", true},
		{"cancellation", "cancel", true},
		{"cancelled", "cancellation", true},
		{"arrival", "arriving", true},
		{"attendance", "attending", true},
		{"reservation", "reserved", true},
		{"weekly", "weeks", true},
		{"allergies", "allergic", true},
		{"allergic", "allergy", true},
		{"economic", "economy", true},
		{"dinner", "dine", false},
		{"station", "stat", true}, // the price of a family: a few false kin, at half a term's weight
		{"market", "mark", false},
		{"ex", "exer", false},
	}
	for _, tt := range tests {
		q, d := Stem(tt.query), Stem(tt.doc)
		meet := q == d || slices.Contains(Variants(q), d)
		if meet != tt.meet {
			t.Errorf("%q (%q) meets %q (%q) = %v, want %v (variants %q)", tt.query, q, tt.doc, d, meet, tt.meet, Variants(q))
		}
	}
}
