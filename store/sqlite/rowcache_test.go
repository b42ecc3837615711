package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
)

func openFile(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustChatRow(t *testing.T, s *Store, k memory.ChatKey) memory.Chat {
	t.Helper()
	c, err := s.Chat(context.Background(), k)
	if err != nil {
		t.Fatalf("Chat(%v): %v", k, err)
	}
	return c
}

// cached reports whether k's row is in the cache.
func cached(s *Store, k memory.ChatKey) bool {
	s.rows.mu.Lock()
	defer s.rows.mu.Unlock()
	_, ok := s.rows.m[k]
	return ok
}

// A write to any table the chat row is read from, made by SQL the store's
// methods never send, drops the cached row: the hook, not the methods,
// knows what changed.
func TestChatRowsSeeEveryTable(t *testing.T) {
	ctx := context.Background()
	s := openFile(t, filepath.Join(t.TempDir(), "c.db"))
	k := memory.ChatKey{Tenant: "t", ChatID: "c"}
	if _, err := s.Append(ctx, memory.AppendRequest{Chat: k, UserID: "u", Messages: []memory.Message{
		{Role: memory.RoleUser, Content: "a"}, {Role: memory.RoleUser, Content: "b"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := memory.AppendSummary(ctx, s, k, 0, summaryRec("one", 2)); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveProfile(ctx, "t", "u", memory.ProfileState{}, 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		table, sql string
		check      func(memory.Chat) bool
	}{
		{"chats", `UPDATE chats SET summary_dirty = 7`, func(c memory.Chat) bool { return c.DirtyMark == 7 }},
		{"conversation_summaries", `DELETE FROM conversation_summaries`, func(c memory.Chat) bool { return c.HeadID == "" }},
		{"profiles", `UPDATE profiles SET version = 5`, func(c memory.Chat) bool { return c.ProfileVersion == 5 }},
	} {
		t.Run(tc.table, func(t *testing.T) {
			before := mustChatRow(t, s, k)
			if !cached(s, k) {
				t.Fatal("the row was not cached: this test would prove nothing")
			}
			if tc.check(before) {
				t.Fatalf("the row already shows the change: %+v", before)
			}
			if err := s.write(ctx, func(tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, tc.sql)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if c := mustChatRow(t, s, k); !tc.check(c) {
				t.Fatalf("after %s: %+v, the cached row", tc.sql, c)
			}
		})
	}
}

// Appends and reads of one chat from many goroutines: a read that follows
// an append never shows less than that append's last seq, and a deleted
// chat is never served from the cache.
func TestChatRowsReadYourWrites(t *testing.T) {
	ctx := context.Background()
	s := openFile(t, filepath.Join(t.TempDir(), "c.db"))
	k := memory.ChatKey{Tenant: "t", ChatID: "c"}
	appendTurns(t, s, k, 1)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 4 {
		wg.Add(2)
		go func() { // appends, each checked by the next read
			defer wg.Done()
			for i := range 40 {
				res, err := s.Append(ctx, memory.AppendRequest{Chat: k, Messages: []memory.Message{
					{ID: fmt.Sprint(w, "-", i), Role: memory.RoleUser, Content: "x"}}})
				if err != nil {
					errs <- err
					return
				}
				c, err := s.Chat(ctx, k)
				if err != nil || c.LastSeq < res.LastSeq {
					errs <- fmt.Errorf("after an append to seq %d: %+v %v", res.LastSeq, c, err)
					return
				}
			}
		}()
		go func() { // readers keep the cache full
			defer wg.Done()
			for range 400 {
				if _, err := s.Chat(ctx, k); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if c := mustChatRow(t, s, k); c.LastSeq != 161 {
		t.Fatalf("last seq %d, want 161", c.LastSeq)
	}
	if err := s.DeleteChat(ctx, k); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Chat(ctx, k); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("Chat after delete: %v, want ErrNotFound", err)
	}
}

// A read that started before a write's commit does not put its (old) row
// back after the write dropped it.
func TestChatRowsRacingReadDoesNotPutBack(t *testing.T) {
	r := newChatRows(alwaysAlone{}, 8)
	k := memory.ChatKey{Tenant: "t", ChatID: "c"}
	_, epoch, ok := r.get(k)
	if ok {
		t.Fatal("empty cache hit")
	}
	// A write to chat row 1 commits while the read is under way.
	c := r.begin()
	r.note(1)
	r.invalidate(r.end(c), true)
	r.put(k, 1, memory.Chat{LastSeq: 1}, epoch)
	if _, _, ok := r.get(k); ok {
		t.Fatal("the racing read's row was kept")
	}
	// A read that starts after it is kept.
	_, epoch, _ = r.get(k)
	r.put(k, 1, memory.Chat{LastSeq: 2}, epoch)
	if got, _, ok := r.get(k); !ok || got.LastSeq != 2 {
		t.Fatalf("get = %+v %v, want the new row", got, ok)
	}
}

type alwaysAlone struct{}

func (alwaysAlone) state() (uint64, bool) { return 1, true }
func (alwaysAlone) close() error          { return nil }

// Another handle on the file: while it is open this one reads through, and
// one that came, wrote and went while this one did not look empties the
// cache all the same (the file's generation moved).
func TestChatRowsOtherHandles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")
	a := openFile(t, path)
	k := memory.ChatKey{Tenant: "t", ChatID: "c"}
	appendTurns(t, a, k, 2)
	if mustChatRow(t, a, k); !cached(a, k) {
		t.Fatal("not cached while a is alone")
	}

	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	appendTurns(t, b, k, 1)
	if c := mustChatRow(t, a, k); c.LastSeq != 3 {
		t.Fatalf("a reads last seq %d while b is open, want 3", c.LastSeq)
	}
	if cached(a, k) {
		t.Fatal("a cached a row while b was open")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	// a caches again; c comes, writes and goes between two of a's reads.
	if mustChatRow(t, a, k); !cached(a, k) {
		t.Fatal("not cached once b closed")
	}
	c, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	appendTurns(t, c, k, 4)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mustChatRow(t, a, k); got.LastSeq != 7 {
		t.Fatalf("a reads last seq %d after c came and went, want 7", got.LastSeq)
	}
}

// The cache is bounded.
func TestChatRowsBounded(t *testing.T) {
	r := newChatRows(alwaysAlone{}, 4)
	for i := range 10 {
		k := memory.ChatKey{Tenant: "t", ChatID: fmt.Sprint(i)}
		_, epoch, _ := r.get(k)
		r.put(k, int64(i), memory.Chat{ID: k.ChatID, UpdatedAt: time.Unix(int64(i), 0)}, epoch)
	}
	if len(r.m) != 4 || len(r.byPK) != 4 {
		t.Fatalf("%d entries, %d row ids; want 4", len(r.m), len(r.byPK))
	}
	for k, e := range r.m {
		if r.byPK[e.pk] != k || e.row.ID != k.ChatID {
			t.Fatalf("entry %v does not match its row id %d", k, e.pk)
		}
	}
}

// An append carries its chat's cached row: the read that follows serves
// the row a query would read (last seq and time moved, head and profile
// kept), however many appends the group held; a row something else
// changed in the same transaction is dropped, as is one whose
// transaction rolled back.
func TestChatRowsCarriedAcrossAppends(t *testing.T) {
	ctx := context.Background()
	s := openFile(t, filepath.Join(t.TempDir(), "c.db"))
	k := memory.ChatKey{Tenant: "t", ChatID: "c"}
	appendN := func(n int) {
		t.Helper()
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.Append(ctx, memory.AppendRequest{Chat: k, UserID: "u", Messages: []memory.Message{
					{Role: memory.RoleUser, Content: fmt.Sprintf("turn %d", i)}}}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	appendN(1)
	if _, err := memory.AppendSummary(ctx, s, k, 0, summaryRec("one", 1)); err != nil {
		t.Fatal(err)
	}
	mustChatRow(t, s, k)
	for _, n := range []int{1, 8} {
		appendN(n)
		if !cached(s, k) {
			t.Fatalf("%d appends dropped the row", n)
		}
		got := mustChatRow(t, s, k)
		_, want, err := s.readChat(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("after %d appends: served %+v, the row is %+v", n, got, want)
		}
	}

	r := newChatRows(alwaysAlone{}, 8)
	r.put(k, 1, memory.Chat{LastSeq: 3}, 0)
	for _, tc := range []struct {
		name      string
		notes     int
		committed bool
	}{{"another change to the row", 2, true}, {"rolled back", 1, false}} {
		c := r.begin()
		for range tc.notes {
			r.note(1)
		}
		r.moved(1, 4, time.Unix(9, 0))
		r.invalidate(r.end(c), tc.committed)
		if _, _, ok := r.get(k); ok {
			t.Errorf("%s: the row was carried", tc.name)
		}
		r.put(k, 1, memory.Chat{LastSeq: 3}, r.epoch)
	}
}
