package memory

import "context"

// Deletion is durable work left by deleting one message: the turn's vectors
// and the profile items sourced from it must go. It survives a crash until
// Backlogs.Done(SweepDeletions).
type Deletion struct {
	Chat   ChatKey
	UserID string // the chat's user ("" when the chat has none)
	Seq    int64
}

// EpisodeToRebuild is an episode marked for rebuild, with its chat (the
// agent picks the prompt, the user the profile).
type EpisodeToRebuild struct {
	Chat    Chat
	Episode Episode
}

// MessageDeleter deletes one message and everything derived from it.
// Deleting is one transaction that leaves marks; the derived state is then
// rebuilt from the marks by background work, so that a crash between the
// two loses nothing. Implementations: store/sqlite, store/postgres; both
// pass store/storetest.
//
// A deleted message stays as a tombstone: the row keeps its seq and role
// (seqs stay gap-free) and loses content, name and metadata; Messages and
// MessagesBySeq return it with Deleted true. Its id stays known: appending
// a message with that id again is a duplicate (the caller's retry of the
// original append must not bring the turn back).
type MessageDeleter interface {
	// DeleteMessage, in one transaction: tombstones the message and marks
	// it unindexed (the indexer removes its vectors); deletes the facts
	// citing its seq (and clears superseded_by pointers to them, marking
	// those facts unindexed); marks the episode owning the seq for rebuild
	// (Rebuild, unindexed); marks the chat's summary dirty (always: a
	// summariser may be writing a summary that read the turn); and records
	// a Deletion. The chat keeps the smallest seq deleted since its summary
	// was last clean (CleanSummary). It returns the tombstone. ErrNotFound for an unknown chat,
	// an unknown message id, or a message already deleted.
	DeleteMessage(ctx context.Context, key ChatKey, messageID string) (Message, error)

	// PendingDeletions lists up to limit Deletion rows, oldest first, across
	// tenants: the item reader of the SweepDeletions backlog, whose rows
	// Backlogs.Done(SweepDeletions) drops.
	PendingDeletions(ctx context.Context, limit int) ([]Deletion, error)

	// EpisodesToRebuild lists up to limit episodes marked for rebuild,
	// across tenants, with their chats.
	EpisodesToRebuild(ctx context.Context, limit int) ([]EpisodeToRebuild, error)
	// RebuildEpisode overwrites the stored episode ep.ID of the chat with
	// ep's Short, Summary, Model and PromptVersion (its range stays), and
	// replaces its facts with ep.Facts (stored as CloseEpisodes stores
	// them: a fact citing a deleted turn is dropped). The episode stays
	// unindexed. It clears Rebuild only when ep.RebuildMark is still the
	// stored mark: a turn deleted meanwhile leaves it marked for another
	// pass. ErrNotFound for an unknown chat or episode.
	RebuildEpisode(ctx context.Context, key ChatKey, ep Episode) error

	// CleanSummary returns the newest record of the chat's chain that
	// cannot hold a deleted turn: the head while the summary is clean;
	// while it is dirty, the last record before the first one reaching the
	// smallest seq deleted since the summary was last clean (DeleteMessage
	// and a summary extension keep that seq with the mark). nil when there is
	// none (or the mark predates the seq being kept: rebuild from the
	// first turn). One statement: the mark and the records are read
	// together. ErrNotFound for an unknown chat.
	CleanSummary(ctx context.Context, key ChatKey) (*SummaryRecord, error)
}
