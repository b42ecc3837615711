package worker

import (
	"context"
	"fmt"

	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// ExtendStore is what the Extender reads and writes: the chat's turns and
// its summary chain.
type ExtendStore interface {
	turnReader
	headWriter
}

// Extender is the summary job of the agents that keep no episodes: it
// extends the chat's summary from its cursor with only the new turns
// outside the recent window, and writes the new head with a cursor check.
// The Worker runs it under the chat's summary lease.
type Extender struct {
	*Env
	Store ExtendStore
}

// extend summarises the turns in (cursor, last_seq - RecentTurns] into a
// new head. It holds the chat's summary lease.
func (x *Extender) extend(ctx context.Context, chat memory.Chat, head *memory.SummaryRecord, s Settings) (*memory.SummaryRecord, []string, error) {
	key, cursor := chat.Key(), chat.SummaryCursor
	stale := x.Stale(chat.Agent, head)
	var err error
	if !x.Summarizer.UsesLLM() && s.Persist && !stale {
		if head, cursor, err = x.checkpoints(ctx, x.Store, chat, x.Summarizer, head, cursor, chat.LastSeq-int64(s.RecentTurns), s); err != nil {
			return nil, nil, err
		}
	}
	turns, err := readTurns(ctx, x.Store, key, cursor, chat.LastSeq-int64(s.RecentTurns))
	if err != nil {
		return nil, nil, err
	}
	if len(turns) == 0 && (!stale || head == nil) {
		return head, nil, nil // nothing to add
	}
	var lastEligible int64
	if len(turns) > 0 {
		lastEligible = turns[len(turns)-1].Seq
	}
	if x.Prepare != nil && len(turns) > 0 {
		turns = x.Prepare(chat.Agent, turns)
		if len(turns) == 0 {
			return x.skipNoise(ctx, key, cursor, s, head, lastEligible)
		}
	}
	res, degraded, err := x.summarizeTurns(ctx, chat, head, s, turns)
	if err != nil {
		return nil, nil, err
	}
	out := res.Summary
	if len(turns) > 0 {
		if out.CoveredToSeq != turns[len(turns)-1].Seq {
			return nil, nil, fmt.Errorf("worker: summarizer covered to %d, want %d", out.CoveredToSeq, turns[len(turns)-1].Seq)
		}
		out.CoveredToSeq = lastEligible // filtered-out turns after the last kept one
	} else {
		out.CoveredToSeq = cursor
	}
	if out.CoveredFromSeq == 0 && head != nil {
		out.CoveredFromSeq = head.CoveredFromSeq
	}
	rec := memory.SummaryRecord{Summary: out, TokenCount: tokens.Summary(out)}
	if len(turns) > 0 {
		rec.FromSeq, rec.ToSeq = cursor+1, lastEligible
	}
	return x.write(ctx, x.Store, key, cursor, s, rec, degraded, res.Calls, res.InputTokens)
}

// skipNoise advances the cursor over turns the agent's filters drop
// entirely (only noise since the cursor), keeping the summary as it is.
func (x *Extender) skipNoise(ctx context.Context, key memory.ChatKey, cursor int64, s Settings, head *memory.SummaryRecord, lastEligible int64) (*memory.SummaryRecord, []string, error) {
	var out memory.Summary
	if head != nil {
		out = head.Summary.Clone()
	}
	out.CoveredToSeq, out.UpdatedAt = lastEligible, x.Now().UTC()
	if out.CoveredFromSeq == 0 {
		out.CoveredFromSeq = cursor + 1
	}
	return x.write(ctx, x.Store, key, cursor, s, memory.SummaryRecord{Summary: out, TokenCount: tokens.Summary(out), FromSeq: cursor + 1, ToSeq: lastEligible}, nil, 0, 0)
}

// summarizeTurns extends the head's summary with turns: with the
// summarizer, or its fallback once the tenant's daily budget is spent. It
// counts the tokens used against the budget, and fails when the work was
// abandoned (shutdown, lease lost) so that nothing is written.
func (x *Extender) summarizeTurns(ctx context.Context, chat memory.Chat, head *memory.SummaryRecord, s Settings, turns []memory.Message) (memory.SummarizeResult, []string, error) {
	req := memory.SummarizeRequest{
		Chat:       chat,
		Turns:      turns,
		Prompts:    s.Prompts,
		Model:      s.Model,
		Structured: s.Structured,
		MaxTokens:  s.MaxTokens,
	}
	if head != nil {
		prev := head.Summary.Clone()
		req.Prev = &prev
	}
	sum, degraded := x.Summarizer, []string(nil)
	if x.budgetSpent(chat.Tenant, sum) {
		sum, degraded = x.Fallback, []string{DegradedBudgetExhausted}
	}
	res, err := sum.Summarize(ctx, req)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil {
			return res, nil, fmt.Errorf("worker: summarise abandoned: %w", cause)
		}
		return res, nil, fmt.Errorf("worker: summarise: %w", err)
	}
	x.Budget.Spend(chat.Tenant, res.InputTokens, res.OutputTokens)
	if err := context.Cause(ctx); err != nil {
		// Cancelled (shutdown) or lease lost after the summarizer returned:
		// write nothing; the cursor is unchanged and the work is redone.
		return res, nil, fmt.Errorf("worker: summarise abandoned: %w", err)
	}
	return res, append(degraded, res.Degraded...), nil
}
