package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
	"github.com/contextd/contextd/store/sqlite"
)

// sqliteFullErr is a real SQLITE_FULL, as the SQLite store reports it: an
// append past a small max_page_count.
func sqliteFullErr(t *testing.T) error {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"), sqlite.MaxPages(256))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k := memory.ChatKey{Tenant: "t", ChatID: "c"}
	body := strings.Repeat("x", 8000)
	for i := range 10000 {
		_, err := s.Append(ctx, memory.AppendRequest{Chat: k,
			Messages: []memory.Message{{ID: fmt.Sprint(i), Role: memory.RoleUser, Content: body}}})
		if err != nil {
			return err
		}
	}
	t.Fatal("the cap never filled")
	return nil
}

// TestStoreErrFull: a full disk, however the store says it, is a 503
// storage_full (KindFull), and marks the service's storage full until a
// write succeeds; anything else is not.
func TestStoreErrFull(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		full bool
	}{
		{"ENOSPC wrapped", fmt.Errorf("write: %w", &os.PathError{Op: "write", Path: "c.db-wal", Err: syscall.ENOSPC}), true},
		{"SQLITE_FULL", sqliteFullErr(t), true},
		{"pg 53100 as the postgres store wraps it", fmt.Errorf("postgres: append: %w: %w", memory.ErrFull, &pgconn.PgError{Code: "53100"}), true},
		{"generic", errors.New("boom"), false},
		{"unavailable", fmt.Errorf("ping: %w", memory.ErrUnavailable), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Service{full: &DiskFull{}}
			err := s.full.wrote("append", tc.err)
			e, ok := AsError(err)
			if got := ok && e.Kind == KindFull && e.Code == "storage_full"; got != tc.full {
				t.Errorf("storeErr(%v) = %#v, want storage_full %v", tc.err, err, tc.full)
			}
			if s.StorageFull() != tc.full {
				t.Errorf("StorageFull = %v after the write, want %v", s.StorageFull(), tc.full)
			}
			if s.full.wrote("append", nil); s.StorageFull() {
				t.Error("StorageFull stays after a write succeeded")
			}
		})
	}
}

// fullStore is a real store whose writes fail as on a full disk.
type fullStore struct {
	ChatStore
	memory.Dumper
	err error
}

func (f fullStore) Append(context.Context, memory.AppendRequest) (memory.AppendResult, error) {
	return memory.AppendResult{}, f.err
}

func (f fullStore) DeleteChat(context.Context, memory.ChatKey) error { return f.err }

func (f fullStore) DeleteMessage(context.Context, memory.ChatKey, string) (memory.Message, error) {
	return memory.Message{}, f.err
}

func (f fullStore) Load(context.Context, memory.DumpRecord) (bool, error) { return false, f.err }

// TestWritePathsFull: every write path answers storage_full on a full
// disk and marks the storage full; the next write that succeeds clears it.
func TestWritePathsFull(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	appendN(t, s, "c", 1, 2, 1)
	real := s.store
	st := fullStore{ChatStore: real, Dumper: real.(memory.Dumper),
		err: fmt.Errorf("sqlite: %w: %w", memory.ErrFull, &os.PathError{Op: "write", Err: syscall.ENOSPC})}
	s.store, s.roles.forget, s.roles.dumper = st, st, st
	s.transfer.store, s.transfer.dumper = st, st
	msg := []InMessage{{ID: "x", Role: "user", Content: "hi"}}
	dump := `{"type":"chat","tenant":"default","chat_id":"d","user_id":"u","agent":"default","last_seq":0,` +
		`"created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-01T00:00:00Z","summary_cursor":0,"summary_dirty":false}` + "\n"
	for _, tc := range []struct {
		name  string
		write func() error
	}{
		{"append", func() error { _, err := s.Append(ctx, "default", "c", AppendInput{Messages: msg}); return err }},
		{"context with append", func() error { _, err := s.Context(ctx, "default", ContextInput{ChatID: "c", Append: msg}); return err }},
		{"delete message", func() error { return s.DeleteMessage(ctx, "default", "c", "m1") }},
		{"erase chat", func() error { return s.DeleteChat(ctx, "default", "c") }},
		{"erase user", func() error { _, err := s.DeleteUser(ctx, "default", "u1"); return err }},
		{"import", func() error { _, err := s.Import(ctx, strings.NewReader(dump)); return err }},
	} {
		s.full.Note(nil)
		err := tc.write()
		if e, ok := AsError(err); !ok || e.Code != "storage_full" {
			t.Errorf("%s: %v, want storage_full", tc.name, err)
		}
		if !s.StorageFull() {
			t.Errorf("%s: storage not marked full", tc.name)
		}
	}
	s.store, s.transfer.store = real, real
	appendN(t, s, "c", 3, 3, 1)
	if s.StorageFull() {
		t.Error("storage still full after an append succeeded")
	}
}

// fullIndex is a vector index whose deletes fail for want of disk, as the
// embedded index's file says it.
type fullIndex struct{ rag.Index }

func (fullIndex) Delete(context.Context, rag.Filter) error {
	return fmt.Errorf("embedded index: %w: %w", memory.ErrFull, errors.New("database or disk is full (13)"))
}

// TestEraseIndexFull: an erase whose index delete finds the disk full is
// storage_full (not backend_unavailable: the index is there, its disk is
// not) and marks storage full.
func TestEraseIndexFull(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		erase func(s *Service) error
	}{
		{"erase chat", func(s *Service) error { return s.DeleteChat(ctx, "default", "c") }},
		{"erase user", func(s *Service) error { _, err := s.DeleteUser(ctx, "default", "u1"); return err }},
	} {
		s := newTestService(t)
		appendN(t, s, "c", 1, 2, 1)
		s.vec.index = fullIndex{}
		err := tc.erase(s)
		if e, ok := AsError(err); !ok || e.Code != "storage_full" {
			t.Errorf("%s: %v, want storage_full", tc.name, err)
		}
		if !s.StorageFull() {
			t.Errorf("%s: storage not marked full", tc.name)
		}
	}
}
