package rag

import (
	"slices"
	"testing"
)

// The term cache gives each hit its own term set, however many hits it
// holds: a passage of a turn is not the turn, a fact is not the turn it
// came from, and a set is computed once.
func TestTermCacheKeepsHitsApart(t *testing.T) {
	var c hitCache[[]uint32]
	turn := Turn{ChatID: "c1", Seq: 3, Content: "the lockbox code is 4471"}
	passage := turn
	passage.Content, passage.Passages = "wifi password trullo2026", []Passage{{From: 640, To: 700}}
	fact := Turn{ChatID: "c1", Seq: 3, Kind: "fact", Fact: &FactHit{ID: "f1"}, Content: "the lockbox code is 4471 now"}
	other := turn
	other.ChatID = "c2"
	other.Content = "bins go out on tuesday"
	for _, tc := range []struct {
		name string
		t    Turn
	}{{"turn", turn}, {"passage", passage}, {"fact", fact}, {"other chat", other}} {
		got := c.get("t", tc.t, termSet)
		if want := termSet(tc.t.Content); !slices.Equal(got, want) {
			t.Errorf("%s: terms %v, want %v", tc.name, got, want)
		}
	}
	if n := len(c.m); n != 4 {
		t.Errorf("%d entries for 4 hits", n)
	}
	first := c.get("t", turn, termSet)
	turn.Content = "the lockbox code is 9038" // same identity and length: the cached set
	if again := c.get("t", turn, termSet); &again[0] != &first[0] {
		t.Error("a hit seen before was tokenised again")
	}
}

// A choice is read once per hit, and read as choice reads it.
func TestHitCacheReadsChoiceOnce(t *testing.T) {
	var c hitCache[chosenWord]
	calls := 0
	read := func(s string) chosenWord { calls++; return readChoice(s) }
	h := Turn{ChatID: "c1", Seq: 9, Content: "ok we're going with the crown then"}
	for range 3 {
		if got := c.get("t", h, read); !got.ok || got.what != "crown" {
			t.Fatalf("choice %+v, want crown", got)
		}
	}
	if calls != 1 {
		t.Errorf("read %d times, want once", calls)
	}
	if got := c.get("t", Turn{ChatID: "c1", Seq: 10, Content: "see you at the crown"}, read); got.ok {
		t.Errorf("a turn naming a place chose %q", got.what)
	}
}
