package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/sqlbatch"
)

// scanMessages reads rows of msgCols; capHint sizes the result.
func scanMessages(rows *sql.Rows, capHint int) ([]memory.Message, error) {
	defer rows.Close()
	out := make([]memory.Message, 0, capHint)
	// One set of destinations for every row (Scan's arguments escape, so
	// per-row variables would cost an allocation each); m is copied out.
	var (
		m    memory.Message
		role string
		at   int64
		meta sql.RawBytes // decoded before the next Scan
	)
	dest := []any{&m.Seq, &m.ID, &role, &m.Name, &m.Content, &at, &meta, &m.Deleted}
	for rows.Next() {
		m = memory.Message{}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("read messages: %w", err)
		}
		m.Role, m.CreatedAt = memory.Role(role), fromMicros(at)
		if meta != nil { // NULL: no metadata, nothing to decode
			var err error
			if m.Metadata, err = sqlbatch.DecodeMeta(meta); err != nil {
				return nil, err
			}
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read messages: %w", err)
	}
	return out, nil
}

// sqlLimit maps "no limit" (<= 0) to SQLite's -1.
func sqlLimit(limit int) int {
	if limit <= 0 {
		return -1
	}
	return limit
}

// capHint is the capacity to allocate for up to limit (<= 0: unknown) rows.
func capHint(limit int) int {
	if limit <= 0 || limit > 256 {
		return 16
	}
	return limit
}

// chatMessages runs a statement whose first two parameters name the chat
// (see chatOf). An empty result costs one more lookup, to tell an unknown
// chat (ErrNotFound) from one without such messages.
func (s *Store) chatMessages(ctx context.Context, st *sql.Stmt, key memory.ChatKey, hint int, args ...any) ([]memory.Message, error) {
	rows, err := st.QueryContext(ctx, append([]any{key.Tenant, key.ChatID}, args...)...)
	if err != nil {
		return nil, err
	}
	msgs, err := scanMessages(rows, hint)
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		if _, err := chatPK(ctx, s.rs.chatPK, key); err != nil {
			return nil, err
		}
	}
	return msgs, nil
}

// Messages returns up to limit (<= 0: all) messages after afterSeq.
func (s *Store) Messages(ctx context.Context, key memory.ChatKey, afterSeq int64, limit int) ([]memory.Message, error) {
	msgs, err := s.chatMessages(ctx, s.rs.messages, key, capHint(limit), afterSeq, sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: messages: %w", err)
	}
	return msgs, nil
}

// MessagesBySeq returns the existing messages among seqs, in seq order.
func (s *Store) MessagesBySeq(ctx context.Context, key memory.ChatKey, seqs []int64) ([]memory.Message, error) {
	if len(seqs) == 0 {
		if _, err := chatPK(ctx, s.rs.chatPK, key); err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		return []memory.Message{}, nil
	}
	msgs, err := s.chatMessages(ctx, s.rs.messagesBySeq, key, capHint(len(seqs)), seqsJSON(seqs))
	if err != nil {
		return nil, fmt.Errorf("sqlite: messages by seq: %w", err)
	}
	return msgs, nil
}

// seqsJSON is seqs as a JSON array, for json_each.
func seqsJSON(seqs []int64) string {
	b := make([]byte, 0, 2+len(seqs)*5)
	b = append(b, '[')
	for i, q := range seqs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, q, 10)
	}
	return string(append(b, ']'))
}
