package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

const martaTurn = "Great. One thing first: please only contact me by email, marta@posteo.nl. I work shifts in a hospital and can't take calls, " +
	"the ward is loud and my phone stays in the locker for twelve hours. " +
	"My manager is strict about it and I have been written up once already for having it on me during a round. " +
	"The rota changes every week so I can't promise any fixed time either. " +
	"On my days off I am usually out with the kids or at my mother's place in Haarlem, and the reception there is terrible anyway. " +
	"I check my inbox twice a day, once in the morning and once after my shift, so emails always reach me within a day. " +
	"If something needs a signature, send the form as a PDF and I will sign and return it the same evening. Never call me, even if it's urgent, just email."

// A standing turn shown cut to its matching passage does not hold the
// instruction its stand-in gives: the stand-in stays beside it (a review
// found "Never call me" lost from every budget the long turn was cut at).
func TestStandInKeptWhenItsTurnIsCut(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	st := s.store.(memory.Backend)
	s.roles.facts, s.roles.profiles = st, st
	if _, err := s.Append(ctx, "default", "c1", AppendInput{UserID: "u1", Messages: []InMessage{{Role: "user", Name: "Marta", Content: martaTurn}}}); err != nil {
		t.Fatal(err)
	}
	appendN(t, s, "c1", 2, 60, 20)
	drawFacts(t, s)
	var hits []rag.Turn
	for i := 0; i < 12; i++ {
		hits = append(hits, rag.Turn{ChatID: "c1", Seq: int64(10 + i), Role: "assistant", Score: 1 - float32(i)*0.02,
			Content: fmt.Sprintf("Battery check %d for customer order %d: the new battery is working, cell group %d reads 3.9 V.", i, 4000+i, i)})
	}
	s.vec.retriever = &fakeRetriever{turns: hits}
	shown := false
	for b := 300; b <= 1200; b += 25 {
		bb := b
		res, err := s.Context(ctx, "default", ContextInput{ChatID: "c1", Query: "is my phone in the locker during shifts at the hospital ward?", BudgetTokens: &bb, Strategy: string(StrategyRAG)})
		if err != nil {
			t.Fatal(err)
		}
		turn := strings.Contains(res.Context, "locker")
		shown = shown || turn
		never := strings.Contains(res.Context, "Never call me")
		if turn && !never {
			t.Errorf("budget %d: turn shown cut, the instruction lost:\n%s", b, res.Context)
			return
		}
	}
	if !shown {
		t.Fatal("the long turn was never shown: the test tests nothing")
	}
}
