// Package chain is the one typed layer over each SQL store's raw
// operations on a chat's summary chain (the Tempo tempodb/backend way:
// small raw per-database operations, the logic once above them): writing
// (memory.SummaryWrite: an extension, a rebuild) and loading a dumped
// record. The stores give the raw operations (Tx), inside the transaction
// that holds the chat's row; the rules, the parent and depth of each
// record, the dirty marks and the record's encoding live here.
package chain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/internal/sqlbatch"
	"github.com/google/uuid"
)

// Tx is one store's raw operations on one chat's chain, inside the
// transaction that read the chat (and holds its row).
type Tx interface {
	// Head returns the id and depth of the chain's head (ok false: the
	// chain is empty).
	Head(ctx context.Context) (id string, depth int, ok bool, err error)
	// Depth returns the depth of the chain's record id and the head's
	// depth (ok false: the chain holds no such record).
	Depth(ctx context.Context, id string) (depth, top int, ok bool, err error)
	// Cut deletes the chain's records deeper than depth.
	Cut(ctx context.Context, depth int) error
	// Insert inserts rec as it is, its summary encoded as js, and moves
	// the chat's cursor to rec.CoveredToSeq.
	Insert(ctx context.Context, rec memory.SummaryRecord, js []byte) error
	// Owner reports whether a record id exists, and if so whether it is
	// this chat's.
	Owner(ctx context.Context, id string) (exists, ours bool, err error)
	// Tombstones returns the chat's deleted seqs in from..to.
	Tombstones(ctx context.Context, from, to int64) (map[int64]bool, error)
	// MarkDirty marks the summary dirty, keeping first (the smallest seq
	// deleted since the summary was clean) with the mark.
	MarkDirty(ctx context.Context, first int64) error
	// ClearDirty clears the dirty mark when it is still mark.
	ClearDirty(ctx context.Context, mark int64) error
}

// Write does w on the chain of chat (as read in tx) and returns the
// records written, with their ID, ParentID, Depth and CreatedAt (now).
func Write(ctx context.Context, tx Tx, chat memory.Chat, w memory.SummaryWrite, now time.Time) ([]memory.SummaryRecord, error) {
	if err := w.Check(chat); err != nil {
		return nil, err
	}
	recs := append([]memory.SummaryRecord(nil), w.Recs...)
	var parent *string
	depth := -1
	if w.Kind == memory.SummaryExtend {
		id, d, ok, err := tx.Head(ctx)
		if err != nil {
			return nil, fmt.Errorf("summary head: %w", err)
		}
		if ok {
			parent, depth = &id, d
		}
	} else {
		d, err := keptDepth(ctx, tx, w.Keep, len(recs) == 0)
		if err != nil {
			return nil, err
		}
		if err := tx.Cut(ctx, d); err != nil {
			return nil, fmt.Errorf("delete chain: %w", err)
		}
		if w.Keep != "" {
			keep := w.Keep
			parent = &keep
		}
		depth = d
	}
	for i := range recs {
		recs[i].ParentID, recs[i].Depth = parent, depth+1
		js, err := Prepare(&recs[i], now)
		if err != nil {
			return nil, err
		}
		if err := tx.Insert(ctx, recs[i], js); err != nil {
			return nil, err
		}
		parent, depth = &recs[i].ID, depth+1
	}
	if w.Kind == memory.SummaryExtend {
		return recs, markTombstones(ctx, tx, w.ExpectCursor+1, w.CoveredTo())
	}
	if err := tx.ClearDirty(ctx, w.DirtyMark); err != nil {
		return nil, fmt.Errorf("clear dirty mark: %w", err)
	}
	return recs, nil
}

// markTombstones marks the summary dirty when a turn in from..to, which
// an extension just covered, was deleted after the summariser read it.
func markTombstones(ctx context.Context, tx Tx, from, to int64) error {
	gone, err := tx.Tombstones(ctx, from, to)
	if err != nil || len(gone) == 0 {
		return err
	}
	return tx.MarkDirty(ctx, sqlbatch.FirstSeq(gone))
}

