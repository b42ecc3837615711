package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/memory/internal/sqlbatch"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// querier is what the pool and a transaction share.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

const chatCols = `id, tenant, chat_id, user_id, agent, last_seq, summary_cursor, created_at, updated_at`

func scanChat(row pgx.Row) (int64, memory.Chat, error) {
	var (
		pk int64
		c  memory.Chat
	)
	err := row.Scan(&pk, &c.Tenant, &c.ID, &c.UserID, &c.Agent, &c.LastSeq, &c.SummaryCursor, &c.CreatedAt, &c.UpdatedAt)
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return pk, c, err
}

func notFound(key memory.ChatKey) error {
	return fmt.Errorf("chat %q: %w", key.ChatID, memory.ErrNotFound)
}

// loadChat returns the chat's row id and the chat (locked when forUpdate),
// or ErrNotFound.
func loadChat(ctx context.Context, q querier, key memory.ChatKey, forUpdate bool) (int64, memory.Chat, error) {
	sql := `SELECT ` + chatCols + ` FROM chats WHERE tenant = $1 AND chat_id = $2`
	if forUpdate {
		sql += ` FOR UPDATE`
	}
	pk, c, err := scanChat(q.QueryRow(ctx, sql, key.Tenant, key.ChatID))
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, c, notFound(key)
	}
	return pk, c, err
}

func chatPK(ctx context.Context, q querier, key memory.ChatKey) (int64, error) {
	var pk int64
	err := q.QueryRow(ctx, `SELECT id FROM chats WHERE tenant = $1 AND chat_id = $2`, key.Tenant, key.ChatID).Scan(&pk)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, notFound(key)
	}
	return pk, err
}

// limitArg maps "no limit" (<= 0) to NULL (LIMIT NULL is no limit).
func limitArg(limit int) *int {
	if limit <= 0 {
		return nil
	}
	return &limit
}

// Append stores one batch in one transaction; see memory.Store.
//
// The transaction takes two round trips: the first pipelines BEGIN, the
// chat's creation (INSERT ... ON CONFLICT DO NOTHING), its row lock (SELECT
// ... FOR UPDATE: concurrent appends to the chat, from any process, queue
// here) and the lookup of ids already stored; the second inserts the new
// turns in one multi-row INSERT, moves last_seq and commits.
func (s *Store) Append(ctx context.Context, req memory.AppendRequest) (memory.AppendResult, error) {
	now := s.now().Truncate(time.Microsecond)
	b, err := sqlbatch.PrepareBatch(req, now)
	if err != nil {
		return memory.AppendResult{}, fmt.Errorf("postgres: %w", err)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return memory.AppendResult{}, wrap("append", err)
	}
	// Release destroys a connection left inside a transaction.
	defer conn.Release()
	for attempt := 0; ; attempt++ {
		res, err := s.appendTx(ctx, conn.Conn(), req, b, now)
		if err == nil {
			return res, nil
		}
		// Roll back on a fresh deadline: ctx may be what failed.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_, _ = conn.Exec(rctx, "ROLLBACK")
		cancel()
		// The chat was deleted between our INSERT and our lock: create it
		// again.
		if !errors.Is(err, errChatVanished) || attempt == 2 {
			return memory.AppendResult{}, wrap("append", err)
		}
	}
}

var errChatVanished = errors.New("chat deleted during append")

