// Package worker runs durable background summarisation: it finds chats whose
// turns outside the recent window passed the agent's trigger, takes the
// chat's summary lease, extends the summary from its cursor with only the new
// turns, and writes the new head with a cursor check. All work is derived
// from stored state, so a crash loses nothing: the next worker redoes it.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/contextd/contextd/internal/background"
	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/internal/tracing"
	"github.com/contextd/contextd/memory"
)

// Degraded reasons the worker adds to the summarizer's own.
const (
	// DegradedBudgetExhausted: the tenant's daily LLM token budget is spent;
	// the extractive summarizer did the work.
	DegradedBudgetExhausted = "llm_budget_exhausted"
)

// Settings are one agent's effective summarisation settings.
type Settings struct {
	RecentTurns   int           // turns kept verbatim, never summarised
	TriggerTurns  int           // summarise when this many turns wait outside the window...
	TriggerTokens int           // ...or when they hold this many tokens
	Cooldown      time.Duration // minimum time between two background runs on a chat
	MaxTokens     int           // cap on the summary's size
	Prompts       memory.Prompts
	Model         string
	Structured    bool
	Persist       bool // false: no background work; Extend computes without writing
	Enabled       bool // strategy != none
	Episodes      EpisodeSettings
}

// Store is what the summariser reads and writes.
type Store interface {
	memory.ChatReader
	memory.Summaries
	memory.Leases
}

// Worker summarises chats in the background. Set the exported fields, then
// call Run (or Drain / Extend). The zero values of the optional fields take
// the defaults noted.
type Worker struct {
	Store      Store
	Summarizer memory.Summarizer
	// Episodes keeps closed episodes (nil: no episodes, whatever the
	// agent's settings).
	Episodes memory.EpisodeCloser
	// Facts keeps the facts closed episodes carry (nil: a newer fact does
	// not supersede an older one).
	Facts memory.FactStore
	// Fallback is the deterministic summarizer (no LLM: UsesLLM is false):
	// it writes when the daily token budget is spent and rebuilds
	// stretches without the model, and its Name labels what was written
	// without the model (a root folded while the model failed), which the
	// model redoes once it answers. Required with an LLM Summarizer;
	// default: the Summarizer itself when it uses no LLM.
	Fallback memory.Summarizer
	Settings func(agent string) Settings
	Owner    string        // lease owner id, unique per process (default "worker")
	Lease    time.Duration // lease ttl, renewed while working (default memory.DefaultLeaseTTL)
	Poll     time.Duration // idle poll interval (default DefaultPoll)
	// DailyTokenBudget caps LLM tokens per tenant per UTC day; 0 = off.
	// Counted in this process.
	DailyTokenBudget int64
	Logger           *slog.Logger
	Now              func() time.Time
	// MinPending is the smallest unsummarised backlog worth listing (default:
	// the default agent's RecentTurns+1). Set it to min over agents of
	// RecentTurns+1 when agents differ.
	MinPending int64
	// BatchSize is how many chats one scan lists (default 200).
	BatchSize int
	// MinInterval is the least time between two background scans, so a
	// burst of appends (each one Kicks) costs one scan (default 250ms).
	MinInterval time.Duration
	// Prepare, when set, turns the eligible turns into what the summarizer
	// reads (the agent's filters: routing noise skipped, labels stripped).
	// Turns it removes still count as covered, so noise never stalls the
	// cursor.
	Prepare func(agent string, turns []memory.Message) []memory.Message
	// OnWrite, when set, is told each background job's failure and each
	// summary write that succeeded (nil): readiness keeps a full disk's
	// (storage degraded until a write succeeds), as for a request's.
	OnWrite func(error)
	// OnJob, when set, is told the outcome of every extension that ran
	// and the LLM tokens each summariser call used (metrics).
	OnJob func(JobEvent)
	// Tracer opens a span per summary job (nil: no-op).
	Tracer trace.Tracer
	// OnDerived, when set, is told after the worker stored episodes or
	// facts (closed, rebuilt or superseded) that are to be indexed: the
	// indexer's Kick, so they are retrievable within its pass, not its
	// poll, and a read waiting for the index waits for them too.
	OnDerived func()
	// Forget, when set, is where deleted messages leave their marks: Run
	// and Drain rebuild what was derived from them (rebuild.go). Erase
	// deletes a forgotten turn's vectors (nil: no index); Profiles loses
	// the profile items sourced from it (nil: no profiles).
	Forget   memory.MessageForgetter
	Erase    PointEraser
	Profiles memory.ProfileStore

	once  sync.Once
	kick  chan struct{}
	mu    sync.Mutex
	chats map[memory.ChatKey]*chatState
	usage map[string]dayUsage
	bases map[memory.ChatKey]rootBase
	// credits are the chats' root credits (root.go): what their closed
	// episodes left of twice their turns' tokens.
	credits map[memory.ChatKey]rootCredit
	tails   map[memory.ChatKey]tailSummary
	jobs    map[memory.ChatKey]chan struct{} // jobs this process runs, by chat
	// previews are the request path's in-memory extensions (preview.go).
	previews map[memory.ChatKey]preview
}

