package worker

// Episodes: with memory.episodes on, the summariser closes episodes over
// the turns and the running summary is the root of a tree whose children
// they are. How the two share the work:
//
//   - Each closed episode costs one summariser call over its own turns
//     (plus episode_overlap turns of context). That is the only place
//     turns are read by an LLM.
//   - The root is never extended from turns by an LLM: with an LLM it is
//     extended from the episodes' summaries (root.go); between two of
//     those calls, and without an LLM, it is the fold of the episodes'
//     structured summaries (episodes.Fold, lists kept in order of last
//     reference, trimmed from the front at summary_max_tokens), plus an
//     extractive summary of the open tail — the turns after the last
//     closed episode up to the recent window — which costs no LLM tokens
//     and is replaced by the tail's episode once that closes.
//
// So the summariser reads each turn about once (and the overlap), whatever
// the length of the chat: its input stays well under 2x the conversation.
// The fold of the closed episodes (the root's base) is cached per chat and
// rebuilt from the stored episodes after a restart.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/contextd/contextd/derive/episodes"
	"github.com/contextd/contextd/derive/facts"
	"github.com/contextd/contextd/internal/background"
	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// EpisodeSettings are one agent's episode settings (memory.episode_*).
type EpisodeSettings struct {
	Enabled bool
	Params  episodes.Params
	Overlap int    // turns of the previous episode given as context
	Prompt  string // prompt_sections.episode_summary_prompt ("" = default)
	// ExtendEvery is memory.summary_extend_every_episodes: with an LLM, the
	// root is extended once this many episodes closed since it was last
	// written by the model (< 1: 1), when the chat's credit covers the call.
	ExtendEvery int
}

// rootBase is the fold of a chat's closed episodes up to seq to.
type rootBase struct {
	created time.Time // the chat's; a re-created chat does not reuse it
	to      int64
	sum     memory.Summary
}

func (w *Worker) episodeStore(s Settings) (memory.EpisodeCloser, bool) {
	if !s.Episodes.Enabled || !s.Persist || w.Episodes == nil {
		return nil, false
	}
	return w.Episodes, true
}

