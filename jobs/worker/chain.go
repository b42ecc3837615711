package worker

import (
	"context"
	"fmt"

	"github.com/contextd/contextd/internal/background"
	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// checkpointTurns bounds the turns one summary record adds when the chain
// is extended extractively over a long stretch (a bulk append, a backlog,
// a rebuild): a rebuild after a deleted message keeps the records ending
// before the deleted turn and writes anew only from the last of them, so
// the records must not be much longer than this for its cost to depend on
// where the turn was rather than on the chat's length.
const checkpointTurns = 256

// extractiveStretch is prev extended extractively with the turns in
// (after, upTo] (the tombstones left out, through the agent's filters):
// the chain's record for that stretch.
func (e *Env) extractiveStretch(ctx context.Context, st turnReader, chat memory.Chat, sum memory.Summarizer, prev *memory.Summary, after, upTo int64, maxTokens int) (memory.SummaryRecord, error) {
	turns, err := readTurns(ctx, st, chat.Key(), after, upTo)
	if err != nil {
		return memory.SummaryRecord{}, err
	}
	turns = e.summaryTurns(chat, turns)
	out := memory.Summary{CoveredFromSeq: after + 1, Model: sum.Name(), PromptVersion: sum.PromptVersion(memory.Prompts{})}
	if prev != nil {
		out = prev.Clone()
	}
	if len(turns) > 0 {
		req := memory.SummarizeRequest{Chat: chat, Turns: turns, Structured: true, MaxTokens: maxTokens}
		if prev != nil {
			p := prev.Clone()
			req.Prev = &p
		}
		res, err := sum.Summarize(ctx, req)
		if err != nil {
			return memory.SummaryRecord{}, err
		}
		out = res.Summary
	}
	if out.CoveredFromSeq == 0 {
		out.CoveredFromSeq = 1
	}
	if out.Model == "" {
		out.Model, out.PromptVersion = sum.Name(), sum.PromptVersion(memory.Prompts{})
	}
	out.CoveredToSeq, out.Stale, out.UpdatedAt = upTo, false, e.Now().UTC()
	out.Normalize()
	return memory.SummaryRecord{Summary: out, TokenCount: tokens.Summary(out), FromSeq: after + 1, ToSeq: upTo}, nil
}

// checkpoints writes, before an extractive extension of head over
// (cursor, upTo], a record every checkpointTurns turns short of upTo (see
// checkpointTurns), and returns the new head and cursor, from which the
// caller writes the last stretch as usual.
func (e *Env) checkpoints(ctx context.Context, st ExtendStore, chat memory.Chat, sum memory.Summarizer, head *memory.SummaryRecord, cursor, upTo int64, s Settings) (*memory.SummaryRecord, int64, error) {
	for cursor+checkpointTurns < upTo {
		background.Yield()
		var prev *memory.Summary
		if head != nil {
			prev = &head.Summary
		}
		rec, err := e.extractiveStretch(ctx, st, chat, sum, prev, cursor, cursor+checkpointTurns, s.MaxTokens)
		if err != nil {
			return head, cursor, fmt.Errorf("worker: checkpoint: %w", err)
		}
		if err := context.Cause(ctx); err != nil {
			return head, cursor, fmt.Errorf("worker: checkpoint abandoned: %w", err)
		}
		written, err := memory.AppendSummary(ctx, st, chat.Key(), cursor, rec)
		if err != nil {
			return head, cursor, fmt.Errorf("worker: append checkpoint: %w", err)
		}
		head, cursor = &written, written.CoveredToSeq
	}
	return head, cursor, nil
}

// stampModel names who wrote sum: the summariser that did, as it said
// (the extractive fallback of an LLM that failed says "extractive", so an
// operator can find what to redo once the LLM is back), else the worker's
// summariser.
func stampModel(sum *memory.Summary, model, promptVersion string) {
	if sum.Model == "" {
		sum.Model = model
	}
	if sum.PromptVersion == "" || sum.Model == model {
		sum.PromptVersion = promptVersion
	}
}
