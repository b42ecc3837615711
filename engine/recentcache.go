package engine

import (
	"context"
	"sync"
	"time"

	"github.com/contextd/contextd/memory"
)

// recentCache keeps each hot chat's newest turns in RAM, so a context does
// not read the same turns from the store on every call. Stored turns change
// only when deleted, which moves the chat's dirty mark (checked below) and
// drops this process's entry; an entry is valid only for the chat it was read from (its
// created_at) up to the last_seq it covers, both checked against the chat row
// every request reads anyway. So appends (last_seq moves: the new turns
// are read and added), erasure (the chat is gone, or re-created with another
// created_at) and other replicas' writes (same row, same checks) are all
// seen, on SQLite and on Postgres alike.
type recentCache struct {
	mu      sync.Mutex
	max     int
	entries map[memory.ChatKey]*recentEntry
	clock   uint64
}

type recentEntry struct {
	created time.Time
	mark    int64 // the chat's DirtyMark: a delete (here or elsewhere) changes it
	from    int64 // first seq held
	msgs    []memory.Message
	used    uint64
}

// Bounds: chats kept, and turns kept per chat (a longer range is read from
// the store and not cached).
const (
	recentCacheChats = 2048
	recentCacheTurns = 64
)

func newRecentCache(max int) *recentCache {
	return &recentCache{max: max, entries: map[memory.ChatKey]*recentEntry{}}
}

// messages returns the chat's turns from..chat.LastSeq, from the cache when
// it holds them, else from the store (reading only what the cache lacks).
func (c *recentCache) messages(ctx context.Context, st memory.ChatReader, chat memory.Chat, from int64) ([]memory.Message, error) {
	last := chat.LastSeq
	if c == nil || last-from+1 > recentCacheTurns {
		return st.Messages(ctx, chat.Key(), from-1, int(last-from+1))
	}
	e := c.get(chat, from)
	have := from - 1 // the cache holds from..have
	var head []memory.Message
	if e != nil {
		head = e.msgs[from-e.from:]
		if len(head) > 0 {
			have = head[len(head)-1].Seq
		}
	}
	if have >= last {
		return head[: last-from+1 : last-from+1], nil
	}
	tail, err := st.Messages(ctx, chat.Key(), have, int(last-have))
	if err != nil {
		return nil, err
	}
	out := append(append(make([]memory.Message, 0, len(head)+len(tail)), head...), tail...)
	if len(out) > 0 && out[len(out)-1].Seq == last && out[0].Seq == from && int64(len(out)) == last-from+1 {
		c.put(chat, from, out)
	}
	return out, nil
}

// get returns the entry for chat when it belongs to the same chat and holds
// from (the chat's turns from e.from on, in order, gap-free).
func (c *recentCache) get(chat memory.Chat, from int64) *recentEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[chat.Key()]
	if e == nil || !e.created.Equal(chat.CreatedAt) || e.mark != chat.DirtyMark || from < e.from || from > e.from+int64(len(e.msgs)) {
		return nil
	}
	if last := e.from + int64(len(e.msgs)) - 1; last > chat.LastSeq {
		return nil // the chat is behind what we hold: not the same history
	}
	c.clock++
	e.used = c.clock
	return e
}

func (c *recentCache) put(chat memory.Chat, from int64, msgs []memory.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clock++
	c.entries[chat.Key()] = &recentEntry{created: chat.CreatedAt, mark: chat.DirtyMark, from: from, msgs: msgs, used: c.clock}
	if len(c.entries) > c.max {
		c.evict()
	}
}

// evict drops the least recently used quarter (amortised O(1) per put).
func (c *recentCache) evict() {
	var oldest []uint64
	for _, e := range c.entries {
		oldest = append(oldest, e.used)
	}
	cut := nth(oldest, len(oldest)/4)
	for k, e := range c.entries {
		if e.used <= cut {
			delete(c.entries, k)
		}
	}
}

// nth is the n-th smallest value (n from 0).
func nth(xs []uint64, n int) uint64 {
	lo, hi := uint64(0), ^uint64(0)
	for lo < hi {
		mid := lo + (hi-lo)/2
		k := 0
		for _, x := range xs {
			if x <= mid {
				k++
			}
		}
		if k > n {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