type chatState struct {
	lastRun  time.Time // last successful background extension
	failures int
	retryAt  time.Time
	degraded []string // fallbacks the head summary was written with
	// idleSeq/idleCursor: the chat's (last_seq, cursor) when it was last
	// found not triggered. The trigger depends only on those two, so the
	// chat is not checked again (no SQL, no token counting) until one moves.
	idleSeq, idleCursor int64
}

type dayUsage struct {
	day    string
	tokens int64
}

// JobEvent is what OnJob is told: a job's outcome, or the LLM tokens a
// summariser call used (reported as the call returns, so a job that fails
// afterwards still counts what it spent).
type JobEvent struct {
	Tenant string
	// Outcome is JobOK, JobDegraded or JobError; empty on an event that
	// reports tokens only.
	Outcome string
	// InTokens and OutTokens are the LLM tokens of one summariser call (0
	// on an outcome event).
	InTokens, OutTokens int
}

// Job outcomes.
const (
	JobOK       = "ok"
	JobDegraded = "degraded"
	JobError    = "error"
)

// ErrLeaseHeld: another worker holds the chat's summary lease.
var ErrLeaseHeld = errors.New("worker: summary lease held by another worker")

func (w *Worker) init() {
	w.once.Do(func() {
		w.EnsureDefaults()
		w.kick = make(chan struct{}, 1)
		w.chats = map[memory.ChatKey]*chatState{}
		w.usage = map[string]dayUsage{}
	})
}

// EnsureDefaults fills the optional fields left zero with their defaults:
// the one place the worker's defaults live. Run, Drain, Extend and Kick
// call it (once) themselves; call it before reading the fields.
func (w *Worker) EnsureDefaults() {
	if w.Owner == "" {
		w.Owner = "worker"
	}
	if w.Lease <= 0 {
		w.Lease = memory.DefaultLeaseTTL
	}
	if w.Poll <= 0 {
		w.Poll = DefaultPoll
	}
	if w.MinInterval <= 0 {
		w.MinInterval = DefaultMinInterval
	}
	if w.Logger == nil {
		w.Logger = slog.New(slog.DiscardHandler)
	}
	if w.Now == nil {
		w.Now = time.Now
	}
	if w.Fallback == nil && w.Summarizer != nil && !w.Summarizer.UsesLLM() {
		w.Fallback = w.Summarizer // a deterministic summarizer is its own fallback
	}
	if w.BatchSize <= 0 {
		w.BatchSize = DefaultBatchSize
	}
	if w.MinPending <= 0 {
		w.MinPending = int64(w.settings(memory.DefaultAgent).RecentTurns) + 1
	}
}

// Worker defaults.
const (
	DefaultPoll        = 2 * time.Second
	DefaultMinInterval = 250 * time.Millisecond
	DefaultBatchSize   = 200
)