// appendTx runs one append transaction on conn. On error the caller rolls
// back.
func (s *Store) appendTx(ctx context.Context, conn *pgx.Conn, req memory.AppendRequest, b *sqlbatch.Batch, now time.Time) (memory.AppendResult, error) {
	var res memory.AppendResult
	agent := req.Agent
	if agent == "" {
		agent = memory.DefaultAgent
	}
	ids := make([]string, len(b.Msgs))
	for i, m := range b.Msgs {
		ids[i] = m.ID
	}

	first := &pgx.Batch{}
	first.Queue(`BEGIN`)
	first.Queue(`INSERT INTO chats (tenant, chat_id, user_id, agent, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (tenant, chat_id) DO NOTHING`,
		req.Chat.Tenant, req.Chat.ChatID, req.UserID, agent, now)
	first.Queue(`SELECT `+chatCols+` FROM chats WHERE tenant = $1 AND chat_id = $2 FOR UPDATE`,
		req.Chat.Tenant, req.Chat.ChatID)
	first.Queue(`SELECT m.id, m.seq FROM messages m JOIN chats c ON c.id = m.chat
		WHERE c.tenant = $1 AND c.chat_id = $2 AND m.id = ANY($3)`, req.Chat.Tenant, req.Chat.ChatID, ids)
	br := conn.SendBatch(ctx, first)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return res, fmt.Errorf("begin: %w", err)
	}
	tag, err := br.Exec()
	if err != nil {
		br.Close()
		return res, fmt.Errorf("create chat: %w", err)
	}
	res.Created = tag.RowsAffected() == 1
	pk, chat, err := scanChat(br.QueryRow())
	if err != nil {
		br.Close()
		if errors.Is(err, pgx.ErrNoRows) {
			return res, errChatVanished
		}
		return res, fmt.Errorf("lock chat: %w", err)
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return res, fmt.Errorf("find duplicates: %w", err)
	}
	existing := make(map[string]int64)
	var (
		id  string
		seq int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &seq}, func() error { existing[id] = seq; return nil }); err != nil {
		br.Close()
		return res, fmt.Errorf("find duplicates: %w", err)
	}
	if err := br.Close(); err != nil {
		return res, err
	}

	seqs := make([]int64, len(b.Msgs))
	n := len(b.Msgs) - len(existing)
	var (
		cSeq     = make([]int64, 0, n)
		cID      = make([]string, 0, n)
		cRole    = make([]string, 0, n)
		cName    = make([]string, 0, n)
		cContent = make([]string, 0, n)
		cAt      = make([]time.Time, 0, n)
		cMeta    = make([]*string, 0, n)
	)
	for j, m := range b.Msgs {
		if seq, ok := existing[m.ID]; ok {
			seqs[j] = seq
			continue
		}
		chat.LastSeq++
		seqs[j] = chat.LastSeq
		var meta *string
		if b.Meta[j] != nil {
			s := string(b.Meta[j])
			meta = &s
		}
		cSeq, cID, cRole = append(cSeq, chat.LastSeq), append(cID, m.ID), append(cRole, string(m.Role))
		cName, cContent = append(cName, m.Name), append(cContent, m.Content)
		cAt, cMeta = append(cAt, m.CreatedAt), append(cMeta, meta)
	}
	res.Appended = len(cSeq)

	second := &pgx.Batch{}
	if res.Appended > 0 {
		second.Queue(`INSERT INTO messages (chat, seq, id, role, name, content, created_at, metadata)
			SELECT $1, u.seq, u.id, u.role, u.name, u.content, u.created_at, u.metadata::jsonb
			FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::text[])
				AS u (seq, id, role, name, content, created_at, metadata)`,
			pk, cSeq, cID, cRole, cName, cContent, cAt, cMeta)
		second.Queue(`UPDATE chats SET last_seq = $2, updated_at = $3,
			summary_pending_since = COALESCE(summary_pending_since, $3) WHERE id = $1`, pk, chat.LastSeq, now)
		chat.UpdatedAt = now
	}
	second.Queue(`COMMIT`)
	br = conn.SendBatch(ctx, second)
	var commit pgconn.CommandTag
	for i := 0; i < second.Len() && err == nil; i++ {
		commit, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, fmt.Errorf("insert messages: %w", err)
	}
	if commit.String() != "COMMIT" {
		return res, fmt.Errorf("commit: server answered %q", commit.String())
	}
	res.Chat = chat
	res.LastSeq = chat.LastSeq
	res.Messages = b.Refs(seqs)
	res.Duplicates = len(req.Messages) - res.Appended
	return res, nil
}

// Chat returns the chat or ErrNotFound.
func (s *Store) Chat(ctx context.Context, key memory.ChatKey) (memory.Chat, error) {
	_, c, err := loadChat(ctx, s.pool, key, false)
	if err != nil {
		return memory.Chat{}, wrap("chat", err)
	}
	return c, nil
}

