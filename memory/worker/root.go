package worker

// The running summary (the root) with an LLM and episodes on.
//
// The LLM writes the root, with the agent's prompts: the first root with
// the compression prompt, every later one with the extension prompt, given
// the existing root and the summaries of the episodes closed since (their
// narrative, lists and facts — never their turns again). The open tail's
// turns are given only while no episode covers anything yet (a young chat).
//
// The cost stays bounded: a root call is made once the new material (the
// episodes' summaries) weighs at least half the existing root (and
// rootBatchTokens), so over a chat the root's input is a small multiple of
// the episodes' summaries, not of the turns (1.20x the conversation over
// 1,000 turns with the episode calls, TestSummaryInputCostEpisodes). Until then, and whenever the
// LLM fails, the root is the last LLM root with the newer episodes folded
// in mechanically, plus an extractive summary of the open tail: nothing is
// lost, the degraded reason is reported, and the next trigger retries.

import (
	"context"
	"fmt"
	"slices"

	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/memory/episodes"
	"github.com/contextd/contextd/memory/extractive"
)

// rootBatchTokens is the least new material worth an LLM root call.
const rootBatchTokens = 400

// rootResult is a root and what writing it cost.
type rootResult struct {
	sum       memory.Summary
	degraded  []string
	calls, in int
}

// llmRoot builds the root over the closed episodes up to lastTo and the
// open tail up to covered. open are the turns after the last episode
// closed before this pass (read by extendEpisodes).
func (w *Worker) llmRoot(ctx context.Context, es memory.EpisodeCloser, chat memory.Chat, head *memory.SummaryRecord,
	s Settings, stale bool, lastTo, covered int64, open []memory.Message) (rootResult, error) {
	base, baseTo, haveBase := w.llmBase(chat, head)
	newEps, err := w.episodesAfter(ctx, es, chat.Key(), baseTo, lastTo)
	if err != nil {
		return rootResult{}, err
	}
	pending := 0
	for _, ep := range newEps {
		pending += tokens.Count(ep.Short) + extractive.Tokens(ep.Summary)
	}
	young := lastTo == 0 // no episode covers anything yet
	due := !haveBase || stale || (len(newEps) > 0 && pending >= max(rootBatchTokens, extractive.Tokens(base)/2))
	if young && !haveBase {
		due = covered > baseTo
	}
	tailFrom := max(lastTo, baseTo)
	if !due || (len(newEps) == 0 && !young && !stale) {
		return rootResult{sum: w.foldRoot(chat, base, newEps, open, tailFrom, covered, s.MaxTokens)}, nil
	}
	req := memory.SummarizeRequest{Chat: chat, Episodes: newEps, Prompts: s.Prompts, Model: s.Model,
		Structured: s.Structured, MaxTokens: s.MaxTokens}
	if haveBase {
		req.Prev = &base
	}
	to := lastTo
	if young {
		req.Turns, to = w.tailTurns(chat, open, baseTo, covered), covered
	}
	var res memory.SummarizeResult
	if w.Exhausted(chat.Tenant) {
		res.Degraded = []string{DegradedBudgetExhausted}
	} else if res, err = w.Summarizer.Summarize(ctx, req); err != nil {
		if cause := context.Cause(ctx); cause != nil {
			return rootResult{}, fmt.Errorf("worker: root abandoned: %w", cause)
		}
		res.Degraded = []string{memory.DegradedLLMUnavailable}
	}
	w.Spend(chat.Tenant, res.InputTokens, res.OutputTokens)
	out := rootResult{degraded: res.Degraded, calls: res.Calls, in: res.InputTokens}
	if failed(res.Degraded) {
		// The previous root stands; the episodes are folded in mechanically
		// until the next trigger retries.
		out.sum = w.foldRoot(chat, base, newEps, open, tailFrom, covered, s.MaxTokens)
		out.sum.Model = extractive.Name // folded without the model: redone once it answers
		return out, nil
	}
	w.setBase(chat, to, res.Summary)
	out.sum = w.withTail(chat, res.Summary, open, to, covered, s.MaxTokens)
	return out, nil
}

// failed reports whether the root call did not produce an LLM summary.
func failed(degraded []string) bool {
	return slices.Contains(degraded, memory.DegradedLLMUnavailable) ||
		slices.Contains(degraded, memory.DegradedNarrativeOnly) ||
		slices.Contains(degraded, DegradedBudgetExhausted)
}

// llmBase returns the last root the LLM wrote and the seq it covers: from
// the cache, or (after a restart) the head itself. ok is false when the
// chat has no root by the LLM yet: none at all, or only one folded without
// it (labelled extractive when the LLM failed), which the next trigger
// redoes.
func (w *Worker) llmBase(chat memory.Chat, head *memory.SummaryRecord) (memory.Summary, int64, bool) {
	w.mu.Lock()
	b, ok := w.bases[chat.Key()]
	w.mu.Unlock()
	if ok && b.created.Equal(chat.CreatedAt) {
		return b.sum.Clone(), b.to, true
	}
	if head == nil || head.Summary.Model == extractive.Name {
		return memory.Summary{}, 0, false
	}
	return head.Summary.Clone(), head.CoveredToSeq, true
}

// episodesAfter returns the closed episodes ending in (after, upTo], in seq
// order.
func (w *Worker) episodesAfter(ctx context.Context, es memory.EpisodeCloser, key memory.ChatKey, after, upTo int64) ([]memory.Episode, error) {
	if upTo <= after {
		return nil, nil
	}
	var out []memory.Episode
	// An episode ending after `after` starts at most max_turns before it;
	// 1,000 is above any episode_max_turns.
	from := max(after-1000, 0)
	for {
		page, err := es.Episodes(ctx, key, from, 200)
		if err != nil {
			return nil, fmt.Errorf("worker: episodes: %w", err)
		}
		for _, ep := range page {
			if ep.ToSeq > after && ep.ToSeq <= upTo {
				out = append(out, ep)
			}
		}
		if len(page) < 200 || page[len(page)-1].ToSeq >= upTo {
			return out, nil
		}
		from = page[len(page)-1].FromSeq
	}
}

// foldRoot is the root without an LLM call: base, the newer episodes
// folded in, and the open tail's extractive summary.
func (w *Worker) foldRoot(chat memory.Chat, base memory.Summary, newEps []memory.Episode, open []memory.Message, tailFrom, covered int64, maxTokens int) memory.Summary {
	for _, ep := range newEps {
		base = episodes.Fold(base, ep.Summary, ep.Short, maxTokens)
	}
	return w.withTail(chat, base, open, tailFrom, covered, maxTokens)
}

// tailTurns are the turns of open in (after, upTo], through the agent's
// filters.
func (w *Worker) tailTurns(chat memory.Chat, open []memory.Message, after, upTo int64) []memory.Message {
	var out []memory.Message
	for _, t := range open {
		if t.Seq > after && t.Seq <= upTo {
			out = append(out, t)
		}
	}
	if w.Prepare != nil && len(out) > 0 {
		out = w.Prepare(chat.Agent, out)
	}
	return out
}
