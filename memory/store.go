package memory

import (
	"context"
	"time"
)

// Backend is the whole backend contract: every role a storage backend
// provides. Wiring (cmd/contextd) takes a Backend, so the compiler, not a
// type assertion at start-up, tells a new backend which role it forgot.
// Implementations: store/sqlite, store/postgres; each checks itself with
// var _ memory.Backend = (*Store)(nil), and both pass store/storetest,
// which requires every role. Consumers ask only for the roles they use.
type Backend interface {
	Core
	EpisodeStore
	FactStore
	MessageDeleter
	ProfileStore
	ChatLister
	Dumper
	ChatLags
}

// Core is the core of the backend contract: chats, summaries, the
// backlogs of derived work (and the index kinds' item readers) and leases. Every method takes the tenant (inside ChatKey or
// explicitly): no method reads across tenants.
type Core interface {
	Chats
	Summaries
	IndexBacklog
	Leases
	// BacklogSizes counts unindexed messages, episodes and facts, turns
	// not yet summarised, and turns whose facts are not drawn yet.
	BacklogSizes(ctx context.Context) (Backlog, error)
	// Ping checks the backend is reachable.
	Ping(ctx context.Context) error
	Close() error
}

// ChatReader reads chats and their turns.
type ChatReader interface {
	// Chat returns a chat, or ErrNotFound.
	Chat(ctx context.Context, key ChatKey) (Chat, error)

	// Messages returns up to limit messages with seq > afterSeq in seq order.
	// ErrNotFound when the chat does not exist.
	Messages(ctx context.Context, key ChatKey, afterSeq int64, limit int) ([]Message, error)

	// MessagesBySeq returns the messages with the given seqs (those that
	// exist), in seq order.
	MessagesBySeq(ctx context.Context, key ChatKey, seqs []int64) ([]Message, error)
}

// Chats stores and erases chats and their turns.
type Chats interface {
	ChatReader

	// Append stores the messages of one chat in one transaction, creating the
	// chat on first use. Seqs are gap-free and 1-based per chat; a message
	// whose ID the chat already holds is a duplicate and is not stored again.
	// Safe for concurrent use on the same chat, from several processes.
	Append(ctx context.Context, req AppendRequest) (AppendResult, error)

	// DeleteChat removes the chat and everything derived from it (messages,
	// summaries, backlog, leases). ErrNotFound when it does not exist.
	DeleteChat(ctx context.Context, key ChatKey) error
}

// Summaries keeps each chat's chain of summary records.
type Summaries interface {
	// SummaryHead returns the chat's current summary record, or nil when the
	// chat has none yet. ErrNotFound when the chat does not exist.
	SummaryHead(ctx context.Context, key ChatKey) (*SummaryRecord, error)

	// SummaryChain returns every record of the chat's chain, head first.
	SummaryChain(ctx context.Context, key ChatKey) ([]SummaryRecord, error)

	// WriteSummary writes to the chat's chain as w says (SummaryWrite: an
	// extension on the head, or a rebuild after a deleted message), in one
	// transaction that checks w.Check against the chat as it reads it
	// there: ErrCursorMoved unless the cursor is still w.ExpectCursor,
	// ErrConflict for records not moving it forward within the chat's
	// turns, for a Keep that is not a record of the chain, or that is not
	// the head when nothing is written on it. The store sets each record's
	// ID, ParentID, Depth and CreatedAt and returns the records written.
	WriteSummary(ctx context.Context, key ChatKey, w SummaryWrite) ([]SummaryRecord, error)

	// ListSummaryWork finds chats with work for the summariser, oldest work
	// first: turns the summary does not cover yet (last_seq -
	// summary_cursor >= minPending), or a summary marked dirty, whatever
	// the backlog (a rebuild may be all that is left to do).
	ListSummaryWork(ctx context.Context, minPending int64, limit int) ([]Chat, error)
}

// Leases let one replica at a time summarise or index a chat. The single
// forms are the batch of one: memory.TryLease and memory.ReleaseLease.
type Leases interface {
	// TryLeases takes, in one write, a named lease on each chat for owner
	// until now+ttl where the lease is free or expired: taken[i] reports
	// keys[i] (the indexer takes a pass's chats at once). It is never
	// re-entered: it reports false while any owner, owner itself
	// included, holds an unexpired lease, so two jobs of one process never
	// run on one chat at once. A chat that does not exist is not taken,
	// without an error. An empty kind or owner is an error (CheckLease).
	TryLeases(ctx context.Context, keys []ChatKey, kind, owner string, ttl time.Duration) (taken []bool, err error)
	// RenewLease extends owner's unexpired lease until now+ttl; false when
	// owner does not hold it (it expired, or another owner took it).
	RenewLease(ctx context.Context, key ChatKey, kind, owner string, ttl time.Duration) (bool, error)
	// ReleaseLeases drops owner's leases on the chats, in one write (no
	// error for a lease it does not hold, or a chat that does not exist).
	ReleaseLeases(ctx context.Context, keys []ChatKey, kind, owner string) error
}

// Backlog counts derived, durable work.
type Backlog struct {
	Unindexed    int64 `json:"unindexed"`
	Unsummarised int64 `json:"unsummarised"`
	// UnindexedFacts counts facts not yet in the vector index.
	UnindexedFacts int64 `json:"unindexed_facts"`
	// UnindexedEpisodes counts closed episodes not yet in the vector index.
	UnindexedEpisodes int64 `json:"unindexed_episodes"`
	// UndrawnTurns counts turns whose facts are not drawn yet
	// (DrawFacts).
	UndrawnTurns int64 `json:"undrawn_turns"`
}

// Lease kinds.
const (
	LeaseSummary = "summary"
	LeaseIndex   = "index"
	// LeaseFacts is the facts-on-arrival job's (engine.Arrivals).
	LeaseFacts = "facts"
)

// ChatLags reads how far one chat's derived memory is behind its turns:
// the per-chat view of Backlog, read on the request path only when some
// background job has work pending (engine: index_behind), so it must be
// one cheap indexed read.
type ChatLags interface {
	// ChatLag returns the chat's lag in what derives from its turns
	// before seq before: episodes and facts count when they start before
	// it (the turns from it on are a context's recent window, shown
	// verbatim). ErrNotFound for an unknown chat.
	ChatLag(ctx context.Context, key ChatKey, before int64) (ChatLag, error)
}

// ChatLag is one chat's derived memory not yet indexed or drawn.
type ChatLag struct {
	LastSeq int64
	// FirstUnindexed is the first seq of a turn not yet in the vector
	// index (0: none).
	FirstUnindexed int64
	// FactsCursor is the last seq whose facts were drawn on arrival: the
	// turns after it are not drawn yet.
	FactsCursor int64
	// UnindexedEpisodes, UnindexedFacts: some closed episode, some fact of
	// the chat starting before the bound is not yet in the vector index.
	UnindexedEpisodes, UnindexedFacts bool
}
