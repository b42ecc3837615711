package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/contextd/contextd/rag"
)

// The best hit, too long to be shown whole in what the budget leaves, is
// shown by its matching sentences (an elision mark around them) rather
// than not at all; and the short turn retrieved beside it as its
// neighbour is shown only with it, never alone as a stray turn.
func TestBestHitTooLongShowsItsSnippet(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	long := "ok long msg bc the host finally sent the check in stuff. " + strings.Repeat("the cabin is the brown one at the end of the road and parking is only for two cars. ", 6) +
		"the gate code is 3916, then the key is in a lockbox by the side door, lockbox code is 0508. " + strings.Repeat("trash goes out sunday morning and the bins are behind the shed. ", 6)
	msgs := []InMessage{{ID: "a", Role: "user", Content: long}, {ID: "b", Role: "user", Content: "wait i thought we said leave at 1?"}}
	for i := 0; i < 30; i++ {
		msgs = append(msgs, InMessage{ID: fmt.Sprint("f", i), Role: []string{"user", "assistant"}[i%2], Content: fmt.Sprintf("filler turn %d about the weather and trains", i)})
	}
	if _, err := s.Append(ctx, "default", "c", AppendInput{UserID: "u", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	s.vec.retriever = &fakeRetriever{turns: []rag.Turn{
		{ChatID: "c", Seq: 1, Role: "user", Content: long, Score: 1},
		{ChatID: "c", Seq: 2, Role: "user", Content: msgs[1].Content, Score: 1, Neighbor: true},
	}}
	for _, b := range []int{160, 400} {
		res, err := s.Context(ctx, "default", ContextInput{ChatID: "c", Query: "whats the lockbox code", BudgetTokens: &b, Strategy: string(StrategyRAG)})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Context, "lockbox code is 0508.") || !strings.Contains(res.Context, rag.Elision) {
			t.Errorf("budget %d: the best hit's matching sentence is not shown:\n%s", b, res.Context)
		}
		if strings.Contains(res.Context, "leave at 1") && !strings.Contains(res.Context, "the gate code is 3916") {
			t.Errorf("budget %d: a neighbour shown without its hit:\n%s", b, res.Context)
		}
	}
}
