package sqlite

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/contextd/contextd/memory"
	msqlite "modernc.org/sqlite"
)

// sqliteFull is SQLITE_FULL, the primary result code SQLite answers when
// the disk (or PRAGMA max_page_count) leaves no room; extended codes keep
// it in their low byte.
const sqliteFull = 13

// fullMessage is SQLITE_FULL's text, for an error that reached us as a
// string (wrapped by a layer that kept only the message).
const fullMessage = "database or disk is full"

// classify marks a write's error memory.ErrFull when it means the disk is
// full, so that callers answer "retry when there is room" rather than
// report a bug; other errors are returned as they are.
func classify(err error) error {
	if err == nil || errors.Is(err, memory.ErrFull) || !isFull(err) {
		return err
	}
	return fmt.Errorf("sqlite: %w: %w", memory.ErrFull, err)
}

func isFull(err error) bool {
	var se *msqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqliteFull {
		return true
	}
	return errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), fullMessage)
}
