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

// rebuildSummary writes the chat's summary anew without the deleted turns,
// from the last record that cannot hold one (CleanSummary, kept with the
// records before it) over the turns it does not cover up to the cursor.
// The cursor stays; the dirty mark read with the chat clears only when no
// message was deleted meanwhile.
func (r *Rebuilder) rebuildSummary(ctx context.Context, chat memory.Chat, s Settings) error {
	key, cursor := chat.Key(), chat.SummaryCursor
	start := time.Now()
	keep, err := r.Store.CleanSummary(ctx, key)
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
	recs, degraded, calls, err := r.rebuiltRecords(ctx, chat, s, keep, from, cursor)
	if err != nil {
		return err
	}
	if err := context.Cause(ctx); err != nil {
		return fmt.Errorf("worker: summary rebuild abandoned: %w", err)
	}
	if _, err := r.Store.WriteSummary(ctx, key, memory.RebuildWrite(cursor, chat.DirtyMark, keepID, recs)); err != nil {
		return fmt.Errorf("worker: rebuild summary: %w", err)
	}
	r.wrote(nil)
	r.Episodes.forget(key)
	r.chats.setDegraded(key, degraded)
	r.Logger.Debug("summary rebuilt", "tenant", key.Tenant, "chat", key.ChatID, "kept_to", from, "to", cursor,
		"turns_read", cursor-from, "records", len(recs), "calls", calls, "degraded", degraded, "took_ms", float64(time.Since(start).Microseconds())/1000)
	return nil
}

// rebuiltRecords are the records that continue keep (covering 1..from;
// nil: none) over the turns that are left up to cursor: with an LLM one
// call extending keep with the closed episodes' summaries ending after
// from and the open tail's turns (without episodes: with the turns);
// without an LLM, or when the daily budget is spent, keep extended
// extractively, a record every checkpointTurns turns.
func (r *Rebuilder) rebuiltRecords(ctx context.Context, chat memory.Chat, s Settings, keep *memory.SummaryRecord, from, cursor int64) ([]memory.SummaryRecord, []string, int, error) {
	if cursor <= from {
		return nil, nil, 0, nil
	}
	var eps []memory.Episode
	if r.Episodes.on(s) {
		var err error
		if eps, err = r.Episodes.episodesAfter(ctx, chat.Key(), from, cursor); err != nil {
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
	if r.Summarizer.UsesLLM() {
		if !r.Budget.Exhausted(chat.Tenant) {
			rec, degraded, calls, err := r.llmRebuiltRoot(ctx, chat, s, prev, eps, from, cursor)
			return []memory.SummaryRecord{rec}, degraded, calls, err
		}
		degraded = []string{DegradedBudgetExhausted}
	}
	var recs []memory.SummaryRecord
	sum := r.Fallback
	for at := from; at < cursor; at = min(at+checkpointTurns, cursor) {
		background.Yield()
		rec, err := r.extractiveStretch(ctx, r.Store, chat, sum, prev, at, min(at+checkpointTurns, cursor), s.MaxTokens)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("worker: extractive rebuild: %w", err)
		}
		recs, prev = append(recs, rec), &rec.Summary
	}
	return recs, degraded, 0, nil
}

// llmRebuiltRoot is the LLM's rebuild: one call extending prev (the kept
// record's summary; nil: the compression prompt) with eps (closed,
// rebuilt, ending after from) and the turns after them up to cursor. A
// failed call falls back inside the summarizer (reported in degraded).
func (r *Rebuilder) llmRebuiltRoot(ctx context.Context, chat memory.Chat, s Settings, prev *memory.Summary, eps []memory.Episode, from, cursor int64) (memory.SummaryRecord, []string, int, error) {
	lastTo := from
	if len(eps) > 0 {
		lastTo = max(from, eps[len(eps)-1].ToSeq)
	}
	tail, err := readTurns(ctx, r.Store, chat.Key(), lastTo, cursor)
	if err != nil {
		return memory.SummaryRecord{}, nil, 0, err
	}
	req := memory.SummarizeRequest{Chat: chat, Prev: prev, Episodes: eps, Turns: r.summaryTurns(chat, tail), Prompts: s.Prompts,
		Model: s.Model, Structured: s.Structured, MaxTokens: s.MaxTokens}
	res, err := r.Summarizer.Summarize(ctx, req)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil {
			return memory.SummaryRecord{}, nil, 0, fmt.Errorf("worker: summary rebuild abandoned: %w", cause)
		}
		return memory.SummaryRecord{}, nil, 0, fmt.Errorf("worker: summary rebuild: %w", err)
	}
	r.Budget.Spend(chat.Tenant, res.InputTokens, res.OutputTokens)
	if res.Summary.PromptVersion == "" {
		res.Summary.PromptVersion = r.Summarizer.PromptVersion(s.Prompts)
	}
	root := res.Summary
	root.CoveredFromSeq, root.CoveredToSeq = 1, cursor
	root.Stale, root.UpdatedAt = false, r.Now().UTC()
	root.Normalize()
	rec := memory.SummaryRecord{Summary: root, TokenCount: tokens.Summary(root), FromSeq: from + 1, ToSeq: cursor}
	return rec, res.Degraded, res.Calls, nil
}