const msgCols = `seq, id, role, name, content, created_at, metadata`

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
	_, err = pgx.ForEachRow(rows, []any{&m.Seq, &m.ID, &role, &m.Name, &m.Content, &m.CreatedAt, &meta}, func() error {
		md, err := sqlbatch.DecodeMeta(meta)
		if err != nil {
			return err
		}
		out = append(out, memory.Message{Seq: m.Seq, ID: m.ID, Role: memory.Role(role), Name: m.Name,
			Content: m.Content, CreatedAt: m.CreatedAt.UTC(), Metadata: md})
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

const summaryCols = `id::text, parent_id::text, depth, from_seq, to_seq, token_count, summary, created_at`

func (s *Store) summaries(ctx context.Context, key memory.ChatKey, limit int) ([]memory.SummaryRecord, error) {
	pk, err := chatPK(ctx, s.pool, key)
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+summaryCols+` FROM conversation_summaries
		WHERE chat = $1 ORDER BY depth DESC LIMIT $2`, pk, limitArg(limit))
	if err != nil {
		return nil, err
	}
	out := []memory.SummaryRecord{}
	var (
		r      memory.SummaryRecord
		parent *string
		js     []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&r.ID, &parent, &r.Depth, &r.FromSeq, &r.ToSeq, &r.TokenCount, &js, &r.CreatedAt}, func() error {
		rec := memory.SummaryRecord{ID: r.ID, Depth: r.Depth, FromSeq: r.FromSeq, ToSeq: r.ToSeq,
			TokenCount: r.TokenCount, CreatedAt: r.CreatedAt.UTC()}
		if parent != nil {
			p := *parent
			rec.ParentID = &p
		}
		if err := json.Unmarshal(js, &rec.Summary); err != nil {
			return fmt.Errorf("summary %s: %w", rec.ID, err)
		}
		rec.Summary.UpdatedAt = rec.Summary.UpdatedAt.UTC()
		out = append(out, rec)
		return nil
	})
	return out, err
}

// SummaryHead returns the chat's newest summary record, or nil.
func (s *Store) SummaryHead(ctx context.Context, key memory.ChatKey) (*memory.SummaryRecord, error) {
	recs, err := s.summaries(ctx, key, 1)
	if err != nil {
		return nil, wrap("summary head", err)
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
		return nil, wrap("summary chain", err)
	}
	return recs, nil
}

