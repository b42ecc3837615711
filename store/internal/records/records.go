// Package records is the one typed layer over each SQL store's raw
// operations on a chat's derived records beyond the summary chain (see
// store/internal/chain): closing episodes with their facts, and loading a
// dump record by record. The stores give small raw operations (Tx, LoadTx)
// inside their own transactions; the rules (the episode cursor, deleted
// turns, ownership, ordering, what a dump record must continue) live here
// once, in the Tempo tempodb/backend way.
package records

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/chain"
	"github.com/contextd/contextd/store/internal/sqlbatch"
)

// Tx is one store's raw operations on one chat's records, inside the
// write transaction that read the chat (and holds its row).
type Tx interface {
	chain.Tx
	// LastEpisodeTo is the to_seq of the chat's last closed episode (0:
	// none).
	LastEpisodeTo(ctx context.Context) (int64, error)
	// InsertEpisode inserts the prepared episode (its summary encoded as
	// js) as it is.
	InsertEpisode(ctx context.Context, e memory.Episode, js []byte) error
	// InsertFacts inserts the prepared facts, leaving a fact whose id the
	// chat holds as it is.
	InsertFacts(ctx context.Context, facts []memory.Fact) error
	// EpisodeOwner reports whether an episode id exists and whether it is
	// this chat's.
	EpisodeOwner(ctx context.Context, id string) (exists, ours bool, err error)
	// FactExists and MessageExists report whether the chat holds the id.
	FactExists(ctx context.Context, id string) (bool, error)
	MessageExists(ctx context.Context, id string) (bool, error)
	// InsertMessage inserts the prepared message at seq (the chat's next)
	// and moves the chat's last_seq to it.
	InsertMessage(ctx context.Context, seq int64, m memory.Message, meta []byte, now time.Time) error
	// CheckID is the store's rule on the id of a record it is given.
	CheckID(id string) error
}

// CloseEpisodes stores eps (all or none, see memory.EpisodeCloser) on the
// chat as read in tx, and sets their ID, Turns, CreatedAt, ChatID and
// Facts as stored.
func CloseEpisodes(ctx context.Context, tx Tx, chat memory.Chat, expectTo int64, eps []memory.Episode, now time.Time) error {
	lastTo, err := tx.LastEpisodeTo(ctx)
	if err != nil {
		return fmt.Errorf("last episode: %w", err)
	}
	if lastTo != expectTo {
		return fmt.Errorf("last episode ends at %d, expected %d: %w", lastTo, expectTo, memory.ErrCursorMoved)
	}
	js, err := sqlbatch.PrepareEpisodes(expectTo, chat.LastSeq, eps, now)
	if err != nil {
		return err
	}
	for i := range eps {
		if err := insertEpisode(ctx, tx, chat, &eps[i], js[i]); err != nil {
			return err
		}
	}
	return nil
}

// insertEpisode stores one prepared episode and its facts. An episode
// holding a deleted turn is marked for rebuild (its summariser may have
// read the turn before it was deleted); facts citing one are dropped.
func insertEpisode(ctx context.Context, tx Tx, chat memory.Chat, e *memory.Episode, js []byte) error {
	facts, err := sqlbatch.PrepareFacts(chat.Tenant, chat.ID, e.ID, chat.LastSeq, e.Facts, e.CreatedAt)
	if err != nil {
		return fmt.Errorf("episode %d..%d: %w", e.FromSeq, e.ToSeq, err)
	}
	gone, err := tx.Tombstones(ctx, 1, chat.LastSeq)
	if err != nil {
		return err
	}
	for q := range gone {
		if q >= e.FromSeq && q <= e.ToSeq {
			e.RebuildMark, e.Rebuild = 1, true
		}
	}
	if err := tx.InsertEpisode(ctx, *e, js); err != nil {
		return fmt.Errorf("insert episode: %w", err)
	}
	e.ChatID = chat.ID
	e.Facts = sqlbatch.WithoutSeqs(facts, gone)
	return tx.InsertFacts(ctx, e.Facts)
}

// FactTx is the raw operations on a chat's facts that a rebuild needs
// beyond Tx.
type FactTx interface {
	Tx
	// UpdateEpisode overwrites the episode's summaries with ep's (its
	// summary encoded as js), marks it unindexed and clears its rebuild
	// mark when it is still ep.RebuildMark; false when the chat holds no
	// episode ep.ID.
	UpdateEpisode(ctx context.Context, ep memory.Episode, js []byte) (bool, error)
	// DeleteEpisodeFacts deletes the episode's facts and returns what
	// each one was superseded by ("" : current).
	DeleteEpisodeFacts(ctx context.Context, episodeID string) (map[string]string, error)
	// Unpoint clears superseded_by pointers to the facts that are gone
	// (and marks those facts unindexed: they are current again).
	Unpoint(ctx context.Context, gone []string) error
}