// DefaultSettings are the settings of every agent when Settings is nil;
// they equal config.DefaultMemory's (a test in cmd/contextd checks it).
func DefaultSettings() Settings {
	return Settings{RecentTurns: 10, TriggerTurns: 10, TriggerTokens: 2000, Cooldown: 30 * time.Second, MaxTokens: 800,
		Structured: true, Persist: true, Enabled: true}
}

func (w *Worker) settings(agent string) Settings {
	if w.Settings == nil {
		return DefaultSettings()
	}
	return w.Settings(agent)
}

// Kick wakes Run for an immediate scan (e.g. after an append).
func (w *Worker) Kick() {
	w.init()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Run scans for work until ctx is cancelled, then returns nil. Work in
// flight when ctx ends is abandoned without writing anything.
func (w *Worker) Run(ctx context.Context) error {
	w.init()
	for {
		if _, err := w.Rebuild(ctx); err != nil && ctx.Err() == nil {
			w.Logger.Warn("rebuild after a deleted message failed", "err", err)
			w.wrote(err)
		}
		if _, err := w.pass(ctx, nil); err != nil && ctx.Err() == nil {
			w.Logger.Warn("summary scan failed", "err", err)
		}
		if ctx.Err() != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-w.kick:
		case <-time.After(w.Poll):
		}
		// Coalesce the kicks of a burst into the next scan.
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(w.MinInterval):
		}
	}
}

// idle reports whether c was found not triggered in its current state.
func (w *Worker) idle(c memory.Chat) bool {
	st := w.state(c.Key())
	w.mu.Lock()
	defer w.mu.Unlock()
	return st.idleSeq == c.LastSeq && st.idleCursor == c.SummaryCursor && c.LastSeq > 0
}

func (w *Worker) markIdle(c memory.Chat) {
	st := w.state(c.Key())
	w.mu.Lock()
	st.idleSeq, st.idleCursor = c.LastSeq, c.SummaryCursor
	w.mu.Unlock()
}

// Drain processes every chat whose backlog currently passes its trigger,
// ignoring cooldowns, until none is left. A chat that fails is skipped for
// the rest of the drain; the errors are returned joined.
func (w *Worker) Drain(ctx context.Context) error {
	w.init()
	failed := map[memory.ChatKey]error{}
	for i := 0; i < 10000; i++ {
		// Again after each scan: an extension over a deleted turn marks
		// its summary dirty (see rebuildWork).
		r, err := w.Rebuild(ctx)
		if err != nil {
			return err
		}
		n, err := w.pass(ctx, failed)
		if err != nil {
			return err
		}
		if n == 0 && r == 0 {
			break
		}
	}
	var errs []error
	for k, err := range failed {
		errs = append(errs, fmt.Errorf("chat %s/%s: %w", k.Tenant, k.ChatID, err))
	}
	return errors.Join(errs...)
}

// pass runs one scan over the summary work and reports how many chats it
// extended. In the background (failed == nil) it respects each chat's
// cooldown and backoff and records the outcome; a drain (failed != nil)
// ignores them, skips the chats that failed before and collects errors.
func (w *Worker) pass(ctx context.Context, failed map[memory.ChatKey]error) (int, error) {
	chats, err := w.Store.ListSummaryWork(ctx, w.MinPending, w.BatchSize)
	if err != nil {
		return 0, fmt.Errorf("worker: list summary work: %w", err)
	}
	drain := failed != nil
	done := 0
	for _, c := range chats {
		if ctx.Err() != nil {
			if drain {
				return done, ctx.Err()
			}
			return done, nil
		}
		if w.skip(c, failed) {
			continue
		}
		ok, err := w.triggered(ctx, c)
		if err != nil {
			w.fail(c.Key(), err, failed)
			continue
		}
		if !ok {
			w.markIdle(c)
			continue
		}
		background.Yield()
		rec, _, err := w.extend(ctx, c.Key(), false)
		switch {
		case ctx.Err() != nil && !drain:
			return done, nil
		case errors.Is(err, ErrLeaseHeld):
			// Another worker has it; it is done when the lease is free.
		case err != nil:
			w.fail(c.Key(), err, failed)
		default:
			if !drain {
				w.succeeded(c.Key())
			}
			if rec != nil {
				done++
			}
		}
	}
	if !drain {
		w.prune()
	}
	return done, nil
}

