package worker

// The running summary (the root) with an LLM and episodes on.
//
// The LLM writes the root, with the agent's prompts: the first root with
// the compression prompt, every later one with the extension prompt, given
// the existing root and the summaries of the episodes closed since (their
// narrative, lists and facts — never their turns again). The open tail's
// turns are given only while no episode covers anything yet (a young chat).
//
// How often: a pass that closed episodes extends the root once
// summary_extend_every_episodes of them (default 1) closed since the model
// last wrote it, when the chat's credit covers the call (rootDue): so the
// summariser's input stays within 2x the conversation (1.30x over 1,000
// turns extended at every episode, TestSummaryInputCostEpisodes); where the
// episode calls eat the credit (turns of a few words), once the new
// episodes' summaries weigh half the root. A pass that closed several
// sends them in one call. Until then, and whenever the
// LLM fails, the root is the last LLM root with the newer episodes folded
// in mechanically, plus an extractive summary of the open tail: nothing is
// lost, the degraded reason is reported, and the next trigger retries.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/contextd/contextd/derive/episodes"
	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// rootResult is a root and what writing it cost.
type rootResult struct {
	sum       memory.Summary
	degraded  []string
	calls, in int
}

// inputEstimator is a summarizer that can say what a call would send
// before making it (llmsum's): the root's cost is weighed with it.
type inputEstimator interface {
	EstimateInput(req memory.SummarizeRequest) int
}

// llmRoot builds the root over the closed episodes up to lastTo and the
// open tail up to covered. open are the turns after the last episode
// closed before this pass (read by closeEpisodes).
func (cl *Closer) llmRoot(ctx context.Context, chat memory.Chat, head *memory.SummaryRecord,
	s Settings, stale bool, lastTo, covered int64, open []memory.Message) (rootResult, error) {
	base, baseTo, haveBase := cl.llmBase(chat, head)
	newEps, err := cl.episodesAfter(ctx, chat.Key(), baseTo, lastTo)
	if err != nil {
		return rootResult{}, err
	}
	young := lastTo == 0 // no episode covers anything yet
	tailFrom := max(lastTo, baseTo)
	req := memory.SummarizeRequest{Chat: chat, Episodes: newEps, Prompts: s.Prompts, Model: s.Model,
		Structured: s.Structured, MaxTokens: s.MaxTokens}
	if haveBase {
		req.Prev = &base
	}
	to := lastTo
	if young {
		req.Turns, to = cl.tailTurns(chat, open, baseTo, covered), covered
	}
	due := cl.rootDue(chat, s, req, haveBase, stale)
	if young && !haveBase {
		due = covered > baseTo
	}
	if !due || (len(newEps) == 0 && !young && !stale) {
		return rootResult{sum: cl.foldRoot(chat, base, newEps, open, tailFrom, covered, s.MaxTokens)}, nil
	}
	var res memory.SummarizeResult
	if cl.Budget.Exhausted(chat.Tenant) {
		res.Degraded = []string{DegradedBudgetExhausted}
	} else if res, err = cl.Summarizer.Summarize(ctx, req); err != nil {
		if cause := context.Cause(ctx); cause != nil {
			return rootResult{}, fmt.Errorf("worker: root abandoned: %w", cause)
		}
		res.Degraded = []string{memory.DegradedLLMUnavailable}
	}
	cl.Budget.Spend(chat.Tenant, res.InputTokens, res.OutputTokens)
	cl.addCredit(chat, -res.InputTokens)
	out := rootResult{degraded: res.Degraded, calls: res.Calls, in: res.InputTokens}
	if failed(res.Degraded) {
		// The previous root stands; the episodes are folded in mechanically
		// until the next trigger retries.
		out.sum = cl.foldRoot(chat, base, newEps, open, tailFrom, covered, s.MaxTokens)
		out.sum.Model = cl.Fallback.Name() // folded without the model: redone once it answers
		return out, nil
	}
	cl.setBase(chat, to, res.Summary)
	out.sum = cl.withTail(chat, res.Summary, open, to, covered, s.MaxTokens)
	return out, nil
}

// rootBatchTokens is the least new material worth an extension that the
// chat's credit does not cover.
const rootBatchTokens = 400

