package memory

import (
	"context"
	"fmt"
)

// SummaryWriteKind says what a summary write does to the chat's chain.
type SummaryWriteKind int

const (
	// SummaryExtend writes the records on top of the chain's head (the
	// summariser extending the summary). A turn deleted after the
	// summariser read it may be in them: the write then marks the summary
	// dirty (keeping the smallest such seq with the mark, see
	// CleanSummary). It does not touch a dirty mark already set.
	SummaryExtend SummaryWriteKind = iota
	// SummaryRebuild keeps the chain's clean start, the records up to and
	// including Keep (a record's ID; "" keeps none), deletes the newer
	// ones and writes the records on top of Keep (the rebuild after a
	// deleted message). It clears SummaryDirty only when DirtyMark is
	// still the chat's DirtyMark: a message deleted meanwhile leaves it
	// dirty for another pass. With no records, Keep must be the head
	// (nothing newer to redo) and only the mark is cleared; keeping none
	// and writing none empties the chain, which needs the cursor at 0.
	SummaryRebuild
)

// SummaryWrite is one write to a chat's summary chain (Summaries.
// WriteSummary): all of it in one transaction, or nothing.
type SummaryWrite struct {
	Kind SummaryWriteKind
	// ExpectCursor is the chat's summary cursor as the writer read it: the
	// write fails with ErrCursorMoved when another writer moved it since.
	ExpectCursor int64
	// Recs are written in order, each moving the cursor to its
	// CoveredToSeq (ascending; the last within ExpectCursor..last_seq).
	// The store sets each one's ID, ParentID, Depth and CreatedAt.
	Recs []SummaryRecord
	// Keep and DirtyMark are SummaryRebuild's (see it).
	Keep      string
	DirtyMark int64
}

// ExtendWrite is the write adding rec as the chain's new head, moving
// the cursor from expectCursor to rec.CoveredToSeq.
func ExtendWrite(expectCursor int64, rec SummaryRecord) SummaryWrite {
	return SummaryWrite{Kind: SummaryExtend, ExpectCursor: expectCursor, Recs: []SummaryRecord{rec}}
}

// ReplaceWrite is the rebuild writing rec as the chain's only record
// (depth 0, no parent). A rec that covers nothing (CoveredToSeq 0: a
// deletion in a chat not summarised yet) is not written: the chat is left
// without a summary, as it was.
func ReplaceWrite(expectCursor, dirtyMark int64, rec SummaryRecord) SummaryWrite {
	w := SummaryWrite{Kind: SummaryRebuild, ExpectCursor: expectCursor, DirtyMark: dirtyMark}
	if rec.CoveredToSeq != 0 {
		w.Recs = []SummaryRecord{rec}
	}
	return w
}

// RebuildWrite is the rebuild keeping the chain up to and including
// keep ("" keeps none) and writing recs on top of it.
func RebuildWrite(expectCursor, dirtyMark int64, keep string, recs []SummaryRecord) SummaryWrite {
	return SummaryWrite{Kind: SummaryRebuild, ExpectCursor: expectCursor, DirtyMark: dirtyMark, Keep: keep, Recs: recs}
}

// AppendSummary writes rec as the chat's new head (ExtendWrite) and
// returns it as stored.
func AppendSummary(ctx context.Context, s SummaryWriter, key ChatKey, expectCursor int64, rec SummaryRecord) (SummaryRecord, error) {
	recs, err := s.WriteSummary(ctx, key, ExtendWrite(expectCursor, rec))
	if err != nil {
		return SummaryRecord{}, err
	}
	return recs[0], nil
}

// CoveredTo is where the write leaves the cursor: the last record's
// CoveredToSeq, or where it is when the write adds no record.
func (w SummaryWrite) CoveredTo() int64 {
	if len(w.Recs) == 0 {
		return w.ExpectCursor
	}
	return w.Recs[len(w.Recs)-1].CoveredToSeq
}

// Check is the cursor rule of every summary write, checked by the store
// inside the write's transaction against the chat as it reads it there
// (under the chat's lock): the cursor must still be ExpectCursor
// (ErrCursorMoved), and the records must move it forward within the
// chat's turns: ascending, the last within ExpectCursor..last_seq
// (ErrConflict). The rules on Keep need the chain: the store checks them.
func (w SummaryWrite) Check(chat Chat) error {
	if chat.SummaryCursor != w.ExpectCursor {
		return fmt.Errorf("cursor is %d, expected %d: %w", chat.SummaryCursor, w.ExpectCursor, ErrCursorMoved)
	}
	switch {
	case w.Kind == SummaryExtend && len(w.Recs) == 0:
		return fmt.Errorf("a summary extension without a record: %w", ErrConflict)
	case w.Kind == SummaryRebuild && len(w.Recs) == 0 && w.Keep == "" && w.ExpectCursor != 0:
		return fmt.Errorf("an empty chain cannot cover to %d: %w", w.ExpectCursor, ErrConflict)
	case w.Kind != SummaryExtend && w.Kind != SummaryRebuild:
		return fmt.Errorf("unknown summary write kind %d: %w", w.Kind, ErrConflict)
	}
	if err := CheckCoverage(w.CoveredTo(), w.ExpectCursor, chat.LastSeq); err != nil {
		return err
	}
	for i := 1; i < len(w.Recs); i++ {
		if w.Recs[i].CoveredToSeq <= w.Recs[i-1].CoveredToSeq {
			return fmt.Errorf("record %d covers to %d, not past %d: %w", i, w.Recs[i].CoveredToSeq, w.Recs[i-1].CoveredToSeq, ErrConflict)
		}
	}
	return nil
}

// CheckCoverage is the cursor rule for one record: it covers to a seq
// within cursor..lastSeq (the cursor only moves forward, and not past the
// chat's turns), else ErrConflict. Loading a dump checks each record so.
func CheckCoverage(coveredTo, cursor, lastSeq int64) error {
	if coveredTo < cursor || coveredTo > lastSeq {
		return fmt.Errorf("covered_to_seq %d outside %d..%d: %w", coveredTo, cursor, lastSeq, ErrConflict)
	}
	return nil
}

// SummaryWriter is the one summary write (Summaries.WriteSummary), the
// role of a job that only writes.
type SummaryWriter interface {
	WriteSummary(ctx context.Context, key ChatKey, w SummaryWrite) ([]SummaryRecord, error)
}
