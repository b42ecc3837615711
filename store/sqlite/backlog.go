package sqlite

import (
	"context"
	"fmt"

	"github.com/contextd/contextd/memory"
)

// UnindexedMessages returns up to limit unindexed messages of the chat.
func (s *Store) UnindexedMessages(ctx context.Context, key memory.ChatKey, limit int) ([]memory.Message, error) {
	msgs, err := s.chatMessages(ctx, s.rs.unindexedMsgs, key, capHint(limit), sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: unindexed messages: %w", err)
	}
	return msgs, nil
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
// facts_unindexed), so it costs the same however long the chat is; the
// answer is kept until something of the chat is written (lagcache.go).
func (s *Store) ChatLag(ctx context.Context, key memory.ChatKey, before int64) (memory.ChatLag, error) {
	l, epoch, ok := s.rows.getLag(key, before)
	if ok {
		return l, nil // kept: nothing of the chat's was written since (lagcache.go)
	}
	rows, err := s.query(ctx, `SELECT c.id, c.last_seq, c.facts_cursor,
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
	var pk int64
	if err := rows.Scan(&pk, &l.LastSeq, &l.FactsCursor, &l.FirstUnindexed, &l.UnindexedEpisodes, &l.UnindexedFacts); err != nil {
		return memory.ChatLag{}, fmt.Errorf("sqlite: chat lag: %w", err)
	}
	s.rows.putLag(key, pk, before, l, epoch)
	return l, nil
}
