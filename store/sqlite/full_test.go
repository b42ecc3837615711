package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/sqlite"
)

// TestMaxPagesFull: past sqlite.MaxPages an append fails with
// memory.ErrFull (SQLITE_FULL, as on a full disk), storing nothing of
// it; the turns before it stay, and a larger cap takes appends again.
func TestMaxPagesFull(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	s, err := sqlite.Open(ctx, path, sqlite.MaxPages(256))
	if err != nil {
		t.Fatal(err)
	}
	k := memory.ChatKey{Tenant: "t", ChatID: "c"}
	body := strings.Repeat("words to fill the page ", 200)
	stored := 0
	for ; stored < 10000; stored++ {
		_, err = s.Append(ctx, memory.AppendRequest{Chat: k,
			Messages: []memory.Message{{ID: fmt.Sprint("m", stored), Role: memory.RoleUser, Content: body}}})
		if err != nil {
			break
		}
	}
	if !errors.Is(err, memory.ErrFull) {
		t.Fatalf("after %d appends: %v, want ErrFull", stored, err)
	}
	if stored == 0 {
		t.Fatal("the cap left no room for one append")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = sqlite.Open(ctx, path, sqlite.MaxPages(100000))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Append(ctx, memory.AppendRequest{Chat: k,
		Messages: []memory.Message{{ID: "after", Role: memory.RoleUser, Content: body}}}); err != nil {
		t.Fatalf("append under a larger cap: %v", err)
	}
	c, err := s.Chat(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if c.LastSeq != int64(stored+1) {
		t.Errorf("last seq %d, want %d (every stored turn and the one after)", c.LastSeq, stored+1)
	}
}
