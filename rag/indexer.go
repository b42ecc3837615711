package rag

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/contextd/contextd/memory"
)

// IndexSource is what the indexer reads and marks in the store.
type IndexSource interface {
	memory.IndexBacklog
	memory.Leases
	Chat(ctx context.Context, key memory.ChatKey) (memory.Chat, error)
}

// Indexer drains the store's durable "unindexed" backlog into the index.
// Per chat it takes the index lease, embeds the pending turns in batches,
// upserts them (idempotent on tenant/chat/seq) and only then marks them
// indexed. If the embedder or the index fails nothing is marked: the turns
// stay in the backlog and are retried with exponential backoff, so an
// outage loses nothing. Several replicas may run indexers on one store; the
// lease keeps them off each other's chats.
type Indexer struct {
	Store    IndexSource
	Embedder Embedder
	Sparse   *SparseEncoder // nil: default parameters
	Index    Index
	// Owner names this replica in leases (e.g. hostname+pid).
	Owner string
	// BatchSize is the number of turns embedded and upserted at once;
	// default 64.
	BatchSize int
	Logger    *slog.Logger
	// PollInterval is how often Run looks for work without a Kick; default 2s.
	PollInterval time.Duration
	// LeaseTTL bounds how long a crashed indexer blocks a chat; default 2m.
	LeaseTTL time.Duration
	// Episodes, when set, is where closed episodes are read and marked:
	// they are indexed too (memory.rag_episodes).
	Episodes memory.EpisodeStore

	once    sync.Once
	kick    chan struct{}
	mu      sync.Mutex
	lastErr error
}

// Indexer defaults and the backoff cap.
const (
	DefaultIndexBatch   = 64
	DefaultPollInterval = 2 * time.Second
	DefaultLeaseTTL     = 15 * time.Second
	MaxIndexBackoff     = 30 * time.Second
	minIndexBackoff     = 250 * time.Millisecond
	chatsPerPass        = 100
)

func (ix *Indexer) kickCh() chan struct{} {
	ix.once.Do(func() { ix.kick = make(chan struct{}, 1) })
	return ix.kick
}

// Kick wakes Run without blocking (call it after an append).
func (ix *Indexer) Kick() {
	select {
	case ix.kickCh() <- struct{}{}:
	default:
	}
}

// LastError returns the error of the last drain (nil once a drain succeeds).
func (ix *Indexer) LastError() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.lastErr
}

func (ix *Indexer) setErr(err error) {
	ix.mu.Lock()
	ix.lastErr = err
	ix.mu.Unlock()
}

