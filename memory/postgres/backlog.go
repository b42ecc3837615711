package postgres

import (
	"context"

	"github.com/contextd/contextd/memory"
)

// UnindexedChats lists chats holding unindexed messages, least recently
// updated first.
func (s *Store) UnindexedChats(ctx context.Context, limit int) ([]memory.Chat, error) {
	chats, err := s.listChats(ctx, `SELECT `+chatCols+` FROM chats
		WHERE id IN (SELECT DISTINCT chat FROM messages WHERE NOT indexed)
		ORDER BY updated_at, id LIMIT $1`, limitArg(limit))
	if err != nil {
		return nil, wrap("unindexed chats", err)
	}
	return chats, nil
}

// UnindexedMessages returns up to limit unindexed messages of the chat.
func (s *Store) UnindexedMessages(ctx context.Context, key memory.ChatKey, limit int) ([]memory.Message, error) {
	pk, err := chatPK(ctx, s.pool, key)
	if err != nil {
		return nil, wrap("unindexed messages", err)
	}
	msgs, err := s.messages(ctx, `SELECT `+msgCols+` FROM messages WHERE chat = $1 AND NOT indexed
		ORDER BY seq LIMIT $2`, pk, limitArg(limit))
	if err != nil {
		return nil, wrap("unindexed messages", err)
	}
	return msgs, nil
}

// MarkIndexed marks the chat's seqs as indexed (ErrNotFound: no such chat).
func (s *Store) MarkIndexed(ctx context.Context, key memory.ChatKey, seqs []int64) error {
	pk, err := chatPK(ctx, s.pool, key)
	if err != nil {
		return wrap("mark indexed", err)
	}
	if len(seqs) == 0 {
		return nil
	}
	if _, err := s.pool.Exec(ctx, `UPDATE messages SET indexed = true
		WHERE chat = $1 AND seq = ANY($2) AND NOT indexed`, pk, seqs); err != nil {
		return wrap("mark indexed", err)
	}
	return nil
}

// ResetIndexed marks every message of every tenant unindexed.
func (s *Store) ResetIndexed(ctx context.Context) error {
	if _, err := s.pool.Exec(ctx, `UPDATE messages SET indexed = false WHERE indexed`); err != nil {
		return wrap("reset indexed", err)
	}
	return nil
}

// BacklogSizes counts unindexed messages and facts, and unsummarised turns.
func (s *Store) BacklogSizes(ctx context.Context) (memory.Backlog, error) {
	var b memory.Backlog
	err := s.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM messages WHERE NOT indexed),
		(SELECT COALESCE(sum(last_seq - summary_cursor), 0)::bigint FROM chats),
		(SELECT count(*) FROM facts WHERE NOT indexed)`).Scan(&b.Unindexed, &b.Unsummarised, &b.UnindexedFacts)
	if err != nil {
		return memory.Backlog{}, wrap("backlog", err)
	}
	return b, nil
}
