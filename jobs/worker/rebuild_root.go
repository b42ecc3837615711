package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/contextd/contextd/internal/background"
	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// errEpisodeMarked: an episode the summary covers still waits for its
// rebuild; the summary is rebuilt after it.
var errEpisodeMarked = errors.New("worker: an episode still waits for its rebuild")

// checkpointTurns bounds the turns one summary record adds when the chain
// is extended extractively over a long stretch (a bulk append, a backlog,
// a rebuild): a rebuild after a deleted message keeps the records ending
// before the deleted turn and writes anew only from the last of them, so
// the records must not be much longer than this for its cost to depend on
// where the turn was rather than on the chat's length.
const checkpointTurns = 256

// rebuildSummary writes the chat's summary anew without the deleted turns,
// from the last record that cannot hold one (CleanSummary, kept with the
// records before it) over the turns it does not cover up to the cursor.
// The cursor stays; the dirty mark read with the chat clears only when no
// message was deleted meanwhile.
func (w *Worker) rebuildSummary(ctx context.Context, chat memory.Chat, s Settings) error {
	key, cursor := chat.Key(), chat.SummaryCursor
	start := time.Now()
	keep, err := w.Forget.CleanSummary(ctx, key)
	if err != nil {
		return fmt.Errorf("worker: clean summary: %w", err)
	}
	var keepID string
	var from int64
	if keep != nil && keep.CoveredToSeq <= cursor {
		keepID, from = keep.ID, keep.CoveredToSeq
	} else {
		keep = nil
	}
	recs, degraded, calls, err := w.rebuiltRecords(ctx, chat, s, keep, from, cursor)
	if err != nil {
		return err
	}
	if err := context.Cause(ctx); err != nil {
		return fmt.Errorf("worker: summary rebuild abandoned: %w", err)
	}
	if err := w.Forget.RebuildSummary(ctx, key, cursor, chat.DirtyMark, keepID, recs); err != nil {
		return fmt.Errorf("worker: rebuild summary: %w", err)
	}
	w.wrote(nil)
	w.forgetCaches(key)
	st := w.state(key)
	w.mu.Lock()
	st.degraded = degraded
	w.mu.Unlock()
	w.Logger.Debug("summary rebuilt", "tenant", key.Tenant, "chat", key.ChatID, "kept_to", from, "to", cursor,
		"turns_read", cursor-from, "records", len(recs), "calls", calls, "degraded", degraded, "took_ms", float64(time.Since(start).Microseconds())/1000)
	return nil
}

// rebuiltRecords are the records that continue keep (covering 1..from;
// nil: none) over the turns that are left up to cursor: with an LLM one
// call extending keep with the closed episodes' summaries ending after
// from and the open tail's turns (without episodes: with the turns);
// without an LLM, or when the daily budget is spent, keep extended
// extractively, a record every checkpointTurns turns.
func (w *Worker) rebuiltRecords(ctx context.Context, chat memory.Chat, s Settings, keep *memory.SummaryRecord, from, cursor int64) ([]memory.SummaryRecord, []string, int, error) {
	if cursor <= from {
		return nil, nil, 0, nil
	}
	var eps []memory.Episode
	if es, ok := w.episodeStore(s); ok {
		var err error
		if eps, err = w.episodesAfter(ctx, es, chat.Key(), from, cursor); err != nil {
			return nil, nil, 0, err
		}
		for _, ep := range eps {
			if ep.Rebuild {
				return nil, nil, 0, errEpisodeMarked
			}
		}
	}
	var prev *memory.Summary
	if keep != nil {
		p := keep.Summary.Clone()
		prev = &p
	}
	var degraded []string
	if w.Summarizer.UsesLLM() {
		if !w.Exhausted(chat.Tenant) {
			rec, degraded, calls, err := w.llmRebuiltRoot(ctx, chat, s, prev, eps, from, cursor)
			return []memory.SummaryRecord{rec}, degraded, calls, err
		}
		degraded = []string{DegradedBudgetExhausted}
	}
	var recs []memory.SummaryRecord
	sum := w.Fallback
	for at := from; at < cursor; at = min(at+checkpointTurns, cursor) {
		background.Yield()
		rec, err := w.extractiveStretch(ctx, chat, sum, prev, at, min(at+checkpointTurns, cursor), s.MaxTokens)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("worker: extractive rebuild: %w", err)
		}
		recs, prev = append(recs, rec), &rec.Summary
	}
	return recs, degraded, 0, nil
}

