package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/memory/internal/sqlbatch"
	"github.com/google/uuid"
)

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
	err = s.write(ctx, func(tx *sql.Tx) error {
		res = memory.AppendResult{}
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

// Chat returns the chat or ErrNotFound.
func (s *Store) Chat(ctx context.Context, key memory.ChatKey) (memory.Chat, error) {
	_, c, err := loadChat(ctx, s.rs.chat, key)
	if err != nil {
		return memory.Chat{}, fmt.Errorf("sqlite: %w", err)
	}
	return c, nil
}

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
	dest := []any{&m.Seq, &m.ID, &role, &m.Name, &m.Content, &at, &meta}
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

// scanSummary reads one row of summaryCols.
func scanSummary(sc scanner) (memory.SummaryRecord, error) {
	var (
		r      memory.SummaryRecord
		parent sql.NullString
		js     []byte // not RawBytes: Row.Scan refuses it
		at     int64
	)
	if err := sc.Scan(&r.ID, &parent, &r.Depth, &r.FromSeq, &r.ToSeq, &r.TokenCount, &js, &at); err != nil {
		return r, err
	}
	var err error
	if r.Summary, err = decodeSummary(js); err != nil {
		return r, fmt.Errorf("summary %s: %w", r.ID, err)
	}
	if parent.Valid {
		p := parent.String
		r.ParentID = &p
	}
	r.CreatedAt = fromMicros(at)
	return r, nil
}

func decodeSummary(js []byte) (memory.Summary, error) {
	var sum memory.Summary
	if err := json.Unmarshal(js, &sum); err != nil {
		return memory.Summary{}, err
	}
	sum.UpdatedAt = sum.UpdatedAt.UTC()
	return sum, nil
}

// SummaryHead returns the chat's newest summary record, or nil.
//
// One indexed lookup gives the chat's row id and its head record's id; the
// decoded record comes from the head cache when it holds that very record,
// and is read and decoded only otherwise.
func (s *Store) SummaryHead(ctx context.Context, key memory.ChatKey) (*memory.SummaryRecord, error) {
	var (
		pk     int64
		headID sql.NullString
	)
	err := s.rs.head.QueryRowContext(ctx, key.Tenant, key.ChatID).Scan(&pk, &headID)
	if errors.Is(err, sql.ErrNoRows) {
		s.heads.drop(key)
		return nil, fmt.Errorf("sqlite: %w", notFound(key))
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: summary head: %w", err)
	}
	if !headID.Valid {
		return nil, nil
	}
	if rec, ok := s.heads.get(key, pk, headID.String); ok {
		return rec, nil
	}
	// Records are immutable, so reading this one outside the first
	// statement's snapshot is consistent; it is gone only if the chat was
	// deleted meanwhile.
	rec, err := scanSummary(s.rs.headByID.QueryRowContext(ctx, headID.String, pk))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: %w", notFound(key))
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: summary head: %w", err)
	}
	s.heads.put(key, pk, &rec)
	return &rec, nil
}

// SummaryChain returns the chat's summary records, head first.
func (s *Store) SummaryChain(ctx context.Context, key memory.ChatKey) ([]memory.SummaryRecord, error) {
	pk, err := chatPK(ctx, s.rs.chatPK, key)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	rows, err := s.rs.chain.QueryContext(ctx, pk)
	if err != nil {
		return nil, fmt.Errorf("sqlite: summaries: %w", err)
	}
	defer rows.Close()
	out := []memory.SummaryRecord{}
	for rows.Next() {
		r, err := scanSummary(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: summaries: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: summaries: %w", err)
	}
	return out, nil
}

// AppendSummary adds rec as the chain's new head if the chat's cursor is
// still expectCursor. rec.CoveredToSeq must lie in expectCursor..last_seq.
func (s *Store) AppendSummary(ctx context.Context, key memory.ChatKey, expectCursor int64, rec memory.SummaryRecord) (memory.SummaryRecord, error) {
	now := s.now().Truncate(time.Microsecond)
	var (
		pk int64
		js []byte
	)
	err := s.write(ctx, func(tx *sql.Tx) error {
		var (
			chat memory.Chat
			err  error
		)
		pk, chat, err = loadChat(ctx, tx.StmtContext(ctx, s.ws.chat), key)
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
		err = tx.StmtContext(ctx, s.ws.headID).QueryRowContext(ctx, pk).Scan(&headID, &headDepth)
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
		if js, err = json.Marshal(rec.Summary); err != nil {
			return fmt.Errorf("encode summary: %w", err)
		}
		if sqlbatch.HasEscapedNUL(js) { // as PostgreSQL jsonb would
			return errors.New("summary contains a NUL character")
		}
		var parent any
		if rec.ParentID != nil {
			parent = *rec.ParentID
		}
		if _, err := tx.StmtContext(ctx, s.ws.insertSummary).ExecContext(ctx,
			rec.ID, pk, parent, rec.Depth, rec.FromSeq, rec.ToSeq, rec.TokenCount,
			rec.Summary.Model, rec.Summary.PromptVersion, string(js), micros(now)); err != nil {
			return fmt.Errorf("insert summary: %w", err)
		}
		if _, err := tx.StmtContext(ctx, s.ws.moveCursor).ExecContext(ctx,
			rec.CoveredToSeq, rec.CoveredToSeq, pk); err != nil {
			return fmt.Errorf("move cursor: %w", err)
		}
		return nil
	})
	if err != nil {
		return memory.SummaryRecord{}, fmt.Errorf("sqlite: append summary: %w", err)
	}
	// Cache the new head as SummaryHead would read it back (decoded from
	// the stored JSON, which may differ from rec, e.g. in invalid UTF-8).
	stored := rec
	if stored.Summary, err = decodeSummary(js); err == nil {
		s.heads.put(key, pk, &stored)
	} else {
		s.heads.drop(key)
	}
	return rec, nil
}

func (s *Store) listChats(ctx context.Context, st *sql.Stmt, args ...any) ([]memory.Chat, error) {
	rows, err := st.QueryContext(ctx, args...)
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
	chats, err := s.listChats(ctx, s.rs.summaryWork, max(minPending, 1), sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: summary work: %w", err)
	}
	return chats, nil
}

// UnindexedChats lists chats holding unindexed messages, least recently
// updated first.
func (s *Store) UnindexedChats(ctx context.Context, limit int) ([]memory.Chat, error) {
	chats, err := s.listChats(ctx, s.rs.unindexedChats, sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: unindexed chats: %w", err)
	}
	return chats, nil
}

// UnindexedMessages returns up to limit unindexed messages of the chat.
func (s *Store) UnindexedMessages(ctx context.Context, key memory.ChatKey, limit int) ([]memory.Message, error) {
	msgs, err := s.chatMessages(ctx, s.rs.unindexedMsgs, key, capHint(limit), sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: unindexed messages: %w", err)
	}
	return msgs, nil
}

// MarkIndexed marks the chat's seqs as indexed (ErrNotFound: no such chat).
func (s *Store) MarkIndexed(ctx context.Context, key memory.ChatKey, seqs []int64) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		pk, err := chatPK(ctx, tx.StmtContext(ctx, s.ws.chatPK), key)
		if err != nil {
			return err
		}
		if len(seqs) == 0 {
			return nil
		}
		_, err = tx.StmtContext(ctx, s.ws.markIndexed).ExecContext(ctx, pk, seqsJSON(seqs))
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
		pk, err := chatPK(ctx, tx.StmtContext(ctx, s.ws.chatPK), key)
		if err != nil {
			return err
		}
		now := s.now()
		r, err := tx.StmtContext(ctx, s.ws.tryLease).ExecContext(ctx,
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
		_, err := tx.StmtContext(ctx, s.ws.releaseLease).ExecContext(ctx, kind, owner, key.Tenant, key.ChatID)
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