// extendEpisodes closes the episodes that ended in (last closed, upTo] and
// writes the new root. It holds the chat's summary lease.
func (w *Worker) extendEpisodes(ctx context.Context, es memory.EpisodeCloser, chat memory.Chat, head *memory.SummaryRecord, s Settings) (*memory.SummaryRecord, []string, error) {
	key := chat.Key()
	cursor := chat.SummaryCursor
	upTo := chat.LastSeq - int64(s.RecentTurns)
	latest, err := es.LatestEpisodes(ctx, key, 1)
	if err != nil {
		return nil, nil, fmt.Errorf("worker: last episode: %w", err)
	}
	var lastTo int64
	if len(latest) > 0 {
		lastTo = latest[0].ToSeq
	}
	stale := w.Stale(chat.Agent, head)
	if upTo <= cursor && upTo <= lastTo && !stale {
		return head, nil, nil
	}
	look := max(s.Episodes.Params.Lookback(), s.Episodes.Overlap)
	all, err := w.readTurns(ctx, key, max(lastTo-int64(look), 0), chat.LastSeq)
	if err != nil {
		return nil, nil, err
	}
	cut := 0 // all[:cut] are before the cursor
	for cut < len(all) && all[cut].Seq <= lastTo {
		cut++
	}
	prev, open := all[:cut], all[cut:]
	spans := episodes.Cut(prev[max(0, len(prev)-s.Episodes.Params.Lookback()):], open, upTo, s.Episodes.Params)

	fresh, cost, err := w.summariseSpans(ctx, chat, s, all, cut, spans)
	if err != nil {
		return nil, nil, err
	}
	degraded, in, calls := cost.degraded, cost.in, cost.calls
	if len(fresh) > 0 {
		if fresh, err = es.CloseEpisodes(ctx, key, lastTo, fresh); errors.Is(err, memory.ErrCursorMoved) {
			h, herr := w.Store.SummaryHead(ctx, key) // another worker closed them first
			return h, nil, herr
		} else if err != nil {
			return nil, nil, fmt.Errorf("worker: close episodes: %w", err)
		}
		w.addCredit(chat, cost.credit)
		if err := w.supersede(ctx, chat, fresh, all); err != nil {
			w.Logger.Warn("supersede facts", "chat", key.ChatID, "err", err) // derived; retried with the next facts
		}
		w.derived() // after the supersede: one pass indexes the episodes, their facts and the facts they made stale
	}
	for _, ep := range fresh {
		lastTo = ep.ToSeq
	}
	covered := max(upTo, cursor)
	if covered == cursor && len(fresh) == 0 && !stale {
		return head, nil, nil
	}
	var root memory.Summary
	if !w.Summarizer.UsesLLM() {
		// Without an LLM the root costs nothing to extend from the turns
		// themselves, which keeps more of them than the episodes' gists.
		if head, cursor, err = w.checkpoints(ctx, chat, w.Fallback, head, cursor, covered, s); err != nil {
			return nil, nil, err
		}
		if root, err = w.extractiveRoot(ctx, chat, head, cursor, covered, s.MaxTokens); err != nil {
			return nil, nil, err
		}
	} else {
		r, err := w.llmRoot(ctx, es, chat, head, s, stale, lastTo, covered, open)
		if err != nil {
			return nil, nil, err
		}
		root = r.sum
		degraded = addDegraded(degraded, r.degraded)
		calls, in = calls+r.calls, in+r.in
	}
	root.CoveredFromSeq, root.CoveredToSeq = 1, covered
	root.Stale, root.UpdatedAt = false, w.Now().UTC()
	// Whatever wrote it (the model, a fold, the tail's extractive summary
	// beside them), the served root says each sentence once.
	root.Narrative = memory.UniqueSentences(root.Narrative)
	stampModel(&root, w.Summarizer.Name(), w.Summarizer.PromptVersion(s.Prompts))
	rec := memory.SummaryRecord{Summary: root, TokenCount: tokens.Summary(root)}
	if covered > cursor {
		rec.FromSeq, rec.ToSeq = cursor+1, covered
	}
	return w.write(ctx, key, cursor, s, rec, degraded, calls, in)
}

// jobCost is what a job's summariser calls cost, and the fallbacks taken.
type jobCost struct {
	degraded       []string
	in, out, calls int
	// credit is what the episodes leave for root calls: twice their own
	// turns' tokens less what their calls sent (rootDue).
	credit int
}

// summariseSpans summarises the spans episodes.Cut found (open =
// all[cut:]), each with the overlap turns before it as context, and
// reports their cost. It fails when the work was abandoned (shutdown,
// lease lost), so that nothing is closed.
func (w *Worker) summariseSpans(ctx context.Context, chat memory.Chat, s Settings, all []memory.Message, cut int, spans []episodes.Span) ([]memory.Episode, jobCost, error) {
	var fresh []memory.Episode
	var c jobCost
	open := all[cut:]
	for _, sp := range spans {
		background.Yield()
		ctxTurns := all[max(0, cut+sp.From-s.Episodes.Overlap) : cut+sp.From]
		ep, res, err := w.summariseEpisode(ctx, chat, s, ctxTurns, open[sp.From:sp.To])
		if err != nil {
			return nil, c, err
		}
		fresh = append(fresh, ep)
		c.degraded = addDegraded(c.degraded, res.Degraded)
		c.in, c.out, c.calls = c.in+res.InputTokens, c.out+res.OutputTokens, c.calls+res.Calls
		c.credit += 2*contentTokens(open[sp.From:sp.To]) - res.InputTokens
		w.Spend(chat.Tenant, res.InputTokens, res.OutputTokens) // the budget holds between episodes
	}
	if err := context.Cause(ctx); err != nil {
		return nil, c, fmt.Errorf("worker: episodes abandoned: %w", err)
	}
	return fresh, c, nil
}

// contentTokens is the tokens of the turns' contents: the conversation's
// own size, which the summariser's input is weighed against.
func contentTokens(turns []memory.Message) int {
	n := 0
	for _, t := range turns {
		n += tokens.Count(t.Content)
	}
	return n
}

