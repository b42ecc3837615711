package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// Group commit for the request path's writes: appends, and the facts
// drawn from them as they arrive.
//
// Every write goes through the single writer connection, one transaction
// each. Under concurrent appends most of an append's cost is its commit:
// SQLite writes every page the transaction touched (the messages table and
// its indexes, the chat row) as WAL frames, one pwrite each, so 32 clients
// appending to 200 chats wrote the same interior pages 32 times over. And
// database/sql hands the writer to its waiters in random order, which
// made a few appends wait many turns.
//
// So appends (and AddFacts) that arrive while one is being written queue,
// in order, and the next leader writes all of them in one transaction, each
// under its own
// SAVEPOINT: a failing append rolls back only itself, and each sees the
// ones before it exactly as if they had run one after another (a duplicate
// message id in two appends of a group is found; a chat the first creates,
// the second appends to). Every caller returns only once its append is
// committed, as before: a kill -9 loses nothing that was acknowledged.

// maxGroup bounds the appends one transaction carries, so a leader's own
// wait stays short under a flood.
const maxGroup = 64

// groupJob is one queued append: run is its body (given the transaction
// and a context that is not cancelled mid-group), err its outcome, wake
// tells a waiting caller that it is done (false) or leads the next group
// (true).
type groupJob struct {
	ctx  context.Context
	run  func(ctx context.Context, tx *sql.Tx) error
	err  error
	wake chan bool
}

// grouper queues appends for the writer; the zero value is ready.
type grouper struct {
	mu    sync.Mutex
	busy  bool // a leader is writing a group
	queue []*groupJob
}

// writeGrouped runs run in a write transaction shared with the appends
// queued beside it, and returns once that transaction is committed (or
// run failed and was rolled back to its savepoint).
func (s *Store) writeGrouped(ctx context.Context, run func(ctx context.Context, tx *sql.Tx) error) error {
	j := &groupJob{ctx: ctx, run: run, wake: make(chan bool, 1)}
	g := &s.group
	g.mu.Lock()
	if g.busy {
		g.queue = append(g.queue, j)
		g.mu.Unlock()
		if lead := <-j.wake; !lead {
			return j.err
		}
		g.mu.Lock()
	}
	g.busy = true
	jobs := []*groupJob{j}
	n := min(len(g.queue), maxGroup-1)
	jobs = append(jobs, g.queue[:n]...)
	g.queue = g.queue[n:]
	g.mu.Unlock()

	// Even if a write panics, the queue moves on and nobody waits forever;
	// the group's writes then count as failed (the transaction is rolled
	// back) and the panic goes on up the leader's stack.
	done := false
	defer func() {
		if !done {
			for _, o := range jobs {
				o.err = errGroupAborted
			}
		}
		s.handOff(jobs)
	}()
	s.commitGroup(jobs)
	done = true
	return j.err
}

// errGroupAborted is the outcome of the writes of a group whose leader
// panicked: none of them was committed.
var errGroupAborted = errors.New("sqlite: write aborted: another write of its group panicked")

// handOff passes the leadership to the next queued write (or ends it) and
// tells the group's other writers their outcome.
func (s *Store) handOff(jobs []*groupJob) {
	g := &s.group
	g.mu.Lock()
	if len(g.queue) > 0 {
		next := g.queue[0]
		g.queue = g.queue[1:]
		g.mu.Unlock()
		next.wake <- true // the leadership passes on; busy stays set
	} else {
		g.busy = false
		g.mu.Unlock()
	}
	for _, o := range jobs[1:] {
		o.wake <- false
	}
}

// commitGroup writes jobs in one transaction, each under a savepoint. When
// the group as a whole fails (its transaction could not start, a rollback
// to a savepoint failed, the commit failed), every job that had not failed
// on its own is written again alone, so one job's trouble is never
// another's error.
func (s *Store) commitGroup(jobs []*groupJob) {
	if len(jobs) == 1 {
		j := jobs[0]
		j.err = s.write(j.ctx, func(tx *sql.Tx) error { return j.run(j.ctx, tx) })
		return
	}
	ok := s.tryGroup(jobs)
	for _, j := range jobs {
		if !ok && j.err == nil {
			j.err = s.write(j.ctx, func(tx *sql.Tx) error { return j.run(j.ctx, tx) })
		}
	}
}

// tryGroup runs jobs in one transaction; it reports false when the group
// failed as a whole (then no job's writes were committed, and j.err holds
// only the jobs' own failures).
func (s *Store) tryGroup(jobs []*groupJob) bool {
	// The group's transaction outlives any one caller's context: a caller
	// that gives up makes only its own append fail, before it runs.
	gctx := context.WithoutCancel(jobs[0].ctx)
	tx, err := s.w.BeginTx(gctx, nil)
	if err != nil {
		return false
	}
	c := s.rows.begin()
	// Rolled back on every way out but a commit, a panic included: the
	// group's context is never cancelled, so database/sql would never
	// roll it back for us and the writer connection would stay taken.
	committed := false
	defer func() {
		if !committed {
			s.rollback(tx, c)
		}
	}()
	for _, j := range jobs {
		if err := j.ctx.Err(); err != nil {
			j.err = err
			continue
		}
		if _, err := tx.ExecContext(gctx, `SAVEPOINT g`); err != nil {
			return false
		}
		if err := j.run(context.WithoutCancel(j.ctx), tx); err != nil {
			j.err = classify(err)
			if _, rerr := tx.ExecContext(gctx, `ROLLBACK TO g`); rerr != nil {
				clearErrs(jobs, j)
				return false
			}
		}
		if _, err := tx.ExecContext(gctx, `RELEASE g`); err != nil {
			clearErrs(jobs, nil)
			return false
		}
	}
	if err := s.commit(tx, c); err != nil {
		clearErrs(jobs, nil)
		return false
	}
	committed = true
	return true
}

// clearErrs forgets the outcome of jobs whose failure may have been the
// group's rather than their own (all but keep), so that they run again
// alone; a cancelled caller stays cancelled.
func clearErrs(jobs []*groupJob, keep *groupJob) {
	for _, j := range jobs {
		if j != keep && j.ctx.Err() == nil {
			j.err = nil
		}
	}
}
