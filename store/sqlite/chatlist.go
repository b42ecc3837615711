package sqlite

import (
	"context"
	"fmt"

	"github.com/contextd/contextd/memory"
)

var _ memory.ChatLister = (*Store)(nil)

// ListChats pages a tenant's chats by chat id; see memory.ChatLister.
func (s *Store) ListChats(ctx context.Context, q memory.ChatQuery) ([]memory.ChatRow, error) {
	args := []any{q.Prefix, q.Tenant, q.After, q.Limit}
	user := "" // a user's chats are read through the chats_user index
	if q.UserID != "" {
		user, args = `AND user_id = ?5`, append(args, q.UserID)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, tenant, chat_id, user_id, agent, last_seq, summary_cursor, created_at, updated_at, summary_dirty,
		(SELECT count(*) FROM messages m WHERE m.chat = c.id AND m.indexed = 0)
		FROM chats c WHERE tenant = ?2 AND chat_id > ?3 `+user+`
		AND (substr(chat_id, 1, length(?1)) = ?1 OR substr(user_id, 1, length(?1)) = ?1)
		ORDER BY chat_id LIMIT ?4`, args...)
	if err != nil {
		return nil, fmt.Errorf("list chats: %w", err)
	}
	defer rows.Close()
	var out []memory.ChatRow
	for rows.Next() {
		var (
			r        memory.ChatRow
			pk       int64
			cat, uat int64
		)
		if err := rows.Scan(&pk, &r.Tenant, &r.ID, &r.UserID, &r.Agent, &r.LastSeq, &r.SummaryCursor, &cat, &uat, &r.DirtyMark, &r.Unindexed); err != nil {
			return nil, fmt.Errorf("list chats: %w", err)
		}
		r.SummaryDirty = r.DirtyMark > 0
		r.CreatedAt, r.UpdatedAt = fromMicros(cat), fromMicros(uat)
		out = append(out, r)
	}
	return out, rows.Err()
}

// UnindexedSeqs lists the chat's unindexed seqs in [from, to].
func (s *Store) UnindexedSeqs(ctx context.Context, key memory.ChatKey, from, to int64) ([]int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT m.seq FROM messages m JOIN chats c ON c.id = m.chat
		WHERE c.tenant = ? AND c.chat_id = ? AND m.indexed = 0 AND m.seq BETWEEN ? AND ? ORDER BY m.seq`,
		key.Tenant, key.ChatID, from, to)
	if err != nil {
		return nil, fmt.Errorf("unindexed seqs: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, fmt.Errorf("unindexed seqs: %w", err)
		}
		out = append(out, seq)
	}
	return out, rows.Err()
}
