// Package sqlitefull tells a full disk apart in SQLite's errors, for the
// two SQLite files contextd writes (the store and the embedded index).
package sqlitefull

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

// message is SQLITE_FULL's text, for an error that reached us as a string
// (wrapped by a layer that kept only the message).
const message = "database or disk is full"

// Is reports whether err means the disk is full: SQLITE_FULL by the
// driver's code or its message, or ENOSPC.
func Is(err error) bool {
	if err == nil {
		return false
	}
	var se *msqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqliteFull {
		return true
	}
	return errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), message)
}

// Mark wraps err with memory.ErrFull when it means the disk is full, so
// that callers answer "retry when there is room" rather than report a
// bug; other errors (and nil) are returned as they are.
func Mark(prefix string, err error) error {
	if err == nil || errors.Is(err, memory.ErrFull) || !Is(err) {
		return err
	}
	return fmt.Errorf("%s: %w: %w", prefix, memory.ErrFull, err)
}