// skip: the chat is idle, failed earlier in this drain, or (in the
// background) waiting out its cooldown or backoff.
func (w *Worker) skip(c memory.Chat, failed map[memory.ChatKey]error) bool {
	if failed != nil {
		return failed[c.Key()] != nil || w.idle(c)
	}
	now := w.Now()
	st := w.state(c.Key())
	w.mu.Lock()
	wait := now.Before(st.retryAt) || (!st.lastRun.IsZero() && now.Before(st.lastRun.Add(w.settings(c.Agent).Cooldown)))
	w.mu.Unlock()
	return wait || w.idle(c)
}

// fail records a chat's error: for the drain's report, or as backoff.
func (w *Worker) fail(k memory.ChatKey, err error, failed map[memory.ChatKey]error) {
	if failed != nil {
		failed[k] = err
		return
	}
	w.failed(k, err)
}

func (w *Worker) succeeded(k memory.ChatKey) {
	st := w.state(k)
	w.mu.Lock()
	st.lastRun, st.failures, st.retryAt = w.Now(), 0, time.Time{}
	w.mu.Unlock()
}

func (w *Worker) state(k memory.ChatKey) *chatState {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.chats[k]
	if st == nil {
		st = &chatState{}
		w.chats[k] = st
	}
	return st
}

// failed schedules a retry with exponential backoff (1s, 2s, 4s ... 5m).
func (w *Worker) failed(k memory.ChatKey, err error) {
	st := w.state(k)
	w.mu.Lock()
	st.failures++
	delay := time.Second << min(st.failures-1, 9)
	delay = min(delay, 5*time.Minute)
	st.retryAt = w.Now().Add(delay)
	n := st.failures
	w.mu.Unlock()
	w.wrote(err)
	w.Logger.Warn("summary failed", "tenant", k.Tenant, "chat", k.ChatID, "failures", n, "retry_in", delay, "err", err)
}

// prune forgets chats whose cooldown and backoff are long over.
func (w *Worker) prune() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.chats) < 10000 {
		return
	}
	cut := w.Now().Add(-10 * time.Minute)
	for k, st := range w.chats {
		if st.lastRun.Before(cut) && st.retryAt.Before(cut) {
			delete(w.chats, k)
		}
	}
}

// triggered reports whether the chat's turns outside the recent window that
// the summary does not cover pass the agent's trigger, or its head was
// written under other prompts.
func (w *Worker) triggered(ctx context.Context, c memory.Chat) (bool, error) {
	s := w.settings(c.Agent)
	if !s.Enabled || !s.Persist {
		return false, nil
	}
	eligible := c.LastSeq - int64(s.RecentTurns) - c.SummaryCursor
	if eligible <= 0 {
		return false, nil
	}
	if s.TriggerTurns > 0 && eligible >= int64(s.TriggerTurns) {
		return true, nil
	}
	head, err := w.Store.SummaryHead(ctx, c.Key())
	if err != nil {
		return false, fmt.Errorf("worker: summary head: %w", err)
	}
	if w.Stale(c.Agent, head) {
		return true, nil
	}
	if s.TriggerTokens <= 0 {
		return false, nil
	}
	msgs, err := w.Store.Messages(ctx, c.Key(), c.SummaryCursor, int(eligible))
	if err != nil {
		return false, fmt.Errorf("worker: messages: %w", err)
	}
	n := 0
	for _, m := range msgs {
		n += tokens.Count(m.Content)
	}
	return n >= s.TriggerTokens, nil
}

// Stale reports whether head was written under prompts other than the
// agent's current ones (a summary the extractive summarizer wrote is never
// stale: it uses no prompts).
func (w *Worker) Stale(agent string, head *memory.SummaryRecord) bool {
	w.init()
	p := w.settings(agent).Prompts
	if head == nil || head.PromptVersion == w.Fallback.PromptVersion(p) {
		return false
	}
	return head.PromptVersion != w.Summarizer.PromptVersion(p)
}

