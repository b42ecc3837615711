package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
)

func openGroupStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.w.Exec(`CREATE TABLE g (k TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestGroupedWritesFailAlone runs many writes at once, some of which fail
// after writing: each failing one leaves nothing behind, every other one
// is committed, and each caller gets its own outcome.
func TestGroupedWritesFailAlone(t *testing.T) {
	s := openGroupStore(t)
	errBoom := errors.New("boom")
	const n = 200
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = s.writeGrouped(context.Background(), func(ctx context.Context, tx *sql.Tx) error {
				if _, err := tx.ExecContext(ctx, `INSERT INTO g (k) VALUES (?)`, fmt.Sprint(i)); err != nil {
					return err
				}
				if i%7 == 0 {
					return errBoom
				}
				return nil
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if want := i%7 == 0; errors.Is(err, errBoom) != want || (!want && err != nil) {
			t.Errorf("write %d: err %v, want boom: %v", i, err, want)
		}
	}
	rows, err := s.r.Query(`SELECT k FROM g`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		got[k] = true
	}
	for i := range n {
		if got[fmt.Sprint(i)] == (i%7 == 0) {
			t.Errorf("row %d present %v, want %v", i, got[fmt.Sprint(i)], i%7 != 0)
		}
	}
}

// TestGroupedWriteSeesEarlierOnes: writes of one group see each other as
// if they ran one after another (a key the first inserts, the second
// finds), and a cancelled caller's write does not run.
func TestGroupedWriteSeesEarlierOnes(t *testing.T) {
	s := openGroupStore(t)
	insert := func(k string) func(context.Context, *sql.Tx) error {
		return func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO g (k) VALUES (?)`, k)
			return err
		}
	}
	var done bool
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	jobs := []*groupJob{
		{ctx: context.Background(), run: insert("a")},
		{ctx: context.Background(), run: insert("a")}, // a duplicate of the first: fails alone
		{ctx: cancelled, run: func(context.Context, *sql.Tx) error { done = true; return nil }},
		{ctx: context.Background(), run: insert("b")},
	}
	s.commitGroup(jobs)
	if jobs[0].err != nil || jobs[1].err == nil || !errors.Is(jobs[2].err, context.Canceled) || jobs[3].err != nil || done {
		t.Fatalf("errs %v %v %v %v, cancelled ran %v", jobs[0].err, jobs[1].err, jobs[2].err, jobs[3].err, done)
	}
	var n int
	if err := s.r.QueryRow(`SELECT count(*) FROM g`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("rows %d (%v), want a and b", n, err)
	}
}

// TestConcurrentAppendsOneChat appends to one chat from many callers at
// once, with repeated message ids: seqs stay dense and unique, and every
// duplicate is found, grouped or not.
func TestConcurrentAppendsOneChat(t *testing.T) {
	s := openGroupStore(t)
	key := memory.ChatKey{Tenant: "t", ChatID: "c"}
	const n = 100
	res := make([]memory.AppendResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res[i], errs[i] = s.Append(context.Background(), memory.AppendRequest{Chat: key,
				Messages: []memory.Message{{ID: fmt.Sprint("m", i%50), Role: memory.RoleUser, Content: fmt.Sprint("turn ", i)}}})
		})
	}
	wg.Wait()
	appended, dups := 0, 0
	seqs := map[int64]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("append %d: %v", i, errs[i])
		}
		appended += res[i].Appended
		dups += res[i].Duplicates
		seqs[res[i].Messages[0].Seq] = true
	}
	chat, err := s.Chat(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if appended != 50 || dups != 50 || len(seqs) != 50 || chat.LastSeq != 50 {
		t.Fatalf("appended %d, duplicates %d, distinct seqs %d, last_seq %d; want 50 each", appended, dups, len(seqs), chat.LastSeq)
	}
}

// TestGroupedWritePanicMovesOn: a write that panics takes its group down
// (nothing of it is committed, its callers are told) but not the writer:
// every other caller returns, and the next write commits.
func TestGroupedWritePanicMovesOn(t *testing.T) {
	for _, alone := range []bool{true, false} {
		s := openGroupStore(t)
		ctx := context.Background()
		n := 50
		if alone {
			n = 1
		}
		var panics atomic.Int32
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				defer func() {
					if recover() != nil {
						panics.Add(1)
					}
				}()
				_ = s.writeGrouped(ctx, func(ctx context.Context, tx *sql.Tx) error {
					if i == n/2 {
						panic("boom")
					}
					_, err := tx.ExecContext(ctx, `INSERT INTO g (k) VALUES (?)`, fmt.Sprint(i))
					return err
				})
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("writers still waiting 20 s after a panic") // the queue did not move on
		}
		if panics.Load() != 1 {
			t.Fatalf("alone %v: %d panics reached a caller, want 1", alone, panics.Load())
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := s.writeGrouped(wctx, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO g (k) VALUES ('after')`)
			return err
		})
		cancel()
		if err != nil {
			t.Fatalf("alone %v: a write after the panic: %v (the writer was left taken)", alone, err)
		}
	}
}

// TestWriteCancelledBeforeCommit: when the caller's context ends between a
// write's last statement and its commit, database/sql may already have
// rolled the transaction back; the caller hears its context's error (as
// the lease loop expects), and nothing was written.
func TestWriteCancelledBeforeCommit(t *testing.T) {
	s := openGroupStore(t)
	for i := range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		err := s.write(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO g (k) VALUES (?)`, fmt.Sprint("k", i)); err != nil {
				return err
			}
			cancel()
			time.Sleep(time.Duration(i%3) * time.Millisecond) // let the rollback run, or not
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("round %d: %v, want context.Canceled", i, err)
		}
	}
	var n int
	if err := s.r.QueryRow(`SELECT count(*) FROM g`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows written by cancelled writes (%v)", n, err)
	}
}
