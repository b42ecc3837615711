package sqlite

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/contextd/contextd/memory"
)

// What is erased is gone from the file, not left in its free pages for
// anyone with the file to read (secure_delete).
func TestErasedTextLeavesTheFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	key := memory.ChatKey{Tenant: "t", ChatID: "c1"}
	var msgs []memory.Message
	for range 50 {
		msgs = append(msgs, memory.Message{Role: memory.RoleUser, Content: "the Wombatsun vault code is 7731, keep it safe"})
	}
	if _, err := st.Append(ctx, memory.AppendRequest{Chat: key, UserID: "u", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, memory.AppendRequest{Chat: memory.ChatKey{Tenant: "t", ChatID: "c2"}, Messages: []memory.Message{{Role: memory.RoleUser, Content: "unrelated"}}}); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteChat(ctx, key); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if bytes.Contains(b, []byte("Wombatsun")) {
			t.Errorf("%s still holds the erased text", filepath.Base(f))
		}
	}
}