// addDegraded appends the reasons to degraded, each once.
func addDegraded(degraded, reasons []string) []string {
	for _, d := range reasons {
		if !slices.Contains(degraded, d) {
			degraded = append(degraded, d)
		}
	}
	return degraded
}

// sumTurns is how many turns the episodes own.
func sumTurns(eps []memory.Episode) int64 {
	var n int64
	for _, e := range eps {
		n += e.ToSeq - e.FromSeq + 1
	}
	return n
}

// extractiveRoot extends the head extractively with the turns in
// (cursor, covered]: the running summary as it is without episodes (lists
// in order of last reference, trimmed from the front at the cap).
func (w *Worker) extractiveRoot(ctx context.Context, chat memory.Chat, head *memory.SummaryRecord, cursor, covered int64, maxTokens int) (memory.Summary, error) {
	var prev *memory.Summary
	if head != nil {
		p := head.Summary.Clone()
		prev = &p
	}
	turns, err := w.readTurns(ctx, chat.Key(), cursor, covered)
	if err != nil {
		return memory.Summary{}, err
	}
	if w.Prepare != nil && len(turns) > 0 {
		turns = w.Prepare(chat.Agent, turns)
	}
	if len(turns) == 0 {
		if prev == nil {
			return memory.Summary{}, nil
		}
		return *prev, nil
	}
	res, err := w.Fallback.Summarize(ctx, memory.SummarizeRequest{Chat: chat, Prev: prev, Turns: turns, Structured: true, MaxTokens: maxTokens})
	if err != nil {
		return memory.Summary{}, fmt.Errorf("worker: extractive root: %w", err)
	}
	return res.Summary, nil
}

// withTail folds an extractive summary of the open tail, the turns in
// (lastTo, covered], into base. The tail's summary is extended from the
// last one when the tail only grew, so each tail turn is analysed once.
func (w *Worker) withTail(chat memory.Chat, base memory.Summary, turns []memory.Message, lastTo, covered int64, maxTokens int) memory.Summary {
	w.mu.Lock()
	cached, ok := w.tails[chat.Key()]
	w.mu.Unlock()
	var prev *memory.Summary
	from := lastTo
	if ok && cached.created.Equal(chat.CreatedAt) && cached.from == lastTo && cached.to <= covered {
		prev, from = &cached.sum, cached.to
	}
	var tail []memory.Message
	for _, t := range turns {
		if t.Seq > from && t.Seq <= covered {
			tail = append(tail, t)
		}
	}
	if w.Prepare != nil && len(tail) > 0 {
		tail = w.Prepare(chat.Agent, tail)
	}
	sum := memory.Summary{}
	if prev != nil {
		sum = prev.Clone()
	}
	if len(tail) > 0 {
		res, err := w.Fallback.Summarize(context.Background(), memory.SummarizeRequest{Prev: prev, Turns: tail, Structured: true, MaxTokens: maxTokens})
		if err == nil {
			sum = res.Summary
		}
	}
	w.mu.Lock()
	if w.tails == nil {
		w.tails = map[memory.ChatKey]tailSummary{}
	}
	if len(w.tails) > 10000 {
		clear(w.tails)
	}
	w.tails[chat.Key()] = tailSummary{created: chat.CreatedAt, from: lastTo, to: covered, sum: sum.Clone()}
	w.mu.Unlock()
	if covered <= lastTo {
		return base.Clone()
	}
	return episodes.Fold(base, sum, "", maxTokens)
}

// tailSummary is the extractive summary of a chat's open tail (from, to].
type tailSummary struct {
	created  time.Time
	from, to int64
	sum      memory.Summary
}

