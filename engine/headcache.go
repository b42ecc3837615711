package engine

import (
	"context"
	"sync"

	"github.com/contextd/contextd/memory"
)

// headCache keeps the decoded summary head of recently read chats, checked
// against the head id the chat row carries (memory.Chat.HeadID, read with
// the row): a request that finds its chat's head here reads the chat row
// and nothing else for its summary. Records are immutable once written, so
// a matching id is a matching record; on any other store (or a chat with
// no head) the store is asked, as before.
type headCache struct {
	mu sync.Mutex
	m  map[memory.ChatKey]*memory.SummaryRecord
}

// headCacheChats bounds the cache (a head is a few KB); past it, it starts
// over.
const headCacheChats = 2048

// head returns chat's current summary record (nil: none), a copy the
// caller may change. fresh skips the cache (after waiting for a summary,
// the row read before it is older than the head).
func (c *headCache) head(ctx context.Context, st interface {
	SummaryHead(context.Context, memory.ChatKey) (*memory.SummaryRecord, error)
}, chat memory.Chat, fresh bool) (*memory.SummaryRecord, error) {
	key := chat.Key()
	if !fresh && chat.HeadID != "" {
		c.mu.Lock()
		rec, ok := c.m[key]
		c.mu.Unlock()
		if ok && rec.ID == chat.HeadID {
			return rec.Copy(), nil
		}
	}
	rec, err := st.SummaryHead(ctx, key)
	if err != nil || rec == nil {
		return rec, err
	}
	kept := rec.Copy()
	c.mu.Lock()
	if len(c.m) >= headCacheChats {
		c.m = map[memory.ChatKey]*memory.SummaryRecord{}
	}
	c.m[key] = kept
	c.mu.Unlock()
	return rec, nil
}
