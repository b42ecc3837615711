package sqlite_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/sqlite"
)

// hotChat stores a chat of turns turns (every tenth with metadata) and one
// summary record covering all but the last 20, as /v1/context finds it in
// steady state.
func hotChat(tb testing.TB, s memory.Core, k memory.ChatKey, turns int) {
	tb.Helper()
	ctx := context.Background()
	content := strings.Repeat("a turn of a fairly ordinary conversation; ", 5)
	msgs := make([]memory.Message, turns)
	for i := range msgs {
		role := memory.RoleUser
		if i%2 == 1 {
			role = memory.RoleAssistant
		}
		msgs[i] = memory.Message{ID: fmt.Sprintf("m%d", i), Role: role, Content: content}
		if i%10 == 0 {
			msgs[i].Metadata = map[string]any{"turn": float64(i), "source": "bench"}
		}
	}
	for i := 0; i < turns; i += 50 {
		if _, err := s.Append(ctx, memory.AppendRequest{Chat: k, UserID: "u", Messages: msgs[i:min(i+50, turns)]}); err != nil {
			tb.Fatal(err)
		}
	}
	sum := memory.Summary{Narrative: strings.Repeat("The user and the assistant discussed the plan. ", 30),
		CoveredFromSeq: 1, CoveredToSeq: int64(turns - 20), Model: "m", PromptVersion: "v1"}
	for i := 0; i < 8; i++ {
		sum.Topics = append(sum.Topics, fmt.Sprintf("topic %d", i))
		sum.Entities = append(sum.Entities, memory.Entity{Name: fmt.Sprintf("Entity %d", i), Type: "person", Details: "works on the migration project"})
		sum.Decisions = append(sum.Decisions, fmt.Sprintf("decision number %d was taken", i))
		sum.OpenQuestions = append(sum.OpenQuestions, fmt.Sprintf("open question %d?", i))
	}
	if _, err := memory.AppendSummary(ctx, s, k, 0, memory.SummaryRecord{Summary: sum, FromSeq: 1, ToSeq: int64(turns - 20), TokenCount: 600}); err != nil {
		tb.Fatal(err)
	}
}

// hotRead is what one /v1/context does to the store: the chat, its summary
// head, the recent window and a few retrieved turns.
func hotRead(ctx context.Context, s memory.Core, k memory.ChatKey, bySeq []int64) error {
	c, err := s.Chat(ctx, k)
	if err != nil {
		return err
	}
	h, err := s.SummaryHead(ctx, k)
	if err != nil {
		return err
	}
	if h == nil || h.CoveredToSeq != c.LastSeq-20 {
		return fmt.Errorf("head %+v, chat %+v", h, c)
	}
	msgs, err := s.Messages(ctx, k, c.LastSeq-20, 20)
	if err != nil {
		return err
	}
	if len(msgs) != 20 {
		return fmt.Errorf("%d messages, want 20", len(msgs))
	}
	got, err := s.MessagesBySeq(ctx, k, bySeq)
	if err != nil {
		return err
	}
	if len(got) != len(bySeq) {
		return fmt.Errorf("%d messages by seq, want %d", len(got), len(bySeq))
	}
	return nil
}

var hotSeqs = []int64{3, 17, 29, 44, 58, 71, 99, 120, 150, 171}

// BenchmarkHotRead measures the store's share of one /v1/context:
// Chat + SummaryHead + Messages(last 20) + MessagesBySeq(10 seqs) on a chat
// of 200 turns with a summary.
func BenchmarkHotRead(b *testing.B) {
	s := open(b)
	defer s.Close()
	k := memory.ChatKey{Tenant: "bench", ChatID: "hot"}
	hotChat(b, s, k, 200)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := hotRead(ctx, s, k, hotSeqs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHotReadParallel is BenchmarkHotRead from GOMAXPROCS*4
// goroutines over 16 chats.
func BenchmarkHotReadParallel(b *testing.B) {
	s := open(b)
	defer s.Close()
	const chats = 16
	for i := 0; i < chats; i++ {
		hotChat(b, s, memory.ChatKey{Tenant: "bench", ChatID: fmt.Sprintf("hot-%d", i)}, 200)
	}
	ctx := context.Background()
	b.SetParallelism(4)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			k := memory.ChatKey{Tenant: "bench", ChatID: fmt.Sprintf("hot-%d", i%chats)}
			if err := hotRead(ctx, s, k, hotSeqs); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAppendOneTurnParallel appends one turn per call from 32 goroutines
// across 200 chats (make bench-http's append route, without HTTP): what
// group commit is for. Compare with -cpu 2 against the build before it.
func BenchmarkAppendOneTurnParallel(b *testing.B) {
	s := open(b)
	defer s.Close()
	ctx := context.Background()
	var n atomic.Int64
	b.SetParallelism(16)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			k := memory.ChatKey{Tenant: "bench", ChatID: fmt.Sprintf("c-%d", i%200)}
			if _, err := s.Append(ctx, memory.AppendRequest{Chat: k, Messages: []memory.Message{{
				ID: fmt.Sprint("m", i), Role: memory.RoleUser, Content: "a turn of about the size of a short chat message, say forty words or so"}}}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkFactBacklog: one look of the indexer for facts to index, as it
// makes on every pass (200 chats, a tenth with an unindexed fact).
func BenchmarkFactBacklog(b *testing.B) {
	ctx := context.Background()
	s := open(b).(*sqlite.Store)
	for i := range 200 {
		k := memory.ChatKey{Tenant: "t", ChatID: fmt.Sprint("c", i)}
		res, err := s.Append(ctx, memory.AppendRequest{Chat: k, Messages: []memory.Message{{Role: memory.RoleUser, Content: "the hotel is in Lisbon"}}})
		if err != nil {
			b.Fatal(err)
		}
		if i%10 == 0 {
			if _, err := s.AddFacts(ctx, k, []memory.Fact{{Text: "The hotel is in Lisbon.", Seqs: []int64{res.LastSeq}}}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for b.Loop() {
		chats, err := s.Pending(ctx, memory.IndexFacts, 100)
		if err != nil || len(chats) != 20 {
			b.Fatalf("%d chats, %v", len(chats), err)
		}
		if _, err := s.UnindexedFacts(ctx, chats[0].Chat.Key(), 64); err != nil {
			b.Fatal(err)
		}
	}
}
