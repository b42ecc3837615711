package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
	"github.com/contextd/contextd/truncation"
)

// Verbatim while it fits: a chat whose turns fit the budget is shown
// whole, in order, whatever the strategy and however much of it a summary
// covers; a chat that does not fit fills the budget with the newest turns
// after what retrieval and the summary took, and drops none while budget
// is left.
func TestVerbatimWhileItFits(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		strategy Strategy
		budget   int
		whole    bool
	}{
		{"summary, fits", StrategyRunningSummary, 8000, true},
		{"rag, fits", StrategyRAG, 8000, true},
		{"rag, huge budget", StrategyRAG, 50000, true},
		{"summary, does not fit", StrategyRunningSummary, 900, false},
		{"rag, does not fit", StrategyRAG, 900, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestService(t)
			appendN(t, s, "c", 1, 60, 12) // ~25 tokens a turn, ~1,500 in all
			key := memory.ChatKey{Tenant: "default", ChatID: "c"}
			fs := &fakeSummaries{store: s.store.(memory.Core), upTo: 40}
			if _, _, err := fs.Extend(ctx, key, true); err != nil {
				t.Fatal(err)
			}
			s.vec.retriever = &fakeRetriever{turns: []rag.Turn{{ChatID: "c", Seq: 3, Role: "user", Content: "message 3 about topic 3", Score: 1}}}
			b := tc.budget
			res, err := s.Context(ctx, "default", ContextInput{ChatID: "c", Query: "topic 3", BudgetTokens: &b, Strategy: string(tc.strategy)})
			if err != nil {
				t.Fatal(err)
			}
			seqs := seqsOf(res.Sections.Recent)
			for i := 1; i < len(seqs); i++ {
				if seqs[i] != seqs[i-1]+1 {
					t.Fatalf("recent not contiguous: %v", seqs)
				}
			}
			if len(seqs) == 0 || seqs[len(seqs)-1] != 60 {
				t.Fatalf("recent %v does not end at the newest turn", seqs)
			}
			if tc.whole {
				if len(seqs) != 60 || res.Sections.Summary != nil || len(res.Sections.RAG) != 0 {
					t.Fatalf("recent %v, summary %v, rag %d: want the whole chat alone", seqs, res.Sections.Summary != nil, len(res.Sections.RAG))
				}
				if res.Usage.DroppedTurns != 0 || strings.Contains(res.Context, titleSummary) {
					t.Fatalf("dropped %d; context:\n%s", res.Usage.DroppedTurns, res.Context)
				}
				for i := 1; i <= 60; i++ {
					if !strings.Contains(res.Context, fmt.Sprintf("message %d about", i)) {
						t.Fatalf("turn %d missing from the context", i)
					}
				}
				return
			}
			// The tail fills what is left: less than one more turn is free.
			if free := tc.budget - res.Usage.TotalTokens; free > 90 { // three turns: charges are upper bounds
				t.Fatalf("%d tokens left free with turns %d.. of 60 shown:\n%s", free, seqs[0], res.Context)
			}
			if res.Usage.DroppedTurns != 0 && seqs[0] > 41 && res.Sections.Summary != nil {
				t.Logf("dropped %d (pending turns that did not fit)", res.Usage.DroppedTurns)
			}
		})
	}
}

// Whole turns: a turn shorter than a passage is never cut; a longer one
// keeps whole sentences, among them the ones that match the query.
func TestCutSentences(t *testing.T) {
	answer := "Fukuzumiro and Gora Kadan can prepare a vegetarian kaiseki if you ask three days ahead."
	long := "All three serve kaiseki. " + strings.Repeat("The baths are open until midnight and the rooms face the river. ", 12) +
		answer + " " + strings.Repeat("Check-in is from three and breakfast is served in the room. ", 12)
	s := newTestService(t)
	short := strings.Repeat("Short turns stay whole. ", 20) // 480 bytes, over a 200-char cap
	for _, tc := range []struct {
		name, text, query string
		maxChars          int
		want              []string
		whole             bool
	}{
		{"short turn over a small cap", short, "", 200, []string{short}, true},
		{"long turn, answer in the middle", long, "vegetarian kaiseki for the diet", 700, []string{answer, "[…]", "All three serve kaiseki."}, false},
		{"long turn, no query", long, "", 700, []string{"All three serve kaiseki.", "[…]"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, info := s.truncate(context.Background(), tc.text, truncation.Options{MaxChars: tc.maxChars, Query: tc.query})
			if tc.whole != (got == tc.text) || info.Truncated == tc.whole {
				t.Fatalf("whole=%v truncated=%v, want whole=%v:\n%s", got == tc.text, info.Truncated, tc.whole, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("cut lacks %q:\n%s", w, got)
				}
			}
			for _, line := range strings.Split(got, "\n") {
				if line != "[…]" && !strings.HasSuffix(strings.TrimSpace(line), ".") {
					t.Errorf("a line does not end a sentence: %q", line)
				}
			}
			if len(got) > 2*max(tc.maxChars, wholeTurnBytes) {
				t.Errorf("cut is %d bytes for a cap of %d", len(got), tc.maxChars)
			}
		})
	}
}

