package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/google/uuid"
)

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

const chatCols = `id, tenant, chat_id, user_id, agent, last_seq, summary_cursor, created_at, updated_at`

type scanner interface{ Scan(dest ...any) error }

func scanChat(sc scanner) (int64, memory.Chat, error) {
	var (
		pk       int64
		c        memory.Chat
		cat, uat int64
	)
	err := sc.Scan(&pk, &c.Tenant, &c.ID, &c.UserID, &c.Agent, &c.LastSeq, &c.SummaryCursor, &cat, &uat)
	c.CreatedAt, c.UpdatedAt = fromMicros(cat), fromMicros(uat)
	return pk, c, err
}

// loadChat returns the chat's row id and the chat, or ErrNotFound.
func loadChat(ctx context.Context, q querier, key memory.ChatKey) (int64, memory.Chat, error) {
	pk, c, err := scanChat(q.QueryRowContext(ctx,
		`SELECT `+chatCols+` FROM chats WHERE tenant = ? AND chat_id = ?`, key.Tenant, key.ChatID))
	if errors.Is(err, sql.ErrNoRows) {
		return 0, c, fmt.Errorf("chat %q: %w", key.ChatID, memory.ErrNotFound)
	}
	if err != nil {
		return 0, c, fmt.Errorf("load chat: %w", err)
	}
	return pk, c, nil
}

func chatPK(ctx context.Context, q querier, key memory.ChatKey) (int64, error) {
	var pk int64
	err := q.QueryRowContext(ctx, `SELECT id FROM chats WHERE tenant = ? AND chat_id = ?`, key.Tenant, key.ChatID).Scan(&pk)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("chat %q: %w", key.ChatID, memory.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("load chat: %w", err)
	}
	return pk, nil
}

// Append stores one batch in one transaction; see memory.Store.
func (s *Store) Append(ctx context.Context, req memory.AppendRequest) (memory.AppendResult, error) {
	now := s.now().Truncate(time.Microsecond)
	b, err := memory.PrepareBatch(req, now)
	if err != nil {
		return memory.AppendResult{}, err
	}
	var res memory.AppendResult
	err = s.write(ctx, func(tx *sql.Tx) error {
		res = memory.AppendResult{}
		pk, chat, err := loadChat(ctx, tx, req.Chat)
		switch {
		case errors.Is(err, memory.ErrNotFound):
			chat = memory.Chat{Tenant: req.Chat.Tenant, ID: req.Chat.ChatID, UserID: req.UserID,
				Agent: req.Agent, CreatedAt: now, UpdatedAt: now}
			if chat.Agent == "" {
				chat.Agent = memory.DefaultAgent
			}
			r, err := tx.ExecContext(ctx, `INSERT INTO chats (tenant, chat_id, user_id, agent, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?)`, chat.Tenant, chat.ID, chat.UserID, chat.Agent, micros(now), micros(now))
			if err != nil {
				return fmt.Errorf("create chat: %w", err)
			}
			if pk, err = r.LastInsertId(); err != nil {
				return fmt.Errorf("create chat: %w", err)
			}
			res.Created = true
		case err != nil:
			return err
		}

		var existing map[string]int64
		if !res.Created && len(b.Msgs) > 0 {
			if existing, err = existingSeqs(ctx, tx, pk, b.Msgs); err != nil {
				return err
			}
		}
		seqs := make([]int64, len(b.Msgs))
		var ins *sql.Stmt
		for j, m := range b.Msgs {
			if seq, ok := existing[m.ID]; ok {
				seqs[j] = seq
				continue
			}
			if ins == nil {
				if ins, err = tx.PrepareContext(ctx, `INSERT INTO messages
					(chat, seq, id, role, name, content, created_at, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`); err != nil {
					return fmt.Errorf("insert messages: %w", err)
				}
				defer ins.Close()
			}
			chat.LastSeq++
			seqs[j] = chat.LastSeq
			var meta any
			if b.Meta[j] != nil {
				meta = string(b.Meta[j])
			}
			if _, err := ins.ExecContext(ctx, pk, chat.LastSeq, m.ID, string(m.Role), m.Name, m.Content,
				micros(m.CreatedAt), meta); err != nil {
				return fmt.Errorf("insert message: %w", err)
			}
			res.Appended++
		}
		if res.Appended > 0 {
			chat.UpdatedAt = now
			if _, err := tx.ExecContext(ctx, `UPDATE chats SET last_seq = ?, updated_at = ?,
				summary_pending_since = COALESCE(summary_pending_since, ?) WHERE id = ?`,
				chat.LastSeq, micros(now), micros(now), pk); err != nil {
				return fmt.Errorf("update chat: %w", err)
			}
		}
		res.Chat = chat
		res.LastSeq = chat.LastSeq
		res.Messages = b.Refs(seqs)
		res.Duplicates = len(req.Messages) - res.Appended
		return nil
	})
	if err != nil {
		return memory.AppendResult{}, fmt.Errorf("sqlite: %w", err)
	}
	return res, nil
}

