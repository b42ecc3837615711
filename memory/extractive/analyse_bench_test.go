package extractive

import (
	"context"
	"testing"
	"time"

	"github.com/contextd/contextd/internal/loadgen"
	"github.com/contextd/contextd/memory"
)

// benchTurns are the load generator's turns: what make bench-http's chats
// hold, so this measures the preview and the worker on the bench's text.
func benchTurns(chats, turns int) [][]memory.Message {
	c := loadgen.Corpus{Seed: 1}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([][]memory.Message, chats)
	for i := range out {
		for t := range turns {
			out[i] = append(out[i], memory.Message{Seq: int64(t + 1), Role: memory.Role(c.Role(t)), Content: c.Turn(i, t), CreatedAt: t0.Add(time.Duration(t) * time.Minute)})
		}
	}
	return out
}

// BenchmarkSummarizeChat is one chat's first summary over 40 turns: what a
// chat's first read after an import previews.
func BenchmarkSummarizeChat(b *testing.B) {
	chats := benchTurns(16, 40)
	s := New()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		turns := chats[i%len(chats)]
		if _, err := s.Summarize(context.Background(), memory.SummarizeRequest{Turns: turns, Structured: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExtendOneTurn extends a 40-turn summary by one turn: what a read
// previews under churn, each time a chat gains a turn.
func BenchmarkExtendOneTurn(b *testing.B) {
	chats := benchTurns(16, 41)
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
