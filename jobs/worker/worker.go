// Package worker owns contextd's background chat jobs and the one loop
// that runs them:
//
//   - Extender extends a chat's running summary from its cursor with only
//     the new turns (extend.go);
//   - Closer closes episodes over the turns and keeps the summary as the
//     root of their tree (episodes.go, root.go);
//   - Rebuilder works off the marks a deleted message left: episodes and
//     the summary written anew without it, its points and profile items
//     gone (rebuild.go, rebuild_root.go);
//   - Worker is the loop: it lists the work, checks each chat's trigger,
//     takes the chat's summary lease, runs the chat's job and retries
//     with backoff (worker.go, chats.go);
//   - Previewer computes on the request path, in memory, what the
//     Extender is about to write (preview.go);
//   - Profiler merges changed chat summaries into users' profiles, a job
//     with its own loop (profiler.go).
//
// The jobs share an Env (env.go): the summarisers, the daily token budget
// (jobs/budget), the agents' settings. All work is derived from stored
// state, so a crash loses nothing: the next worker redoes it.
package worker

import (
	"context"
	"errors"
	"fmt"
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

// LoopStore is what the loop reads to find and check the summary work,
// and where it takes the chats' summary leases.
type LoopStore interface {
	turnReader
	Chat(ctx context.Context, key memory.ChatKey) (memory.Chat, error)
	SummaryHead(ctx context.Context, key memory.ChatKey) (*memory.SummaryRecord, error)
	ListSummaryWork(ctx context.Context, minPending int64, limit int) ([]memory.Chat, error)
	memory.Leases
}

// Worker is the loop that runs the chat jobs: the rebuild after a deleted
// message, then the summary extension (the Extender's, or the Closer's
// when the agent keeps episodes), each chat under its summary lease, with
// cooldown and backoff. Set the exported fields, then call Run (or Drain /
// Extend). The zero values of the optional fields take the defaults noted.
type Worker struct {
	*Env
	Store LoopStore
	// Summary extends the summaries of the agents that keep no episodes
	// (required).
	Summary *Extender
	// Episodes closes episodes for the agents that keep them (nil: no
	// episodes, whatever the agent's settings).
	Episodes *Closer
	// Rebuilder rebuilds what deleted messages were part of (nil: nothing
	// is rebuilt).
	Rebuilder   *Rebuilder
	Owner       string        // lease owner id, unique per process (default "worker")
	Lease       time.Duration // lease ttl, renewed while working (default memory.DefaultLeaseTTL)
	Poll        time.Duration // idle poll interval (default DefaultPoll)
	MinInterval time.Duration // least time between two scans, so a burst of Kicks costs one (default DefaultMinInterval)
	// MinPending is the smallest unsummarised backlog worth listing (default:
	// the default agent's RecentTurns+1). Set it to min over agents of
	// RecentTurns+1 when agents differ.
	MinPending int64
	// BatchSize is how many chats one scan lists (default DefaultBatchSize).
	BatchSize int
	// OnJob, when set, is told the outcome of every extension that ran
	// (metrics).
	OnJob func(JobEvent)

	once sync.Once
}

// JobEvent is what OnJob is told: a summary job's outcome.
type JobEvent struct {
	Tenant string
	// Outcome is JobOK, JobDegraded or JobError.
	Outcome string
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
	w.once.Do(w.EnsureDefaults)
}

// EnsureDefaults fills the optional fields left zero with their defaults:
// the one place the loop's defaults live; jobs without an Env share the
// loop's. Run, Drain and Extend call it (once) themselves; call it before
// reading the fields.
func (w *Worker) EnsureDefaults() {
	if w.Env == nil {
		w.Env = &Env{}
	}
	w.Env.init() // once: the Previewer may share it
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
	if w.BatchSize <= 0 {
		w.BatchSize = DefaultBatchSize
	}
	if w.MinPending <= 0 {
		w.MinPending = int64(w.settings(memory.DefaultAgent).RecentTurns) + 1
	}
	if w.Summary != nil && w.Summary.Env == nil {
		w.Summary.Env = w.Env
	}
	if w.Episodes != nil && w.Episodes.Env == nil {
		w.Episodes.Env = w.Env
	}
	if r := w.Rebuilder; r != nil {
		if r.Env == nil {
			r.Env = w.Env
		}
		if r.Episodes == nil {
			r.Episodes = w.Episodes
		}
	}
}

// Worker defaults.
const (
	DefaultPoll        = 2 * time.Second
	DefaultMinInterval = 250 * time.Millisecond
	DefaultBatchSize   = 200
)

// Summary defaults: memory.summary_trigger_tokens, summary_cooldown and
// summary_max_tokens (config refers to these; the window's two are
// memory.DefaultRecentTurns and memory.DefaultTriggerTurns).
const (
	DefaultTriggerTokens = 2000
	DefaultCooldown      = 30 * time.Second
	DefaultMaxTokens     = 800
	// DefaultEpisodeOverlap and DefaultExtendEvery are
	// memory.episode_overlap and summary_extend_every_episodes.
	DefaultEpisodeOverlap = 2
	DefaultExtendEvery    = 1
)

// DefaultSettings are the settings of every agent when Settings is nil;
// they equal config.DefaultMemory's (a test in cmd/contextd checks it).
func DefaultSettings() Settings {
	return Settings{RecentTurns: memory.DefaultRecentTurns, TriggerTurns: memory.DefaultTriggerTurns,
		TriggerTokens: DefaultTriggerTokens, Cooldown: DefaultCooldown, MaxTokens: DefaultMaxTokens,
		Structured: true, Persist: true, Enabled: true}
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

// Drain processes every chat whose backlog currently passes its trigger,
// ignoring cooldowns, until none is left. A chat that fails is skipped for
// the rest of the drain; the errors are returned joined.
func (w *Worker) Drain(ctx context.Context) error {
	w.init()
	failed := map[memory.ChatKey]error{}
	for i := 0; i < 10000; i++ {
		// Again after each scan: an extension over a deleted turn marks
		// its summary dirty (see Rebuilder.work).
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
			w.chats.markIdle(c)
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
				w.chats.succeeded(c.Key(), w.Now())
			}
			if rec != nil {
				done++
			}
		}
	}
	if !drain {
		w.chats.prune(w.Now())
	}
	return done, nil
}