// AddFacts stores facts drawn on arrival (see memory.FactStore.AddFacts) on
// the chat as read in tx and returns them as stored.
func AddFacts(ctx context.Context, tx Tx, chat memory.Chat, facts []memory.Fact, now time.Time) ([]memory.Fact, error) {
	prepared, err := sqlbatch.PrepareFacts(chat.Tenant, chat.ID, "", chat.LastSeq, facts, now)
	if err != nil {
		return nil, err
	}
	gone, err := tx.Tombstones(ctx, 1, chat.LastSeq)
	if err != nil {
		return nil, err
	}
	out := sqlbatch.WithoutSeqs(prepared, gone)
	return out, tx.InsertFacts(ctx, out)
}

// RebuildEpisode overwrites an episode's summaries and replaces its facts
// (see memory.MessageDeleter.RebuildEpisode) on the chat as read in tx.
func RebuildEpisode(ctx context.Context, tx FactTx, chat memory.Chat, ep memory.Episode, now time.Time) error {
	js, err := sqlbatch.PrepareRebuild(&ep)
	if err != nil {
		return err
	}
	found, err := tx.UpdateEpisode(ctx, ep, js)
	if err != nil {
		return fmt.Errorf("update episode: %w", err)
	}
	if !found {
		return fmt.Errorf("episode %q of chat %q: %w", ep.ID, chat.ID, memory.ErrNotFound)
	}
	return replaceFacts(ctx, tx, chat, ep, now)
}

// replaceFacts replaces the episode's facts with ep.Facts. A new fact with
// an old one's id keeps what superseded it, unless it says otherwise.
func replaceFacts(ctx context.Context, tx FactTx, chat memory.Chat, ep memory.Episode, now time.Time) error {
	facts, err := sqlbatch.PrepareFacts(chat.Tenant, chat.ID, ep.ID, chat.LastSeq, ep.Facts, now)
	if err != nil {
		return err
	}
	old, err := tx.DeleteEpisodeFacts(ctx, ep.ID)
	if err != nil {
		return fmt.Errorf("delete facts: %w", err)
	}
	for i := range facts {
		if facts[i].SupersededBy == "" {
			facts[i].SupersededBy = old[facts[i].ID]
		}
	}
	dead, err := tx.Tombstones(ctx, 1, chat.LastSeq)
	if err != nil {
		return err
	}
	if err := tx.InsertFacts(ctx, sqlbatch.WithoutSeqs(facts, dead)); err != nil {
		return err
	}
	return tx.Unpoint(ctx, slices.Sorted(maps.Keys(old)))
}

// DeletionTx is the raw operations deleting one message needs beyond
// FactTx.
type DeletionTx interface {
	FactTx
	// Tombstone empties the live message id (content, name, metadata),
	// marks it deleted and unindexed, and returns it (ok false: no live
	// message has the id).
	Tombstone(ctx context.Context, id string) (m memory.Message, ok bool, err error)
	// DeleteCitingFacts deletes the facts citing seq and returns their ids.
	DeleteCitingFacts(ctx context.Context, seq int64) ([]string, error)
	// MarkEpisode marks the episode owning seq for rebuild, unindexed.
	MarkEpisode(ctx context.Context, seq int64) error
	// RecordForget records the forget work of seq (once).
	RecordForget(ctx context.Context, seq int64, now time.Time) error
}

// DeleteMessage tombstones the chat's message id and marks what was
// derived from it (see memory.MessageDeleter.DeleteMessage), in tx.
func DeleteMessage(ctx context.Context, tx DeletionTx, key memory.ChatKey, id string, now time.Time) (memory.Message, error) {
	m, ok, err := tx.Tombstone(ctx, id)
	if err != nil {
		return m, fmt.Errorf("tombstone: %w", err)
	}
	if !ok {
		return m, fmt.Errorf("message %q of chat %q: %w", id, key.ChatID, memory.ErrNotFound)
	}
	m.ID, m.Deleted = id, true
	return m, markDerived(ctx, tx, m.Seq, now)
}

// markDerived deletes the facts citing seq and marks the rest of what was
// derived from it: its episode, the chat's summary, the forget work.
func markDerived(ctx context.Context, tx DeletionTx, seq int64, now time.Time) error {
	gone, err := tx.DeleteCitingFacts(ctx, seq)
	if err != nil {
		return fmt.Errorf("delete facts: %w", err)
	}
	if err := tx.Unpoint(ctx, gone); err != nil {
		return err
	}
	if err := tx.MarkEpisode(ctx, seq); err != nil {
		return fmt.Errorf("mark episode: %w", err)
	}
	if err := tx.MarkDirty(ctx, seq); err != nil {
		return fmt.Errorf("mark summary: %w", err)
	}
	if err := tx.RecordForget(ctx, seq, now); err != nil {
		return fmt.Errorf("record forget: %w", err)
	}
	return nil
}
