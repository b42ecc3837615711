package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/sqlbatch"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// querier is what the pool and a transaction share.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

const chatCols = `id, tenant, chat_id, user_id, agent, last_seq, summary_cursor, created_at, updated_at, summary_dirty`

func scanChat(row pgx.Row) (int64, memory.Chat, error) {
	var (
		pk int64
		c  memory.Chat
	)
	err := row.Scan(&pk, &c.Tenant, &c.ID, &c.UserID, &c.Agent, &c.LastSeq, &c.SummaryCursor, &c.CreatedAt, &c.UpdatedAt, &c.DirtyMark)
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	c.SummaryDirty = c.DirtyMark > 0
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

// appendTx runs one append transaction on conn, in two round trips: the
// chat locked (created if new) with the ids it already holds, then the new
// rows and the commit. On error the caller rolls back.
func (s *Store) appendTx(ctx context.Context, conn *pgx.Conn, req memory.AppendRequest, b *sqlbatch.Batch, now time.Time) (memory.AppendResult, error) {
	var res memory.AppendResult
	locked, err := lockForAppend(ctx, conn, req, b, now)
	if err != nil {
		return res, err
	}
	chat := locked.chat
	seqs := make([]int64, len(b.Msgs))
	var cols appendCols
	for j, m := range b.Msgs {
		if seq, ok := locked.existing[m.ID]; ok {
			seqs[j] = seq
			continue
		}
		chat.LastSeq++
		seqs[j] = chat.LastSeq
		cols.add(chat.LastSeq, m, b.Meta[j])
	}
	if len(cols.seq) > 0 {
		chat.UpdatedAt = now
	}
	if err := writeAppend(ctx, conn, locked.pk, chat.LastSeq, &cols, now); err != nil {
		return res, err
	}
	res.Created, res.Appended = locked.created, len(cols.seq)
	res.Chat = chat
	res.LastSeq = chat.LastSeq
	res.Messages = b.Refs(seqs)
	res.Duplicates = len(req.Messages) - res.Appended
	return res, nil
}

// lockedChat is what the first round trip of an append found.
type lockedChat struct {
	pk       int64
	chat     memory.Chat
	created  bool             // by this append
	existing map[string]int64 // the batch's ids the chat already holds, by seq
}

// lockForAppend begins the transaction, creates the chat if it is new,
// locks its row and reads which of the batch's ids it already holds.
func lockForAppend(ctx context.Context, conn *pgx.Conn, req memory.AppendRequest, b *sqlbatch.Batch, now time.Time) (lockedChat, error) {
	var lc lockedChat
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
	defer br.Close() // closing twice is harmless; the error that matters is the one below
	if _, err := br.Exec(); err != nil {
		return lc, fmt.Errorf("begin: %w", err)
	}
	tag, err := br.Exec()
	if err != nil {
		return lc, fmt.Errorf("create chat: %w", err)
	}
	lc.created = tag.RowsAffected() == 1
	if lc.pk, lc.chat, err = scanChat(br.QueryRow()); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return lc, errChatVanished
		}
		return lc, fmt.Errorf("lock chat: %w", err)
	}
	if !lc.created {
		if err := memory.CheckUser(lc.chat, req.UserID); err != nil {
			return lc, err
		}
	}
	rows, err := br.Query()
	if err != nil {
		return lc, fmt.Errorf("find duplicates: %w", err)
	}
	lc.existing = make(map[string]int64)
	var (
		id  string
		seq int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &seq}, func() error { lc.existing[id] = seq; return nil }); err != nil {
		return lc, fmt.Errorf("find duplicates: %w", err)
	}
	return lc, br.Close()
}

// appendCols are an append's new rows, column by column (unnest's input).
type appendCols struct {
	seq                     []int64
	id, role, name, content []string
	at                      []time.Time
	meta                    []*string
}

func (c *appendCols) add(seq int64, m memory.Message, meta []byte) {
	var ms *string
	if meta != nil {
		s := string(meta)
		ms = &s
	}
	c.seq, c.id, c.role = append(c.seq, seq), append(c.id, m.ID), append(c.role, string(m.Role))
	c.name, c.content = append(c.name, m.Name), append(c.content, m.Content)
	c.at, c.meta = append(c.at, m.CreatedAt), append(c.meta, ms)
}

// writeAppend inserts cols into chat pk, moves its last seq, and commits.
func writeAppend(ctx context.Context, conn *pgx.Conn, pk, lastSeq int64, cols *appendCols, now time.Time) error {
	second := &pgx.Batch{}
	if len(cols.seq) > 0 {
		second.Queue(`INSERT INTO messages (chat, seq, id, role, name, content, created_at, metadata)
			SELECT $1, u.seq, u.id, u.role, u.name, u.content, u.created_at, u.metadata::jsonb
			FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::text[])
				AS u (seq, id, role, name, content, created_at, metadata)`,
			pk, cols.seq, cols.id, cols.role, cols.name, cols.content, cols.at, cols.meta)
		second.Queue(`UPDATE chats SET last_seq = $2, updated_at = $3,
			summary_pending_since = COALESCE(summary_pending_since, $3) WHERE id = $1`, pk, lastSeq, now)
	}
	second.Queue(`COMMIT`)
	br := conn.SendBatch(ctx, second)
	var (
		commit pgconn.CommandTag
		err    error
	)
	for i := 0; i < second.Len() && err == nil; i++ {
		commit, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("insert messages: %w", err)
	}
	if commit.String() != "COMMIT" {
		return fmt.Errorf("commit: server answered %q", commit.String())
	}
	return nil
}

// Chat returns the chat or ErrNotFound,
// with its head's id and its user's profile version.
func (s *Store) Chat(ctx context.Context, key memory.ChatKey) (memory.Chat, error) {
	var (
		pk      int64
		c       memory.Chat
		headID  *string
		profile *int64
	)
	err := s.pool.QueryRow(ctx, `SELECT `+chatCols+`, (SELECT s.id::text FROM conversation_summaries s
		WHERE s.chat = c.id ORDER BY s.depth DESC LIMIT 1),
		(SELECT p.version FROM profiles p WHERE p.tenant = c.tenant AND p.user_id = c.user_id)
		FROM chats c WHERE c.tenant = $1 AND c.chat_id = $2`, key.Tenant, key.ChatID).Scan(
		&pk, &c.Tenant, &c.ID, &c.UserID, &c.Agent, &c.LastSeq, &c.SummaryCursor, &c.CreatedAt, &c.UpdatedAt, &c.DirtyMark,
		&headID, &profile)
	if errors.Is(err, pgx.ErrNoRows) {
		return memory.Chat{}, wrap("chat", notFound(key))
	}
	if err != nil {
		return memory.Chat{}, wrap("chat", err)
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	c.SummaryDirty = c.DirtyMark > 0
	if headID != nil {
		c.HeadID = *headID
	}
	if profile != nil {
		c.ProfileVersion = *profile
	}
	return c, nil
}

func (s *Store) listChats(ctx context.Context, sql string, args ...any) ([]memory.Chat, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (memory.Chat, error) {
		_, c, err := scanChat(row)
		return c, err
	})
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