// keptDepth is the depth of the record keep (-1 for ""): ErrConflict when
// the chain holds no such record, or when head it must be the head.
func keptDepth(ctx context.Context, tx Tx, keep string, head bool) (int, error) {
	if keep == "" {
		return -1, nil
	}
	depth, top, ok, err := tx.Depth(ctx, keep)
	if err != nil {
		return 0, fmt.Errorf("kept record: %w", err)
	}
	if !ok {
		return 0, fmt.Errorf("no record %q in the chain: %w", keep, memory.ErrConflict)
	}
	if head && depth != top {
		return 0, fmt.Errorf("record %q is not the head and nothing is written on it: %w", keep, memory.ErrConflict)
	}
	return depth, nil
}

// Prepare makes rec a new record written at now: it sets ID, CreatedAt
// and (when unset) the summary's UpdatedAt, in UTC, and returns the
// summary's encoding. A summary holding a NUL character is refused in
// every store, as PostgreSQL jsonb would.
func Prepare(rec *memory.SummaryRecord, now time.Time) ([]byte, error) {
	rec.ID = uuid.NewString()
	rec.CreatedAt = now
	if rec.Summary.UpdatedAt.IsZero() {
		rec.Summary.UpdatedAt = now
	}
	rec.Summary.UpdatedAt = rec.Summary.UpdatedAt.UTC()
	return encode(rec.Summary)
}

func encode(sum memory.Summary) ([]byte, error) {
	js, err := json.Marshal(sum)
	if err != nil {
		return nil, fmt.Errorf("encode summary: %w", err)
	}
	if sqlbatch.HasEscapedNUL(js) {
		return nil, errors.New("summary contains a NUL character")
	}
	return js, nil
}

// Load stores a dumped record as it is (its ID, parent, depth and times
// kept), idempotently: false when the chat holds it already. The record
// must continue the chat's chain and cover within the cursor rule
// (memory.CheckCoverage); otherwise, or when its id is another chat's,
// ErrConflict. checkID is the store's rule on a record id.
func Load(ctx context.Context, tx Tx, chat memory.Chat, rec memory.SummaryRecord, checkID func(string) error) (bool, error) {
	exists, ours, err := tx.Owner(ctx, rec.ID)
	if err != nil {
		return false, err
	}
	if exists {
		if !ours {
			return false, fmt.Errorf("summary record %q belongs to another chat: %w", rec.ID, memory.ErrConflict)
		}
		return false, nil
	}
	head, depth, ok, err := tx.Head(ctx)
	if err != nil {
		return false, err
	}
	if !ok {
		depth = -1
	}
	if rec.Depth != depth+1 || (rec.ParentID == nil) != !ok || (rec.ParentID != nil && *rec.ParentID != head) {
		return false, fmt.Errorf("summary record %q (depth %d) does not continue the chat's chain (head depth %d): %w", rec.ID, rec.Depth, depth, memory.ErrConflict)
	}
	if err := memory.CheckCoverage(rec.CoveredToSeq, chat.SummaryCursor, chat.LastSeq); err != nil {
		return false, fmt.Errorf("summary record %q: %w", rec.ID, err)
	}
	if err := checkID(rec.ID); err != nil {
		return false, fmt.Errorf("summary record %q: %w: %w", rec.ID, err, memory.ErrConflict)
	}
	js, err := encode(rec.Summary)
	if err != nil {
		return false, fmt.Errorf("summary record %q: %w: %w", rec.ID, err, memory.ErrConflict)
	}
	rec.CreatedAt = rec.CreatedAt.UTC().Truncate(time.Microsecond)
	if err := tx.Insert(ctx, rec, js); err != nil {
		return false, err
	}
	return true, nil
}