// existingSeqs returns the seqs of those of msgs' ids the chat already holds.
func existingSeqs(ctx context.Context, q querier, pk int64, msgs []memory.Message) (map[string]int64, error) {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	js, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT id, seq FROM messages
		WHERE chat = ? AND id IN (SELECT value FROM json_each(?))`, pk, string(js))
	if err != nil {
		return nil, fmt.Errorf("find duplicates: %w", err)
	}
	defer rows.Close()
	out := make(map[string]int64)
	for rows.Next() {
		var id string
		var seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			return nil, fmt.Errorf("find duplicates: %w", err)
		}
		out[id] = seq
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find duplicates: %w", err)
	}
	return out, nil
}

// Chat returns the chat or ErrNotFound.
func (s *Store) Chat(ctx context.Context, key memory.ChatKey) (memory.Chat, error) {
	_, c, err := loadChat(ctx, s.r, key)
	if err != nil {
		return memory.Chat{}, fmt.Errorf("sqlite: %w", err)
	}
	return c, nil
}

const msgCols = `seq, id, role, name, content, created_at, metadata`

func scanMessages(rows *sql.Rows) ([]memory.Message, error) {
	defer rows.Close()
	out := []memory.Message{}
	for rows.Next() {
		var (
			m    memory.Message
			role string
			at   int64
			meta []byte
		)
		if err := rows.Scan(&m.Seq, &m.ID, &role, &m.Name, &m.Content, &at, &meta); err != nil {
			return nil, fmt.Errorf("read messages: %w", err)
		}
		m.Role, m.CreatedAt = memory.Role(role), fromMicros(at)
		var err error
		if m.Metadata, err = memory.DecodeMeta(meta); err != nil {
			return nil, err
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

// Messages returns up to limit (<= 0: all) messages after afterSeq.
func (s *Store) Messages(ctx context.Context, key memory.ChatKey, afterSeq int64, limit int) ([]memory.Message, error) {
	pk, err := chatPK(ctx, s.r, key)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+msgCols+` FROM messages
		WHERE chat = ? AND seq > ? ORDER BY seq LIMIT ?`, pk, afterSeq, sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: messages: %w", err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return msgs, nil
}

// MessagesBySeq returns the existing messages among seqs, in seq order.
func (s *Store) MessagesBySeq(ctx context.Context, key memory.ChatKey, seqs []int64) ([]memory.Message, error) {
	pk, err := chatPK(ctx, s.r, key)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if len(seqs) == 0 {
		return []memory.Message{}, nil
	}
	js, _ := json.Marshal(seqs)
	rows, err := s.r.QueryContext(ctx, `SELECT `+msgCols+` FROM messages
		WHERE chat = ? AND seq IN (SELECT value FROM json_each(?)) ORDER BY seq`, pk, string(js))
	if err != nil {
		return nil, fmt.Errorf("sqlite: messages by seq: %w", err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return msgs, nil
}

const summaryCols = `id, parent_id, depth, from_seq, to_seq, token_count, summary, created_at`

func (s *Store) summaries(ctx context.Context, key memory.ChatKey, limit int) ([]memory.SummaryRecord, error) {
	pk, err := chatPK(ctx, s.r, key)
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+summaryCols+` FROM conversation_summaries
		WHERE chat = ? ORDER BY depth DESC LIMIT ?`, pk, sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("summaries: %w", err)
	}
	defer rows.Close()
	out := []memory.SummaryRecord{}
	for rows.Next() {
		var (
			r      memory.SummaryRecord
			parent sql.NullString
			js     []byte
			at     int64
		)
		if err := rows.Scan(&r.ID, &parent, &r.Depth, &r.FromSeq, &r.ToSeq, &r.TokenCount, &js, &at); err != nil {
			return nil, fmt.Errorf("summaries: %w", err)
		}
		if err := json.Unmarshal(js, &r.Summary); err != nil {
			return nil, fmt.Errorf("summary %s: %w", r.ID, err)
		}
		r.Summary.UpdatedAt = r.Summary.UpdatedAt.UTC()
		if parent.Valid {
			p := parent.String
			r.ParentID = &p
		}
		r.CreatedAt = fromMicros(at)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("summaries: %w", err)
	}
	return out, nil
}

// SummaryHead returns the chat's newest summary record, or nil.
func (s *Store) SummaryHead(ctx context.Context, key memory.ChatKey) (*memory.SummaryRecord, error) {
	recs, err := s.summaries(ctx, key, 1)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if len(recs) == 0 {
		return nil, nil
	}
	return &recs[0], nil
}

// SummaryChain returns the chat's summary records, head first.
func (s *Store) SummaryChain(ctx context.Context, key memory.ChatKey) ([]memory.SummaryRecord, error) {
	recs, err := s.summaries(ctx, key, 0)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return recs, nil
}

// AppendSummary adds rec as the chain's new head if the chat's cursor is
// still expectCursor. rec.CoveredToSeq must lie in expectCursor..last_seq.
func (s *Store) AppendSummary(ctx context.Context, key memory.ChatKey, expectCursor int64, rec memory.SummaryRecord) (memory.SummaryRecord, error) {
	now := s.now().Truncate(time.Microsecond)
	err := s.write(ctx, func(tx *sql.Tx) error {
		pk, chat, err := loadChat(ctx, tx, key)
		if err != nil {
			return err
		}
		if chat.SummaryCursor != expectCursor {
			return fmt.Errorf("cursor is %d, expected %d: %w", chat.SummaryCursor, expectCursor, memory.ErrCursorMoved)
		}
		if rec.CoveredToSeq < expectCursor || rec.CoveredToSeq > chat.LastSeq {
			return fmt.Errorf("covered_to_seq %d outside %d..%d: %w", rec.CoveredToSeq, expectCursor, chat.LastSeq, memory.ErrConflict)
		}
		rec.ParentID, rec.Depth = nil, 0
		var headID string
		var headDepth int
		err = tx.QueryRowContext(ctx, `SELECT id, depth FROM conversation_summaries
			WHERE chat = ? ORDER BY depth DESC LIMIT 1`, pk).Scan(&headID, &headDepth)
		switch {
		case err == nil:
			rec.ParentID, rec.Depth = &headID, headDepth+1
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("summary head: %w", err)
		}
		rec.ID = uuid.NewString()
		rec.CreatedAt = now
		if rec.Summary.UpdatedAt.IsZero() {
			rec.Summary.UpdatedAt = now
		}
		rec.Summary.UpdatedAt = rec.Summary.UpdatedAt.UTC()
		js, err := json.Marshal(rec.Summary)
		if err != nil {
			return fmt.Errorf("encode summary: %w", err)
		}
		if memory.HasEscapedNUL(js) { // as PostgreSQL jsonb would
			return errors.New("summary contains a NUL character")
		}
		var parent any
		if rec.ParentID != nil {
			parent = *rec.ParentID
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO conversation_summaries
			(id, chat, parent_id, depth, from_seq, to_seq, token_count, model, prompt_version, summary, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			rec.ID, pk, parent, rec.Depth, rec.FromSeq, rec.ToSeq, rec.TokenCount,
			rec.Summary.Model, rec.Summary.PromptVersion, string(js), micros(now)); err != nil {
			return fmt.Errorf("insert summary: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE chats SET summary_cursor = ?,
			summary_pending_since = CASE WHEN ? >= last_seq THEN NULL ELSE summary_pending_since END
			WHERE id = ?`, rec.CoveredToSeq, rec.CoveredToSeq, pk); err != nil {
			return fmt.Errorf("move cursor: %w", err)
		}
		return nil
	})
	if err != nil {
		return memory.SummaryRecord{}, fmt.Errorf("sqlite: append summary: %w", err)
	}
	return rec, nil
}