// AppendSummary adds rec as the chain's new head if the chat's cursor is
// still expectCursor (checked under the chat's row lock).
// rec.CoveredToSeq must lie in expectCursor..last_seq.
func (s *Store) AppendSummary(ctx context.Context, key memory.ChatKey, expectCursor int64, rec memory.SummaryRecord) (memory.SummaryRecord, error) {
	now := s.now().Truncate(time.Microsecond)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		pk, chat, err := loadChat(ctx, tx, key, true)
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
		err = tx.QueryRow(ctx, `SELECT id::text, depth FROM conversation_summaries
			WHERE chat = $1 ORDER BY depth DESC LIMIT 1`, pk).Scan(&headID, &headDepth)
		switch {
		case err == nil:
			rec.ParentID, rec.Depth = &headID, headDepth+1
		case !errors.Is(err, pgx.ErrNoRows):
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
		if sqlbatch.HasEscapedNUL(js) {
			return errors.New("summary contains a NUL character")
		}
		if _, err := tx.Exec(ctx, `INSERT INTO conversation_summaries
			(id, chat, tenant, chat_id, parent_id, depth, from_seq, to_seq, covered_from_seq, covered_to_seq,
			 token_count, model, prompt_version, summary, created_at)
			VALUES ($1::uuid, $2, $3, $4, $5::uuid, $6, $7, $8, $9, $10, $11, $12, $13, $14::jsonb, $15)`,
			rec.ID, pk, key.Tenant, key.ChatID, rec.ParentID, rec.Depth, rec.FromSeq, rec.ToSeq,
			rec.CoveredFromSeq, rec.CoveredToSeq, rec.TokenCount, rec.Summary.Model, rec.Summary.PromptVersion,
			string(js), now); err != nil {
			return fmt.Errorf("insert summary: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE chats SET summary_cursor = $2,
			summary_pending_since = CASE WHEN $2 >= last_seq THEN NULL ELSE summary_pending_since END
			WHERE id = $1`, pk, rec.CoveredToSeq); err != nil {
			return fmt.Errorf("move cursor: %w", err)
		}
		return nil
	})
	if err != nil {
		return memory.SummaryRecord{}, wrap("append summary", err)
	}
	return rec, nil
}

func (s *Store) listChats(ctx context.Context, sql string, args ...any) ([]memory.Chat, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
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
	// summary_pending_since is set exactly when last_seq > summary_cursor.
	chats, err := s.listChats(ctx, `SELECT `+chatCols+` FROM chats
		WHERE summary_pending_since IS NOT NULL AND last_seq - summary_cursor >= $1
		ORDER BY summary_pending_since, id LIMIT $2`, max(minPending, 1), limitArg(limit))
	if err != nil {
		return nil, wrap("summary work", err)
	}
	return chats, nil
}

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

// MarkIndexed marks the chat's seqs as indexed (ErrNotFound: no such chat).
func (s *Store) MarkIndexed(ctx context.Context, key memory.ChatKey, seqs []int64) error {
	pk, err := chatPK(ctx, s.pool, key)
	if err != nil {
		return wrap("mark indexed", err)
	}
	if len(seqs) == 0 {
		return nil
	}
	if _, err := s.pool.Exec(ctx, `UPDATE messages SET indexed = true
		WHERE chat = $1 AND seq = ANY($2) AND NOT indexed`, pk, seqs); err != nil {
		return wrap("mark indexed", err)
	}
	return nil
}

// ResetIndexed marks every message of every tenant unindexed.
func (s *Store) ResetIndexed(ctx context.Context) error {
	if _, err := s.pool.Exec(ctx, `UPDATE messages SET indexed = false WHERE indexed`); err != nil {
		return wrap("reset indexed", err)
	}
	return nil
}

// BacklogSizes counts unindexed messages and unsummarised turns.
func (s *Store) BacklogSizes(ctx context.Context) (memory.Backlog, error) {
	var b memory.Backlog
	err := s.pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM messages WHERE NOT indexed),
		(SELECT COALESCE(sum(last_seq - summary_cursor), 0)::bigint FROM chats)`).Scan(&b.Unindexed, &b.Unsummarised)
	if err != nil {
		return memory.Backlog{}, wrap("backlog", err)
	}
	return b, nil
}

// TryLease takes or renews owner's lease of kind on the chat until
// now+ttl, by the server's clock (one clock for every replica), in one
// atomic upsert. ErrNotFound when the chat does not exist.
func (s *Store) TryLease(ctx context.Context, key memory.ChatKey, kind, owner string, ttl time.Duration) (bool, error) {
	if kind == "" || owner == "" {
		return false, errors.New("postgres: lease: empty kind or owner")
	}
	var got bool
	err := s.pool.QueryRow(ctx, `INSERT INTO leases (chat, kind, owner, expires_at)
		SELECT id, $3, $4, clock_timestamp() + $5::bigint * interval '1 microsecond'
		FROM chats WHERE tenant = $1 AND chat_id = $2
		ON CONFLICT (chat, kind) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
		WHERE leases.owner = EXCLUDED.owner OR leases.expires_at <= clock_timestamp()
		RETURNING true`, key.Tenant, key.ChatID, kind, owner, ttl.Microseconds()).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		// Held by another owner, or no such chat.
		if _, err := chatPK(ctx, s.pool, key); err != nil {
			return false, wrap("lease", err)
		}
		return false, nil
	}
	if err != nil {
		return false, wrap("lease", err)
	}
	return got, nil
}

// ReleaseLease drops owner's lease, if it holds it.
func (s *Store) ReleaseLease(ctx context.Context, key memory.ChatKey, kind, owner string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM leases WHERE kind = $3 AND owner = $4
		AND chat = (SELECT id FROM chats WHERE tenant = $1 AND chat_id = $2)`,
		key.Tenant, key.ChatID, kind, owner); err != nil {
		return wrap("release lease", err)
	}
	return nil
}

// DeleteChat removes the chat; its messages, summaries and leases go with
// it (ON DELETE CASCADE), in one statement.
func (s *Store) DeleteChat(ctx context.Context, key memory.ChatKey) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM chats WHERE tenant = $1 AND chat_id = $2`, key.Tenant, key.ChatID)
	if err != nil {
		return wrap("delete chat", err)
	}
	if tag.RowsAffected() == 0 {
		return wrap("delete chat", notFound(key))
	}
	return nil
}

// ChatsOfUser lists the user's chat ids in the tenant, oldest first.
func (s *Store) ChatsOfUser(ctx context.Context, tenant, userID string) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT chat_id FROM chats WHERE tenant = $1 AND user_id = $2
		ORDER BY created_at, id`, tenant, userID)
	if err != nil {
		return nil, wrap("chats of user", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, wrap("chats of user", err)
	}
	if ids == nil {
		ids = []string{}
	}
	return ids, nil
}
