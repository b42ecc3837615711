package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/chain"
	"github.com/jackc/pgx/v5"
)

const summaryCols = `id::text, parent_id::text, depth, from_seq, to_seq, token_count, summary, created_at`

func (s *Store) summaries(ctx context.Context, key memory.ChatKey, limit int) ([]memory.SummaryRecord, error) {
	pk, err := chatPK(ctx, s.pool, key)
	if err != nil {
		return nil, err
	}
	return s.records(ctx, `SELECT `+summaryCols+` FROM conversation_summaries
		WHERE chat = $1 ORDER BY depth DESC LIMIT $2`, pk, limitArg(limit))
}

// records runs a query of summaryCols.
func (s *Store) records(ctx context.Context, query string, args ...any) ([]memory.SummaryRecord, error) {
	rows, err := s.pool.Query(ctx, query, args...)
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

// CleanSummary returns the newest record that cannot hold a deleted turn
// (see memory.MessageDeleter): the newest below the first one reaching
// dirty_from (all of them when none does; the head when the chat is
// clean), read with the mark in one statement. A record's reach is the
// turns it added or its summary's coverage, whichever is further.
func (s *Store) CleanSummary(ctx context.Context, key memory.ChatKey) (*memory.SummaryRecord, error) {
	recs, err := s.records(ctx, `SELECT s.id::text, s.parent_id::text, s.depth, s.from_seq, s.to_seq, s.token_count, s.summary, s.created_at
		FROM chats c JOIN conversation_summaries s ON s.chat = c.id
		WHERE c.tenant = $1 AND c.chat_id = $2 AND (c.summary_dirty <= 0 OR s.depth < COALESCE((SELECT min(d.depth)
			FROM conversation_summaries d WHERE d.chat = c.id AND GREATEST(d.to_seq, d.covered_to_seq) >= c.dirty_from), 2147483647))
		ORDER BY s.depth DESC LIMIT 1`, key.Tenant, key.ChatID)
	if err != nil {
		return nil, wrap("clean summary", err)
	}
	if len(recs) == 0 {
		if _, err := chatPK(ctx, s.pool, key); err != nil {
			return nil, wrap("clean summary", err)
		}
		return nil, nil
	}
	return &recs[0], nil
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

// WriteSummary writes to the chat's chain as w says, in one transaction
// holding the chat's row lock; see memory.Summaries.
func (s *Store) WriteSummary(ctx context.Context, key memory.ChatKey, w memory.SummaryWrite) ([]memory.SummaryRecord, error) {
	now := s.now().Truncate(time.Microsecond)
	var recs []memory.SummaryRecord
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		pk, chat, err := loadChat(ctx, tx, key, true)
		if err != nil {
			return err
		}
		recs, err = chain.Write(ctx, chainTx{tx: tx, key: key, pk: pk}, chat, w, now)
		return err
	})
	if err != nil {
		return nil, wrap("write summary", err)
	}
	return recs, nil
}

// chainTx is PostgreSQL's raw operations on one chat's summary chain (see
// chain.Tx), inside a transaction holding the chat's row lock.
type chainTx struct {
	tx  pgx.Tx
	key memory.ChatKey
	pk  int64
}

func (c chainTx) Head(ctx context.Context) (string, int, bool, error) {
	var (
		id    string
		depth int
	)
	err := c.tx.QueryRow(ctx, `SELECT id::text, depth FROM conversation_summaries
		WHERE chat = $1 ORDER BY depth DESC LIMIT 1`, c.pk).Scan(&id, &depth)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", 0, false, nil
	}
	return id, depth, err == nil, err
}

func (c chainTx) Depth(ctx context.Context, id string) (int, int, bool, error) {
	var depth, top int
	err := c.tx.QueryRow(ctx, `SELECT depth, (SELECT max(depth) FROM conversation_summaries WHERE chat = $1)
		FROM conversation_summaries WHERE chat = $1 AND id::text = $2`, c.pk, id).Scan(&depth, &top)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, 0, false, nil
	}
	return depth, top, err == nil, err
}

func (c chainTx) Cut(ctx context.Context, depth int) error {
	_, err := c.tx.Exec(ctx, `DELETE FROM conversation_summaries WHERE chat = $1 AND depth > $2`, c.pk, depth)
	return err
}

func (c chainTx) Insert(ctx context.Context, rec memory.SummaryRecord, js []byte) error {
	if _, err := c.tx.Exec(ctx, `INSERT INTO conversation_summaries
		(id, chat, tenant, chat_id, parent_id, depth, from_seq, to_seq, covered_from_seq, covered_to_seq,
		 token_count, model, prompt_version, summary, created_at)
		VALUES ($1::uuid, $2, $3, $4, $5::uuid, $6, $7, $8, $9, $10, $11, $12, $13, $14::jsonb, $15)`,
		rec.ID, c.pk, c.key.Tenant, c.key.ChatID, rec.ParentID, rec.Depth, rec.FromSeq, rec.ToSeq,
		rec.CoveredFromSeq, rec.CoveredToSeq, rec.TokenCount, rec.Summary.Model, rec.Summary.PromptVersion,
		string(js), rec.CreatedAt); err != nil {
		return fmt.Errorf("insert summary: %w", err)
	}
	if _, err := c.tx.Exec(ctx, `UPDATE chats SET summary_cursor = $2,
		summary_pending_since = CASE WHEN $2 >= last_seq THEN NULL ELSE summary_pending_since END
		WHERE id = $1`, c.pk, rec.CoveredToSeq); err != nil {
		return fmt.Errorf("move cursor: %w", err)
	}
	return nil
}

func (c chainTx) Owner(ctx context.Context, id string) (bool, bool, error) {
	var owner int64
	err := c.tx.QueryRow(ctx, `SELECT chat FROM conversation_summaries WHERE id::text = $1`, id).Scan(&owner)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, false, nil
	}
	return err == nil, owner == c.pk, err
}

func (c chainTx) Tombstones(ctx context.Context, from, to int64) (map[int64]bool, error) {
	return tombstones(ctx, c.tx, c.pk, from, to)
}

func (c chainTx) MarkDirty(ctx context.Context, first int64) error {
	_, err := c.tx.Exec(ctx, markDirty, c.pk, first)
	return err
}

func (c chainTx) ClearDirty(ctx context.Context, mark int64) error {
	_, err := c.tx.Exec(ctx, `UPDATE chats SET summary_dirty = CASE WHEN summary_dirty = $1 AND summary_dirty > 0 THEN -summary_dirty ELSE summary_dirty END
		WHERE id = $2`, mark, c.pk)
	return err
}

// ListSummaryWork lists chats with at least minPending (at least 1) turns
// the summary does not cover, or a dirty summary, those waiting longest
// first.
func (s *Store) ListSummaryWork(ctx context.Context, minPending int64, limit int) ([]memory.Chat, error) {
	// summary_pending_since is set exactly when last_seq > summary_cursor.
	chats, err := s.listChats(ctx, `SELECT `+chatCols+` FROM chats
		WHERE (summary_pending_since IS NOT NULL AND last_seq - summary_cursor >= $1) OR summary_dirty > 0
		ORDER BY COALESCE(summary_pending_since, updated_at), id LIMIT $2`, max(minPending, 1), limitArg(limit))
	if err != nil {
		return nil, wrap("summary work", err)
	}
	return chats, nil
}
