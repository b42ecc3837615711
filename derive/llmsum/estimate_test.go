package llmsum

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/contextd/contextd/derive/llmsum/llmtest"
	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// TestEstimateInput: what EstimateInput says a request costs is what
// Summarize sends (system and user prompts over all its calls), with and
// without a previous summary, in one call or in chunks.
func TestEstimateInput(t *testing.T) {
	prev := memory.Summary{Topics: []string{"lockers"}, Narrative: "The crew talked about lockers and shifts."}
	var eps []memory.Episode
	for i := 0; i < 6; i++ {
		at := time.Date(2024, 6, 3, i, 0, 0, 0, time.UTC)
		eps = append(eps, memory.Episode{FromSeq: int64(40*i + 1), ToSeq: int64(40*i + 40), StartedAt: at, EndedAt: at,
			Short: fmt.Sprintf("Episode %d went over the rota.", i), Summary: memory.Summary{Decisions: []string{"rotate weekly"}}})
	}
	for _, c := range []struct {
		name   string
		req    memory.SummarizeRequest
		budget int
	}{
		{"compression from turns", memory.SummarizeRequest{Turns: turns(1, 8), Structured: true}, 0},
		{"extension from episodes", memory.SummarizeRequest{Prev: &prev, Episodes: eps, Structured: true}, 0},
		{"chunked turns", memory.SummarizeRequest{Prev: &prev, Turns: turns(1, 60), Structured: true}, 600},
		{"refresh", memory.SummarizeRequest{Prev: &prev}, 0},
		{"nothing", memory.SummarizeRequest{}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Content: goodJSON}))
			s := newSum(t, srv, Options{InputBudgetTokens: c.budget})
			est := s.EstimateInput(c.req)
			if _, err := s.Summarize(context.Background(), c.req); err != nil {
				t.Fatal(err)
			}
			sent := 0
			for _, r := range srv.Requests() {
				sent += tokens.Count(r.System()) + tokens.Count(r.User())
			}
			if c.name == "chunked turns" && len(srv.Requests()) < 2 {
				t.Fatalf("%d calls, want chunks", len(srv.Requests()))
			}
			// Chunks after the first carry the summary the model wrote,
			// not req.Prev: about the same size.
			if d := est - sent; d < -sent/10 || d > sent/10 {
				t.Errorf("estimate %d tokens, sent %d over %d calls", est, sent, len(srv.Requests()))
			}
		})
	}
}
