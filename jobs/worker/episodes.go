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
	"sync"
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

// CloserStore is what the Closer reads and writes: the chat's turns, its
// summary chain and its episodes.
type CloserStore interface {
	ExtendStore
	memory.EpisodeCloser
}

// Closer is the summary job of the agents that keep episodes: it closes
// the episodes that ended since the last one (one summariser call each),
// supersedes the facts they update, and writes the root (root.go). The
// Worker runs it under the chat's summary lease; the Rebuilder uses it to
// summarise a rebuilt episode again.
type Closer struct {
	*Env
	Store CloserStore
	// Facts keeps the facts closed episodes carry (nil: a newer fact does
	// not supersede an older one).
	Facts memory.FactStore

	mu    sync.Mutex
	bases map[memory.ChatKey]rootBase
	// credits are the chats' root credits (root.go): what their closed
	// episodes left of twice their turns' tokens.
	credits map[memory.ChatKey]rootCredit
	tails   map[memory.ChatKey]tailSummary
}

// on reports whether the agent's chats keep episodes (a nil Closer: none).
func (cl *Closer) on(s Settings) bool {
	return cl != nil && s.Episodes.Enabled && s.Persist
}

// closing is what closing a chat's episodes did.
type closing struct {
	moved  bool             // another worker closed them first
	lastTo int64            // the end of the last closed episode
	open   []memory.Message // the turns after the last episode closed before
	fresh  int              // how many episodes this pass closed
	cost   jobCost
}

// extend closes the episodes that ended in (last closed, upTo] and writes
// the new root. It holds the chat's summary lease.
func (cl *Closer) extend(ctx context.Context, chat memory.Chat, head *memory.SummaryRecord, s Settings) (*memory.SummaryRecord, []string, error) {
	key, cursor := chat.Key(), chat.SummaryCursor
	upTo := chat.LastSeq - int64(s.RecentTurns)
	stale := cl.Stale(chat.Agent, head)
	c, err := cl.closeEpisodes(ctx, chat, s, upTo, stale)
	switch {
	case err != nil:
		return nil, nil, err
	case c == nil:
		return head, nil, nil
	case c.moved:
		h, herr := cl.Store.SummaryHead(ctx, key)
		return h, nil, herr
	}
	covered := max(upTo, cursor)
	if covered == cursor && c.fresh == 0 && !stale {
		return head, nil, nil
	}
	root, cursor, err := cl.root(ctx, chat, head, s, stale, cursor, covered, c)
	if err != nil {
		return nil, nil, err
	}
	root.CoveredFromSeq, root.CoveredToSeq = 1, covered
	root.Stale, root.UpdatedAt = false, cl.Now().UTC()
	// Whatever wrote it (the model, a fold, the tail's extractive summary
	// beside them), the served root says each sentence once.
	root.Narrative = memory.UniqueSentences(root.Narrative)
	stampModel(&root, cl.Summarizer.Name(), cl.Summarizer.PromptVersion(s.Prompts))
	rec := memory.SummaryRecord{Summary: root, TokenCount: tokens.Summary(root)}
	if covered > cursor {
		rec.FromSeq, rec.ToSeq = cursor+1, covered
	}
	return cl.write(ctx, cl.Store, key, cursor, s, rec, c.cost.degraded, c.cost.calls, c.cost.in)
}

// closeEpisodes summarises and closes the episodes that ended in (last
// closed, upTo], and supersedes the facts they update. It returns nil when
// there is nothing to do (no turn to close nor to cover, the root current).
func (cl *Closer) closeEpisodes(ctx context.Context, chat memory.Chat, s Settings, upTo int64, stale bool) (*closing, error) {
	key := chat.Key()
	latest, err := cl.Store.Episodes(ctx, key, memory.LatestEpisodes(1))
	if err != nil {
		return nil, fmt.Errorf("worker: last episode: %w", err)
	}
	var lastTo int64
	if len(latest) > 0 {
		lastTo = latest[0].ToSeq
	}
	if upTo <= chat.SummaryCursor && upTo <= lastTo && !stale {
		return nil, nil
	}
	look := max(s.Episodes.Params.Lookback(), s.Episodes.Overlap)
	all, err := readTurns(ctx, cl.Store, key, max(lastTo-int64(look), 0), chat.LastSeq)
	if err != nil {
		return nil, err
	}
	cut := 0 // all[:cut] are before the cursor
	for cut < len(all) && all[cut].Seq <= lastTo {
		cut++
	}
	prev, open := all[:cut], all[cut:]
	spans := episodes.Cut(prev[max(0, len(prev)-s.Episodes.Params.Lookback()):], open, upTo, s.Episodes.Params)

	fresh, cost, err := cl.summarizeSpans(ctx, chat, s, all, cut, spans)
	if err != nil {
		return nil, err
	}
	if len(fresh) > 0 {
		if fresh, err = cl.Store.CloseEpisodes(ctx, key, lastTo, fresh); errors.Is(err, memory.ErrCursorMoved) {
			return &closing{moved: true}, nil
		} else if err != nil {
			return nil, fmt.Errorf("worker: close episodes: %w", err)
		}
		cl.addCredit(chat, cost.credit)
		if err := cl.supersede(ctx, chat, fresh, all); err != nil {
			cl.Logger.Warn("supersede facts", "chat", key.ChatID, "err", err) // derived; retried with the next facts
		}
		cl.derived() // after the supersede: one pass indexes the episodes, their facts and the facts they made stale
	}
	for _, ep := range fresh {
		lastTo = ep.ToSeq
	}
	return &closing{lastTo: lastTo, open: open, fresh: len(fresh), cost: cost}, nil
}

