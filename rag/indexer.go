package rag

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/contextd/contextd/internal/background"
	"github.com/contextd/contextd/memory"
)

// IndexSource is what the indexer reads and marks in the store.
type IndexSource interface {
	memory.IndexBacklog
	memory.Leases
	Chat(ctx context.Context, key memory.ChatKey) (memory.Chat, error)
}

// Indexer drains the store's durable "unindexed" backlog into the index.
// Per chat it takes the index lease and reads the pending turns; it embeds
// and upserts them (idempotent on tenant/chat/seq) in batches that span
// chats (indexturns.go), and only then marks them indexed. If the embedder
// or the index fails nothing is marked: the turns stay in the backlog and
// are retried with exponential backoff, so an outage loses nothing. Several replicas may run indexers on one store; the
// lease keeps them off each other's chats.
type Indexer struct {
	Store    IndexSource
	Embedder Embedder
	Sparse   *SparseEncoder // nil: default parameters
	Index    Index
	// Owner names this replica in leases (e.g. hostname+pid).
	Owner string
	// BatchSize is about the number of turns embedded and upserted at
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
	// Episodes, when set, is where closed episodes are read and marked:
	// they are indexed too (memory.rag_episodes).
	Episodes memory.EpisodeBacklog
	// Tracer opens a span per batch indexed (nil: no-op).
	Tracer trace.Tracer
	// OnError, when set, is told each failed pass's error (readiness:
	// a full disk marks storage full).
	OnError func(error)
	// Facts, when set, is where facts are read and marked: they are
	// indexed too, superseded ones flagged (nil: no facts in the index).
	Facts memory.FactStore
	// PassageTokens is the size, in estimated tokens, above which a turn
	// is indexed in passages, and the size of a passage; default
	// DefaultPassageTokens.
	PassageTokens int

	once sync.Once
	kick chan struct{}
	// passes is what WaitIndexed and Pending read: the kicks, the kicks
	// the last successful pass of Run covered, its last error.
	passes background.Passes
}

// Indexer defaults and the backoff cap.
const (
	DefaultIndexBatch   = 64
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
	ix.once.Do(func() {
		ix.EnsureDefaults()
		ix.kick = make(chan struct{}, 1)
	})
}

func (ix *Indexer) kickCh() chan struct{} {
	ix.init()
	return ix.kick
}

// Kick wakes Run without blocking (call it after an append).
func (ix *Indexer) Kick() {
	ix.passes.Kicked()
	select {
	case ix.kickCh() <- struct{}{}:
	default:
	}
}

// LastError returns the error of the last drain (nil once a drain succeeds).
func (ix *Indexer) LastError() error { return ix.passes.LastError() }

func (ix *Indexer) setErr(err error) { ix.passes.SetErr(err) }

// Run drains the backlog until ctx is done: on every Kick (kicks that
// come during a pass gather for MinInterval, unless a WaitIndexed caller
// hurries them), every PollInterval, and after a failure with exponential
// backoff (capped at MaxIndexBackoff; kicks do not shorten a backoff, so
// an outage is not hammered by every append). It returns nil when ctx
// ends.
func (ix *Indexer) Run(ctx context.Context) error {
	kick := ix.kickCh()
	ix.passes.Starting()
	defer ix.passes.Stopped()
	poll := ix.PollInterval
	var backoff time.Duration
	for {
		start := time.Now()
		for _, ch := range []chan struct{}{kick, ix.passes.Hurry()} { // kicks and hurries from before this pass are served by it
			select {
			case <-ch:
			default:
			}
		}
		covered := ix.passes.Begin()
		n, err := ix.DrainOnce(ctx)
		ix.passes.End(covered, err)
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
	case <-ix.passes.Hurry():
	}
}

