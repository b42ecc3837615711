package lex

import "testing"

// A question says the word whole where a chat texts it clipped.
func TestEachClipping(t *testing.T) {
	for _, c := range []struct {
		term string
		want []string // among the prefixes
		not  []string
	}{
		{"physiotherapist", []string{"physio"}, []string{"phy", "physiotherapi"}},
		{"configuration", []string{"config"}, nil},
		{"information", []string{"info"}, nil},
		{"breakfast", []string{"break"}, []string{"brea"}}, // a term under ten clips to five letters at least
		{"physio", nil, []string{"phys"}},                  // too short to be clipped
		{"h2o-based", nil, []string{"h2o-b"}},              // not a word of letters
	} {
		got := map[string]bool{}
		EachClipping(c.term, func(p string) { got[p] = true })
		for _, w := range c.want {
			if !got[w] {
				t.Errorf("%s: no clipping %q in %v", c.term, w, got)
			}
		}
		for _, w := range c.not {
			if got[w] {
				t.Errorf("%s: clipping %q", c.term, w)
			}
		}
	}
}

func TestAsksCurrent(t *testing.T) {
	for q, want := range map[string]bool{
		"which photographer is doing the day in the end?": true,
		"is Tom still riding the 108?":                    true,
		"What's the current node version?":                true,
		"when was the repair man first coming?":           false,
		"what did the physio prescribe?":                  false,
	} {
		if got := AsksCurrent(q); got != want {
			t.Errorf("AsksCurrent(%q) = %v, want %v", q, got, want)
		}
	}
}

// A question says the word whole where a chat texts its short form, and
// the other way round: "what's dad's current medication" meets "send me a
// photo of the med plan".
func TestEachAbbreviation(t *testing.T) {
	for _, c := range []struct{ term, want string }{
		{"medication", "med"}, {"meds", "medication"}, {"appointment", "appt"}, {"prescription", "script"},
	} {
		found := false
		EachAbbreviation(Stem(c.term), func(form string) { found = found || form == Stem(c.want) })
		if !found {
			t.Errorf("%s: no form %q", c.term, c.want)
		}
	}
}
