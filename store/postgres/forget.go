package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/records"
)

var _ memory.MessageDeleter = (*Store)(nil)

// DeleteMessage tombstones one message and marks what was derived from it,
// in one transaction holding the chat's row lock; see
// memory.MessageDeleter.
func (s *Store) DeleteMessage(ctx context.Context, key memory.ChatKey, messageID string) (memory.Message, error) {
	var m memory.Message
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		pk, _, err := loadChat(ctx, tx, key, true)
		if err != nil {
			return err
		}
		m, err = records.DeleteMessage(ctx, chainTx{tx: tx, key: key, pk: pk}, key, messageID, s.now())
		return err
	})
	if err != nil {
		return memory.Message{}, wrap("delete message", err)
	}
	return m, nil
}

// markDirty bumps the chat's dirty mark and keeps the smallest seq deleted
// since the summary was last clean (parameters: the chat's row id, the
// seq). The SET expressions read the row as it was.
const markDirty = `UPDATE chats SET summary_dirty = abs(summary_dirty) + 1,
	dirty_from = CASE WHEN summary_dirty > 0 THEN LEAST(dirty_from, $2) ELSE $2 END WHERE id = $1`

// unpoint clears superseded_by pointers to facts that are gone (and marks
// the facts unindexed: they are current again).
func unpoint(ctx context.Context, tx pgx.Tx, pk int64, gone []string) error {
	if len(gone) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE facts SET superseded_by = NULL, indexed = false
		WHERE chat = $1 AND superseded_by = ANY($2)
		AND superseded_by NOT IN (SELECT id FROM facts WHERE chat = $1)`, pk, gone)
	if err != nil {
		return fmt.Errorf("clear superseded_by: %w", err)
	}
	return nil
}

// PendingDeletions lists forget work, oldest first.
func (s *Store) PendingDeletions(ctx context.Context, limit int) ([]memory.Deletion, error) {
	rows, err := s.pool.Query(ctx, `SELECT c.tenant, c.chat_id, c.user_id, f.seq
		FROM forgets f JOIN chats c ON c.id = f.chat ORDER BY f.created_at, f.chat, f.seq LIMIT $1`, limitArg(limit))
	if err != nil {
		return nil, wrap("pending forgets", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (memory.Deletion, error) {
		var f memory.Deletion
		err := row.Scan(&f.Chat.Tenant, &f.Chat.ChatID, &f.UserID, &f.Seq)
		return f, err
	})
	if err != nil {
		return nil, wrap("pending forgets", err)
	}
	if out == nil {
		out = []memory.Deletion{}
	}
	return out, nil
}

// EpisodesToRebuild lists episodes marked for rebuild with their chats.
func (s *Store) EpisodesToRebuild(ctx context.Context, limit int) ([]memory.EpisodeToRebuild, error) {
	rows, err := s.pool.Query(ctx, `SELECT c.tenant, c.chat_id, e.id::text
		FROM episodes e JOIN chats c ON c.id = e.chat WHERE e.rebuild > 0
		ORDER BY c.updated_at, c.id, e.from_seq LIMIT $1`, limitArg(limit))
	if err != nil {
		return nil, wrap("episodes to rebuild", err)
	}
	refs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (records.EpisodeRef, error) {
		var r records.EpisodeRef
		err := row.Scan(&r.Key.Tenant, &r.Key.ChatID, &r.ID)
		return r, err
	})
	if err != nil {
		return nil, wrap("episodes to rebuild", err)
	}
	return records.EpisodesToRebuild(ctx, refs, s.Chat, func(ctx context.Context, r records.EpisodeRef) ([]memory.Episode, error) {
		eps, err := s.episodes(ctx, r.Key, `SELECT `+episodeCols+` FROM episodes WHERE chat = $1 AND id::text = $2`, r.ID)
		if err != nil {
			return nil, wrap("episodes to rebuild", err)
		}
		return eps, nil
	})
}

// RebuildEpisode overwrites an episode's summaries and replaces its facts;
// see memory.MessageDeleter.
func (s *Store) RebuildEpisode(ctx context.Context, key memory.ChatKey, ep memory.Episode) error {
	now := s.now().Truncate(time.Microsecond)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		pk, chat, err := loadChat(ctx, tx, key, true)
		if err != nil {
			return err
		}
		return records.RebuildEpisode(ctx, chainTx{tx: tx, key: key, pk: pk}, chat, ep, now)
	})
	return wrap("rebuild episode", err)
}
