package engine

import (
	"errors"
	"syscall"

	"github.com/contextd/contextd/memory"
)

// storageFull reports whether a store error means its disk is full: the
// stores mark their drivers' codes (SQLITE_FULL, SQLSTATE 53100) with
// memory.ErrFull; ENOSPC is what a file write says itself.
func storageFull(err error) bool {
	return errors.Is(err, memory.ErrFull) || errors.Is(err, syscall.ENOSPC)
}

// wrote notes a write's outcome and returns its error as a client error
// (storeErr): a full disk marks storage full, a write that succeeds clears
// it, any other failure says nothing about space.
func (f *DiskFull) wrote(op string, err error) error {
	f.Note(err)
	if err == nil {
		return nil
	}
	return storeErr(op, err)
}

// NoteWrite notes the outcome of a background job's write (the
// summariser's, the facts job's, the indexer's) for StorageFull, as the
// request path's writes note theirs: a full disk marks storage full, nil
// (a write succeeded) clears it, any other failure says nothing about
// space. A job reports its failures, and its successes only where a write
// is known to have happened (an idle pass says nothing about space).
func (s *Service) NoteWrite(err error) { s.full.Note(err) }

// StorageFull reports whether the last write that succeeded or failed for
// want of space failed: from the first disk-full write until a write
// succeeds again (readiness reports storage degraded meanwhile).
func (s *Service) StorageFull() bool { return s.full.Full() }

// indexErr is an erase's vector-index error as a client error: a full
// disk (the embedded index is a file beside the store's) is storage_full
// and marks storage full, as the store's own would; anything else means
// the index is down.
func (s *Service) indexErr(op string, err error) error {
	if storageFull(err) {
		return s.full.wrote(op, err)
	}
	return unavailable("vector store", err)
}
