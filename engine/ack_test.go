package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/contextd/contextd/rag"
)

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

// An acknowledgement found as a hit (its speaker's name is indexed with
// it, so "whats priya's forwarding address" meets Priya's "perfect") is
// not shown, unless it answers a question shown before it.
func TestAcknowledgementHitNotShown(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	msgs := []InMessage{
		{ID: "a", Role: "user", Name: "Priya", Content: "perfect"},
		{ID: "b", Role: "user", Name: "Priya", Content: "guys my new address in leeds for forwarding is 9 ashfield grove, leeds LS6 3AB"},
		{ID: "c", Role: "user", Name: "Elif", Content: "shall i book the van for saturday?"},
		{ID: "d", Role: "user", Name: "Priya", Content: "yes 👍"},
	}
	for i := 0; i < 30; i++ {
		msgs = append(msgs, InMessage{ID: fmt.Sprint("f", i), Role: "user", Name: "Elif", Content: fmt.Sprintf("filler turn %d about the weather and trains", i)})
	}
	if _, err := s.Append(ctx, "default", "c", AppendInput{UserID: "u", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	s.vec.retriever = &fakeRetriever{turns: []rag.Turn{
		{ChatID: "c", Seq: 2, Role: "user", Content: msgs[1].Content, Score: 1},
		{ChatID: "c", Seq: 1, Role: "user", Content: "perfect", Score: 0.5},
		{ChatID: "c", Seq: 3, Role: "user", Content: msgs[2].Content, Score: 0.4},
		{ChatID: "c", Seq: 4, Role: "user", Content: msgs[3].Content, Score: 0.3},
	}}
	b := 400
	res, err := s.Context(ctx, "default", ContextInput{ChatID: "c", Query: "whats priya's forwarding address in leeds", BudgetTokens: &b, Strategy: string(StrategyRAG)})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Context, "perfect") {
		t.Errorf("an acknowledgement found for its speaker's name is shown:\n%s", res.Context)
	}
	if !strings.Contains(res.Context, "9 ashfield grove") || !strings.Contains(res.Context, "yes 👍") {
		t.Errorf("the address, or the yes to a question shown, is missing:\n%s", res.Context)
	}
}
