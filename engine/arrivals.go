package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/contextd/contextd/internal/background"
	"github.com/contextd/contextd/memory"
)

// ArrivalStore is what the facts job reads and marks.
type ArrivalStore interface {
	memory.Backlogs
	memory.Leases
	Messages(ctx context.Context, key memory.ChatKey, afterSeq int64, limit int) ([]memory.Message, error)
}

// Arrivals draws the facts of appended turns (factsOnArrival) in the
// background: an append only kicks it. Drawing, superseding and the
// profile merge cost several times the append itself (docs/performance.md),
// so they run here, batched: a pass takes every chat with turns past its
// facts cursor (up to chatsPerArrivalPass), leases them in one write,
// draws each chat's pending turns of all its appends at once, and moves
// the cursors in one write. The cursor is durable, so turns appended but
// not drawn when the process dies are drawn after a restart. Several
// replicas may run it on one store: the lease keeps them off each other's
// chats.
//
// It draws through the service it is given to (Deps.Arrivals: New binds
// it), whose caches and policies the drawn facts must agree with.
type Arrivals struct {
	Store ArrivalStore
	// OnDrawn is told after a pass that drew turns (the indexer's Kick:
	// the new facts are to be indexed).
	OnDrawn func()
	Owner   string
	Logger  *slog.Logger
	// PollInterval is how often Run looks for work without a kick (turns
	// another replica appended); default 2s.
	PollInterval time.Duration
	// MinInterval gathers the kicks of a stream of appends for one pass,
	// as the indexer does (index.Indexer.MinInterval); default 200ms.
	MinInterval time.Duration

	svc                 *Service // bound by New
	once                sync.Once
	kick                chan struct{}
	passes              background.Passes // what WaitDrawn and Pending read
	pollEvery, minEvery time.Duration
}

const (
	chatsPerArrivalPass = 100
	// turnsPerArrivalRead bounds one chat's turns drawn at once (an
	// import's chat is drawn over several passes).
	turnsPerArrivalRead = 1000
	maxArrivalBackoff   = 30 * time.Second
)

func (a *Arrivals) init() {
	a.once.Do(func() {
		a.kick = make(chan struct{}, 1)
		a.pollEvery, a.minEvery = a.PollInterval, a.MinInterval
		if a.pollEvery <= 0 {
			a.pollEvery = 2 * time.Second
		}
		if a.minEvery <= 0 {
			a.minEvery = 200 * time.Millisecond
		}
		if a.Logger == nil {
			a.Logger = slog.New(slog.DiscardHandler)
		}
		if a.Owner == "" {
			a.Owner = "contextd-facts"
		}
	})
}

// Kick wakes Run without blocking (the append path calls it).
func (a *Arrivals) Kick() {
	a.init()
	a.passes.Kicked()
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// LastError is the last pass's error (nil once a pass succeeds).
func (a *Arrivals) LastError() error { return a.passes.LastError() }

// Run draws the backlog until ctx is done: on a kick (kicks during a pass
// gather for MinInterval unless a waiter hurries them), every
// PollInterval, and after a failure with exponential backoff.
func (a *Arrivals) Run(ctx context.Context) error {
	a.init()
	a.passes.Starting()
	defer a.passes.Stopped()
	var backoff time.Duration
	for {
		drainSignal(a.kick, a.passes.Hurry())
		covered := a.passes.Begin()
		_, err := a.DrainOnce(ctx)
		a.passes.SetErr(err)
		a.passes.End(covered, err)
		if err != nil {
			a.svc.NoteWrite(err) // a full disk marks storage full, as a request's write does
		}
		if ctx.Err() != nil {
			return nil
		}
		wait, kick := a.pollEvery, a.kick
		if err != nil {
			backoff = min(max(2*backoff, 250*time.Millisecond), maxArrivalBackoff)
			wait, kick = backoff, nil // an outage is not hammered by every append
			a.Logger.Warn("facts on arrival: backlog not drawn, retrying", "err", err, "retry_in", wait)
		} else {
			backoff = 0
		}
		a.idle(ctx, wait, kick)
	}
}

// idle waits for the next pass: wait, or the end of a stream of appends
// (gather); a waiter hurries it.
func (a *Arrivals) idle(ctx context.Context, wait time.Duration, kick <-chan struct{}) {
	t := time.NewTimer(wait)
	defer t.Stop()
	hurry := a.passes.Hurry()
	if kick == nil {
		hurry = nil // backing off an outage: nothing to hurry
	}
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-kick:
		a.gather(ctx)
	case <-hurry:
	}
}

