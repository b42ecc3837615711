package sqlbatch

import (
	"github.com/contextd/contextd/memory"

	"regexp"
	"testing"
	"time"
)

func TestNewIDIsUUIDv4(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := NewID()
		if !re.MatchString(id) || seen[id] {
			t.Fatalf("NewID() = %q (dup %v)", id, seen[id])
		}
		seen[id] = true
	}
}

func TestPrepareBatchDeduplicatesWithinRequest(t *testing.T) {
	req := memory.AppendRequest{Chat: memory.ChatKey{Tenant: "t", ChatID: "c"}, Messages: []memory.Message{
		{ID: "a", Role: memory.RoleUser, Content: "x"},
		{ID: "a", Role: memory.RoleUser, Content: "x"},
		{Role: memory.RoleAssistant, Content: "y"},
	}}
	b, err := PrepareBatch(req, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Msgs) != 2 || b.Of[1] != 0 || b.Msgs[1].ID == "" {
		t.Fatalf("batch = %+v", b)
	}
	req.Messages[1].Content = "different"
	if _, err := PrepareBatch(req, time.Now()); err == nil {
		t.Fatal("same id with different content must conflict")
	}
}

func TestPrepareBatchIsFreshOnlyWithoutCallerIDs(t *testing.T) {
	for _, tc := range []struct {
		ids   []string
		fresh bool
	}{
		{[]string{"", ""}, true},
		{[]string{"", "m2"}, false},
		{[]string{"m1"}, false},
	} {
		req := memory.AppendRequest{Chat: memory.ChatKey{Tenant: "t", ChatID: "c"}}
		for i, id := range tc.ids {
			req.Messages = append(req.Messages, memory.Message{ID: id, Role: memory.RoleUser, Content: string(rune('a' + i))})
		}
		b, err := PrepareBatch(req, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if b.Fresh != tc.fresh {
			t.Errorf("ids %q: Fresh %v, want %v", tc.ids, b.Fresh, tc.fresh)
		}
	}
}
