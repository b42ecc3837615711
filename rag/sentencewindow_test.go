package rag

import (
	"strings"
	"testing"
)

// A window is whole sentences: it starts at a sentence start, ends at a
// sentence end, and holds the sentence that matches the query, even when
// that sentence alone is longer than the room.
func TestSentenceWindow(t *testing.T) {
	long := "Fukuzumiro and Gora Kadan can prepare a vegetarian kaiseki if you tell them three days ahead, and both have confirmed it in writing for the dates you gave."
	text := "All three serve kaiseki. " + strings.Repeat("The rooms are large and quiet. ", 6) + long + " " + strings.Repeat("Breakfast is at seven. ", 6)
	cases := []struct {
		name, query string
		max         int
		want        string // must be in the window
	}{
		{"match in a sentence longer than the room", "vegetarian kaiseki", 60, long},
		{"match fits with neighbours", "vegetarian", 400, long},
		{"no match: first sentences", "zebra", 60, "All three serve kaiseki."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := NewWindowQuery(Terms(c.query))
			w := q.SentenceWindow(text, c.max)
			got := text[w.From:w.To]
			if !strings.Contains(got, c.want) {
				t.Fatalf("window %q lacks %q", got, c.want)
			}
			if w.From > 0 && text[w.From-1] != ' ' {
				t.Fatalf("window starts mid-word: %q", got)
			}
			if tr := strings.TrimSpace(got); !strings.HasSuffix(tr, ".") {
				t.Fatalf("window does not end a sentence: %q", got)
			}
			if len(got) > 4*c.max {
				t.Fatalf("window of %d bytes for room %d", len(got), c.max)
			}
		})
	}
}