// root is the chat's new root over (cursor, covered] and the cursor it
// extends (checkpoints may move it): without an LLM extended extractively
// from the turns themselves, which keeps more of them than the episodes'
// gists; with one, llmRoot. The root's cost is added to c's.
func (cl *Closer) root(ctx context.Context, chat memory.Chat, head *memory.SummaryRecord, s Settings, stale bool, cursor, covered int64, c *closing) (memory.Summary, int64, error) {
	if !cl.Summarizer.UsesLLM() {
		head, cursor, err := cl.checkpoints(ctx, cl.Store, chat, cl.Fallback, head, cursor, covered, s)
		if err != nil {
			return memory.Summary{}, cursor, err
		}
		root, err := cl.extractiveRoot(ctx, chat, head, cursor, covered, s.MaxTokens)
		return root, cursor, err
	}
	r, err := cl.llmRoot(ctx, chat, head, s, stale, c.lastTo, covered, c.open)
	if err != nil {
		return memory.Summary{}, cursor, err
	}
	c.cost.degraded = addDegraded(c.cost.degraded, r.degraded)
	c.cost.calls, c.cost.in = c.cost.calls+r.calls, c.cost.in+r.in
	return r.sum, cursor, nil
}

// jobCost is what a job's summariser calls cost, and the fallbacks taken.
type jobCost struct {
	degraded       []string
	in, out, calls int
	// credit is what the episodes leave for root calls: twice their own
	// turns' tokens less what their calls sent (rootDue).
	credit int
}

