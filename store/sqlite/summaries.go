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
	"github.com/google/uuid"
)

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
// decoded record comes from the head cache when it holds that very record.
// Otherwise the newest record is read afresh, in one statement: reading
// the record by the id just read would be a second snapshot, and a rebuild
// after a forgotten message replaces the whole chain (ReplaceSummary,
// atomically) in between, so that record could be gone.
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
	rec, err := scanSummary(s.rs.headRecord.QueryRowContext(ctx, pk))
	if errors.Is(err, sql.ErrNoRows) { // no record now (the chat or its chain erased meanwhile)
		s.heads.drop(key)
		return nil, nil
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
		if js, err = s.writeRecord(ctx, tx, pk, &rec, now); err != nil {
			return err
		}
		// A turn deleted after the summariser read it may be in rec.
		gone, err := tombstones(ctx, tx, pk, expectCursor+1, rec.CoveredToSeq)
		if err != nil || len(gone) == 0 {
			return err
		}
		first := sqlbatch.FirstSeq(gone)
		_, err = tx.ExecContext(ctx, markDirty, first, first, pk)
		return err
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

// writeRecord inserts rec (ParentID and Depth set by the caller) as the
// chat's head and moves the cursor to its CoveredToSeq; it sets ID and
// CreatedAt and returns the stored summary JSON.
func (s *Store) writeRecord(ctx context.Context, tx *sql.Tx, pk int64, rec *memory.SummaryRecord, now time.Time) ([]byte, error) {
	rec.ID = uuid.NewString()
	rec.CreatedAt = now
	if rec.Summary.UpdatedAt.IsZero() {
		rec.Summary.UpdatedAt = now
	}
	rec.Summary.UpdatedAt = rec.Summary.UpdatedAt.UTC()
	js, err := json.Marshal(rec.Summary)
	if err != nil {
		return nil, fmt.Errorf("encode summary: %w", err)
	}
	if sqlbatch.HasEscapedNUL(js) { // as PostgreSQL jsonb would
		return nil, errors.New("summary contains a NUL character")
	}
	var parent any
	if rec.ParentID != nil {
		parent = *rec.ParentID
	}
	if _, err := tx.StmtContext(ctx, s.ws.insertSummary).ExecContext(ctx,
		rec.ID, pk, parent, rec.Depth, rec.FromSeq, rec.ToSeq, rec.TokenCount,
		rec.Summary.Model, rec.Summary.PromptVersion, string(js), micros(now)); err != nil {
		return nil, fmt.Errorf("insert summary: %w", err)
	}
	if _, err := tx.StmtContext(ctx, s.ws.moveCursor).ExecContext(ctx,
		rec.CoveredToSeq, rec.CoveredToSeq, pk); err != nil {
		return nil, fmt.Errorf("move cursor: %w", err)
	}
	return js, nil
}

// ListSummaryWork lists chats with at least minPending (at least 1) turns
// the summary does not cover, or a dirty summary, those waiting longest
// first.
func (s *Store) ListSummaryWork(ctx context.Context, minPending int64, limit int) ([]memory.Chat, error) {
	chats, err := s.listChats(ctx, s.rs.summaryWork, max(minPending, 1), sqlLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("sqlite: summary work: %w", err)
	}
	return chats, nil
}