func (ix *Indexer) logger() *slog.Logger {
	if ix.Logger != nil {
		return ix.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Run drains the backlog until ctx is done: on every Kick, every
// PollInterval, and after a failure with exponential backoff (capped at
// MaxIndexBackoff; kicks do not shorten a backoff, so an outage is not
// hammered by every append). It returns nil when ctx ends.
func (ix *Indexer) Run(ctx context.Context) error {
	poll := ix.PollInterval
	if poll <= 0 {
		poll = DefaultPollInterval
	}
	kick := ix.kickCh()
	var backoff time.Duration
	for {
		n, err := ix.DrainOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		wait := poll
		if err != nil {
			backoff = min(max(2*backoff, minIndexBackoff), MaxIndexBackoff)
			wait = backoff
			ix.logger().Warn("indexer: backlog not drained, retrying", "err", err, "indexed", n, "retry_in", wait)
		} else {
			backoff = 0
			if n > 0 {
				ix.logger().Debug("indexer: indexed turns", "count", n)
			}
		}
		timer := time.NewTimer(wait)
		if backoff > 0 {
			select {
			case <-ctx.Done():
			case <-timer.C:
			}
		} else {
			select {
			case <-ctx.Done():
			case <-timer.C:
			case <-kick:
			}
		}
		timer.Stop()
	}
}

// DrainOnce indexes everything pending now — turns, then closed episodes —
// and returns how many turns and episodes it indexed. Chats leased by
// another owner are skipped. It stops at the first embedder or index
// failure (the rest waits for the next round).
func (ix *Indexer) DrainOnce(ctx context.Context) (int, error) {
	n, err := ix.drainTurns(ctx)
	if err != nil {
		return n, err
	}
	for {
		m, err := ix.drainEpisodes(ctx)
		n += m
		if err != nil {
			ix.setErr(err)
			return n, err
		}
		if m == 0 {
			return n, nil
		}
	}
}

const leaseReleaseTimeout = 5 * time.Second

func (ix *Indexer) drainTurns(ctx context.Context) (int, error) {
	total := 0
	skipped := map[memory.ChatKey]bool{}
	for {
		chats, err := ix.Store.UnindexedChats(ctx, chatsPerPass+len(skipped))
		if err != nil {
			err = fmt.Errorf("indexer: list backlog: %w", err)
			ix.setErr(err)
			return total, err
		}
		progress := false
		for _, c := range chats {
			if skipped[c.Key()] {
				continue
			}
			n, err := ix.indexChat(ctx, c)
			total += n
			if err != nil {
				ix.setErr(err)
				return total, err
			}
			if n == 0 {
				skipped[c.Key()] = true // leased elsewhere or emptied meanwhile
			} else {
				progress = true
			}
		}
		if !progress {
			ix.setErr(nil)
			return total, nil
		}
	}
}

func (ix *Indexer) indexChat(ctx context.Context, c memory.Chat) (int, error) {
	key := c.Key()
	owner := ix.Owner
	if owner == "" {
		owner = "contextd-indexer"
	}
	ttl := ix.LeaseTTL
	if ttl <= 0 {
		ttl = DefaultLeaseTTL
	}
	bs := ix.BatchSize
	if bs <= 0 {
		bs = DefaultIndexBatch
	}
	ok, err := ix.Store.TryLease(ctx, key, memory.LeaseIndex, owner, ttl)
	if err != nil {
		return 0, fmt.Errorf("indexer: lease %s/%s: %w", key.Tenant, key.ChatID, err)
	}
	if !ok {
		return 0, nil
	}
	defer func() {
		// Release even when ctx is cancelled: a stale lease would block
		// another replica until it expires.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = ix.Store.ReleaseLease(rctx, key, memory.LeaseIndex, owner)
	}()

	done := 0
	for {
		msgs, err := ix.Store.UnindexedMessages(ctx, key, bs)
		if errors.Is(err, memory.ErrNotFound) {
			return done, nil // chat deleted meanwhile
		}
		if err != nil {
			return done, fmt.Errorf("indexer: read backlog of %s/%s: %w", key.Tenant, key.ChatID, err)
		}
		if len(msgs) == 0 {
			return done, nil
		}
		if err := ix.indexBatch(ctx, c, msgs); err != nil {
			return done, err
		}
		done += len(msgs)
		if len(msgs) < bs {
			return done, nil
		}
		// Renew the lease for the next batch.
		if ok, err := ix.Store.RenewLease(ctx, key, memory.LeaseIndex, owner, ttl); err != nil || !ok {
			return done, err
		}
	}
}

func (ix *Indexer) indexBatch(ctx context.Context, c memory.Chat, msgs []memory.Message) error {
	key := c.Key()
	seqs := make([]int64, len(msgs))
	for i, m := range msgs {
		seqs[i] = m.Seq
	}
	msgs, err := ix.eraseTombstones(ctx, key, msgs)
	if err != nil {
		return err
	}
	if err := ix.upsertTurns(ctx, c, msgs); err != nil {
		return err
	}
	err = ix.Store.MarkIndexed(ctx, key, seqs)
	if err == nil {
		// A delete of the chat may have raced with this upsert (the API
		// deletes the store rows, then the points): look once more.
		_, err = ix.Store.Chat(ctx, key)
	}
	if errors.Is(err, memory.ErrNotFound) {
		// Deleted while we embedded: take its points back out so nothing
		// of the chat is left in the index.
		if derr := ix.Index.Delete(ctx, Filter{Tenant: key.Tenant, ChatIDs: []string{key.ChatID}}); derr != nil {
			return fmt.Errorf("indexer: clean up deleted chat %s/%s: %w: %w", key.Tenant, key.ChatID, ErrIndexUnavailable, derr)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("indexer: mark indexed %s/%s: %w", key.Tenant, key.ChatID, err)
	}
	return nil
}

// upsertTurns embeds and upserts live turns.
func (ix *Indexer) upsertTurns(ctx context.Context, c memory.Chat, msgs []memory.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	key := c.Key()
	texts := make([]string, len(msgs))
	for i, m := range msgs {
		texts[i] = m.Content
	}
	vecs, err := ix.Embedder.EmbedDocuments(ctx, texts)
	if err != nil {
		return fmt.Errorf("indexer: embed %s/%s: %w", key.Tenant, key.ChatID, asEmbedderErr(err))
	}
	if len(vecs) != len(msgs) {
		return fmt.Errorf("indexer: embed %s/%s: %w: %d vectors for %d texts", key.Tenant, key.ChatID, ErrEmbedder, len(vecs), len(msgs))
	}
	points := make([]Point, len(msgs))
	for i, m := range msgs {
		points[i] = Point{
			Tenant: key.Tenant, UserID: c.UserID, ChatID: key.ChatID, Agent: c.Agent,
			Seq: m.Seq, Role: string(m.Role), Content: m.Content, CreatedAt: m.CreatedAt,
			Dense: vecs[i], Sparse: ix.Sparse.EncodeDocument(m.Content),
		}
	}
	if err := ix.Index.Upsert(ctx, points); err != nil {
		return fmt.Errorf("indexer: upsert %s/%s: %w: %w", key.Tenant, key.ChatID, ErrIndexUnavailable, err)
	}
	return nil
}