func (s *Store) listChats(ctx context.Context, query string, args ...any) ([]memory.Chat, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []memory.Chat{}
	for rows.Next() {
		_, c, err := scanChat(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ListSummaryWork lists chats with at least minPending (at least 1) turns
// the summary does not cover, those waiting longest first.
func (s *Store) ListSummaryWork(ctx context.Context, minPending int64, limit int) ([]memory.Chat, error) {
	chats, err := s.listChats(ctx, `SELECT `+chatCols+` FROM chats
		WHERE last_seq - summary_cursor >= ?
		ORDER BY COALESCE(summary_pending_since, updated_at), id LIMIT ?`, max(minPending, 1), sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: summary work: %w", err)
	}
	return chats, nil
}

// UnindexedChats lists chats holding unindexed messages, least recently
// updated first.
func (s *Store) UnindexedChats(ctx context.Context, limit int) ([]memory.Chat, error) {
	chats, err := s.listChats(ctx, `SELECT `+chatCols+` FROM chats
		WHERE id IN (SELECT DISTINCT chat FROM messages WHERE indexed = 0)
		ORDER BY updated_at, id LIMIT ?`, sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: unindexed chats: %w", err)
	}
	return chats, nil
}

// UnindexedMessages returns up to limit unindexed messages of the chat.
func (s *Store) UnindexedMessages(ctx context.Context, key memory.ChatKey, limit int) ([]memory.Message, error) {
	pk, err := chatPK(ctx, s.r, key)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+msgCols+` FROM messages
		WHERE chat = ? AND indexed = 0 ORDER BY seq LIMIT ?`, pk, sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: unindexed messages: %w", err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return msgs, nil
}

// MarkIndexed marks the chat's seqs as indexed (ErrNotFound: no such chat).
func (s *Store) MarkIndexed(ctx context.Context, key memory.ChatKey, seqs []int64) error {
	js, _ := json.Marshal(seqs)
	err := s.write(ctx, func(tx *sql.Tx) error {
		pk, err := chatPK(ctx, tx, key)
		if err != nil {
			return err
		}
		if len(seqs) == 0 {
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE messages SET indexed = 1
			WHERE chat = ? AND indexed = 0 AND seq IN (SELECT value FROM json_each(?))`, pk, string(js))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: mark indexed: %w", err)
	}
	return nil
}

// ResetIndexed marks every message of every tenant unindexed.
func (s *Store) ResetIndexed(ctx context.Context) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE messages SET indexed = 0 WHERE indexed = 1`)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: reset indexed: %w", err)
	}
	return nil
}

// BacklogSizes counts unindexed messages and unsummarised turns.
func (s *Store) BacklogSizes(ctx context.Context) (memory.Backlog, error) {
	var b memory.Backlog
	err := s.r.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM messages WHERE indexed = 0),
		(SELECT COALESCE(sum(last_seq - summary_cursor), 0) FROM chats)`).Scan(&b.Unindexed, &b.Unsummarised)
	if err != nil {
		return memory.Backlog{}, fmt.Errorf("sqlite: backlog: %w", err)
	}
	return b, nil
}

// TryLease takes or renews owner's lease of kind on the chat until now+ttl.
// ErrNotFound when the chat does not exist.
func (s *Store) TryLease(ctx context.Context, key memory.ChatKey, kind, owner string, ttl time.Duration) (bool, error) {
	if kind == "" || owner == "" {
		return false, errors.New("sqlite: lease: empty kind or owner")
	}
	var got bool
	err := s.write(ctx, func(tx *sql.Tx) error {
		pk, err := chatPK(ctx, tx, key)
		if err != nil {
			return err
		}
		now := s.now()
		r, err := tx.ExecContext(ctx, `INSERT INTO leases (chat, kind, owner, expires_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (chat, kind) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
			WHERE leases.owner = excluded.owner OR leases.expires_at <= ?`,
			pk, kind, owner, micros(now.Add(ttl)), micros(now))
		if err != nil {
			return err
		}
		n, err := r.RowsAffected()
		got = n > 0
		return err
	})
	if err != nil {
		return false, fmt.Errorf("sqlite: lease: %w", err)
	}
	return got, nil
}

// ReleaseLease drops owner's lease, if it holds it.
func (s *Store) ReleaseLease(ctx context.Context, key memory.ChatKey, kind, owner string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM leases WHERE kind = ? AND owner = ?
			AND chat = (SELECT id FROM chats WHERE tenant = ? AND chat_id = ?)`, kind, owner, key.Tenant, key.ChatID)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: release lease: %w", err)
	}
	return nil
}

// DeleteChat removes the chat; its messages, summaries and leases go with
// it (ON DELETE CASCADE).
func (s *Store) DeleteChat(ctx context.Context, key memory.ChatKey) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, `DELETE FROM chats WHERE tenant = ? AND chat_id = ?`, key.Tenant, key.ChatID)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return fmt.Errorf("chat %q: %w", key.ChatID, memory.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: delete chat: %w", err)
	}
	return nil
}

// ChatsOfUser lists the user's chat ids in the tenant, oldest first.
func (s *Store) ChatsOfUser(ctx context.Context, tenant, userID string) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT chat_id FROM chats WHERE tenant = ? AND user_id = ?
		ORDER BY created_at, id`, tenant, userID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: chats of user: %w", err)
	}
	defer rows.Close()
	ids := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("sqlite: chats of user: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: chats of user: %w", err)
	}
	return ids, nil
}