// summariseEpisode summarises one episode with the summarizer when it can
// (an LLM: one call), else — or when the tenant's daily budget is spent —
// extractively.
func (w *Worker) summariseEpisode(ctx context.Context, chat memory.Chat, s Settings, ctxTurns, turns []memory.Message) (memory.Episode, memory.EpisodeResult, error) {
	ep := memory.Episode{FromSeq: turns[0].Seq, ToSeq: turns[len(turns)-1].Seq,
		StartedAt: turns[0].CreatedAt, EndedAt: turns[len(turns)-1].CreatedAt}
	ctx, span := w.episodeSpan(ctx, chat, ep)
	defer span.End()
	own := w.summaryTurns(chat, turns)
	ctxTurns = w.summaryTurns(chat, ctxTurns)
	var sum memory.EpisodeSummarizer = w.Summarizer
	var extra []string
	if w.budgetSpent(chat.Tenant, w.Summarizer) {
		sum, extra = w.Fallback, []string{DegradedBudgetExhausted}
	}
	var res memory.EpisodeResult
	if len(own) > 0 {
		var err error
		res, err = sum.SummarizeEpisode(ctx, memory.EpisodeRequest{Chat: chat, Context: ctxTurns, Turns: own, Prompt: s.Episodes.Prompt, Model: s.Model})
		if err != nil {
			return ep, res, fmt.Errorf("worker: summarise episode %d..%d: %w", ep.FromSeq, ep.ToSeq, err)
		}
	}
	res.Degraded = append(extra, res.Degraded...)
	ep.Short, ep.Summary, ep.Model, ep.PromptVersion = res.Short, res.Summary, res.Model, res.PromptVersion
	ep.Facts = res.Facts
	if len(ep.Facts) == 0 {
		// Without an LLM (or when it failed) the facts are extracted:
		// what people say about themselves, plans, decisions.
		ep.Facts = facts.ForChat(chat.Key(), facts.Extract(own))
	}
	if ep.Model == "" {
		ep.Model, ep.PromptVersion = w.Fallback.Name(), w.Fallback.PromptVersion(memory.Prompts{})
	}
	ep.Summary.CoveredFromSeq, ep.Summary.CoveredToSeq = ep.FromSeq, ep.ToSeq
	return ep, res, nil
}

// readTurns returns the chat's turns in (after, upTo].
func (w *Worker) readTurns(ctx context.Context, key memory.ChatKey, after, upTo int64) ([]memory.Message, error) {
	var out []memory.Message
	for after < upTo {
		page, err := w.Store.Messages(ctx, key, after, int(min(upTo-after, 500)))
		if err != nil {
			return nil, fmt.Errorf("worker: messages: %w", err)
		}
		if len(page) == 0 {
			break
		}
		for _, m := range page {
			if m.Seq <= upTo {
				out = append(out, m)
			}
		}
		after = page[len(page)-1].Seq
	}
	return out, nil
}

func (w *Worker) setBase(chat memory.Chat, to int64, sum memory.Summary) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.bases == nil {
		w.bases = map[memory.ChatKey]rootBase{}
	}
	if len(w.bases) > 10000 {
		clear(w.bases) // a cache: rebuilt from the store when missing
	}
	w.bases[chat.Key()] = rootBase{created: chat.CreatedAt, to: to, sum: sum.Clone()}
}

// supersede marks the chat's older facts that the fresh episodes' facts
// update (facts.Supersede says how an update is recognised), and the open
// questions of the episodes that the turns after them answer: an
// episode's last question is open within it, though the next turn may
// answer it (all are the turns read, in seq order).
func (w *Worker) supersede(ctx context.Context, chat memory.Chat, fresh []memory.Episode, all []memory.Message) error {
	if w.Facts == nil {
		return nil
	}
	key := chat.Key()
	var fs []memory.Fact
	open, to := false, int64(0)
	for _, ep := range fresh {
		fs = append(fs, ep.Facts...)
		to = max(to, ep.ToSeq)
		open = open || slices.ContainsFunc(ep.Facts, facts.IsOpenQuestion)
	}
	if _, err := facts.SupersedeStored(ctx, w.Facts, key, fs); err != nil { // with an LLM the profile comes from the summaries
		return err
	}
	i, _ := slices.BinarySearchFunc(all, to+1, func(m memory.Message, seq int64) int { return cmp.Compare(m.Seq, seq) })
	if !open || i == len(all) {
		return nil
	}
	_, err := facts.SupersedeAnswered(ctx, w.Facts, key, w.summaryTurns(chat, all[i:]))
	return err
}
