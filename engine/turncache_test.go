package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
)

// countingReader is a chat's turns, counting the store reads.
type countingReader struct {
	memory.ChatReader
	msgs   []memory.Message
	reads  [][2]int64 // (after, limit) of each Messages call
	bySeqs [][]int64  // seqs of each MessagesBySeq call
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

func (r *countingReader) MessagesBySeq(_ context.Context, _ memory.ChatKey, seqs []int64) ([]memory.Message, error) {
	r.bySeqs = append(r.bySeqs, slices.Clone(seqs))
	var out []memory.Message
	for _, m := range r.msgs {
		if slices.Contains(seqs, m.Seq) {
			out = append(out, m)
		}
	}
	return out, nil
}

// chatOf is a chat of n turns tagged v1, and its row.
func chatOf(n int) (*countingReader, memory.Chat) {
	r := &countingReader{}
	r.add(n, "v1")
	return r, memory.Chat{Tenant: "t", ID: "c", LastSeq: int64(n), CreatedAt: time.Unix(100, 0)}
}

func (r *countingReader) add(n int, tag string) {
	for range n {
		seq := int64(len(r.msgs) + 1)
		r.msgs = append(r.msgs, memory.Message{Seq: seq, Role: memory.RoleUser, Content: fmt.Sprintf("%s %d", tag, seq)})
	}
}

func TestTurnCacheWindowFollowsAppendsAndRecreation(t *testing.T) {
	ctx := context.Background()
	c := newTurnCache(1 << 20)
	r, chat := chatOf(30)
	check := func(from int64, wantReads int, tag string) {
		t.Helper()
		got, err := c.window(ctx, r, chat, from)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(got)) != chat.LastSeq-from+1 || got[0].Seq != from || got[len(got)-1].Content != fmt.Sprintf("%s %d", tag, chat.LastSeq) {
			t.Fatalf("from %d: %d turns %v..%v", from, len(got), got[0], got[len(got)-1])
		}
		for i, m := range got {
			if m.Seq != from+int64(i) {
				t.Fatalf("from %d: turn %d has seq %d", from, i, m.Seq)
			}
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
	check(5, 3, "v1")
	// The chat is erased and re-created under the same id with as many turns.
	r.msgs = nil
	r.add(33, "v2")
	chat.CreatedAt = time.Unix(200, 0)
	check(5, 4, "v2")
}

func TestTurnCacheBySeqIsCheckedAgainstTheChatRow(t *testing.T) {
	ctx := context.Background()
	c := newTurnCache(1 << 20)
	r, chat := chatOf(40)
	get := func(seqs ...int64) []memory.Message {
		t.Helper()
		got, err := c.bySeq(ctx, r, chat, seqs)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	seqsOf := func(msgs []memory.Message) []int64 {
		var out []int64
		for _, m := range msgs {
			out = append(out, m.Seq)
		}
		return out
	}
	if got := seqsOf(get(9, 3, 41, 7)); !slices.Equal(got, []int64{3, 7, 9}) {
		t.Fatalf("got seqs %v, want 3 7 9 (41 is after last_seq)", got)
	}
	if len(r.bySeqs) != 1 || !slices.Equal(r.bySeqs[0], []int64{3, 7, 9}) {
		t.Fatalf("store reads %v, want one of 3 7 9", r.bySeqs)
	}
	// The window of the same chat joins the neighbours in one entry.
	if _, err := c.window(ctx, r, chat, 35); err != nil {
		t.Fatal(err)
	}
	if got := seqsOf(get(7, 8, 36)); !slices.Equal(got, []int64{7, 8, 36}) || len(r.bySeqs) != 2 || !slices.Equal(r.bySeqs[1], []int64{8}) {
		t.Fatalf("got %v with store reads %v: want only 8 read", got, r.bySeqs)
	}
	// A turn deleted (here or by another process) moves the chat's mark:
	// nothing read under the old mark is served.
	r.msgs[6].Content, r.msgs[6].Deleted = "", true
	chat.DirtyMark = 1
	if got := get(7); len(got) != 1 || !got[0].Deleted || len(r.bySeqs) != 3 {
		t.Fatalf("after a deletion got %+v (store reads %v), want the tombstone from the store", got, r.bySeqs)
	}
	// A reader still holding the old row does not get the new entry's
	// turns either, nor puts its own back over them for the new row.
	old := chat
	old.DirtyMark = 0
	if _, err := c.bySeq(ctx, r, old, []int64{8}); err != nil {
		t.Fatal(err)
	}
	if got := get(7); !got[0].Deleted {
		t.Fatalf("the current row was served a turn read under the old one: %+v", got[0])
	}
}

func TestTurnCacheStaysWithinItsBytes(t *testing.T) {
	ctx := context.Background()
	const max = 64 << 10
	c := newTurnCache(max)
	big := strings.Repeat("x", 1000)
	for i := range 200 {
		r := &countingReader{}
		for s := range 40 { // ~44 KB: more than a chat's share
			r.msgs = append(r.msgs, memory.Message{Seq: int64(s + 1), Content: big})
		}
		chat := memory.Chat{Tenant: "t", ID: fmt.Sprint("c", i), LastSeq: 40, CreatedAt: time.Unix(1, 0)}
		got, err := c.window(ctx, r, chat, 1)
		if err != nil || len(got) != 40 {
			t.Fatalf("chat %d: %d turns, %v", i, len(got), err)
		}
		if c.bytes > max {
			t.Fatalf("after chat %d the cache holds %d bytes, bound %d", i, c.bytes, max)
		}
		// One chat keeps at most its share of the cache: its newest turns.
		e := c.entries[chat.Key()]
		if e.bytes > max/chatShare || e.msgs[len(e.msgs)-1].Seq != 40 || e.msgs[0].Seq == 1 {
			t.Fatalf("chat %d keeps %d bytes up to seq %d", i, e.bytes, e.msgs[len(e.msgs)-1].Seq)
		}
	}
	sum := 0
	for _, e := range c.entries {
		sum += e.bytes
	}
	if sum != c.bytes {
		t.Fatalf("entries hold %d bytes, the count says %d", sum, c.bytes)
	}
}

// A window longer than maxCachedWindow (a backlog the summary has not
// covered, or the verbatim tail of a large budget) is cached as a span:
// a hot chat's next request does not read it again, and the chat keeps at
// most its share of the cache.
func TestTurnCacheKeepsLongWindowsWithinTheChatsShare(t *testing.T) {
	ctx := context.Background()
	c := newTurnCache(1 << 20)
	r, chat := chatOf(maxCachedWindow + 10)
	for range 2 {
		got, err := c.window(ctx, r, chat, 1)
		if err != nil || len(got) != len(r.msgs) {
			t.Fatalf("%d turns, %v", len(got), err)
		}
	}
	if len(r.reads) != 1 || c.bytes == 0 || c.bytes > (1<<20)/chatShare {
		t.Fatalf("%d store reads and %d bytes cached, want 1 read and at most a chat's share kept", len(r.reads), c.bytes)
	}
}
