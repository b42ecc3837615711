package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/sqlbatch"
	"github.com/google/uuid"
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
// (see memory.MessageForgetter): the newest below the first one reaching
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
		if err := writeRecord(ctx, tx, key, pk, &rec, now); err != nil {
			return err
		}
		// A turn deleted after the summariser read it may be in rec.
		gone, err := tombstones(ctx, tx, pk, expectCursor+1, rec.CoveredToSeq)
		if err != nil || len(gone) == 0 {
			return err
		}
		_, err = tx.Exec(ctx, markDirty, pk, sqlbatch.FirstSeq(gone))
		return err
	})
	if err != nil {
		return memory.SummaryRecord{}, wrap("append summary", err)
	}
	return rec, nil
}

// writeRecord inserts rec (ParentID and Depth set by the caller) as the
// chat's head and moves the cursor to its CoveredToSeq; it sets ID and
// CreatedAt.
func writeRecord(ctx context.Context, tx pgx.Tx, key memory.ChatKey, pk int64, rec *memory.SummaryRecord, now time.Time) error {
	rec.ID = uuid.NewString()
	rec.CreatedAt = now
	if rec.Summary.UpdatedAt.IsZero() {
		rec.Summary.UpdatedAt = now
	}
	rec.Summary.UpdatedAt = rec.Summary.UpdatedAt.UTC()
	return insertRecord(ctx, tx, key, pk, *rec)
}

// insertRecord inserts rec as it is and moves the cursor to its
// CoveredToSeq.
func insertRecord(ctx context.Context, tx pgx.Tx, key memory.ChatKey, pk int64, rec memory.SummaryRecord) error {
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
		string(js), rec.CreatedAt); err != nil {
		return fmt.Errorf("insert summary: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE chats SET summary_cursor = $2,
		summary_pending_since = CASE WHEN $2 >= last_seq THEN NULL ELSE summary_pending_since END
		WHERE id = $1`, pk, rec.CoveredToSeq); err != nil {
		return fmt.Errorf("move cursor: %w", err)
	}
	return nil
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
