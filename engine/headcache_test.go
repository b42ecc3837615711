package engine

import (
	"context"
	"testing"

	"github.com/contextd/contextd/memory"
)

type countingHeads struct {
	rec   *memory.SummaryRecord
	calls int
}

func (c *countingHeads) SummaryHead(context.Context, memory.ChatKey) (*memory.SummaryRecord, error) {
	c.calls++
	return c.rec, nil
}

// TestHeadCacheFollowsTheRow: the cached head is served while the chat row
// names it, the store is asked once the row names another (or none, or the
// caller waited for a new one), and a served copy can change freely.
func TestHeadCacheFollowsTheRow(t *testing.T) {
	st := &countingHeads{rec: &memory.SummaryRecord{ID: "h1", Summary: memory.Summary{Topics: []string{"a"}}}}
	c := &headCache{m: map[memory.ChatKey]*memory.SummaryRecord{}}
	chat := memory.Chat{Tenant: "t", ID: "c", HeadID: "h1"}
	ctx := context.Background()
	for range 3 {
		got, err := c.head(ctx, st, chat, false)
		if err != nil || got.ID != "h1" {
			t.Fatalf("head = %v, %v", got, err)
		}
		got.Topics[0] = "changed by a caller"
	}
	if st.calls != 1 {
		t.Fatalf("store asked %d times for an unchanged head, want 1", st.calls)
	}
	if got, _ := c.head(ctx, st, chat, false); got.Topics[0] != "a" {
		t.Fatalf("a caller's change reached the cache: %v", got.Topics)
	}
	st.rec = &memory.SummaryRecord{ID: "h2"}
	chat.HeadID = "h2"
	if got, _ := c.head(ctx, st, chat, false); got.ID != "h2" || st.calls != 2 {
		t.Fatalf("new head id: got %q after %d calls, want h2 after 2", got.ID, st.calls)
	}
	if got, _ := c.head(ctx, st, chat, true); got.ID != "h2" || st.calls != 3 {
		t.Fatalf("fresh: %d calls, want 3", st.calls)
	}
	chat.HeadID = "" // not known with the row: always asked
	c.head(ctx, st, chat, false)
	if st.calls != 4 {
		t.Fatalf("no head id on the row: %d calls, want 4", st.calls)
	}
}
