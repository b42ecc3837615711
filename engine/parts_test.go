package engine

import (
	"strings"
	"testing"
	"time"
)

// A long log turn retrieved by its summary lines, whose error line fell
// into another passage: the error is shown in the turn's own line when
// the budget has room, never on a line (or under a header) of its own,
// and never without the passage its turn was retrieved by.
func TestPartShownInItsTurnsLine(t *testing.T) {
	at := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	main := RAGTurn{Seq: 10, Role: "user", Score: 1, CreatedAt: at,
		Content:  "[…]\nFAILED tests/test_refunds.py::test_partial_refund\n1 failed, 34 passed\n[…]",
		Passages: []PassageRef{{From: 1040, To: 1450, Len: 1600}}}
	part := RAGTurn{Seq: 10, Role: "user", Score: 0.9, CreatedAt: at, part: true,
		Content:  "[…]\npsycopg.errors.UndefinedFunction: function gen_random_uuid() does not exist\n[…]",
		Passages: []PassageRef{{From: 590, To: 1040, Len: 1600}}}
	other := RAGTurn{Seq: 30, Role: "user", Score: 0.3, CreatedAt: at, Content: "the nightly job is failing with a disk-full error"}
	cases := []struct {
		name              string
		budget            int
		rag               []RAGTurn
		wantMain, wantErr bool
	}{
		{"room for both", 400, []RAGTurn{main, part, other}, true, true},
		{"part ranked first waits for its turn", 400, []RAGTurn{func() RAGTurn { p := part; p.Score = 2; return p }(), main}, true, true},
		{"room for the turn only", 60, []RAGTurn{main, part}, true, false},
		{"no room for the turn", 60, []RAGTurn{func() RAGTurn { m := main; m.Content += strings.Repeat(" padding", 100); return m }(), part}, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := Assemble(AssemblyInput{Budget: c.budget, Strategy: StrategyRAG, RAG: c.rag, Ranked: true, Query: "exact error failing refund test"})
			hasMain, hasErr := strings.Contains(a.Context, "FAILED tests"), strings.Contains(a.Context, "gen_random_uuid() does not exist")
			if hasMain != c.wantMain || hasErr != c.wantErr {
				t.Fatalf("turn shown %v (want %v), error line shown %v (want %v):\n%s", hasMain, c.wantMain, hasErr, c.wantErr, a.Context)
			}
			if strings.Count(a.Context, "user: ") > 1+strings.Count(a.Context, "disk-full") || strings.Count(a.Context, "turn 10]") > 1 {
				t.Fatalf("turn 10 printed on two lines:\n%s", a.Context)
			}
			if hasErr && !strings.Contains(a.Context, "user: […]\npsycopg.errors.UndefinedFunction: function gen_random_uuid() does not exist\nFAILED tests") {
				t.Fatalf("passages not joined in content order:\n%s", a.Context)
			}
			if n := len(a.Sections.RAG); hasMain && (a.Sections.RAG[0].Seq != 10 || hasErr && len(a.Sections.RAG[0].Passages) != 2 || n > 2) {
				t.Fatalf("sections list %+v", a.Sections.RAG)
			}
		})
	}
}
