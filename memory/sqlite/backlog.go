package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/contextd/contextd/memory"
)

// UnindexedChats lists chats holding unindexed messages, least recently
// updated first.
func (s *Store) UnindexedChats(ctx context.Context, limit int) ([]memory.Chat, error) {
	chats, err := s.listChats(ctx, s.rs.unindexedChats, sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: unindexed chats: %w", err)
	}
	return chats, nil
}

// UnindexedMessages returns up to limit unindexed messages of the chat.
func (s *Store) UnindexedMessages(ctx context.Context, key memory.ChatKey, limit int) ([]memory.Message, error) {
	msgs, err := s.chatMessages(ctx, s.rs.unindexedMsgs, key, capHint(limit), sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: unindexed messages: %w", err)
	}
	return msgs, nil
}

// MarkIndexed marks the chat's seqs as indexed (ErrNotFound: no such chat).
func (s *Store) MarkIndexed(ctx context.Context, key memory.ChatKey, seqs []int64) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		pk, err := chatPK(ctx, tx.StmtContext(ctx, s.ws.chatPK), key)
		if err != nil {
			return err
		}
		if len(seqs) == 0 {
			return nil
		}
		_, err = tx.StmtContext(ctx, s.ws.markIndexed).ExecContext(ctx, pk, seqsJSON(seqs))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: mark indexed: %w", err)
	}
	return nil
}

// ResetIndexed marks every message of every tenant unindexed.
func (s *Store) ResetIndexed(ctx context.Context) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE messages SET indexed = 0 WHERE indexed = 1`)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: reset indexed: %w", err)
	}
	return nil
}

// BacklogSizes counts unindexed messages and facts, and unsummarised turns.
func (s *Store) BacklogSizes(ctx context.Context) (memory.Backlog, error) {
	var b memory.Backlog
	err := s.r.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM messages WHERE indexed = 0),
		(SELECT COALESCE(sum(last_seq - summary_cursor), 0) FROM chats),
		(SELECT count(*) FROM facts WHERE indexed = 0)`).Scan(&b.Unindexed, &b.Unsummarised, &b.UnindexedFacts)
	if err != nil {
		return memory.Backlog{}, fmt.Errorf("sqlite: backlog: %w", err)
	}
	return b, nil
}
