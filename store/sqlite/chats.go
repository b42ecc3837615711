package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/sqlbatch"
)

type scanner interface{ Scan(dest ...any) error }

func scanChat(sc scanner) (int64, memory.Chat, error) {
	var (
		pk       int64
		c        memory.Chat
		cat, uat int64
	)
	err := sc.Scan(&pk, &c.Tenant, &c.ID, &c.UserID, &c.Agent, &c.LastSeq, &c.SummaryCursor, &cat, &uat, &c.DirtyMark)
	c.CreatedAt, c.UpdatedAt = fromMicros(cat), fromMicros(uat)
	c.SummaryDirty = c.DirtyMark > 0
	return pk, c, err
}

func notFound(key memory.ChatKey) error {
	return fmt.Errorf("chat %q: %w", key.ChatID, memory.ErrNotFound)
}

// loadChat returns the chat's row id and the chat, or ErrNotFound; st is
// a chat statement (readStmts.chat or writeStmts.chat).
func loadChat(ctx context.Context, st *sql.Stmt, key memory.ChatKey) (int64, memory.Chat, error) {
	pk, c, err := scanChat(st.QueryRowContext(ctx, key.Tenant, key.ChatID))
	if errors.Is(err, sql.ErrNoRows) {
		return 0, c, notFound(key)
	}
	if err != nil {
		return 0, c, fmt.Errorf("load chat: %w", err)
	}
	return pk, c, nil
}

// chatPK returns the chat's row id, or ErrNotFound; st is a chatPK
// statement.
func chatPK(ctx context.Context, st *sql.Stmt, key memory.ChatKey) (int64, error) {
	var pk int64
	err := st.QueryRowContext(ctx, key.Tenant, key.ChatID).Scan(&pk)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, notFound(key)
	}
	if err != nil {
		return 0, fmt.Errorf("load chat: %w", err)
	}
	return pk, nil
}

