package sqlite

import (
	"context"
	"database/sql"
	"errors"
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

// MarkIndexed marks each mark's seqs indexed, in the write transaction of
// the appends queued beside it (group.go): the indexer's marks cost no
// commit of their own under a stream of appends. Chats not found are
// returned in gone.
func (s *Store) MarkIndexed(ctx context.Context, marks []memory.IndexMark) ([]memory.ChatKey, error) {
	var gone []memory.ChatKey
	err := s.writeGrouped(ctx, func(ctx context.Context, tx *sql.Tx) error {
		gone = gone[:0] // the group may run this again alone
		pks, mark := tx.StmtContext(ctx, s.ws.chatPK), tx.StmtContext(ctx, s.ws.markIndexed)
		for _, m := range marks {
			pk, err := chatPK(ctx, pks, m.Chat)
			if errors.Is(err, memory.ErrNotFound) {
				gone = append(gone, m.Chat)
				continue
			}
			if err != nil {
				return err
			}
			if len(m.Seqs) == 0 {
				continue
			}
			if _, err := mark.ExecContext(ctx, pk, seqsJSON(m.Seqs)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: mark indexed: %w", err)
	}
	return gone, nil
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