// WaitIndexed waits until Run has indexed the turns of every append that
// kicked it before the call, hurrying a pass that gathers kicks, so that a
// search sees the turns appended before it. It returns false without
// that: Run is not running, its last pass failed (an embedder or index
// outage: the turns wait in the backlog), or ctx ended first.
func (ix *Indexer) WaitIndexed(ctx context.Context) bool {
	ix.init()
	return ix.passes.Wait(ctx)
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
	return ix.passes.Pending()
}

// DrainOnce indexes everything pending now — turns (forgotten ones taken
// out), then closed episodes, then facts — and returns how many turns,
// episodes and facts it indexed. Chats leased by another owner are
// skipped. It stops at the first embedder or index failure (the rest waits
// for the next round).
func (ix *Indexer) DrainOnce(ctx context.Context) (int, error) {
	ix.init()
	n, err := ix.drainTurns(ctx)
	if err != nil {
		return n, err
	}
	for _, drain := range []func(context.Context) (int, error){ix.drainEpisodes, ix.drainFacts} {
		for {
			m, err := drain(ctx)
			n += m
			if err != nil {
				ix.setErr(err)
				return n, err
			}
			if m == 0 {
				break
			}
		}
	}
	return n, nil
}

// TurnPoints are a turn's points, vectors left to the caller: one for a
// turn of at most passageTokens (<= 0: DefaultPassageTokens), else one per
// passage (SplitPassages), the passage as Content.
func TurnPoints(c memory.Chat, m memory.Message, passageTokens int) []Point {
	base := Point{Tenant: c.Tenant, UserID: c.UserID, ChatID: c.ID, Agent: c.Agent,
		Seq: m.Seq, Role: string(m.Role), CreatedAt: m.CreatedAt, TurnBytes: len(m.Content)}
	spans := SplitPassages(m.Content, PassageBytes(passageTokens))
	if len(spans) <= 1 {
		base.Content, base.PassageTo = m.Content, len(m.Content)
		return []Point{base}
	}
	out := make([]Point, len(spans))
	for i, sp := range spans {
		out[i] = base
		out[i].Passage, out[i].PassageFrom, out[i].PassageTo, out[i].Content = i, sp.From, sp.To, m.Content[sp.From:sp.To]
	}
	return out
}

// embedUpsert embeds texts into points' vectors and upserts the points;
// what names them in errors ("turns of t/c").
func (ix *Indexer) embedUpsert(ctx context.Context, what string, points []Point, texts []string) error {
	if len(points) == 0 {
		return nil
	}
	vecs, err := ix.Embedder.EmbedDocuments(ctx, texts)
	if err != nil {
		return fmt.Errorf("indexer: embed %s: %w", what, asEmbedderErr(err))
	}
	if len(vecs) != len(points) {
		return fmt.Errorf("indexer: embed %s: %w: %d vectors for %d texts", what, ErrEmbedder, len(vecs), len(points))
	}
	for i := range points {
		points[i].Dense, points[i].Sparse = vecs[i], ix.Sparse.EncodeDocument(texts[i])
	}
	if err := ix.Index.Upsert(ctx, points); err != nil {
		return fmt.Errorf("indexer: upsert %s: %w: %w", what, ErrIndexUnavailable, err)
	}
	return nil
}

// marked follows the marking of upserted points (markErr is its result):
// when the chat was deleted meanwhile — the API deletes the store rows,
// then the points, so a delete may have raced with the upsert — it takes
// the chat's points back out so nothing of it is left in the index.
func (ix *Indexer) marked(ctx context.Context, key memory.ChatKey, markErr error) error {
	if markErr == nil {
		_, markErr = ix.Store.Chat(ctx, key)
	}
	if !errors.Is(markErr, memory.ErrNotFound) {
		return markErr
	}
	if err := ix.Index.Delete(ctx, Filter{Tenant: key.Tenant, ChatIDs: []string{key.ChatID}}); err != nil {
		return fmt.Errorf("indexer: clean up deleted chat %s/%s: %w: %w", key.Tenant, key.ChatID, ErrIndexUnavailable, err)
	}
	return nil
}
