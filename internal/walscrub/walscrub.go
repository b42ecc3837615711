// Package walscrub empties a SQLite file's write-ahead log soon after
// something was erased from the file.
//
// secure_delete overwrites what a delete frees, but only in the pages the
// delete writes: the WAL still holds the frames an earlier write appended
// (the turn as it was appended, the summary that quoted it), and a PASSIVE
// or automatic checkpoint copies them into the database without removing
// them from the log. So after an erase the log is checkpointed and
// truncated to zero bytes (PRAGMA wal_checkpoint(TRUNCATE)), a bounded
// delay later: erases that come close together share one truncation, and
// the writes of a rebuild that follows a delete are in the log by then or
// ask for another.
package walscrub

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// DefaultDelay is how long after an erase the log is truncated.
const DefaultDelay = 5 * time.Second

// ErrBusy: a reader or the writer kept the log in use past the busy
// timeout; the log was not truncated.
var ErrBusy = errors.New("wal checkpoint(TRUNCATE) blocked by a reader or writer")

// Truncate checkpoints db's whole log and truncates it to zero bytes.
// db should be a connection of its own: the checkpoint waits (the
// connection's busy_timeout) for readers and the writer to leave the log.
func Truncate(ctx context.Context, db *sql.DB) error {
	var busy, logFrames, done int
	if err := db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logFrames, &done); err != nil {
		return fmt.Errorf("wal checkpoint: %w", err)
	}
	if busy != 0 {
		return ErrBusy
	}
	return nil
}

// Scrubber truncates db's log Delay after Soon is called; calls that come
// while one is pending share it. A truncation that fails is tried again
// Delay later, until it succeeds or Close.
type Scrubber struct {
	db    *sql.DB
	delay time.Duration
	kick  chan struct{}
	stop  chan struct{}
	done  chan struct{}
	// onErr hears each failed truncation (nil: ignored).
	onErr func(error)
}

// Start runs a Scrubber over db (which it does not close). delay ≤ 0 is
// DefaultDelay.
func Start(db *sql.DB, delay time.Duration, onErr func(error)) *Scrubber {
	if delay <= 0 {
		delay = DefaultDelay
	}
	s := &Scrubber{db: db, delay: delay, kick: make(chan struct{}, 1), stop: make(chan struct{}),
		done: make(chan struct{}), onErr: onErr}
	go s.run()
	return s
}

// Soon asks for a truncation within the delay. It never blocks.
func (s *Scrubber) Soon() {
	if s == nil {
		return
	}
	select {
	case s.kick <- struct{}{}:
	default: // one is pending already
	}
}

func (s *Scrubber) run() {
	defer close(s.done)
	t := time.NewTimer(s.delay)
	t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-s.kick:
		}
		t.Reset(s.delay)
		select {
		case <-s.stop:
			t.Stop()
			return
		case <-t.C:
		}
		// Erases asked for meanwhile committed before this truncation.
		select {
		case <-s.kick:
		default:
		}
		if err := Truncate(context.Background(), s.db); err != nil {
			if s.onErr != nil {
				s.onErr(err)
			}
			s.Soon()
		}
	}
}

// Close stops the goroutine; a pending truncation is left to the caller's
// close (a store truncates its log when it closes).
func (s *Scrubber) Close() {
	if s == nil {
		return
	}
	close(s.stop)
	<-s.done
}