// summarizeSpans summarises the spans episodes.Cut found (open =
// all[cut:]), each with the overlap turns before it as context, and
// reports their cost. It fails when the work was abandoned (shutdown,
// lease lost), so that nothing is closed.
func (cl *Closer) summarizeSpans(ctx context.Context, chat memory.Chat, s Settings, all []memory.Message, cut int, spans []episodes.Span) ([]memory.Episode, jobCost, error) {
	var fresh []memory.Episode
	var c jobCost
	open := all[cut:]
	for _, sp := range spans {
		background.Yield()
		ctxTurns := all[max(0, cut+sp.From-s.Episodes.Overlap) : cut+sp.From]
		ep, res, err := cl.summarizeEpisode(ctx, chat, s, ctxTurns, open[sp.From:sp.To])
		if err != nil {
			return nil, c, err
		}
		fresh = append(fresh, ep)
		c.degraded = addDegraded(c.degraded, res.Degraded)
		c.in, c.out, c.calls = c.in+res.InputTokens, c.out+res.OutputTokens, c.calls+res.Calls
		c.credit += 2*contentTokens(open[sp.From:sp.To]) - res.InputTokens
		cl.Budget.Spend(chat.Tenant, res.InputTokens, res.OutputTokens) // the budget holds between episodes
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
func (cl *Closer) extractiveRoot(ctx context.Context, chat memory.Chat, head *memory.SummaryRecord, cursor, covered int64, maxTokens int) (memory.Summary, error) {
	var prev *memory.Summary
	if head != nil {
		p := head.Summary.Clone()
		prev = &p
	}
	turns, err := readTurns(ctx, cl.Store, chat.Key(), cursor, covered)
	if err != nil {
		return memory.Summary{}, err
	}
	if cl.Prepare != nil && len(turns) > 0 {
		turns = cl.Prepare(chat.Agent, turns)
	}
	if len(turns) == 0 {
		if prev == nil {
			return memory.Summary{}, nil
		}
		return *prev, nil
	}
	res, err := cl.Fallback.Summarize(ctx, memory.SummarizeRequest{Chat: chat, Prev: prev, Turns: turns, Structured: true, MaxTokens: maxTokens})
	if err != nil {
		return memory.Summary{}, fmt.Errorf("worker: extractive root: %w", err)
	}
	return res.Summary, nil
}

// withTail folds an extractive summary of the open tail, the turns in
// (lastTo, covered], into base. The tail's summary is extended from the
// last one when the tail only grew, so each tail turn is analysed once.
func (cl *Closer) withTail(chat memory.Chat, base memory.Summary, turns []memory.Message, lastTo, covered int64, maxTokens int) memory.Summary {
	cl.mu.Lock()
	cached, ok := cl.tails[chat.Key()]
	cl.mu.Unlock()
	var prev *memory.Summary
	from := lastTo
	if ok && cached.created.Equal(chat.CreatedAt) && cached.from == lastTo && cached.to <= covered {
		prev, from = &cached.sum, cached.to
	}
	tail := cl.tailTurns(chat, turns, from, covered)
	sum := memory.Summary{}
	if prev != nil {
		sum = prev.Clone()
	}
	if len(tail) > 0 {
		res, err := cl.Fallback.Summarize(context.Background(), memory.SummarizeRequest{Prev: prev, Turns: tail, Structured: true, MaxTokens: maxTokens})
		if err == nil {
			sum = res.Summary
		}
	}
	cl.mu.Lock()
	if cl.tails == nil {
		cl.tails = map[memory.ChatKey]tailSummary{}
	}
	if len(cl.tails) > 10000 {
		clear(cl.tails)
	}
	cl.tails[chat.Key()] = tailSummary{created: chat.CreatedAt, from: lastTo, to: covered, sum: sum.Clone()}
	cl.mu.Unlock()
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

// summarizeEpisode summarises one episode with the summarizer when it can
// (an LLM: one call), else — or when the tenant's daily budget is spent —
// extractively.
func (cl *Closer) summarizeEpisode(ctx context.Context, chat memory.Chat, s Settings, ctxTurns, turns []memory.Message) (memory.Episode, memory.EpisodeResult, error) {
	ep := memory.Episode{FromSeq: turns[0].Seq, ToSeq: turns[len(turns)-1].Seq,
		StartedAt: turns[0].CreatedAt, EndedAt: turns[len(turns)-1].CreatedAt}
	ctx, span := cl.episodeSpan(ctx, chat, ep)
	defer span.End()
	own := cl.summaryTurns(chat, turns)
	ctxTurns = cl.summaryTurns(chat, ctxTurns)
	var sum memory.EpisodeSummarizer = cl.Summarizer
	var extra []string
	if cl.budgetSpent(chat.Tenant, cl.Summarizer) {
		sum, extra = cl.Fallback, []string{DegradedBudgetExhausted}
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
		ep.Model, ep.PromptVersion = cl.Fallback.Name(), cl.Fallback.PromptVersion(memory.Prompts{})
	}
	ep.Summary.CoveredFromSeq, ep.Summary.CoveredToSeq = ep.FromSeq, ep.ToSeq
	return ep, res, nil
}

func (cl *Closer) setBase(chat memory.Chat, to int64, sum memory.Summary) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.bases == nil {
		cl.bases = map[memory.ChatKey]rootBase{}
	}
	if len(cl.bases) > 10000 {
		clear(cl.bases) // a cache: rebuilt from the store when missing
	}
	cl.bases[chat.Key()] = rootBase{created: chat.CreatedAt, to: to, sum: sum.Clone()}
}

// supersede marks the chat's older facts that the fresh episodes' facts
// update (facts.Supersede says how an update is recognised), and the open
// questions of the episodes that the turns after them answer: an
// episode's last question is open within it, though the next turn may
// answer it (all are the turns read, in seq order).
func (cl *Closer) supersede(ctx context.Context, chat memory.Chat, fresh []memory.Episode, all []memory.Message) error {
	if cl.Facts == nil {
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
	if _, err := facts.SupersedeStored(ctx, cl.Facts, key, fs); err != nil { // with an LLM the profile comes from the summaries
		return err
	}
	i, _ := slices.BinarySearchFunc(all, to+1, func(m memory.Message, seq int64) int { return cmp.Compare(m.Seq, seq) })
	if !open || i == len(all) {
		return nil
	}
	_, err := facts.SupersedeAnswered(ctx, cl.Facts, key, cl.summaryTurns(chat, all[i:]))
	return err
}

// forget drops what the Closer remembers of the chat's summaries (a
// deleted turn may be in them).
func (cl *Closer) forget(key memory.ChatKey) {
	if cl == nil {
		return
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	delete(cl.bases, key)
	delete(cl.tails, key)
}
