package lex

import "testing"

func TestHasPhrase(t *testing.T) {
	for _, tc := range []struct {
		text, phrase string
		want         bool
	}{
		{"dinner at 8 then", "8", true},
		{"dinner at 18:00", "8", false},
		{"we live in berlin.", "berlin", true},
		{"the berliner was good", "berlin", false},
		{"the berliner, then berlin", "berlin", true},
		{"anything", "", false},
	} {
		if got := HasPhrase(tc.text, tc.phrase); got != tc.want {
			t.Errorf("HasPhrase(%q, %q) = %v, want %v", tc.text, tc.phrase, got, tc.want)
		}
	}
}
