package extractive

import (
	"context"
	"testing"

	"github.com/contextd/contextd/internal/prose/prosetest"
	"github.com/contextd/contextd/memory"
)

// BenchmarkSummarizeChat is one chat's first summary over 40 turns of the
// load generator (what make bench-http's chats hold): what a chat's first
// read after an import previews.
func BenchmarkSummarizeChat(b *testing.B) {
	benchSummarize(b, prosetest.BenchChats(16, 40))
}

// BenchmarkSummarizeLong is one chat's first summary over long technical
// turns (code, LaTeX, markdown), as BEAM-like chats hold.
func BenchmarkSummarizeLong(b *testing.B) {
	benchSummarize(b, prosetest.LongChats())
}

func benchSummarize(b *testing.B, chats [][]memory.Message) {
	s := New()
	prosetest.ReportCPU(b, func(i int) {
		turns := chats[i%len(chats)]
		if _, err := s.Summarize(context.Background(), memory.SummarizeRequest{Turns: turns, Structured: true}); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkExtendOneTurn extends a 40-turn summary by one turn: what a read
// previews under churn, each time a chat gains a turn.
func BenchmarkExtendOneTurn(b *testing.B) {
	chats := prosetest.BenchChats(16, 41)
	s := New()
	prevs := make([]memory.Summary, len(chats))
	for i, turns := range chats {
		res, err := s.Summarize(context.Background(), memory.SummarizeRequest{Turns: turns[:40], Structured: true})
		if err != nil {
			b.Fatal(err)
		}
		prevs[i] = res.Summary
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(chats)
		prev := prevs[k].Clone()
		if _, err := s.Summarize(context.Background(), memory.SummarizeRequest{Prev: &prev, Turns: chats[k][40:], Structured: true}); err != nil {
			b.Fatal(err)
		}
	}
}