// maxGather bounds how long a stream of appends defers its facts: they
// are drawn at most this long after the first append of the stream.
const maxGather = 750 * time.Millisecond

// gather waits, after an append's kick, until the appends go quiet for
// MinInterval (or maxGather has passed, or a waiter hurries it): the facts
// of a burst are drawn once after it, not beside it, so the burst's
// appends do not share the cores with their own derived work.
func (a *Arrivals) gather(ctx context.Context) {
	end := time.NewTimer(maxGather)
	defer end.Stop()
	quiet := time.NewTimer(a.minEvery)
	defer quiet.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-end.C:
			return
		case <-quiet.C:
			return
		case <-a.passes.Hurry():
			return
		case <-a.kick: // another append: still streaming
			quiet.Reset(a.minEvery)
		}
	}
}

func drainSignal(chs ...chan struct{}) {
	for _, ch := range chs {
		select {
		case <-ch:
		default:
		}
	}
}

// WaitDrawn waits until Run has drawn the facts of every append that
// kicked it before the call (hurrying a gathering pass); false when Run is
// not running, its last pass failed, or ctx ended first.
func (a *Arrivals) WaitDrawn(ctx context.Context) bool {
	a.init()
	return a.passes.Wait(ctx)
}

// Pending reports whether some turn may not be drawn yet, as far as this
// process can tell without asking the store: Run is not running, a pass
// is under way, an append's kick is not served yet, or the last pass
// failed (as index.Indexer.Pending).
func (a *Arrivals) Pending() bool {
	a.init()
	return a.passes.Pending()
}

// DrainOnce draws everything pending now and returns how many turns it
// drew. Chats leased by another owner are skipped.
func (a *Arrivals) DrainOnce(ctx context.Context) (int, error) {
	a.init()
	total := 0
	for {
		n, err := a.pass(ctx)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

// pass draws the pending turns of up to chatsPerArrivalPass chats: one
// listing, one lease write, one read and draw per chat, one mark write.
// A chat that fails keeps its cursor (drawn again next pass); the others
// are marked.
func (a *Arrivals) pass(ctx context.Context) (int, error) {
	work, err := a.Store.Pending(ctx, memory.DrawFacts, chatsPerArrivalPass)
	if err != nil || len(work) == 0 {
		return 0, wrapArrivals("list backlog", err)
	}
	keys := make([]memory.ChatKey, len(work))
	for i, u := range work {
		keys[i] = u.Chat.Key()
	}
	leases, err := memory.TakeLeases(ctx, a.Store, keys, memory.LeaseFacts, a.Owner, memory.DefaultLeaseTTL)
	if err != nil {
		return 0, wrapArrivals("leases", err)
	}
	defer func() { _ = memory.ReleaseAll(ctx, leases) }()
	var (
		marks []memory.Mark
		errs  []error
		drawn int
	)
	for i, u := range work {
		if leases[i] == nil {
			continue
		}
		to, n, err := a.drawChat(ctx, u)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		drawn += n
		marks = append(marks, memory.Mark{Chat: keys[i], Created: u.Chat.CreatedAt, ToSeq: to})
	}
	if _, err := a.Store.Done(ctx, memory.DrawFacts, marks); err != nil {
		return 0, wrapArrivals("mark drawn", err)
	}
	if len(marks) > 0 && a.OnDrawn != nil {
		a.OnDrawn()
	}
	return drawn, wrapArrivals("draw", errors.Join(errs...))
}

// drawChat draws the facts of one chat's turns past its cursor and
// returns the last seq read and how many turns it read (a chat erased
// since it was listed reads none and is marked up to its old last seq,
// which no longer exists: a no-op).
func (a *Arrivals) drawChat(ctx context.Context, u memory.PendingChat) (int64, int, error) {
	msgs, err := a.Store.Messages(ctx, u.Chat.Key(), u.Cursor, turnsPerArrivalRead)
	if errors.Is(err, memory.ErrNotFound) {
		return u.Chat.LastSeq, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	if len(msgs) == 0 {
		return u.Chat.LastSeq, 0, nil
	}
	live := make([]memory.Message, 0, len(msgs))
	for _, m := range msgs {
		if !m.Deleted { // a tombstone says nothing to draw from
			live = append(live, m)
		}
	}
	if err := a.svc.factsOnArrival(ctx, u.Chat, live); err != nil {
		return 0, 0, err
	}
	return msgs[len(msgs)-1].Seq, len(msgs), nil
}

func wrapArrivals(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("facts on arrival: %s: %w", op, err)
}
