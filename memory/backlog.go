package memory

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// WorkKind names one durable backlog of derived work. Every backlog is a
// per-chat list the store derives from stored state, so work left when the
// process dies is found again after a restart; one role (Backlogs) lists,
// marks and resets every kind. A new kind of memory is a constant here,
// its SQL in each store, an item reader and (for an index kind) a point
// mapper in the indexer.
type WorkKind string

// The kinds of derived work.
const (
	// IndexTurns: turns not yet in the vector index (live turns to embed,
	// tombstones whose points are to be taken out). Read with
	// UnindexedMessages; Mark.Seqs and Mark.Forgotten.
	IndexTurns WorkKind = "index_turns"
	// IndexEpisodes: closed episodes not yet in the vector index. Read
	// with UnindexedEpisodes; Mark.IDs.
	IndexEpisodes WorkKind = "index_episodes"
	// IndexFacts: facts not yet in the vector index (superseded ones
	// included: the index keeps whether a fact is current). Read with
	// UnindexedFacts; Mark.IDs.
	IndexFacts WorkKind = "index_facts"
	// DrawFacts: turns past the chat's facts cursor, whose facts are not
	// drawn yet (engine.Arrivals). A turn appended and not yet drawn when
	// the process dies is still past the cursor after a restart, and is
	// drawn then. Drawing is idempotent (a fact's id is a function of its
	// text and turns), so a crash between writing the facts and moving the
	// cursor only draws them again. PendingChat.Cursor is the facts
	// cursor; Mark.ToSeq moves it.
	DrawFacts WorkKind = "draw_facts"
	// MergeProfile: chats of a user whose summary cursor moved past what
	// their user's profile merged. PendingChat.Cursor is the seq merged
	// so far; Mark.ToSeq moves it.
	MergeProfile WorkKind = "merge_profile"
	// SweepDeletions: Deletion rows left by deleting a message (read with
	// MessageDeleter.PendingDeletions, across tenants); Mark.Seqs are the
	// forgotten seqs whose work is done.
	SweepDeletions WorkKind = "sweep_deletions"
)

// WorkKinds are every kind of derived work a store keeps (the conformance
// suite runs each through Backlogs).
var WorkKinds = []WorkKind{IndexTurns, IndexEpisodes, IndexFacts, DrawFacts, MergeProfile, SweepDeletions}

// IndexKinds are the kinds the indexer drains, in the order it drains
// them, and the kinds Reset takes.
var IndexKinds = []WorkKind{IndexTurns, IndexEpisodes, IndexFacts}

// Indexed reports whether k is a backlog of the vector index.
func (k WorkKind) Indexed() bool {
	return k == IndexTurns || k == IndexEpisodes || k == IndexFacts
}

// Unknown is the error a store answers for a kind it does not keep (or
// an operation the kind has not: Reset of a kind that is not indexed).
func (k WorkKind) Unknown(op string) error {
	return fmt.Errorf("%s %q: %w", op, string(k), ErrUnknownWork)
}

// ErrUnknownWork: a backlog kind the store does not keep, or an operation
// the kind has not.
var ErrUnknownWork = errors.New("unknown kind of work")

// Backlogs is the durable lists of derived work, one per WorkKind: which
// chats have work, that work is done, and (index kinds) that all of it is
// to be done again. Item readers stay per kind (UnindexedMessages,
// UnindexedEpisodes, UnindexedFacts, PendingDeletions): what an item is
// differs, what a backlog is does not.
type Backlogs interface {
	// Pending lists up to limit chats with work of kind (limit <= 0: all),
	// least recently updated first (MergeProfile: by updated_at alone),
	// each with the kind's cursor where it has one (DrawFacts,
	// MergeProfile; 0 otherwise). Never nil.
	Pending(ctx context.Context, kind WorkKind, limit int) ([]PendingChat, error)

	// Done records, in one write, that each mark's work is done:
	//   - IndexTurns: each mark's Seqs are in the vector index and its
	//     Forgotten tombstones' points are out. Seqs that do not exist are
	//     ignored, and so is a live turn of Seqs deleted since it was read:
	//     it stays in the backlog, a tombstone whose points the indexer
	//     takes out on its next read. A chat that does not exist (deleted
	//     since its turns were read), or that is another chat now (erased
	//     and created again under its id: Created differs), is skipped and
	//     returned in gone: the caller must take the chat id's points back
	//     out, and the new chat's turns, episodes and facts are unindexed
	//     again, to be indexed anew.
	//   - IndexEpisodes, IndexFacts: the mark's IDs are in the index (ids
	//     the chat does not hold are ignored). Created is not checked; a
	//     chat that does not exist is skipped and returned in gone (the
	//     caller takes the chat id's points back out).
	//   - DrawFacts: the chat's facts cursor moves forward to ToSeq (never
	//     back, never past the chat's last_seq). A chat that does not
	//     exist, or is another chat now (Created differs), is skipped.
	//   - MergeProfile: the chat's summary up to ToSeq is in its user's
	//     profile (never back); ToSeq 0 forgets what the profile merged of
	//     the chat, so that its summary is work again (after items it gave
	//     were taken out with a deleted turn's). An unknown chat is skipped.
	//   - SweepDeletions: drops the Deletion rows of the mark's Seqs (none there
	//     is no error).
	// Only the index kinds report gone; the others skip an unknown chat
	// silently. No marks: no write.
	Done(ctx context.Context, kind WorkKind, marks []Mark) (gone []ChatKey, err error)

	// Reset makes all the work of an index kind pending again, across
	// tenants (after an index wipe). ErrUnknownWork for other kinds.
	Reset(ctx context.Context, kind WorkKind) error
}

// PendingChat is a chat with work of one kind.
type PendingChat struct {
	Chat Chat
	// Cursor is the last seq whose work is done, for the kinds that keep
	// one (DrawFacts: facts drawn; MergeProfile: summary merged); else 0.
	Cursor int64
}

// Mark names work of one chat that is done; which fields count depends on
// the kind (Backlogs.Done).
type Mark struct {
	Chat ChatKey
	// Created is the chat's created_at as its work was read (zero: not
	// checked), which tells a chat created again under its id from it.
	Created time.Time
	// Seqs are turns done (IndexTurns: live turns whose points were
	// written; SweepDeletions: forgotten turns); Forgotten are tombstones
	// whose points were taken out (IndexTurns).
	Seqs, Forgotten []int64
	// IDs are the items done (IndexEpisodes, IndexFacts).
	IDs []string
	// ToSeq is where the kind's cursor moves (DrawFacts, MergeProfile).
	ToSeq int64
}

// IndexBacklog is what the indexer reads and marks: the backlogs and the
// item reader of each index kind.
type IndexBacklog interface {
	Backlogs
	// UnindexedMessages returns up to limit messages of the chat not yet
	// indexed, in seq order.
	UnindexedMessages(ctx context.Context, key ChatKey, limit int) ([]Message, error)
	// UnindexedEpisodes returns up to limit of the chat's episodes not yet
	// indexed, in seq order.
	UnindexedEpisodes(ctx context.Context, key ChatKey, limit int) ([]Episode, error)
	// UnindexedFacts returns up to limit of the chat's facts not yet
	// indexed (superseded ones included), ordered by (first seq, id).
	UnindexedFacts(ctx context.Context, key ChatKey, limit int) ([]Fact, error)
}
