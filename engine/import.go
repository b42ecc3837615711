package engine

// Importing a dump. An import takes what the API takes and no more: every
// line is checked first, with the API's own validators and limits, and a
// bad line refuses the whole import (nothing of it is stored), naming its
// number. Then the lines are loaded, each in its own transaction, leaving
// out what would bring a deleted turn back: a fact, summary record,
// episode or profile item citing a turn that is a tombstone in the store
// (a dump older than the delete) is dropped and counted.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/contextd/contextd/memory"
)

// ImportResult counts an import's records.
type ImportResult struct {
	Added   int // stored
	Present int // already stored, left as they were
	// Dropped: facts, summary records and profile items that cite a
	// deleted turn (a summary record's successors in its chain with it).
	Dropped int
	// Rebuild: episodes over a deleted turn, stored marked for rebuild.
	Rebuild int
}

// Import checks every line of r, then loads them into the store. A bad
// line is an error naming its number, and nothing is loaded; a store
// error while loading stops the import at that line (the lines before it
// stay loaded, and loading the dump again is idempotent).
func (s *Transfer) Import(ctx context.Context, r io.Reader) (ImportResult, error) {
	spool, err := os.CreateTemp("", "contextd-import-*")
	if err != nil {
		return ImportResult{}, fmt.Errorf("import: %w", err)
	}
	defer os.Remove(spool.Name())
	defer spool.Close()
	// Checked lines are kept aside (not in memory: a dump may be large) and
	// read again to load them.
	w := bufio.NewWriter(spool)
	if err := s.eachLine(r, func(_ int, line []byte, rec memory.DumpRecord) error {
		_, err := w.Write(append(line, '\n'))
		return err
	}); err != nil {
		return ImportResult{}, err
	}
	if err := w.Flush(); err != nil {
		return ImportResult{}, fmt.Errorf("import: %w", err)
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return ImportResult{}, fmt.Errorf("import: %w", err)
	}
	ld := newLoader(s)
	err = s.eachLine(spool, func(n int, _ []byte, rec memory.DumpRecord) error {
		if err := ld.load(ctx, rec); err != nil {
			if storageFull(err) { // storage_full, as the API's writes say it
				err = s.full.wrote("import", err)
			}
			return fmt.Errorf("import: line %d: %w", n, err)
		}
		return nil
	})
	return ld.res, err
}

// eachLine parses and checks each non-blank line of r and hands it to fn;
// the first bad line is an error naming its number.
func (s *Transfer) eachLine(r io.Reader, fn func(n int, line []byte, rec memory.DumpRecord) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	for n := 1; ; n++ {
		line, rerr := br.ReadBytes('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return fmt.Errorf("import: line %d: %w", n, rerr)
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			rec, err := memory.ParseDumpLine(line)
			if err == nil {
				err = s.CheckDumpRecord(rec)
			}
			if err != nil {
				return fmt.Errorf("import: line %d: %w", n, err)
			}
			if err := fn(n, line, rec); err != nil {
				return err
			}
		}
		if rerr != nil {
			return nil
		}
	}
}

// CheckDumpRecord checks a parsed dump record as the API checks what it
// takes: a message as an append's (role, content, size, ids, metadata,
// created_at), a tombstone without content, ranges that are ranges.
func (s *Transfer) CheckDumpRecord(rec memory.DumpRecord) error {
	switch rec.Type {
	case memory.DumpChat:
		c := rec.Chat
		if c.LastSeq < 0 || c.SummaryCursor < 0 || c.SummaryCursor > c.LastSeq {
			return fmt.Errorf("chat: last_seq %d and summary_cursor %d must be 0 ≤ summary_cursor ≤ last_seq", c.LastSeq, c.SummaryCursor)
		}
	case memory.DumpMessage:
		return s.checkDumpMessage(*rec.Message)
	case memory.DumpSummaryRecord:
		r := rec.Summary
		if r.FromSeq < 1 || r.ToSeq < r.FromSeq || r.CoveredFromSeq < 1 || r.CoveredToSeq < r.CoveredFromSeq {
			return fmt.Errorf("summary_record: from_seq..to_seq (%d..%d) and covered_from_seq..covered_to_seq (%d..%d) must be ranges from 1",
				r.FromSeq, r.ToSeq, r.CoveredFromSeq, r.CoveredToSeq)
		}
	case memory.DumpFact:
		for _, q := range rec.Fact.Seqs {
			if q < 1 {
				return fmt.Errorf("fact: seqs must be ≥ 1, got %d", q)
			}
		}
	}
	return nil
}

// checkDumpMessage: a message as an append takes it; a tombstone with
// nothing but its seq and role (the rest was deleted: an import must not
// bring it back, nor store text that no endpoint lists but some serve).
func (s *Transfer) checkDumpMessage(m memory.Message) error {
	if m.CreatedAt.Before(time.Unix(0, 0)) {
		return fmt.Errorf("message %q: created_at %s is missing or before 1970-01-01", m.ID, m.CreatedAt.UTC().Format(time.RFC3339))
	}
	if m.Deleted {
		if m.Content != "" || m.Name != "" || len(m.Metadata) > 0 {
			return fmt.Errorf("message %q: a tombstone (\"deleted\": true) carries no content, name or metadata", m.ID)
		}
		return nil
	}
	at := m.CreatedAt
	_, err := s.limits.validateMessages("message", []InMessage{{ID: m.ID, Role: string(m.Role), Name: m.Name, Content: m.Content,
		CreatedAt: &at, Metadata: m.Metadata}})
	if err != nil {
		return fmt.Errorf("message %q: %w", m.ID, err)
	}
	return nil
}
