package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/records"
)

var _ memory.MessageDeleter = (*Store)(nil)

// DeleteMessage tombstones one message and marks what was derived from it,
// in one transaction; see memory.MessageDeleter.
func (s *Store) DeleteMessage(ctx context.Context, key memory.ChatKey, messageID string) (memory.Message, error) {
	defer s.cp.scrubSoon() // what it erases must leave the WAL too
	var m memory.Message
	err := s.write(ctx, func(tx *sql.Tx) error {
		pk, err := chatPK(ctx, tx.StmtContext(ctx, s.ws.chatPK), key)
		if err != nil {
			return err
		}
		m, err = records.DeleteMessage(ctx, &chainTx{s: s, tx: tx, pk: pk}, key, messageID, s.now())
		return err
	})
	if err != nil {
		return memory.Message{}, fmt.Errorf("sqlite: delete message: %w", err)
	}
	return m, nil
}

// markDirty bumps the chat's dirty mark and keeps the smallest seq deleted
// since the summary was last clean (parameters: the seq twice, the chat's
// row id). The SET expressions read the row as it was.
const markDirty = `UPDATE chats SET summary_dirty = abs(summary_dirty) + 1,
	dirty_from = CASE WHEN summary_dirty > 0 THEN min(dirty_from, ?) ELSE ? END WHERE id = ?`

// unpoint clears superseded_by pointers to facts that are gone (and marks
// the facts unindexed: they are current again).
func unpoint(ctx context.Context, tx *sql.Tx, pk int64, gone []string) error {
	if len(gone) == 0 {
		return nil
	}
	js, err := json.Marshal(gone)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE facts SET superseded_by = NULL, indexed = 0
		WHERE chat = ? AND superseded_by IN (SELECT value FROM json_each(?))
		AND superseded_by NOT IN (SELECT id FROM facts WHERE chat = ?)`, pk, string(js), pk)
	if err != nil {
		return fmt.Errorf("clear superseded_by: %w", err)
	}
	return nil
}

// PendingDeletions lists forget work, oldest first.
func (s *Store) PendingDeletions(ctx context.Context, limit int) ([]memory.Deletion, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT c.tenant, c.chat_id, c.user_id, f.seq
		FROM forgets f JOIN chats c ON c.id = f.chat ORDER BY f.created_at, f.chat, f.seq LIMIT ?`, sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: pending forgets: %w", err)
	}
	defer rows.Close()
	out := []memory.Deletion{}
	for rows.Next() {
		var f memory.Deletion
		if err := rows.Scan(&f.Chat.Tenant, &f.Chat.ChatID, &f.UserID, &f.Seq); err != nil {
			return nil, fmt.Errorf("sqlite: pending forgets: %w", err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// EpisodesToRebuild lists episodes marked for rebuild with their chats.
func (s *Store) EpisodesToRebuild(ctx context.Context, limit int) ([]memory.EpisodeToRebuild, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT c.tenant, c.chat_id, e.id
		FROM episodes e JOIN chats c ON c.id = e.chat WHERE e.rebuild > 0
		ORDER BY c.updated_at, c.id, e.from_seq LIMIT ?`, sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: episodes to rebuild: %w", err)
	}
	var refs []records.EpisodeRef
	for rows.Next() {
		var r records.EpisodeRef
		if err := rows.Scan(&r.Key.Tenant, &r.Key.ChatID, &r.ID); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: episodes to rebuild: %w", err)
		}
		refs = append(refs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: episodes to rebuild: %w", err)
	}
	return records.EpisodesToRebuild(ctx, refs, s.Chat, func(ctx context.Context, r records.EpisodeRef) ([]memory.Episode, error) {
		eps, err := s.episodes(ctx, r.Key, `SELECT `+episodeCols+` FROM episodes WHERE chat = ? AND id = ?`, r.ID)
		if err != nil {
			return nil, fmt.Errorf("sqlite: episodes to rebuild: %w", err)
		}
		return eps, nil
	})
}

// RebuildEpisode overwrites an episode's summaries and replaces its facts;
// see memory.MessageDeleter.
func (s *Store) RebuildEpisode(ctx context.Context, key memory.ChatKey, ep memory.Episode) error {
	defer s.cp.scrubSoon() // what it erases must leave the WAL too
	now := s.now().Truncate(time.Microsecond)
	err := s.write(ctx, func(tx *sql.Tx) error {
		pk, chat, err := loadChat(ctx, tx.StmtContext(ctx, s.ws.chat), key)
		if err != nil {
			return err
		}
		return records.RebuildEpisode(ctx, &chainTx{s: s, tx: tx, pk: pk, chat: chat}, chat, ep, now)
	})
	if err != nil {
		return fmt.Errorf("sqlite: rebuild episode: %w", err)
	}
	return nil
}

// CleanSummary returns the newest record that cannot hold a deleted turn;
// see memory.MessageDeleter.
func (s *Store) CleanSummary(ctx context.Context, key memory.ChatKey) (*memory.SummaryRecord, error) {
	rec, err := scanSummary(s.rs.clean.QueryRowContext(ctx, key.Tenant, key.ChatID))
	if errors.Is(err, sql.ErrNoRows) {
		if _, err := chatPK(ctx, s.rs.chatPK, key); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: clean summary: %w", err)
	}
	return &rec, nil
}