// rootDue decides whether this pass asks the model for the root: always
// for the first root (the compression prompt) and a stale one; an
// extension once ExtendEvery episodes closed since the model last wrote
// the root and either
//   - the chat's credit covers what the call would send. The credit is
//     what the closed episodes left of twice their turns' tokens
//     (addCredit), so the summariser's input, episodes and root together,
//     stays within 2x the conversation: a chat of long turns is extended
//     at every episode, one of short turns waits for a few; or
//   - the episodes' summaries weigh at least half the root (and
//     rootBatchTokens): where the episode calls alone eat the credit
//     (turns of a few words), the root is still extended, at a cost that is
//     a small multiple of the summaries it reads.
func (cl *Closer) rootDue(chat memory.Chat, s Settings, req memory.SummarizeRequest, haveBase, stale bool) bool {
	switch {
	case stale || !haveBase:
		return true
	case len(req.Episodes) < max(s.Episodes.ExtendEvery, 1):
		return false
	}
	if est, ok := cl.Summarizer.(inputEstimator); !ok || est.EstimateInput(req) <= cl.credit(chat) {
		return true
	}
	pending := 0
	for _, ep := range req.Episodes {
		pending += tokens.Count(ep.Short) + tokens.Summary(ep.Summary)
	}
	return pending >= max(rootBatchTokens, tokens.Summary(*req.Prev)/2)
}

// credit is the chat's root credit in tokens (0 when unknown: after a
// restart the credit starts again from the episodes closed since).
func (cl *Closer) credit(chat memory.Chat) int {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if c, ok := cl.credits[chat.Key()]; ok && c.created.Equal(chat.CreatedAt) {
		return c.tokens
	}
	return 0
}

// addCredit adds n tokens (negative: spends them) to the chat's credit.
func (cl *Closer) addCredit(chat memory.Chat, n int) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.credits == nil || len(cl.credits) > 10000 {
		cl.credits = map[memory.ChatKey]rootCredit{} // a cache: a lost credit only delays a root call
	}
	c := cl.credits[chat.Key()]
	if !c.created.Equal(chat.CreatedAt) {
		c = rootCredit{created: chat.CreatedAt}
	}
	c.tokens += n
	cl.credits[chat.Key()] = c
}

// rootCredit is what a chat's closed episodes left for root calls.
type rootCredit struct {
	created time.Time // the chat's; a re-created chat starts afresh
	tokens  int
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
func (cl *Closer) llmBase(chat memory.Chat, head *memory.SummaryRecord) (memory.Summary, int64, bool) {
	cl.mu.Lock()
	b, ok := cl.bases[chat.Key()]
	cl.mu.Unlock()
	if ok && b.created.Equal(chat.CreatedAt) {
		return b.sum.Clone(), b.to, true
	}
	if head == nil || head.Summary.Model == cl.Fallback.Name() { // written without the model
		return memory.Summary{}, 0, false
	}
	return head.Summary.Clone(), head.CoveredToSeq, true
}

// episodesAfter returns the closed episodes ending in (after, upTo], in seq
// order.
func (cl *Closer) episodesAfter(ctx context.Context, key memory.ChatKey, after, upTo int64) ([]memory.Episode, error) {
	if upTo <= after {
		return nil, nil
	}
	var out []memory.Episode
	// An episode ending after `after` starts at most max_turns before it;
	// 1,000 is above any episode_max_turns.
	from := max(after-1000, 0)
	for {
		page, err := cl.Store.Episodes(ctx, key, memory.EpisodeQuery{AfterSeq: from, Limit: 200})
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
func (cl *Closer) foldRoot(chat memory.Chat, base memory.Summary, newEps []memory.Episode, open []memory.Message, tailFrom, covered int64, maxTokens int) memory.Summary {
	for _, ep := range newEps {
		base = episodes.Fold(base, ep.Summary, ep.Short, maxTokens)
	}
	return cl.withTail(chat, base, open, tailFrom, covered, maxTokens)
}

// tailTurns are the turns of open in (after, upTo], through the agent's
// filters.
func (cl *Closer) tailTurns(chat memory.Chat, open []memory.Message, after, upTo int64) []memory.Message {
	var out []memory.Message
	for _, t := range open {
		if t.Seq > after && t.Seq <= upTo {
			out = append(out, t)
		}
	}
	if cl.Prepare != nil && len(out) > 0 {
		out = cl.Prepare(chat.Agent, out)
	}
	return out
}
