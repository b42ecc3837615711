package lex

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// sentenceEndRef is the regular expression the scanner replaced: the oracle.
var sentenceEndRef = regexp.MustCompile(`([.!?…]+["'’”)\]]*)\s+|\n+`)

// sentenceSeeds are texts near the edges of the scanner: runs of signs,
// closers, curly quotes, line breaks, a cut multi-byte rune.
var sentenceSeeds = []string{
	"", "Hi. How are you?  Fine!\n\nOK…\"Yes.\" (no.) [a.] ’x.’ ”y!” end",
	"a..b c.!?) d .\n- item\n12. twelve\n3.no", "…\xe2\x80 \xe2\x80\xa6\xe2", ".\"\n\"\xe2\x80\x9d \n",
}

func FuzzSentenceEnds(f *testing.F) {
	for _, s := range sentenceSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got [][2]int
		sentenceEnds(s, func(end, next int) { got = append(got, [2]int{end, next}) })
		var want [][2]int
		for _, m := range sentenceEndRef.FindAllStringSubmatchIndex(s, -1) {
			end := m[1]
			if m[2] >= 0 {
				end = m[3]
			}
			want = append(want, [2]int{end, m[1]})
		}
		if !slices.Equal(got, want) {
			t.Fatalf("sentenceEnds(%q) = %v, want %v", s, got, want)
		}
	})
}

// A list item's label opens its item: no break after "1." or "-".
func TestSentenceBreaksKeepLabelsWithTheirItems(t *testing.T) {
	text := "Closer than the prices suggest:\n\n1.\nHollins is dry hire. 2) Ashcombe has a bar.\n- Fran runs it."
	var got []string
	from := 0
	for _, b := range SentenceBreaks(text, 0) {
		got = append(got, text[from:b])
		from = b
	}
	for _, s := range got {
		switch strings.TrimSpace(s) {
		case "1.", "2)", "-":
			t.Errorf("a label alone between breaks: %q (all %q)", s, got)
		}
	}
	if len(got) < 3 {
		t.Errorf("too few breaks: %q", got)
	}
}

func TestEndsWithQuestion(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{"Would it not make sense for the website to be Shopify too?", true},
		{"whats the house account details again", true},
		{"ok so is the plumber still coming thurs", true},
		{"anyone got the wifi pw", true},
		{"do you know where the spare key went", true},
		{"what's the address so i can look at parking", true}, // a straight apostrophe
		{"what’s the address so i can look at parking", true}, // a curly one
		{"isn't the hall booked till 5", true},
		{"who's bringing the speaker", true},
		{"do the first one", false},              // an order
		{"what a day 😅", false},                  // an exclamation
		{"Where we live it rains a lot.", false}, // a full stop states
		{"sent ✅", false},
		{"I'll send the invoice tomorrow", false},
	} {
		if got := EndsWithQuestion(c.text); got != c.want {
			t.Errorf("EndsWithQuestion(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// An abbreviation the sentence goes on from does not end it.
func TestSentencesKeepAbbreviations(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"my neighbour jean at no. 16 has a spare key. ring her", 2},
		{"cardiology with Dr. Okonkwo March 12. bring the log", 2},
		{"St. Mark's hall is booked. Mrs. Patel has the keys", 2},
		{"is it a yes or a no. 16 people said no", 1}, // the reading accepted: "no." before a digit numbers it
		{"that's a no.\n16 people came", 2},
		{"I said no. Then left", 2},
	} {
		got := Sentences(c.text)
		if len(got) != c.want {
			t.Errorf("Sentences(%q) = %q, want %d sentences", c.text, got, c.want)
		}
	}
}

func TestLastQuestion(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"all sorted. ok whats everyone's new address?? \n", " ok whats everyone's new address??"},
		{"is it still £320?", "is it still £320?"},
		{"line one\nstill 10:30", "still 10:30"},
	} {
		if got := LastQuestion(c.text); got != c.want {
			t.Errorf("LastQuestion(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}
