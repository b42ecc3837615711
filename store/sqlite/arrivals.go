package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/contextd/contextd/memory"
)

// UndrawnChats lists chats with turns past their facts cursor, least
// recently updated first (the partial index chats_undrawn holds them).
func (s *Store) UndrawnChats(ctx context.Context, limit int) ([]memory.Undrawn, error) {
	rows, err := s.query(ctx, `SELECT `+chatCols+`, facts_cursor FROM chats
		WHERE last_seq > facts_cursor ORDER BY updated_at, id LIMIT CAST(? AS INTEGER)`, sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: undrawn chats: %w", err)
	}
	defer rows.Close()
	out := []memory.Undrawn{}
	for rows.Next() {
		var u memory.Undrawn
		var cat, uat int64
		c := &u.Chat
		if err := rows.Scan(new(int64), &c.Tenant, &c.ID, &c.UserID, &c.Agent, &c.LastSeq, &c.SummaryCursor, &cat, &uat, &c.DirtyMark, &u.Cursor); err != nil {
			return nil, fmt.Errorf("sqlite: undrawn chats: %w", err)
		}
		c.CreatedAt, c.UpdatedAt, c.SummaryDirty = fromMicros(cat), fromMicros(uat), c.DirtyMark > 0
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: undrawn chats: %w", err)
	}
	return out, nil
}

// MarkDrawn moves facts cursors forward, in the write transaction of the
// appends queued beside it (group.go), like the indexer's marks.
func (s *Store) MarkDrawn(ctx context.Context, marks []memory.DrawnMark) error {
	if len(marks) == 0 {
		return nil
	}
	err := s.writeGrouped(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, m := range marks {
			created := int64(-1) // not checked
			if !m.Created.IsZero() {
				created = micros(m.Created)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE chats SET facts_cursor = min(?, last_seq)
				WHERE tenant = ? AND chat_id = ? AND (? < 0 OR created_at = ?) AND facts_cursor < min(?, last_seq)`,
				m.ToSeq, m.Chat.Tenant, m.Chat.ChatID, created, created, m.ToSeq); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: mark drawn: %w", err)
	}
	return nil
}
