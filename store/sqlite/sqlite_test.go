package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/sqlite"
	"github.com/contextd/contextd/store/storetest"
)

func open(tb testing.TB) memory.Backend {
	tb.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "sub", "dir", "contextd.db"))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memory.Backend { return open(t) })
}

func TestConformanceInMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	storetest.Run(t, func(t *testing.T) memory.Backend {
		s, err := sqlite.Open(context.Background(), ":memory:")
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestReopen checks that data and the schema version survive a restart and
// that migrations are not applied twice.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	k := memory.ChatKey{Tenant: "t", ChatID: "c"}
	if _, err := s.Append(ctx, memory.AppendRequest{Chat: k, Messages: []memory.Message{{ID: "a", Role: memory.RoleUser, Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	res, err := s.Append(ctx, memory.AppendRequest{Chat: k, Messages: []memory.Message{
		{ID: "a", Role: memory.RoleUser, Content: "x"}, {ID: "b", Role: memory.RoleUser, Content: "y"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Created || res.Duplicates != 1 || res.LastSeq != 2 {
		t.Errorf("append after reopen = %+v", res)
	}
}

// TestTwoHandles opens the same file twice, as two processes would, and
// appends to one chat from both: SQLite's lock (BEGIN IMMEDIATE with
// busy_timeout) must serialise them without SQLITE_BUSY reaching callers.
func TestTwoHandles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")
	a, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	k := memory.ChatKey{Tenant: "t", ChatID: "shared"}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i, s := range []*sqlite.Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 30; j++ {
				msgs := []memory.Message{{ID: fmt.Sprintf("h%d-%d-a", i, j), Role: memory.RoleUser, Content: "q"},
					{ID: fmt.Sprintf("h%d-%d-b", i, j), Role: memory.RoleAssistant, Content: "a"}}
				if _, err := s.Append(ctx, memory.AppendRequest{Chat: k, Messages: msgs}); err != nil {
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
	msgs, err := a.Messages(ctx, k, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 120 {
		t.Fatalf("%d messages, want 120", len(msgs))
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Fatalf("message %d has seq %d", i, m.Seq)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	for _, p := range []string{"", filepath.Join(t.TempDir(), "a?b.db")} {
		if s, err := sqlite.Open(ctx, p); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", p)
		}
	}
	if _, err := sqlite.Open(ctx, "/proc/contextd-nope/x.db"); err == nil {
		t.Error("Open in an uncreatable directory succeeded")
	}
}

func BenchmarkAppendBatch50(b *testing.B) {
	storetest.BenchmarkAppend(b, func(b *testing.B) memory.Backend { return open(b) }, 50)
}

func BenchmarkAppendParallel(b *testing.B) {
	storetest.BenchmarkAppendParallel(b, func(b *testing.B) memory.Backend { return open(b) }, 50, 4)
}
