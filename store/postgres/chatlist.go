package postgres

import (
	"context"
	"fmt"

	"github.com/contextd/contextd/memory"
	"github.com/jackc/pgx/v5"
)

var _ memory.ChatLister = (*Store)(nil)

// ListChats pages a tenant's chats by chat id; see memory.ChatLister.
func (s *Store) ListChats(ctx context.Context, q memory.ChatQuery) ([]memory.ChatRow, error) {
	args := []any{q.Tenant, q.After, q.Prefix, q.Limit}
	user := "" // a user's chats are read through the chats_user index
	if q.UserID != "" {
		user, args = `AND user_id = $5`, append(args, q.UserID)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+chatCols+`,
		(SELECT count(*) FROM messages m WHERE m.chat = c.id AND NOT m.indexed)
		FROM chats c WHERE tenant = $1 AND chat_id COLLATE "C" > $2 `+user+`
		AND ($3 = '' OR starts_with(chat_id, $3) OR starts_with(user_id, $3))
		ORDER BY chat_id COLLATE "C" LIMIT $4`, args...)
	if err != nil {
		return nil, fmt.Errorf("list chats: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (memory.ChatRow, error) {
		var (
			r  memory.ChatRow
			pk int64
		)
		err := row.Scan(&pk, &r.Tenant, &r.ID, &r.UserID, &r.Agent, &r.LastSeq, &r.SummaryCursor, &r.CreatedAt, &r.UpdatedAt, &r.DirtyMark, &r.Unindexed)
		r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
		r.SummaryDirty = r.DirtyMark > 0
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("list chats: %w", err)
	}
	return out, nil
}

// UnindexedSeqs lists the chat's unindexed seqs in [from, to].
func (s *Store) UnindexedSeqs(ctx context.Context, key memory.ChatKey, from, to int64) ([]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT m.seq FROM messages m JOIN chats c ON c.id = m.chat
		WHERE c.tenant = $1 AND c.chat_id = $2 AND NOT m.indexed AND m.seq BETWEEN $3 AND $4 ORDER BY m.seq`,
		key.Tenant, key.ChatID, from, to)
	if err != nil {
		return nil, fmt.Errorf("unindexed seqs: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("unindexed seqs: %w", err)
	}
	return out, nil
}
