package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/memory/extractive"
)

// errEpisodeMarked: an episode the summary covers still waits for its
// rebuild; the summary is rebuilt after it.
var errEpisodeMarked = errors.New("worker: an episode still waits for its rebuild")

// rebuildSummary writes the chat's summary anew over the turns its cursor
// covers, without the deleted ones, as the chain's only record. The cursor
// stays; the dirty mark read with the chat clears only when no message was
// deleted meanwhile.
func (w *Worker) rebuildSummary(ctx context.Context, chat memory.Chat, s Settings) error {
	key, cursor := chat.Key(), chat.SummaryCursor
	root, degraded, calls, err := w.rebuiltRoot(ctx, chat, s, cursor)
	if err != nil {
		return err
	}
	if err := context.Cause(ctx); err != nil {
		return fmt.Errorf("worker: summary rebuild abandoned: %w", err)
	}
	root.CoveredFromSeq, root.CoveredToSeq = 1, cursor
	root.Stale, root.UpdatedAt = false, w.Now().UTC()
	root.Normalize()
	rec := memory.SummaryRecord{Summary: root, TokenCount: extractive.Tokens(root)}
	if cursor > 0 {
		rec.FromSeq, rec.ToSeq = 1, cursor
	}
	if _, err := w.Forget.ReplaceSummary(ctx, key, cursor, chat.DirtyMark, rec); err != nil {
		return fmt.Errorf("worker: replace summary: %w", err)
	}
	w.forgetCaches(key)
	st := w.state(key)
	w.mu.Lock()
	st.degraded = degraded
	w.mu.Unlock()
	w.Logger.Debug("summary rebuilt", "tenant", key.Tenant, "chat", key.ChatID, "to", cursor, "calls", calls, "degraded", degraded)
	return nil
}

// rebuiltRoot is the summary of the turns 1..cursor that are left: with an
// LLM one compression call over the closed episodes' summaries and the
// open tail's turns (without episodes, over the turns); without an LLM, or
// when the daily budget is spent, the extractive root over the turns.
func (w *Worker) rebuiltRoot(ctx context.Context, chat memory.Chat, s Settings, cursor int64) (memory.Summary, []string, int, error) {
	empty := memory.Summary{Model: extractive.Name, PromptVersion: extractive.PromptVersion}
	if cursor == 0 {
		return empty, nil, 0, nil
	}
	var eps []memory.Episode
	if es, ok := w.episodeStore(s); ok {
		var err error
		if eps, err = w.episodesAfter(ctx, es, chat.Key(), 0, cursor); err != nil {
			return empty, nil, 0, err
		}
		for _, ep := range eps {
			if ep.Rebuild {
				return empty, nil, 0, errEpisodeMarked
			}
		}
	}
	var degraded []string
	if w.Summarizer.UsesLLM() {
		if w.DailyTokenBudget <= 0 || w.TokensUsedToday(chat.Tenant) < w.DailyTokenBudget {
			return w.llmRebuiltRoot(ctx, chat, s, eps, cursor)
		}
		degraded = []string{DegradedBudgetExhausted}
	}
	turns, err := w.readTurns(ctx, chat.Key(), 0, cursor)
	if err != nil {
		return empty, nil, 0, err
	}
	turns = w.summaryTurns(chat, turns)
	if len(turns) == 0 {
		return empty, degraded, 0, nil
	}
	res, err := extractive.New().Summarize(ctx, memory.SummarizeRequest{Chat: chat, Turns: turns, Structured: true, MaxTokens: s.MaxTokens})
	if err != nil {
		return empty, nil, 0, fmt.Errorf("worker: extractive rebuild: %w", err)
	}
	res.Summary.Model, res.Summary.PromptVersion = extractive.Name, extractive.PromptVersion
	return res.Summary, degraded, 0, nil
}

// llmRebuiltRoot is the LLM's rebuild: one call with the compression
// prompt over eps (closed, rebuilt) and the turns after them up to cursor.
// A failed call falls back inside the summarizer (reported in degraded).
func (w *Worker) llmRebuiltRoot(ctx context.Context, chat memory.Chat, s Settings, eps []memory.Episode, cursor int64) (memory.Summary, []string, int, error) {
	var lastTo int64
	if len(eps) > 0 {
		lastTo = eps[len(eps)-1].ToSeq
	}
	tail, err := w.readTurns(ctx, chat.Key(), lastTo, cursor)
	if err != nil {
		return memory.Summary{}, nil, 0, err
	}
	req := memory.SummarizeRequest{Chat: chat, Episodes: eps, Turns: w.summaryTurns(chat, tail), Prompts: s.Prompts,
		Model: s.Model, Structured: s.Structured, MaxTokens: s.MaxTokens}
	res, err := w.Summarizer.Summarize(ctx, req)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil {
			return memory.Summary{}, nil, 0, fmt.Errorf("worker: summary rebuild abandoned: %w", cause)
		}
		return memory.Summary{}, nil, 0, fmt.Errorf("worker: summary rebuild: %w", err)
	}
	w.Spend(chat.Tenant, res.InputTokens, res.OutputTokens)
	if res.Summary.PromptVersion == "" {
		res.Summary.PromptVersion = w.Summarizer.PromptVersion(s.Prompts)
	}
	return res.Summary, res.Degraded, res.Calls, nil
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
