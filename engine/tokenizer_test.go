package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/contextd/contextd/internal/tokens"
)

// An agent on o200k gets its budget and usage counted in o200k: the
// context fits the budget in o200k, its sections add up in o200k, and the
// same text counts differently in cl100k.
func TestBudgetInTheAgentsTokenizer(t *testing.T) {
	ctx := context.Background()
	for _, tok := range []tokens.Counter{tokens.CL100K, tokens.O200K()} {
		t.Run(tok.Name(), func(t *testing.T) {
			s := newTestService(t)
			s.conf.policy = func(string) Policy { p := DefaultPolicy(); p.Tokenizer = tok; return p }
			var msgs []InMessage
			for i := range 40 {
				msgs = append(msgs, InMessage{Role: "user", Content: fmt.Sprintf("Сообщение %d: мы обсуждали поездку в Лиссабон и бронирование отеля.", i)})
			}
			if _, err := s.Append(ctx, "default", "c", AppendInput{Messages: msgs}); err != nil {
				t.Fatal(err)
			}
			for _, budget := range []int{50, 200, 1000} {
				b := budget
				res, err := s.Context(ctx, "default", ContextInput{ChatID: "c", BudgetTokens: &b, Strategy: string(StrategyNone)})
				if err != nil {
					t.Fatal(err)
				}
				u := res.Usage
				if got := tok.Count(res.Context); got != u.TotalTokens || got > budget {
					t.Fatalf("budget %d: %s counts %d, usage says %d", budget, tok.Name(), got, u.TotalTokens)
				}
				if u.RAGTokens+u.SummaryTokens+u.RecentTokens+u.EpisodeTokens != u.TotalTokens {
					t.Fatalf("sections do not add up: %+v", u)
				}
				if tok.Name() == tokens.O200KName && budget == 1000 && tokens.CL100K.Count(res.Context) <= u.TotalTokens {
					t.Fatalf("this Cyrillic text should take more cl100k tokens (%d) than o200k (%d)", tokens.CL100K.Count(res.Context), u.TotalTokens)
				}
			}
		})
	}
	if !strings.Contains(fmt.Sprint(DefaultPolicy().Tokenizer.Name()), "cl100k") {
		t.Fatal("the default tokenizer must be cl100k")
	}
}