// budgetSpent reports whether sum writes with an LLM and the tenant's
// daily token budget is spent: the fallback then does the work.
func (w *Worker) budgetSpent(tenant string, sum memory.Summarizer) bool {
	return sum.UsesLLM() && w.Exhausted(tenant)
}

// The worker keeps the tenants' daily budget for every use of the model.
var _ memory.TokenBudget = (*Worker)(nil)

// Exhausted reports whether the tenant spent today's DailyTokenBudget.
func (w *Worker) Exhausted(tenant string) bool {
	return w.DailyTokenBudget > 0 && w.TokensUsedToday(tenant) >= w.DailyTokenBudget
}

// Spend counts tokens the model used for the tenant, against the budget
// and to OnJob (the tokens metric).
func (w *Worker) Spend(tenant string, in, out int) {
	w.init()
	w.addUsage(tenant, int64(in+out))
	if w.OnJob != nil && in+out > 0 {
		w.OnJob(JobEvent{Tenant: tenant, InTokens: in, OutTokens: out})
	}
}

// Extend summarises the chat's turns in (cursor, last_seq - RecentTurns]
// now. force ignores the trigger and, when another worker holds the lease,
// waits for it (up to ctx). It returns the chat's head afterwards (nil when
// the chat has no summary yet) and the degraded reasons of this extension.
// When another worker moved the cursor first, its head is returned without
// error. Settings.Persist false computes the extension without writing it.
func (w *Worker) Extend(ctx context.Context, key memory.ChatKey, force bool) (*memory.SummaryRecord, []string, error) {
	w.init()
	if !force {
		c, err := w.Store.Chat(ctx, key)
		if err != nil {
			return nil, nil, fmt.Errorf("worker: chat: %w", err)
		}
		ok, err := w.triggered(ctx, c)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			head, err := w.Store.SummaryHead(ctx, key)
			return head, nil, err
		}
	}
	for {
		rec, deg, err := w.extend(ctx, key, force)
		if !force || !errors.Is(err, ErrLeaseHeld) {
			return rec, deg, err
		}
		// Join the running job: once it is done there is usually nothing
		// left to summarise, and the next extend returns its head without
		// a second LLM call. A job of another process is polled for.
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-w.running(key):
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// running returns a channel closed when this process's job on the chat
// ends (nil, which blocks forever, when none runs here).
func (w *Worker) running(key memory.ChatKey) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.jobs[key]
}

// startJob records that this process runs a job on the chat; the returned
// func ends it.
func (w *Worker) startJob(key memory.ChatKey) func() {
	done := make(chan struct{})
	w.mu.Lock()
	if w.jobs == nil {
		w.jobs = map[memory.ChatKey]chan struct{}{}
	}
	w.jobs[key] = done
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		delete(w.jobs, key)
		w.mu.Unlock()
		close(done)
	}
}

// extend does one extension under the chat's lease and reports its outcome
// to OnJob. It returns (nil, nil, nil) when there was nothing to summarise
// and the chat has no head.
func (w *Worker) extend(ctx context.Context, key memory.ChatKey, force bool) (*memory.SummaryRecord, []string, error) {
	before := int64(-1)
	if w.OnJob != nil {
		if c, err := w.Store.Chat(ctx, key); err == nil {
			before = c.SummaryCursor
		}
	}
	rec, degraded, err := w.extendOnce(ctx, key, force)
	if w.OnJob != nil {
		switch {
		case errors.Is(err, ErrLeaseHeld):
		case err != nil:
			w.OnJob(JobEvent{Tenant: key.Tenant, Outcome: JobError})
		case rec != nil && rec.CoveredToSeq != before && len(degraded) > 0:
			w.OnJob(JobEvent{Tenant: key.Tenant, Outcome: JobDegraded})
		case rec != nil && rec.CoveredToSeq != before:
			w.OnJob(JobEvent{Tenant: key.Tenant, Outcome: JobOK})
		}
	}
	return rec, degraded, err
}