// In a chat that names its speakers, a retrieved turn says who spoke, as
// a recent turn does: "user: I'm vegetarian" in a chat of two friends does
// not say which one.
func TestRetrievedTurnsKeepTheirSpeaker(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	var msgs []InMessage
	for i := 1; i <= 80; i++ {
		name := []string{"Mia", "Lukas"}[i%2]
		msgs = append(msgs, InMessage{ID: fmt.Sprint("m", i), Role: "user", Name: name, Content: fmt.Sprintf("message %d %s", i, strings.Repeat("chat ", 10))})
	}
	msgs[2].Content = "btw i dont eat meat anymore, vegetarian since may"
	if _, err := s.Append(ctx, "default", "c", AppendInput{UserID: "u", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	s.vec.retriever = &fakeRetriever{turns: []rag.Turn{{ChatID: "c", Seq: 3, Role: "user", Content: msgs[2].Content, Score: 1}}}
	b := 300 // the chat does not fit: turn 3 comes back retrieved
	res, err := s.Context(ctx, "default", ContextInput{ChatID: "c", Query: "dinner ideas for us", BudgetTokens: &b, Strategy: string(StrategyRAG)})
	if err != nil {
		t.Fatal(err)
	}
	if want := "user (Lukas): btw i dont eat meat anymore, vegetarian since may"; !strings.Contains(res.Context, want) {
		t.Fatalf("context lacks %q:\n%s", want, res.Context)
	}
	if len(res.Sections.RAG) != 1 || res.Sections.RAG[0].Name != "Lukas" {
		t.Fatalf("sections.rag = %+v, want turn 3 named Lukas", res.Sections.RAG)
	}
}

// A chat shown whole is dated: a line opens each day, so a model can
// place what was said in time.
func TestRecentTurnsDated(t *testing.T) {
	day1 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	day2 := day1.Add(50 * time.Hour)
	vs := []Turn{
		{Seq: 1, Role: "user", Content: "I start the plan today.", CreatedAt: day1},
		{Seq: 2, Role: "assistant", Content: "Good luck.", CreatedAt: day1.Add(time.Minute)},
		{Seq: 3, Role: "user", Content: "Day three: ran 5 km.", CreatedAt: day2},
	}
	a := Assemble(AssemblyInput{Budget: 500, Strategy: StrategyRunningSummary, Verbatim: vs, WholeChat: true})
	want := "## Recent turns\n[Mon 2 March 2026]\nuser: I start the plan today.\nassistant: Good luck.\n[Wed 4 March 2026]\nuser: Day three: ran 5 km."
	if a.Context != want {
		t.Fatalf("context:\n%s\nwant:\n%s", a.Context, want)
	}
}

// Every turn fits once a long one is cut to whole sentences: the chat is
// still shown whole (the long turn cut), with no summary standing in for
// none of it.
func TestWholeChatWithALongTurnCut(t *testing.T) {
	long := strings.Repeat("A long sentence about the plan for the launch. ", 120) // ~1,200 tokens whole
	vs := []Turn{
		{Seq: 1, Role: "user", Content: "Let us plan the launch."},
		{Seq: 2, Role: "assistant", Content: long[:900] + "\n[…]", Truncated: true, full: long},
		{Seq: 3, Role: "user", Content: "Thanks, send it."},
	}
	a := Assemble(AssemblyInput{Budget: 400, Strategy: StrategyRunningSummary, Verbatim: vs, WholeChat: true,
		Summary: sampleSummary(), CoveredTo: 1, MustKeepFrom: 3})
	if len(a.Sections.Recent) != 3 || a.Sections.Summary != nil {
		t.Fatalf("recent %v, summary %v: want the three turns alone", seqsOf(a.Sections.Recent), a.Sections.Summary != nil)
	}
	if strings.Contains(a.Context, long) || !strings.Contains(a.Context, "[…]") {
		t.Fatalf("the long turn is not shown cut:\n%s", a.Context)
	}
}
