package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/chain"
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
// after a forgotten message replaces the whole chain (WriteSummary,
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

// WriteSummary writes to the chat's chain as w says, in one transaction;
// see memory.Summaries. A rebuild erases records: they must leave the WAL
// too.
func (s *Store) WriteSummary(ctx context.Context, key memory.ChatKey, w memory.SummaryWrite) ([]memory.SummaryRecord, error) {
	if w.Kind == memory.SummaryRebuild {
		defer s.cp.scrubSoon()
		defer s.heads.drop(key)
	}
	now := s.now().Truncate(time.Microsecond)
	var (
		recs []memory.SummaryRecord
		ct   *chainTx
	)
	err := s.write(ctx, func(tx *sql.Tx) error {
		pk, chat, err := loadChat(ctx, tx.StmtContext(ctx, s.ws.chat), key)
		if err != nil {
			return err
		}
		ct = &chainTx{s: s, tx: tx, pk: pk, chat: chat}
		recs, err = chain.Write(ctx, ct, chat, w, now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: write summary: %w", err)
	}
	if w.Kind == memory.SummaryExtend {
		// Cache the new head as SummaryHead would read it back (decoded
		// from the stored JSON, which may differ from the record, e.g. in
		// invalid UTF-8).
		stored := recs[len(recs)-1]
		if stored.Summary, err = decodeSummary(ct.js); err == nil {
			s.heads.put(key, ct.pk, &stored)
		} else {
			s.heads.drop(key)
		}
	}
	return recs, nil
}

// chainTx is SQLite's raw operations on one chat's records (chain.Tx,
// records.Tx), inside the write transaction.
type chainTx struct {
	s    *Store
	tx   *sql.Tx
	pk   int64
	chat memory.Chat // as read in tx
	js   []byte      // the summary JSON last inserted
}

func (c *chainTx) Head(ctx context.Context) (string, int, bool, error) {
	var (
		id    string
		depth int
	)
	err := c.tx.StmtContext(ctx, c.s.ws.headID).QueryRowContext(ctx, c.pk).Scan(&id, &depth)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, false, nil
	}
	return id, depth, err == nil, err
}

func (c *chainTx) Depth(ctx context.Context, id string) (int, int, bool, error) {
	var depth, top int
	err := c.tx.QueryRowContext(ctx, `SELECT depth, (SELECT max(depth) FROM conversation_summaries WHERE chat = ?)
		FROM conversation_summaries WHERE chat = ? AND id = ?`, c.pk, c.pk, id).Scan(&depth, &top)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, false, nil
	}
	return depth, top, err == nil, err
}

func (c *chainTx) Cut(ctx context.Context, depth int) error {
	_, err := c.tx.ExecContext(ctx, `DELETE FROM conversation_summaries WHERE chat = ? AND depth > ?`, c.pk, depth)
	return err
}

func (c *chainTx) Insert(ctx context.Context, rec memory.SummaryRecord, js []byte) error {
	if _, err := c.tx.StmtContext(ctx, c.s.ws.insertSummary).ExecContext(ctx,
		rec.ID, c.pk, nullable(rec.ParentID), rec.Depth, rec.FromSeq, rec.ToSeq, rec.TokenCount,
		rec.Summary.Model, rec.Summary.PromptVersion, string(js), micros(rec.CreatedAt)); err != nil {
		return fmt.Errorf("insert summary: %w", err)
	}
	if _, err := c.tx.StmtContext(ctx, c.s.ws.moveCursor).ExecContext(ctx,
		rec.CoveredToSeq, rec.CoveredToSeq, c.pk); err != nil {
		return fmt.Errorf("move cursor: %w", err)
	}
	c.js = js
	return nil
}

func (c *chainTx) Owner(ctx context.Context, id string) (bool, bool, error) {
	var owner int64
	err := c.tx.QueryRowContext(ctx, `SELECT chat FROM conversation_summaries WHERE id = ?`, id).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return false, false, nil
	}
	return err == nil, owner == c.pk, err
}

func (c *chainTx) Tombstones(ctx context.Context, from, to int64) (map[int64]bool, error) {
	return tombstones(ctx, c.tx, c.pk, from, to)
}

func (c *chainTx) MarkDirty(ctx context.Context, first int64) error {
	_, err := c.tx.ExecContext(ctx, markDirty, first, first, c.pk)
	return err
}

func (c *chainTx) ClearDirty(ctx context.Context, mark int64) error {
	_, err := c.tx.ExecContext(ctx, `UPDATE chats SET summary_dirty = CASE WHEN summary_dirty = ? AND summary_dirty > 0 THEN -summary_dirty ELSE summary_dirty END
		WHERE id = ?`, mark, c.pk)
	return err
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
