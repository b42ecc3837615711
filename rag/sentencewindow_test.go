package rag

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/contextd/contextd/internal/lex"
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
			q := NewWindowQuery(lex.Terms(c.query))
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

// FuzzSentenceWindow: a window is a span of the text, within 4× the room
// (a whole sentence may pass the room, a blob is cut), empty only for an
// empty text, and the whole text when it fits.
func FuzzSentenceWindow(f *testing.F) {
	f.Add("All three serve kaiseki. The rooms are quiet. Vegetarian kaiseki on request.", "vegetarian", 30)
	f.Add("no terminator at all in this long run of words", "words", 10)
	f.Add("日本語の文。もう一つの文！", "文", 8)
	f.Fuzz(func(t *testing.T, text, query string, room int) {
		if room < 0 || room > 1<<16 {
			t.Skip()
		}
		q := NewWindowQuery(lex.Terms(query))
		w := q.SentenceWindow(text, room)
		if w.From < 0 || w.To > len(text) || w.From > w.To {
			t.Fatalf("window %+v of a %d-byte text", w, len(text))
		}
		r := max(room, minPassageBytes)
		if len(text) <= r && (w.From != 0 || w.To != len(text)) {
			t.Fatalf("a text that fits is cut: %+v", w)
		}
		if w.To-w.From > 4*r+utf8MaxRune {
			t.Fatalf("window of %d bytes for room %d", w.To-w.From, r)
		}
		if utf8.ValidString(text) && !utf8.ValidString(text[w.From:w.To]) {
			t.Fatalf("window %+v cuts a rune", w)
		}
		if len(text) > 0 && w.To == w.From {
			t.Fatalf("empty window of a %d-byte text", len(text))
		}
		if !windowAmong(text, room, w) {
			t.Fatalf("window %+v is none of SentenceWindows", w)
		}
	})
}

// windowAmong: w is one of the spans SentenceWindows yields.
func windowAmong(text string, room int, w Span) bool {
	found := false
	SentenceWindows(text, room, func(s Span) { found = found || s == w })
	return found
}

// SentenceWindows yields every window SentenceWindow can choose, whatever
// the query (a caller bounds the cost of a snippet by them before
// matching it): random texts of sentences of 1-40 words, some long
// "sentences", random queries of their words.
func TestSentenceWindowsHoldTheChoice(t *testing.T) {
	words := strings.Fields("the plan moved to Berlin and the budget was approved on Monday while a long review of every contract went on")
	r := rand.New(rand.NewPCG(7, 43))
	left := 0 // windows left out as inside an earlier one
	for n := range 3000 {
		var b strings.Builder
		for range 1 + r.IntN(12) {
			for w := range 1 + r.IntN(40) {
				if w > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(words[r.IntN(len(words))])
			}
			b.WriteString([]string{". ", "? ", "\n", "; "}[r.IntN(4)])
		}
		text := b.String()
		var query []string
		for range 1 + r.IntN(4) {
			query = append(query, words[r.IntN(len(words))])
		}
		room := 16 + r.IntN(400)
		w := NewWindowQuery(lex.Terms(strings.Join(query, " "))).SentenceWindow(text, room)
		if !windowAmong(text, room, w) {
			t.Fatalf("case %d: window %+v (%q) is none of SentenceWindows", n, w, text[w.From:w.To])
		}
		all, kept, reach := 0, 0, -1
		sentenceWindows(text, max(room, minPassageBytes), func(Span) { all++ })
		SentenceWindows(text, room, func(s Span) {
			if s.To <= reach {
				t.Fatalf("case %d: window %+v is inside an earlier one", n, s)
			}
			reach = s.To
			kept++
		})
		if len(text) > max(room, minPassageBytes) {
			left += all - kept
		}
	}
	if left == 0 {
		t.Fatal("no window was ever left out: the test does not exercise containment")
	}
}

const utf8MaxRune = 4
