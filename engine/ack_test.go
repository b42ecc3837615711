package engine

import "testing"

func TestAcknowledgement(t *testing.T) {
	for text, want := range map[string]bool{
		"👍":                     true,
		"ok thanks!":            true,
		"legend ❤️":             true,
		"Done.":                 true,
		"ok, book the 9:10":     false,
		"yes but only on tues":  false,
		"no":                    false, // an answer that says something
		"thanks, it was £31.50": false,
	} {
		if got := acknowledgement(text); got != want {
			t.Errorf("acknowledgement(%q) = %v, want %v", text, got, want)
		}
	}
}
