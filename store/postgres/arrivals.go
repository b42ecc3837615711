package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contextd/contextd/memory"
)

// UndrawnChats lists chats with turns past their facts cursor, least
// recently updated first (the partial index chats_undrawn holds them).
func (s *Store) UndrawnChats(ctx context.Context, limit int) ([]memory.Undrawn, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+chatCols+`, facts_cursor FROM chats
		WHERE last_seq > facts_cursor ORDER BY updated_at, id LIMIT $1`, limitArg(limit))
	if err != nil {
		return nil, wrap("undrawn chats", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (memory.Undrawn, error) {
		var u memory.Undrawn
		var dirty int64
		c := &u.Chat
		err := r.Scan(new(int64), &c.Tenant, &c.ID, &c.UserID, &c.Agent, &c.LastSeq, &c.SummaryCursor, &c.CreatedAt, &c.UpdatedAt, &dirty, &u.Cursor)
		c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
		c.DirtyMark, c.SummaryDirty = dirty, dirty > 0
		return u, err
	})
	if err != nil {
		return nil, wrap("undrawn chats", err)
	}
	if out == nil {
		out = []memory.Undrawn{}
	}
	return out, nil
}

// MarkDrawn moves facts cursors forward in one statement.
func (s *Store) MarkDrawn(ctx context.Context, marks []memory.DrawnMark) error {
	if len(marks) == 0 {
		return nil
	}
	tenants, chats, seqs, created := make([]string, len(marks)), make([]string, len(marks)), make([]int64, len(marks)), make([]*time.Time, len(marks))
	for i, m := range marks {
		tenants[i], chats[i], seqs[i] = m.Chat.Tenant, m.Chat.ChatID, m.ToSeq
		if !m.Created.IsZero() {
			t := m.Created
			created[i] = &t
		}
	}
	_, err := s.pool.Exec(ctx, `UPDATE chats c SET facts_cursor = LEAST(u.seq, c.last_seq)
		FROM unnest($1::text[], $2::text[], $3::bigint[], $4::timestamptz[]) AS u(tenant, chat_id, seq, created)
		WHERE c.tenant = u.tenant AND c.chat_id = u.chat_id AND (u.created IS NULL OR c.created_at = u.created)
			AND c.facts_cursor < LEAST(u.seq, c.last_seq)`, tenants, chats, seqs, created)
	return wrap("mark drawn", err)
}
