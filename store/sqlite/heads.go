package sqlite

import (
	"sync"

	"github.com/contextd/contextd/memory"
)

// headCacheSize bounds the decoded summary heads kept in memory (a head is
// a few KB of summary text).
const headCacheSize = 2048

// headCache keeps the decoded head record of recently read chats, so that
// SummaryHead does not read and JSON-decode the summary on every call.
// Entries are never trusted blindly: other processes may write the same
// file, so a hit requires the chat's row id and head record id, read from
// the database by the same call, to match. Records are immutable once
// written, so a matching id means a matching record.
type headCache struct {
	mu  sync.Mutex
	max int
	m   map[memory.ChatKey]cachedHead
}

type cachedHead struct {
	pk  int64 // chats.id: a chat deleted and created again has another
	rec *memory.SummaryRecord
}

func newHeadCache(max int) *headCache {
	return &headCache{max: max, m: make(map[memory.ChatKey]cachedHead)}
}

// get returns a copy of the cached head of key if it is record id of chat pk.
func (c *headCache) get(key memory.ChatKey, pk int64, id string) (*memory.SummaryRecord, bool) {
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if !ok || e.pk != pk || e.rec.ID != id {
		return nil, false
	}
	return e.rec.Copy(), true
}

// put caches a copy of rec as the head of key (chat pk), unless a deeper
// record of the same chat is cached already (a reader that saw an older
// head finishing after an append).
func (c *headCache) put(key memory.ChatKey, pk int64, rec *memory.SummaryRecord) {
	rec = rec.Copy()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if ok && e.pk == pk && e.rec.Depth > rec.Depth {
		return
	}
	if !ok && len(c.m) >= c.max {
		for k := range c.m { // map order is random: evict an arbitrary entry
			delete(c.m, k)
			break
		}
	}
	c.m[key] = cachedHead{pk: pk, rec: rec}
}

func (c *headCache) drop(key memory.ChatKey) {
	c.mu.Lock()
	delete(c.m, key)
	c.mu.Unlock()
}
