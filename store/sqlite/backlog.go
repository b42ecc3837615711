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
// commit of their own under a stream of appends. Chats not found, or
// created again under their id since (another created_at), are returned in
// gone, and a re-created chat's turns are unindexed again; a live turn
// deleted since it was read is left unindexed (see memory.IndexBacklog).
func (s *Store) MarkIndexed(ctx context.Context, marks []memory.IndexMark) ([]memory.ChatKey, error) {
	var gone []memory.ChatKey
	err := s.writeGrouped(ctx, func(ctx context.Context, tx *sql.Tx) error {
		gone = gone[:0] // the group may run this again alone
		created, mark, unindex := tx.StmtContext(ctx, s.ws.chatCreated), tx.StmtContext(ctx, s.ws.markIndexed), tx.StmtContext(ctx, s.ws.unindexChat)
		for _, m := range marks {
			var pk, at int64
			err := created.QueryRowContext(ctx, m.Chat.Tenant, m.Chat.ChatID).Scan(&pk, &at)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				gone = append(gone, m.Chat)
				continue
			case err != nil:
				return err
			case !m.Created.IsZero() && at != micros(m.Created):
				// Another chat under the same id: the caller wipes the id's
				// points, so this chat's turns are indexed anew.
				if _, err := unindex.ExecContext(ctx, pk); err != nil {
					return err
				}
				gone = append(gone, m.Chat)
				continue
			}
			for _, set := range []struct {
				deleted int
				seqs    []int64
			}{{0, m.Seqs}, {1, m.Forgotten}} {
				if len(set.seqs) == 0 {
					continue
				}
				if _, err := mark.ExecContext(ctx, pk, set.deleted, seqsJSON(set.seqs)); err != nil {
					return err
				}
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

// BacklogSizes counts unindexed messages, episodes and facts,
// unsummarised turns, and turns whose facts are not drawn yet.
func (s *Store) BacklogSizes(ctx context.Context) (memory.Backlog, error) {
	var b memory.Backlog
	err := s.r.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM messages WHERE indexed = 0),
		(SELECT COALESCE(sum(last_seq - summary_cursor), 0) FROM chats),
		(SELECT count(*) FROM facts WHERE indexed = 0),
		(SELECT count(*) FROM episodes WHERE indexed = 0),
		(SELECT COALESCE(sum(last_seq - facts_cursor), 0) FROM chats WHERE last_seq > facts_cursor)`).Scan(
		&b.Unindexed, &b.Unsummarised, &b.UnindexedFacts, &b.UnindexedEpisodes, &b.UndrawnTurns)
	if err != nil {
		return memory.Backlog{}, fmt.Errorf("sqlite: backlog: %w", err)
	}
	return b, nil
}

// ChatLag reads one chat's lag in one statement, each part off a partial
// index of the unindexed rows (messages_unindexed, episodes_unindexed,
// facts_unindexed), so it costs the same however long the chat is.
func (s *Store) ChatLag(ctx context.Context, key memory.ChatKey, before int64) (memory.ChatLag, error) {
	rows, err := s.query(ctx, `SELECT c.last_seq, c.facts_cursor,
		COALESCE((SELECT min(seq) FROM messages WHERE chat = c.id AND indexed = 0), 0),
		EXISTS (SELECT 1 FROM episodes WHERE chat = c.id AND indexed = 0 AND from_seq < ?1),
		EXISTS (SELECT 1 FROM facts WHERE chat = c.id AND indexed = 0 AND first_seq < ?1)
		FROM chats c WHERE c.tenant = ?2 AND c.chat_id = ?3`, before, key.Tenant, key.ChatID)
	if err != nil {
		return memory.ChatLag{}, fmt.Errorf("sqlite: chat lag: %w", err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return memory.ChatLag{}, fmt.Errorf("sqlite: chat lag: %w", err)
		}
		return memory.ChatLag{}, fmt.Errorf("sqlite: chat lag: %w", memory.ErrNotFound)
	}
	var l memory.ChatLag
	if err := rows.Scan(&l.LastSeq, &l.FactsCursor, &l.FirstUnindexed, &l.UnindexedEpisodes, &l.UnindexedFacts); err != nil {
		return memory.ChatLag{}, fmt.Errorf("sqlite: chat lag: %w", err)
	}
	return l, nil
}
