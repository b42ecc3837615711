package sqlitefull

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/contextd/contextd/memory"
	_ "modernc.org/sqlite"
)

// realFull is the driver's own SQLITE_FULL: inserts past max_page_count.
func realFull(t *testing.T) error {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "f.db")+"?_pragma=max_page_count(8)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (x TEXT)`); err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		if _, err := db.ExecContext(ctx, `INSERT INTO t VALUES (?)`, strings.Repeat("x", 4000)); err != nil {
			return err
		}
	}
	t.Fatal("max_page_count never filled")
	return nil
}

func TestIs(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"SQLITE_FULL from the driver", realFull(t), true},
		{"SQLITE_FULL wrapped", fmt.Errorf("commit: %w", realFull(t)), true},
		{"ENOSPC wrapped", fmt.Errorf("write: %w", &os.PathError{Op: "write", Path: "c.db-wal", Err: syscall.ENOSPC}), true},
		{"only the message", errors.New("exec: database or disk is full (13)"), true},
		{"generic", errors.New("boom"), false},
		{"nil", nil, false},
	} {
		if got := Is(tc.err); got != tc.want {
			t.Errorf("%s: Is(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
		if got := errors.Is(Mark("x", tc.err), memory.ErrFull); got != tc.want {
			t.Errorf("%s: Mark is ErrFull = %v, want %v", tc.name, got, tc.want)
		}
	}
}