// skip: the chat is idle, failed earlier in this drain, or (in the
// background) waiting out its cooldown or backoff.
func (w *Worker) skip(c memory.Chat, failed map[memory.ChatKey]error) bool {
	if failed != nil {
		return failed[c.Key()] != nil || w.chats.idle(c)
	}
	wait := w.chats.waiting(c.Key(), w.Now(), w.settings(c.Agent).Cooldown)
	return wait || w.chats.idle(c)
}

// fail records a chat's error: for the drain's report, or as backoff.
func (w *Worker) fail(k memory.ChatKey, err error, failed map[memory.ChatKey]error) {
	if failed != nil {
		failed[k] = err
		return
	}
	n, delay := w.chats.failed(k, w.Now())
	w.wrote(err)
	w.Logger.Warn("summary failed", "tenant", k.Tenant, "chat", k.ChatID, "failures", n, "retry_in", delay, "err", err)
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
		case <-w.chats.job(key):
		case <-time.After(50 * time.Millisecond):
		}
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
	var rec *memory.SummaryRecord
	var degraded []string
	err := w.withLease(ctx, key, spanSummarise, func(ctx context.Context) (err error) {
		rec, degraded, err = w.extendLeased(ctx, key, force)
		return err
	})
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

// extendLeased rebuilds the chat first when it is dirty, then runs its
// summary job: the Closer's when the agent keeps episodes, else the
// Extender's. It holds the chat's summary lease.
func (w *Worker) extendLeased(ctx context.Context, key memory.ChatKey, force bool) (*memory.SummaryRecord, []string, error) {
	if err := w.rebuildIfDirty(ctx, key); errors.Is(err, errEpisodeMarked) {
		// A message was deleted again while the chat was being rebuilt:
		// nothing may be served or extended until the next pass rebuilds it.
		w.Kick()
		return nil, []string{memory.DegradedSummaryRebuilding}, nil
	} else if err != nil {
		return nil, nil, err
	}
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
	if !force && !s.Enabled {
		return head, nil, nil
	}
	if w.Episodes.on(s) {
		return w.Episodes.extend(ctx, chat, head, s)
	}
	return w.Summary.extend(ctx, chat, head, s)
}

// withLease runs fn under the chat's summary lease, renewed while it runs
// (ErrLeaseHeld when another job holds it), in a span named span when not
// empty.
func (w *Worker) withLease(ctx context.Context, key memory.ChatKey, span string, fn func(context.Context) error) error {
	lease, err := memory.TakeLease(ctx, w.Store, key, memory.LeaseSummary, w.Owner, w.Lease)
	if err != nil {
		return fmt.Errorf("worker: lease: %w", err)
	}
	if lease == nil {
		return ErrLeaseHeld
	}
	defer w.chats.startJob(key)()
	if span != "" {
		var sp trace.Span
		ctx, sp = tracing.Start(ctx, w.Tracer, span, key.Tenant, key.ChatID)
		defer sp.End()
	}
	defer func() {
		if err := lease.Release(ctx); err != nil {
			w.Logger.Warn("release summary lease", "chat", key.ChatID, "err", err)
		}
	}()
	// Renewed while working; losing it abandons the work.
	work, stop := lease.Keep(ctx)
	defer stop()
	return fn(work)
}

// Rebuild works off the marks deleted messages left (rebuild.go) for every
// chat it finds them in, and reports how many chats it finished. A chat
// whose lease another worker holds is left to it; the errors of the others
// are returned joined. Without a Rebuilder it does nothing.
func (w *Worker) Rebuild(ctx context.Context) (int, error) {
	if w.Rebuilder == nil {
		return 0, nil
	}
	w.init()
	keys, forgets, err := w.Rebuilder.work(ctx)
	if err != nil {
		return 0, err
	}
	done := 0
	var errs []error
	for _, k := range keys {
		err := w.withLease(ctx, k, "", func(ctx context.Context) error { return w.Rebuilder.rebuild(ctx, k, forgets[k]) })
		switch {
		case ctx.Err() != nil:
			return done, errors.Join(errs...)
		case errors.Is(err, ErrLeaseHeld), errors.Is(err, memory.ErrNotFound):
		case err != nil:
			errs = append(errs, fmt.Errorf("rebuild %s/%s: %w", k.Tenant, k.ChatID, err))
		default:
			done++
		}
	}
	return done, errors.Join(errs...)
}

// rebuildIfDirty rebuilds a dirty chat before an extension continues its
// chain (a summariser that read a turn before it was deleted leaves the
// summary dirty without a Deletion row). It holds the chat's lease.
func (w *Worker) rebuildIfDirty(ctx context.Context, key memory.ChatKey) error {
	if w.Rebuilder == nil {
		return nil
	}
	chat, err := w.Store.Chat(ctx, key)
	if err != nil {
		return fmt.Errorf("worker: chat: %w", err)
	}
	if !chat.SummaryDirty {
		return nil
	}
	return w.Rebuilder.rebuild(ctx, key, nil)
}
