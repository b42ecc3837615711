package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

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

// MarkIndexed marks each mark's seqs indexed and lists the chats not
// found, in one statement (one snapshot): a chat with no seqs is checked
// through seq 0, which no turn has. A live turn is marked only while it is
// not deleted, a tombstone only as one; a chat whose created_at is not the
// mark's is another chat (erased and created again under its id): it is
// gone, and its turns are unindexed again (see memory.IndexBacklog).
func (s *Store) MarkIndexed(ctx context.Context, marks []memory.IndexMark) ([]memory.ChatKey, error) {
	var (
		tenants, chats []string
		seqs           []int64
		forgotten      []bool
		created        []*time.Time
	)
	for _, m := range marks {
		var at *time.Time
		if !m.Created.IsZero() {
			t := m.Created
			at = &t
		}
		add := func(q int64, f bool) {
			tenants, chats, seqs = append(tenants, m.Chat.Tenant), append(chats, m.Chat.ChatID), append(seqs, q)
			forgotten, created = append(forgotten, f), append(created, at)
		}
		add(0, false)
		for _, q := range m.Seqs {
			add(q, false)
		}
		for _, q := range m.Forgotten {
			add(q, true)
		}
	}
	rows, err := s.pool.Query(ctx, `WITH u AS (
			SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::boolean[], $5::timestamptz[])
				AS u(tenant, chat_id, seq, forgotten, created)),
		same AS (SELECT DISTINCT c.id, u.tenant, u.chat_id FROM chats c JOIN u ON c.tenant = u.tenant AND c.chat_id = u.chat_id
			WHERE u.created IS NULL OR c.created_at = u.created),
		marked AS (UPDATE messages m SET indexed = true FROM chats c, u
			WHERE c.tenant = u.tenant AND c.chat_id = u.chat_id AND (u.created IS NULL OR c.created_at = u.created)
				AND m.chat = c.id AND m.seq = u.seq AND NOT m.indexed AND m.deleted = u.forgotten),
		reborn AS (UPDATE messages m SET indexed = false FROM chats c, u
			WHERE c.tenant = u.tenant AND c.chat_id = u.chat_id AND u.created IS NOT NULL AND c.created_at <> u.created
				AND m.chat = c.id AND m.indexed)
		SELECT DISTINCT u.tenant, u.chat_id FROM u
		WHERE NOT EXISTS (SELECT 1 FROM same WHERE same.tenant = u.tenant AND same.chat_id = u.chat_id)`,
		tenants, chats, seqs, forgotten, created)
	if err != nil {
		return nil, wrap("mark indexed", err)
	}
	gone, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (memory.ChatKey, error) {
		var k memory.ChatKey
		err := r.Scan(&k.Tenant, &k.ChatID)
		return k, err
	})
	if err != nil {
		return nil, wrap("mark indexed", err)
	}
	return gone, nil
}

// ResetIndexed marks every message of every tenant unindexed.
func (s *Store) ResetIndexed(ctx context.Context) error {
	if _, err := s.pool.Exec(ctx, `UPDATE messages SET indexed = false WHERE indexed`); err != nil {
		return wrap("reset indexed", err)
	}
	return nil
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
