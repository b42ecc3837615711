package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
)

// countingReader is a chat's turns, counting the store reads.
type countingReader struct {
	memory.ChatReader
	msgs  []memory.Message
	reads [][2]int64 // (after, limit) of each Messages call
}

func (r *countingReader) Messages(_ context.Context, _ memory.ChatKey, after int64, limit int) ([]memory.Message, error) {
	r.reads = append(r.reads, [2]int64{after, int64(limit)})
	var out []memory.Message
	for _, m := range r.msgs {
		if m.Seq > after && len(out) < limit {
			out = append(out, m)
		}
	}
	return out, nil
}

func (r *countingReader) add(n int, tag string) {
	for range n {
		seq := int64(len(r.msgs) + 1)
		r.msgs = append(r.msgs, memory.Message{Seq: seq, Role: memory.RoleUser, Content: fmt.Sprintf("%s %d", tag, seq)})
	}
}

func TestRecentCacheFollowsAppendsAndRecreation(t *testing.T) {
	ctx := context.Background()
	c := newRecentCache(8)
	r := &countingReader{}
	r.add(30, "v1")
	chat := memory.Chat{Tenant: "t", ID: "c", LastSeq: 30, CreatedAt: time.Unix(100, 0)}
	check := func(from int64, wantReads int, tag string) {
		t.Helper()
		got, err := c.messages(ctx, r, chat, from)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(got)) != chat.LastSeq-from+1 || got[0].Seq != from || got[len(got)-1].Content != fmt.Sprintf("%s %d", tag, chat.LastSeq) {
			t.Fatalf("from %d: %d turns %v..%v", from, len(got), got[0], got[len(got)-1])
		}
		if len(r.reads) != wantReads {
			t.Fatalf("from %d: %d store reads, want %d: %v", from, len(r.reads), wantReads, r.reads)
		}
	}
	check(11, 1, "v1") // first read
	check(11, 1, "v1") // from the cache
	check(15, 1, "v1") // the summary moved on: a suffix of the cache
	r.add(3, "v1")
	chat.LastSeq = 33
	check(15, 2, "v1") // an append: only the new turns are read
	if last := r.reads[1]; last != [2]int64{30, 3} {
		t.Fatalf("tail read %v, want after 30, 3 turns", last)
	}
	check(5, 3, "v1") // older than the cache: read again
	// The chat is erased and re-created under the same id with as many turns.
	r.msgs = nil
	r.add(33, "v2")
	chat.CreatedAt = time.Unix(200, 0)
	check(5, 4, "v2")
}
