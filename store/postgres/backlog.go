package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/contextd/contextd/memory"
)

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

// BacklogSizes counts unindexed messages, episodes and facts,
// unsummarised turns, and turns whose facts are not drawn yet.
func (s *Store) BacklogSizes(ctx context.Context) (memory.Backlog, error) {
	var b memory.Backlog
	err := s.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM messages WHERE NOT indexed),
		(SELECT COALESCE(sum(last_seq - summary_cursor), 0)::bigint FROM chats),
		(SELECT count(*) FROM facts WHERE NOT indexed),
		(SELECT count(*) FROM episodes WHERE NOT indexed),
		(SELECT COALESCE(sum(last_seq - facts_cursor), 0)::bigint FROM chats WHERE last_seq > facts_cursor)`).Scan(
		&b.Unindexed, &b.Unsummarised, &b.UnindexedFacts, &b.UnindexedEpisodes, &b.UndrawnTurns)
	if err != nil {
		return memory.Backlog{}, wrap("backlog", err)
	}
	return b, nil
}

// ChatLag reads one chat's lag in one statement, each part off a partial
// index of the unindexed rows (messages_unindexed, episodes_unindexed,
// facts_unindexed), so it costs the same however long the chat is.
func (s *Store) ChatLag(ctx context.Context, key memory.ChatKey, before int64) (memory.ChatLag, error) {
	var l memory.ChatLag
	err := s.pool.QueryRow(ctx, `SELECT c.last_seq, c.facts_cursor,
		COALESCE((SELECT min(seq) FROM messages WHERE chat = c.id AND NOT indexed), 0),
		EXISTS (SELECT 1 FROM episodes WHERE chat = c.id AND NOT indexed AND from_seq < $3),
		EXISTS (SELECT 1 FROM facts WHERE chat = c.id AND NOT indexed AND first_seq < $3)
		FROM chats c WHERE c.tenant = $1 AND c.chat_id = $2`, key.Tenant, key.ChatID, before).Scan(
		&l.LastSeq, &l.FactsCursor, &l.FirstUnindexed, &l.UnindexedEpisodes, &l.UnindexedFacts)
	if errors.Is(err, pgx.ErrNoRows) {
		return memory.ChatLag{}, wrap("chat lag", notFound(key))
	}
	if err != nil {
		return memory.ChatLag{}, wrap("chat lag", err)
	}
	return l, nil
}
