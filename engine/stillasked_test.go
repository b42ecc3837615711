package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// A value asked after ("still £320?") and answered with another of its
// kind marks the turns that stated it; an answer that agrees, repeats
// the value, asks back or comes from the asker marks nothing.
func TestStillAskedAnswerMarks(t *testing.T) {
	older := "booked! sat 29th at 10:30, ref NH-20931. paid £100 deposit, rest (£320) cash on the day"
	cases := []struct {
		name           string
		question       string
		answer         memory.Message
		marked, quoted string // quoted: a part of the mark; "" = no mark
	}{
		{"another amount", "wait is it still £320 now they moved the day?",
			memory.Message{Role: "user", Name: "Priya", Content: "oh no they knocked £20 off for the hassle. so £300 on the day"},
			older, "so £300 on the day"},
		{"another clock time", "is pickup still 10:30?",
			memory.Message{Role: "user", Name: "Priya", Content: "no they moved it, 13:00 now, same ref"},
			older, "13:00 now"},
		{"agreeing, the day written otherwise", "is the van still coming on the 29th?",
			memory.Message{Role: "user", Name: "Priya", Content: "yes, Saturday 29 August 10:30, ref NH-20931"},
			older, ""},
		{"the old value repeated", "is it still £320?",
			memory.Message{Role: "user", Name: "Priya", Content: "£320 plus the £20 for parking"},
			older, ""},
		{"asked back", "is it still 10:30?",
			memory.Message{Role: "user", Name: "Priya", Content: "can we do 11:00? stuck at work"},
			older, ""},
		{"the asker goes on", "is it still £320?",
			memory.Message{Role: "user", Name: "Tom", Content: "i have £300 in cash on me"},
			older, ""},
		{"two values asked after", "still £320 at 10:30?",
			memory.Message{Role: "user", Name: "Priya", Content: "£300 at 11:00"},
			older, ""},
		{"a weekday asked after", "is it still saturday?",
			memory.Message{Role: "user", Name: "Priya", Content: "sunday 30th now"},
			"we go saturday, sat 29th", ""},
		{"a bare number asked after", "are we still 26?",
			memory.Message{Role: "user", Name: "Priya", Content: "the dawsons cant come so 24"},
			"26 people, table for 26", ""},
		{"a bare number, its thing named in the question", "and price? still 15?",
			memory.Message{Role: "user", Name: "Priya", Content: "make it 18. costs went up and everyone charges 20 now anyway"},
			"40 it is. black ones w the tide logo. price £15 at the table", `asked "and price? still 15?": make it 18`},
		{"a bare number, its thing not named there", "and price? still 15?",
			memory.Message{Role: "user", Name: "Priya", Content: "make it 18. costs went up and everyone charges 20 now anyway"},
			"last tour we sold like 15 shirts", ""},
		{"a bare number said to stay, another counted", "and price? still 15?",
			memory.Message{Role: "user", Name: "Priya", Content: "Ana says the price stays, we only have 3 shirts left though"},
			"Shirt price is 15 at the stall, cash only.", ""},
		{"a bare number counting something else", "and price? still 15?",
			memory.Message{Role: "user", Name: "Priya", Content: "not sure, Ana has the 2 lists"},
			"Shirt price is 15 at the stall, cash only.", ""},
		{"no value in the answer", "is it still £320?",
			memory.Message{Role: "user", Name: "Priya", Content: "I'll ask them tomorrow"},
			older, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msgs := []memory.Message{
				{Seq: 1, Role: "user", Name: "Priya", Content: c.marked},
				{Seq: 2, Role: "user", Name: "Tom", Content: c.question},
				c.answer,
			}
			msgs[2].Seq = 3
			var ups []chatUpdate
			var asked *stillAsked
			for _, m := range msgs {
				ups, asked = readUpdates(ups, asked, m)
			}
			r := RAGTurn{Seq: 1, Role: "user", Content: c.marked}
			markUpdate(ups, &r)
			switch {
			case c.quoted == "" && strings.Contains(r.update, "turn 3:"):
				t.Errorf("marked by the answer: %q", r.update)
			case c.quoted != "" && !strings.Contains(r.update, "turn 3: ") || !strings.Contains(r.update, c.quoted):
				t.Errorf("mark %q, want one quoting turn 3's %q", r.update, c.quoted)
			}
		})
	}
}

// The question read on one context and its answer appended after: the
// update cache keeps the open question between reads.
func TestStillAskedAcrossReads(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	msgs := []InMessage{{ID: "a", Role: "user", Name: "Priya", Content: "booked the van, rest (£320) cash on the day"}}
	msgs = append(msgs, filler("f", "filler turn %d about the weather and trains", 150)...)
	msgs = append(msgs, InMessage{ID: "q", Role: "user", Name: "Tom", Content: "wait is it still £320 now they moved the day?"})
	if _, err := s.Append(ctx, "default", "c", AppendInput{UserID: "u", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	s.vec.retriever = &fakeRetriever{turns: []rag.Turn{{ChatID: "c", Seq: 1, Role: "user", Content: msgs[0].Content, Score: 1}}}
	budget := 600
	in := ContextInput{ChatID: "c", Query: "how much cash for the movers", BudgetTokens: &budget, Strategy: string(StrategyRAG)}
	if _, err := s.Context(ctx, "default", in); err != nil { // the cache reads up to the question
		t.Fatal(err)
	}
	answer := InMessage{ID: "ans", Role: "user", Name: "Priya", Content: "oh no they knocked £20 off for the hassle. so £300 on the day"}
	later := append([]InMessage{answer}, filler("g", "later turn %d about the weather and trains", 60)...) // the answer out of the recent turns
	if _, err := s.Append(ctx, "default", "c", AppendInput{UserID: "u", Messages: later}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Context(ctx, "default", in)
	if err != nil {
		t.Fatal(err)
	}
	if want := "rest (£320) cash on the day\n(earlier; updated "; !strings.Contains(res.Context, want) || !strings.Contains(res.Context, "so £300 on the day)") {
		t.Errorf("the older turn is not marked by the answer:\n%s", res.Context)
	}
}
