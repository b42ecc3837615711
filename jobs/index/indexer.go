// Package index is the background job that drains the store's durable
// backlogs of unindexed turns, episodes and facts (memory.Backlogs) into
// the vector index (rag.Index), in one drain loop over the kinds
// (drain.go) with a reader and a point mapper per kind (kinds.go).
package index

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/contextd/contextd/internal/background"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// Source is what the indexer reads and marks in the store: the
// backlogs and item readers of the indexed kinds, the index leases, and
// facts by id (to read back facts deleted while they were embedded).
type Source interface {
	memory.IndexBacklog
	memory.Leases
	Facts(ctx context.Context, key memory.ChatKey, q memory.FactQuery) ([]memory.Fact, error)
}

// Indexer drains the store's durable backlogs of unindexed turns,
// episodes and facts into the index, in one drain loop (drain.go) over
// the kinds (kinds.go). Per chat it takes the index lease and reads
// the pending items; it embeds and upserts them (idempotent on each
// point's identity) in batches that span chats, and only then marks them
// indexed. If the embedder or the index fails nothing is marked: the
// items stay in the backlog and are retried with exponential backoff, so
// an outage loses nothing. Several replicas may run indexers on one
// store; the lease keeps them off each other's chats.
type Indexer struct {
	Store    Source
	Embedder rag.Embedder
	Sparse   *rag.SparseEncoder // nil: default parameters
	Index    rag.Index
	// Kinds are the kinds of memory indexed besides the turns, which always
	// are: memory.IndexEpisodes (memory.rag_episodes), memory.IndexFacts.
	Kinds []memory.WorkKind
	// Owner names this replica in leases (e.g. hostname+pid).
	Owner string
	// BatchSize is about the number of items embedded and upserted at
	// once, across chats (at most this many of one chat); default 64.
	BatchSize int
	Logger    *slog.Logger
	// PollInterval is how often Run looks for work without a Kick; default 2s.
	PollInterval time.Duration
	// MinInterval coalesces kicks while busy: a kick that comes while a
	// pass runs is served by one pass starting this long after that pass
	// started; default 200ms. A kick while idle runs a pass at once, so a
	// lone append is indexed (and searchable) within milliseconds. Under a
	// stream of appends a pass per append paid the pass's fixed costs —
	// the backlog listings, leases, an upsert and a mark commit — for one
	// turn (docs/performance.md, "Eighth pass").
	MinInterval time.Duration
	// LeaseTTL bounds how long a crashed indexer blocks a chat; default
	// memory.DefaultLeaseTTL.
	LeaseTTL time.Duration
	// Tracer opens a span per batch indexed (nil: no-op).
	Tracer trace.Tracer
	// OnError, when set, is told each failed pass's error (readiness:
	// a full disk marks storage full).
	OnError func(error)
	// PassageTokens is the size, in estimated tokens, above which a turn
	// is indexed in passages, and the size of a passage; default
	// DefaultPassageTokens.
	PassageTokens int

	loop runLoop
}

// runLoop is Run's state: the kick channel, made once, and the passes
// WaitIndexed and Pending read (the kicks, the kicks the last successful
// pass of Run covered, its last error).
type runLoop struct {
	once   sync.Once
	kick   chan struct{}
	passes background.Passes
}

// Indexer defaults and the backoff cap.
const (
	DefaultIndexBatch   = rag.DefaultEmbedBatch
	DefaultPollInterval = 2 * time.Second
	DefaultMinInterval  = 200 * time.Millisecond
	MaxIndexBackoff     = 30 * time.Second
	minIndexBackoff     = 250 * time.Millisecond
	chatsPerPass        = 100
)

// EnsureDefaults fills the optional fields left zero with their defaults:
// the one place the indexer's defaults live. Run, DrainOnce and Kick call
// it (once) themselves; call it before reading the fields.
func (ix *Indexer) EnsureDefaults() {
	if ix.Owner == "" {
		ix.Owner = "contextd-indexer"
	}
	if ix.BatchSize <= 0 {
		ix.BatchSize = DefaultIndexBatch
	}
	if ix.PollInterval <= 0 {
		ix.PollInterval = DefaultPollInterval
	}
	if ix.MinInterval <= 0 {
		ix.MinInterval = DefaultMinInterval
	}
	if ix.LeaseTTL <= 0 {
		ix.LeaseTTL = memory.DefaultLeaseTTL
	}
	if ix.Logger == nil {
		ix.Logger = slog.New(slog.DiscardHandler)
	}
}

// init sets the defaults and the kick channel, once.
func (ix *Indexer) init() {
	ix.loop.once.Do(func() {
		ix.EnsureDefaults()
		ix.loop.kick = make(chan struct{}, 1)
	})
}