func (w *Worker) extendOnce(ctx context.Context, key memory.ChatKey, force bool) (*memory.SummaryRecord, []string, error) {
	lease, err := memory.TakeLease(ctx, w.Store, key, memory.LeaseSummary, w.Owner, w.Lease)
	if err != nil {
		return nil, nil, fmt.Errorf("worker: lease: %w", err)
	}
	if lease == nil {
		return nil, nil, ErrLeaseHeld
	}
	defer w.startJob(key)()
	ctx, span := tracing.Start(ctx, w.Tracer, spanSummarise, key.Tenant, key.ChatID)
	defer span.End()
	defer func() {
		if err := lease.Release(ctx); err != nil {
			w.Logger.Warn("release summary lease", "chat", key.ChatID, "err", err)
		}
	}()
	// Renewed while working; losing it abandons the work.
	work, stop := lease.Keep(ctx)
	defer stop()

	if err := w.rebuildIfDirty(work, key); errors.Is(err, errEpisodeMarked) {
		// A message was deleted again while the chat was being rebuilt:
		// nothing may be served or extended until the next pass rebuilds it.
		w.Kick()
		return nil, []string{memory.DegradedSummaryRebuilding}, nil
	} else if err != nil {
		return nil, nil, err
	}
	return w.extendLeased(work, key, force)
}

func (w *Worker) extendLeased(ctx context.Context, key memory.ChatKey, force bool) (*memory.SummaryRecord, []string, error) {
	// Read the state again now that we hold the lease.
	chat, err := w.Store.Chat(ctx, key)
	if err != nil {
		return nil, nil, fmt.Errorf("worker: chat: %w", err)
	}
	head, err := w.Store.SummaryHead(ctx, key)
	if err != nil {
		return nil, nil, fmt.Errorf("worker: summary head: %w", err)
	}
	s := w.settings(chat.Agent)
	cursor := chat.SummaryCursor
	stale := w.Stale(chat.Agent, head)
	if !force && !s.Enabled {
		return head, nil, nil
	}
	if es, ok := w.episodeStore(s); ok {
		return w.extendEpisodes(ctx, es, chat, head, s)
	}
	if !w.Summarizer.UsesLLM() && s.Persist && !stale {
		if head, cursor, err = w.checkpoints(ctx, chat, w.Summarizer, head, cursor, chat.LastSeq-int64(s.RecentTurns), s); err != nil {
			return nil, nil, err
		}
	}
	turns, err := w.readTurns(ctx, key, cursor, chat.LastSeq-int64(s.RecentTurns))
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
	if w.Prepare != nil && len(turns) > 0 {
		turns = w.Prepare(chat.Agent, turns)
		if len(turns) == 0 {
			return w.skipNoise(ctx, key, cursor, s, head, lastEligible)
		}
	}
	res, degraded, err := w.summarizeTurns(ctx, chat, head, s, turns)
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
	return w.write(ctx, key, cursor, s, rec, degraded, res.Calls, res.InputTokens)
}

// skipNoise advances the cursor over turns the agent's filters drop
// entirely (only noise since the cursor), keeping the summary as it is.
func (w *Worker) skipNoise(ctx context.Context, key memory.ChatKey, cursor int64, s Settings, head *memory.SummaryRecord, lastEligible int64) (*memory.SummaryRecord, []string, error) {
	var out memory.Summary
	if head != nil {
		out = head.Summary.Clone()
	}
	out.CoveredToSeq, out.UpdatedAt = lastEligible, w.Now().UTC()
	if out.CoveredFromSeq == 0 {
		out.CoveredFromSeq = cursor + 1
	}
	return w.write(ctx, key, cursor, s, memory.SummaryRecord{Summary: out, TokenCount: tokens.Summary(out), FromSeq: cursor + 1, ToSeq: lastEligible}, nil, 0, 0)
}

