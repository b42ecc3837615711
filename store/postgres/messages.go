package postgres

import (
	"context"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/sqlbatch"
	"github.com/jackc/pgx/v5"
)

// limitArg maps "no limit" (<= 0) to NULL (LIMIT NULL is no limit).
func limitArg(limit int) *int {
	if limit <= 0 {
		return nil
	}
	return &limit
}

const msgCols = `seq, id, role, name, content, created_at, metadata, deleted`

func (s *Store) messages(ctx context.Context, sql string, args ...any) ([]memory.Message, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	out := []memory.Message{}
	var (
		m    memory.Message
		role string
		meta []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&m.Seq, &m.ID, &role, &m.Name, &m.Content, &m.CreatedAt, &meta, &m.Deleted}, func() error {
		md, err := sqlbatch.DecodeMeta(meta)
		if err != nil {
			return err
		}
		out = append(out, memory.Message{Seq: m.Seq, ID: m.ID, Role: memory.Role(role), Name: m.Name,
			Content: m.Content, CreatedAt: m.CreatedAt.UTC(), Metadata: md, Deleted: m.Deleted})
		return nil
	})
	return out, err
}

// Messages returns up to limit (<= 0: all) messages after afterSeq.
func (s *Store) Messages(ctx context.Context, key memory.ChatKey, afterSeq int64, limit int) ([]memory.Message, error) {
	pk, err := chatPK(ctx, s.pool, key)
	if err != nil {
		return nil, wrap("messages", err)
	}
	msgs, err := s.messages(ctx, `SELECT `+msgCols+` FROM messages WHERE chat = $1 AND seq > $2
		ORDER BY seq LIMIT $3`, pk, afterSeq, limitArg(limit))
	if err != nil {
		return nil, wrap("messages", err)
	}
	return msgs, nil
}

// MessagesBySeq returns the existing messages among seqs, in seq order.
func (s *Store) MessagesBySeq(ctx context.Context, key memory.ChatKey, seqs []int64) ([]memory.Message, error) {
	pk, err := chatPK(ctx, s.pool, key)
	if err != nil {
		return nil, wrap("messages by seq", err)
	}
	if len(seqs) == 0 {
		return []memory.Message{}, nil
	}
	msgs, err := s.messages(ctx, `SELECT `+msgCols+` FROM messages WHERE chat = $1 AND seq = ANY($2)
		ORDER BY seq`, pk, seqs)
	if err != nil {
		return nil, wrap("messages by seq", err)
	}
	return msgs, nil
}