func (ix *Indexer) kickCh() chan struct{} {
	ix.init()
	return ix.loop.kick
}

// Kick wakes Run without blocking (call it after an append).
func (ix *Indexer) Kick() {
	ix.loop.passes.Kicked()
	select {
	case ix.kickCh() <- struct{}{}:
	default:
	}
}

// LastError returns the error of the last drain (nil once a drain succeeds).
func (ix *Indexer) LastError() error { return ix.loop.passes.LastError() }

func (ix *Indexer) setErr(err error) { ix.loop.passes.SetErr(err) }

// Run drains the backlog until ctx is done: on every Kick (kicks that
// come during a pass gather for MinInterval, unless a WaitIndexed caller
// hurries them), every PollInterval, and after a failure with exponential
// backoff (capped at MaxIndexBackoff; kicks do not shorten a backoff, so
// an outage is not hammered by every append). It returns nil when ctx
// ends.
func (ix *Indexer) Run(ctx context.Context) error {
	kick := ix.kickCh()
	ix.loop.passes.Starting()
	defer ix.loop.passes.Stopped()
	poll := ix.PollInterval
	var backoff time.Duration
	for {
		start := time.Now()
		for _, ch := range []chan struct{}{kick, ix.loop.passes.Hurry()} { // kicks and hurries from before this pass are served by it
			select {
			case <-ch:
			default:
			}
		}
		covered := ix.loop.passes.Begin()
		n, err := ix.DrainOnce(ctx)
		ix.loop.passes.End(covered, err)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && ix.OnError != nil {
			ix.OnError(err)
		}
		wait := poll
		if err != nil {
			backoff = min(max(2*backoff, minIndexBackoff), MaxIndexBackoff)
			wait = backoff
			ix.Logger.Warn("indexer: backlog not drained, retrying", "err", err, "indexed", n, "retry_in", wait)
		} else {
			backoff = 0
			if n > 0 {
				ix.Logger.Debug("indexer: indexed turns", "count", n)
			}
		}
		if backoff == 0 {
			select {
			case <-kick:
				// Kicked while the pass ran: appends come faster than
				// passes end. Let them gather until MinInterval after
				// this pass's start, for one pass.
				ix.gather(ctx, ix.MinInterval-time.Since(start))
				continue
			default:
			}
		}
		ix.idle(ctx, wait, backoff > 0, kick)
	}
}

// idle waits wait, or until ctx is done, or (out of a backoff) a kick:
// idle, a kick's pass runs now, so a lone append is searchable at once.
func (ix *Indexer) idle(ctx context.Context, wait time.Duration, backingOff bool, kick <-chan struct{}) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	if backingOff {
		kick = nil
	}
	select {
	case <-ctx.Done():
	case <-timer.C:
	case <-kick:
	}
}

// gather waits d (nothing when d <= 0) for kicks to gather, or until ctx
// is done or a WaitIndexed caller hurries the pass.
func (ix *Indexer) gather(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-ix.loop.passes.Hurry():
	}
}

// WaitIndexed waits until Run has indexed the turns of every append that
// kicked it before the call, hurrying a pass that gathers kicks, so that a
// search sees the turns appended before it. It returns false without
// that: Run is not running, its last pass failed (an embedder or index
// outage: the turns wait in the backlog), or ctx ended first.
func (ix *Indexer) WaitIndexed(ctx context.Context) bool {
	ix.init()
	return ix.loop.passes.Wait(ctx)
}

// Pending reports whether the index may lack something stored, as far as
// this process can tell without asking the store: Run is not running, a
// pass is under way (the startup pass over an old backlog, a poll that
// found another replica's turns), a kick is not served yet (an append, an
// episode closed, facts drawn), or the last pass failed. False means every
// kick was served by a pass that succeeded: requests then skip reading
// their chat's lag (engine: index_behind), which costs nothing while the
// indexer keeps up.
func (ix *Indexer) Pending() bool {
	ix.init()
	return ix.loop.passes.Pending()
}

// DrainOnce indexes everything pending now — turns (forgotten ones taken
// out), then the other Kinds in the order of memory.IndexKinds — and
// returns how many items it indexed. Chats leased by another owner are
// skipped. It stops at the first embedder or index failure (the rest
// waits for the next round).
func (ix *Indexer) DrainOnce(ctx context.Context) (int, error) {
	ix.init()
	n := 0
	for _, kind := range memory.IndexKinds {
		if kind != memory.IndexTurns && !slices.Contains(ix.Kinds, kind) {
			continue
		}
		m, err := ix.drain(ctx, kinds[kind])
		n += m
		if err != nil {
			ix.setErr(err)
			return n, err
		}
	}
	ix.setErr(nil)
	return n, nil
}
