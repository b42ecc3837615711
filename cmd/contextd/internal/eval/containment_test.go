package eval

import (
	"strings"
	"testing"
	"time"
)

func TestContentWordsAndContainment(t *testing.T) {
	if got := strings.Join(contentWords("The Lisbon trip, in May 2023 — and the Lisbon hotel!"), " "); got != "lisbon trip may 2023 hotel" {
		t.Fatalf("content words = %q", got)
	}
	if _, ok := containment(contentWords("Yes, it was."), "anything"); ok {
		t.Fatal("an answer without content words must be skipped")
	}
	for _, c := range []struct {
		answer, text string
		want         float64
	}{
		{"7 May 2023", "[Sun 7 May 2023]\nmelanie: we went camping", 1},
		{"camping in the mountains", "Melanie went CAMPING; the lake", 0.5},
		{"pottery", "pot tery", 0},
	} {
		got, ok := containment(contentWords(c.answer), c.text)
		if !ok || got != c.want {
			t.Errorf("containment(%q, %q) = %v, want %v", c.answer, c.text, got, c.want)
		}
	}
}

// BM25 fill with date headers pays for one header per day and lays its
// turns out chronologically under them.
func TestBM25FillDated(t *testing.T) {
	texts := []string{"a: we adopted a dog", "b: the dog is called Rex", "a: lunch was good", "b: Rex loves the park"}
	d1, d2 := time.Date(2023, 5, 7, 10, 0, 0, 0, time.UTC), time.Date(2023, 6, 1, 10, 0, 0, 0, time.UTC)
	dates := []time.Time{d1, d1, d2, d2}
	costs := make([]int, len(texts))
	for i, s := range texts {
		costs[i] = turnCost(s)
	}
	m := newBM25(texts)
	plain, dated := bm25Fill(m, costs, "dog Rex", 1000), bm25FillDated(m, costs, dates, "dog Rex", 1000)
	if len(plain.turns) != len(dated.turns) || dated.tokens <= plain.tokens {
		t.Fatalf("plain %+v, dated %+v: the dated fill must pay for its headers", plain, dated)
	}
	text := packedText(dated, texts, dates, true)
	if !strings.HasPrefix(text, "[Sun 7 May 2023]\na: we adopted a dog\nb: the dog is called Rex\n[Thu 1 June 2023]\n") {
		t.Fatalf("dated text:\n%s", text)
	}
	// At a budget that fits two turns but not two turns and a second header.
	tight := bm25FillDated(m, costs, dates, "dog Rex", dated.tokens-costs[3])
	if tight.tokens > dated.tokens-costs[3] {
		t.Fatalf("over budget: %d", tight.tokens)
	}
}