// Append stores one batch in one transaction; see memory.Store.
func (s *Store) Append(ctx context.Context, req memory.AppendRequest) (memory.AppendResult, error) {
	now := s.now().Truncate(time.Microsecond)
	b, err := sqlbatch.PrepareBatch(req, now)
	if err != nil {
		return memory.AppendResult{}, err
	}
	var res memory.AppendResult
	err = s.writeGrouped(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res = memory.AppendResult{}
		pk, chat, created, err := s.chatForAppend(ctx, tx, req, now)
		if err != nil {
			return err
		}
		res.Created = created

		var existing map[string]int64
		if !res.Created && !b.Fresh && len(b.Msgs) > 0 {
			if existing, err = existingSeqs(ctx, tx.StmtContext(ctx, s.ws.existing), pk, b.Msgs); err != nil {
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
				ins = tx.StmtContext(ctx, s.ws.insertMsg)
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
			if _, err := tx.StmtContext(ctx, s.ws.updateChat).ExecContext(ctx,
				chat.LastSeq, micros(now), micros(now), pk); err != nil {
				return fmt.Errorf("update chat: %w", err)
			}
			s.rows.moved(pk, chat.LastSeq, fromMicros(micros(now)))
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

// chatForAppend reads the chat an append goes to in its transaction, or
// creates it (created true); another user than the chat's is refused.
func (s *Store) chatForAppend(ctx context.Context, tx *sql.Tx, req memory.AppendRequest, now time.Time) (int64, memory.Chat, bool, error) {
	pk, chat, err := loadChat(ctx, tx.StmtContext(ctx, s.ws.chat), req.Chat)
	switch {
	case errors.Is(err, memory.ErrNotFound):
		chat = memory.Chat{Tenant: req.Chat.Tenant, ID: req.Chat.ChatID, UserID: req.UserID,
			Agent: req.Agent, CreatedAt: now, UpdatedAt: now}
		if chat.Agent == "" {
			chat.Agent = memory.DefaultAgent
		}
		r, err := tx.StmtContext(ctx, s.ws.insertChat).ExecContext(ctx,
			chat.Tenant, chat.ID, chat.UserID, chat.Agent, micros(now), micros(now))
		if err != nil {
			return 0, chat, false, fmt.Errorf("create chat: %w", err)
		}
		if pk, err = r.LastInsertId(); err != nil {
			return 0, chat, false, fmt.Errorf("create chat: %w", err)
		}
		return pk, chat, true, nil
	case err != nil:
		return 0, chat, false, err
	}
	return pk, chat, false, memory.CheckUser(chat, req.UserID)
}

// existingSeqs returns the seqs of those of msgs' ids the chat already
// holds; st is writeStmts.existing.
func existingSeqs(ctx context.Context, st *sql.Stmt, pk int64, msgs []memory.Message) (map[string]int64, error) {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	js, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(ctx, pk, string(js))
	if err != nil {
		return nil, fmt.Errorf("find duplicates: %w", err)
	}
	defer rows.Close()
	var out map[string]int64
	for rows.Next() {
		var id string
		var seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			return nil, fmt.Errorf("find duplicates: %w", err)
		}
		if out == nil {
			out = make(map[string]int64)
		}
		out[id] = seq
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find duplicates: %w", err)
	}
	return out, nil
}

// Chat returns the chat, with its head's id and its user's profile
// version, or ErrNotFound.
func (s *Store) Chat(ctx context.Context, key memory.ChatKey) (memory.Chat, error) {
	c, epoch, ok := s.rows.get(key)
	if ok {
		return c, nil
	}
	pk, c, err := s.readChat(ctx, key)
	if err == nil {
		s.rows.put(key, pk, c, epoch)
	}
	return c, err
}

// readChat reads key's row, with its head's id and its user's profile
// version.
func (s *Store) readChat(ctx context.Context, key memory.ChatKey) (int64, memory.Chat, error) {
	var (
		pk      int64
		c       memory.Chat
		cat     int64
		uat     int64
		headID  sql.NullString
		profile sql.NullInt64
	)
	err := s.rs.chat.QueryRowContext(ctx, key.Tenant, key.ChatID).Scan(&pk, &c.Tenant, &c.ID, &c.UserID, &c.Agent,
		&c.LastSeq, &c.SummaryCursor, &cat, &uat, &c.DirtyMark, &headID, &profile)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, memory.Chat{}, fmt.Errorf("sqlite: %w", notFound(key))
	}
	if err != nil {
		return 0, memory.Chat{}, fmt.Errorf("sqlite: load chat: %w", err)
	}
	c.CreatedAt, c.UpdatedAt = fromMicros(cat), fromMicros(uat)
	c.SummaryDirty = c.DirtyMark > 0
	c.HeadID, c.ProfileVersion = headID.String, profile.Int64
	return pk, c, nil
}

func (s *Store) listChats(ctx context.Context, st *sql.Stmt, args ...any) ([]memory.Chat, error) {
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	return scanChats(rows)
}

// queryChats lists the chats a query over the read pool selects (chatCols).
func (s *Store) queryChats(ctx context.Context, query string, args ...any) ([]memory.Chat, error) {
	rows, err := s.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return scanChats(rows)
}

func scanChats(rows *sql.Rows) ([]memory.Chat, error) {
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

// DeleteChat removes the chat; its messages, summaries and leases go with
// it (ON DELETE CASCADE).
func (s *Store) DeleteChat(ctx context.Context, key memory.ChatKey) error {
	defer s.cp.scrubSoon() // what it erases must leave the WAL too
	err := s.write(ctx, func(tx *sql.Tx) error {
		r, err := tx.StmtContext(ctx, s.ws.deleteChat).ExecContext(ctx, key.Tenant, key.ChatID)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return notFound(key)
		}
		return nil
	})
	s.heads.drop(key)
	if err != nil {
		return fmt.Errorf("sqlite: delete chat: %w", err)
	}
	return nil
}
