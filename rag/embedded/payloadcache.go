package embedded

import (
	"container/list"
	"sync"
	"unsafe"
)

// payloadCache keeps the payload (role, content, time) of recently returned
// hits in RAM, so a chat asked about again reads its hits from memory
// instead of the file. It is bounded by bytes — counted honestly: the
// entry's structs, its map slot and list element, and the strings only it
// holds — and least-recently-used. Writes invalidate: Upsert forgets the
// keys it writes, Delete forgets everything, and a generation counter stops
// a read that raced a write from caching what it read before the write.
type payloadCache struct {
	mu       sync.Mutex
	maxBytes int
	bytes    int
	gen      uint64
	order    *list.List // front: most recently used
	byKey    map[payloadKey]*list.Element
}

// payloadKey names a point. chat is the in-memory chat's own id string
// (shared, not copied per entry).
type payloadKey struct {
	tenant, chat string
	seq          int64
}

type payload struct {
	role, content string
	created       int64
	ok            bool
	// An episode's own fields, once read (episode is then true).
	episode   bool
	passage   bool // A passage's offset and its turn's length, once read.
	toSeq     int64
	started   int64
	episodeID string
	from      int32
	turnBytes int32
}

type cachedPayload struct {
	key payloadKey
	p   payload
}

// defaultPayloadCacheBytes bounds the cache's real footprint: at 1,000
// chats × 200 turns a 32 MB budget that counted content only held 44 MB of
// heap, the second owner after the index's columns.
const defaultPayloadCacheBytes = 16 << 20

// entryOverhead is what an entry costs besides its own strings: the list
// element, the entry, and the map's key, value and slack (a map slot costs
// about 1.5 times its key and value at Go's load factor).
const entryOverhead = int(unsafe.Sizeof(list.Element{})+unsafe.Sizeof(cachedPayload{})) +
	3*int(unsafe.Sizeof(payloadKey{})+unsafe.Sizeof(uintptr(0)))/2

func newPayloadCache(maxBytes int) *payloadCache {
	return &payloadCache{maxBytes: maxBytes, order: list.New(), byKey: map[payloadKey]*list.Element{}}
}

// payloadSize is what an entry holds on the heap. Tenant and chat ids are
// shared with the index (not counted); roles are interned (internRole).
func payloadSize(p payload) int {
	return entryOverhead + len(p.content) + len(p.episodeID)
}

// internRole returns the shared copy of a common role, so cached payloads
// do not each hold one.
func internRole(b []byte) string {
	for _, r := range [...]string{"user", "assistant", "system", "tool"} {
		if string(b) == r {
			return r
		}
	}
	return string(b)
}

// getAll looks up every key under one lock, filling got and done where
// the cache has the payload, and returns the generation to pass to put.
func (c *payloadCache) getAll(keys func(i int) payloadKey, got []payload, done []bool) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range got {
		if e, ok := c.byKey[keys(i)]; ok {
			c.order.MoveToFront(e)
			got[i], done[i] = e.Value.(*cachedPayload).p, true
		}
	}
	return c.gen
}

func (c *payloadCache) put(gen uint64, k payloadKey, p payload) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen || c.maxBytes <= 0 {
		return
	}
	if _, ok := c.byKey[k]; ok {
		return
	}
	c.byKey[k] = c.order.PushFront(&cachedPayload{k, p})
	c.bytes += payloadSize(p)
	for c.bytes > c.maxBytes && c.order.Len() > 0 {
		c.remove(c.order.Back())
	}
}

func (c *payloadCache) remove(e *list.Element) {
	cp := e.Value.(*cachedPayload)
	c.order.Remove(e)
	delete(c.byKey, cp.key)
	c.bytes -= payloadSize(cp.p)
}

// update replaces a cached payload (e.g. with an episode's fields), unless a
// write came in between.
func (c *payloadCache) update(gen uint64, k payloadKey, p payload) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if e, ok := c.byKey[k]; ok {
		cp := e.Value.(*cachedPayload)
		c.bytes += payloadSize(p) - payloadSize(cp.p)
		cp.p = p
	}
}

// forget drops keys about to be rewritten.
func (c *payloadCache) forget(keys []payloadKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for _, k := range keys {
		if e, ok := c.byKey[k]; ok {
			c.remove(e)
		}
	}
}

// clear drops everything (a delete by filter).
func (c *payloadCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.order.Init()
	c.byKey = map[payloadKey]*list.Element{}
	c.bytes = 0
}
