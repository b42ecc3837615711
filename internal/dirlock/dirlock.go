// Package dirlock holds an OS file lock on a data directory, so that one
// process at a time writes it: a second contextd on the same embedded
// store would otherwise start and split its work (two indexers, two
// summarisers, each with its own view of the embedded index) silently.
// The lock is the operating system's (flock on Unix, LockFileEx on
// Windows): it goes with the process, so a crash never leaves a stale one.
package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// FileName is the lock file each locked directory holds.
const FileName = "contextd.lock"

// HeldError says another process holds the directory's lock.
type HeldError struct {
	Dir string
	// PID is the holder's process id as it wrote it (0: unknown).
	PID int
}

func (e *HeldError) Error() string {
	holder := "another process"
	if e.PID > 0 {
		holder = "process " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("data directory %s is in use by %s (lock %s): one contextd per embedded data directory; stop it, or give this one another storage.sqlite_path",
		e.Dir, holder, filepath.Join(e.Dir, FileName))
}

// Lock is a held directory lock.
type Lock struct{ f *os.File }

// Acquire takes dir's lock without waiting and writes this process's pid
// into the lock file; a *HeldError when another process holds it.
func Acquire(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := lockFile(f); err != nil {
		defer f.Close()
		if errors.Is(err, errHeld) {
			return nil, &HeldError{Dir: dir, PID: readPID(path)}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// The pid is written only under the lock, so the holder's is the one
	// a refused process reads.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// Release gives the lock back (closing the file does; the file stays).
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// errHeld is what lockFile returns when another process holds the lock.
var errHeld = errors.New("lock held")

func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}
