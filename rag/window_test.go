package rag

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/contextd/contextd/internal/lex"
)

// SentenceWindow keeps the sentences holding the most query terms, cut on
// sentence boundaries, within the size; the head when nothing matches.
func TestSentenceWindowPicks(t *testing.T) {
	filler := "The weather was mild and nothing much happened that week. "
	target := "The budget tracker stores categories with each transaction. "
	cases := []struct {
		name, text, query string
		max               int
		want              string // the window's text, trimmed
	}{
		{"short text whole", "A short turn.", "budget", 64, "A short turn."},
		{"best sentence", strings.Repeat(filler, 4) + target + strings.Repeat(filler, 4), "budget tracker categories", 80, strings.TrimSpace(target)},
		{"no match: the head", strings.Repeat(filler, 6), "budget", 70, strings.TrimSpace(filler)},
		{"most distinct terms win over repeats", "Budget budget budget budget talk here. " + filler + "The budget tracker handles categories. " + filler,
			"budget tracker categories", 60, "The budget tracker handles categories."},
		{"stems match", filler + "We categorised the transactions. " + filler, "transaction", 60, "We categorised the transactions."},
	}
	for _, c := range cases {
		q := NewWindowQuery(lex.Terms(c.query))
		w := q.SentenceWindow(c.text, c.max)
		if w.To-w.From > max(c.max, minPassageBytes) || w.From < 0 || w.To > len(c.text) || w.From >= w.To {
			t.Fatalf("%s: window %v of %d bytes (max %d)", c.name, w, len(c.text), c.max)
		}
		if got := strings.TrimSpace(c.text[w.From:w.To]); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// A window never splits a rune, whatever the text; a sentence longer than
// the size is kept whole up to four times it.
func TestSentenceWindowRunes(t *testing.T) {
	for _, text := range []string{strings.Repeat("東京都は日本の首都です。", 20), strings.Repeat("é", 300), strings.Repeat("x", 500)} {
		for _, size := range []int{16, 40, 100} {
			w := NewWindowQuery(lex.Terms("首都 x")).SentenceWindow(text, size)
			if w.To-w.From > 4*max(size, minPassageBytes)+utf8.UTFMax || !utf8.ValidString(text[w.From:w.To]) || w.From >= w.To {
				t.Errorf("%q… at %d: window %v", text[:12], size, w)
			}
		}
	}
}

func BenchmarkSentenceWindow(b *testing.B) {
	text := strings.Repeat("The budget tracker stores each transaction with its category and amount. ", 9)
	q := NewWindowQuery(lex.Terms("how did the budget tracker handle categories"))
	for b.Loop() {
		q.SentenceWindow(text, 256)
	}
}

// FuzzTermMatchesMemo: termMatches, with its first-two-bytes filter and its
// memory of words (shared across texts, as a request's snippets share
// it), finds what stemming every word would, on any text.
func FuzzTermMatchesMemo(f *testing.F) {
	f.Add("Deployments failed; the deploy RAN twice. Über café, Queries!", "deployment queries cafe run")
	f.Add("首都 is Tokyo. TOKYO's 首都", "tokyo 首都")
	f.Fuzz(func(t *testing.T, text, query string) {
		q := NewWindowQuery(lex.Terms(query))
		for range 2 { // the second pass is served from memory
			got := termMatches(text, q)
			want := slowTermMatches(text, q)
			if !slices.Equal(got, want) {
				t.Fatalf("termMatches(%q, %q) = %v, want %v", text, query, got, want)
			}
		}
	})
}

// slowTermMatches stems every word of text (termMatches before its
// filter and memory).
func slowTermMatches(text string, q WindowQuery) []termMatch {
	var out []termMatch
	start := -1
	flush := func(end int) {
		if start >= 0 {
			w := lex.Lower(text[start:end])
			if bit, ok := q.bit[lex.Stem(w)]; ok && !lex.IsTermStopword(w) {
				out = append(out, termMatch{start, bit})
			}
		}
		start = -1
	}
	for i, r := range text {
		if !lex.IsCJK(r) && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)) {
			if start < 0 {
				start = i
			}
		} else {
			flush(i)
		}
	}
	flush(len(text))
	return out
}