// extractiveStretch is prev extended extractively with the turns in
// (after, upTo] (the tombstones left out, through the agent's filters):
// the chain's record for that stretch.
func (w *Worker) extractiveStretch(ctx context.Context, chat memory.Chat, sum memory.Summarizer, prev *memory.Summary, after, upTo int64, maxTokens int) (memory.SummaryRecord, error) {
	turns, err := w.readTurns(ctx, chat.Key(), after, upTo)
	if err != nil {
		return memory.SummaryRecord{}, err
	}
	turns = w.summaryTurns(chat, turns)
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
	out.CoveredToSeq, out.Stale, out.UpdatedAt = upTo, false, w.Now().UTC()
	out.Normalize()
	return memory.SummaryRecord{Summary: out, TokenCount: tokens.Summary(out), FromSeq: after + 1, ToSeq: upTo}, nil
}

// checkpoints writes, before an extractive extension of head over
// (cursor, upTo], a record every checkpointTurns turns short of upTo (see
// checkpointTurns), and returns the new head and cursor, from which the
// caller writes the last stretch as usual.
func (w *Worker) checkpoints(ctx context.Context, chat memory.Chat, sum memory.Summarizer, head *memory.SummaryRecord, cursor, upTo int64, s Settings) (*memory.SummaryRecord, int64, error) {
	for cursor+checkpointTurns < upTo {
		background.Yield()
		var prev *memory.Summary
		if head != nil {
			prev = &head.Summary
		}
		rec, err := w.extractiveStretch(ctx, chat, sum, prev, cursor, cursor+checkpointTurns, s.MaxTokens)
		if err != nil {
			return head, cursor, fmt.Errorf("worker: checkpoint: %w", err)
		}
		if err := context.Cause(ctx); err != nil {
			return head, cursor, fmt.Errorf("worker: checkpoint abandoned: %w", err)
		}
		written, err := w.Store.AppendSummary(ctx, chat.Key(), cursor, rec)
		if err != nil {
			return head, cursor, fmt.Errorf("worker: append checkpoint: %w", err)
		}
		head, cursor = &written, written.CoveredToSeq
	}
	return head, cursor, nil
}

// llmRebuiltRoot is the LLM's rebuild: one call extending prev (the kept
// record's summary; nil: the compression prompt) with eps (closed,
// rebuilt, ending after from) and the turns after them up to cursor. A
// failed call falls back inside the summarizer (reported in degraded).
func (w *Worker) llmRebuiltRoot(ctx context.Context, chat memory.Chat, s Settings, prev *memory.Summary, eps []memory.Episode, from, cursor int64) (memory.SummaryRecord, []string, int, error) {
	lastTo := from
	if len(eps) > 0 {
		lastTo = max(from, eps[len(eps)-1].ToSeq)
	}
	tail, err := w.readTurns(ctx, chat.Key(), lastTo, cursor)
	if err != nil {
		return memory.SummaryRecord{}, nil, 0, err
	}
	req := memory.SummarizeRequest{Chat: chat, Prev: prev, Episodes: eps, Turns: w.summaryTurns(chat, tail), Prompts: s.Prompts,
		Model: s.Model, Structured: s.Structured, MaxTokens: s.MaxTokens}
	res, err := w.Summarizer.Summarize(ctx, req)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil {
			return memory.SummaryRecord{}, nil, 0, fmt.Errorf("worker: summary rebuild abandoned: %w", cause)
		}
		return memory.SummaryRecord{}, nil, 0, fmt.Errorf("worker: summary rebuild: %w", err)
	}
	w.Spend(chat.Tenant, res.InputTokens, res.OutputTokens)
	if res.Summary.PromptVersion == "" {
		res.Summary.PromptVersion = w.Summarizer.PromptVersion(s.Prompts)
	}
	root := res.Summary
	root.CoveredFromSeq, root.CoveredToSeq = 1, cursor
	root.Stale, root.UpdatedAt = false, w.Now().UTC()
	root.Normalize()
	rec := memory.SummaryRecord{Summary: root, TokenCount: tokens.Summary(root), FromSeq: from + 1, ToSeq: cursor}
	return rec, res.Degraded, res.Calls, nil
}

// summaryTurns are the turns a summary reads: no tombstones, through the
// agent's filters.
func (w *Worker) summaryTurns(chat memory.Chat, turns []memory.Message) []memory.Message {
	turns = alive(turns)
	if w.Prepare != nil && len(turns) > 0 {
		turns = w.Prepare(chat.Agent, turns)
	}
	return turns
}