// summarizeTurns extends the head's summary with turns: with the
// summarizer, or its fallback once the tenant's daily budget is spent. It
// counts and reports the tokens used, and fails when the work was
// abandoned (shutdown, lease lost) so that nothing is written.
func (w *Worker) summarizeTurns(ctx context.Context, chat memory.Chat, head *memory.SummaryRecord, s Settings, turns []memory.Message) (memory.SummarizeResult, []string, error) {
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
	sum, degraded := w.Summarizer, []string(nil)
	if w.budgetSpent(chat.Tenant, sum) {
		sum, degraded = w.Fallback, []string{DegradedBudgetExhausted}
	}
	res, err := sum.Summarize(ctx, req)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil {
			return res, nil, fmt.Errorf("worker: summarise abandoned: %w", cause)
		}
		return res, nil, fmt.Errorf("worker: summarise: %w", err)
	}
	w.Spend(chat.Tenant, res.InputTokens, res.OutputTokens)
	if err := context.Cause(ctx); err != nil {
		// Cancelled (shutdown) or lease lost after the summarizer returned:
		// write nothing; the cursor is unchanged and the work is redone.
		return res, nil, fmt.Errorf("worker: summarise abandoned: %w", err)
	}
	return res, append(degraded, res.Degraded...), nil
}

// LastDegraded returns the fallbacks taken when this process last wrote the
// chat's summary (e.g. llm_unavailable), so answers built on that summary
// can report them. Empty when the last extension took none, or when another
// process wrote it.
func (w *Worker) LastDegraded(key memory.ChatKey) []string {
	w.init()
	w.mu.Lock()
	defer w.mu.Unlock()
	if st, ok := w.chats[key]; ok {
		return append([]string(nil), st.degraded...)
	}
	return nil
}

// write stores rec as the chat's new head unless the cursor moved.
func (w *Worker) write(ctx context.Context, key memory.ChatKey, cursor int64, s Settings, rec memory.SummaryRecord, degraded []string, calls, inTokens int) (out *memory.SummaryRecord, _ []string, err error) {
	defer func() {
		if err != nil || out == nil || out.CoveredToSeq != rec.CoveredToSeq {
			return // not ours: someone else's head stands
		}
		st := w.state(key)
		w.mu.Lock()
		st.degraded = append([]string(nil), degraded...)
		w.mu.Unlock()
	}()
	if !s.Persist {
		return &rec, degraded, nil
	}
	written, err := w.Store.AppendSummary(ctx, key, cursor, rec)
	if errors.Is(err, memory.ErrCursorMoved) {
		// Someone else extended it first: theirs stands.
		head, herr := w.Store.SummaryHead(ctx, key)
		if herr != nil {
			return nil, nil, fmt.Errorf("worker: summary head: %w", herr)
		}
		return head, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("worker: append summary: %w", err)
	}
	w.wrote(nil)
	w.Logger.Debug("summary extended", "tenant", key.Tenant, "chat", key.ChatID,
		"from", rec.FromSeq, "to", rec.ToSeq, "calls", calls, "in_tokens", inTokens, "degraded", degraded)
	return &written, degraded, nil
}

// wrote tells OnWrite a store failure, or (nil) that a write succeeded.
func (w *Worker) wrote(err error) {
	if w.OnWrite != nil {
		w.OnWrite(err)
	}
}

// derived tells OnDerived that episodes or facts were stored.
func (w *Worker) derived() {
	if w.OnDerived != nil {
		w.OnDerived()
	}
}

func (w *Worker) day() string { return w.Now().UTC().Format(time.DateOnly) }

func (w *Worker) addUsage(tenant string, n int64) {
	if n <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	u := w.usage[tenant]
	if d := w.day(); u.day != d {
		u = dayUsage{day: d}
	}
	u.tokens += n
	w.usage[tenant] = u
}

// TokensUsedToday is the LLM tokens (input + output) this worker spent for
// the tenant since UTC midnight.
func (w *Worker) TokensUsedToday(tenant string) int64 {
	w.init()
	w.mu.Lock()
	defer w.mu.Unlock()
	u := w.usage[tenant]
	if u.day != w.day() {
		return 0
	}
	return u.tokens
}
