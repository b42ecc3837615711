package embedded

import (
	"container/list"
	"sync"
)

// payloadCache keeps the payload (role, content, time) of recently returned
// hits in RAM, so a chat asked about again reads its hits from memory
// instead of the file. It is bounded by bytes and least-recently-used.
// Writes invalidate: Upsert forgets the keys it writes, Delete forgets
// everything, and a generation counter stops a read that raced a write from
// caching what it read before the write.
type payloadCache struct {
	mu       sync.Mutex
	maxBytes int
	bytes    int
	gen      uint64
	order    *list.List // front: most recently used
	byKey    map[payloadKey]*list.Element
}

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
	toSeq     int64
	started   int64
	episodeID string
	// A passage's offset and its turn's length, once read (passage true).
	passage   bool
	from      int
	turnBytes int
}

type cachedPayload struct {
	key payloadKey
	p   payload
}

// defaultPayloadCacheBytes holds the hits of a few thousand recent queries.
const defaultPayloadCacheBytes = 32 << 20

func newPayloadCache(maxBytes int) *payloadCache {
	return &payloadCache{maxBytes: maxBytes, order: list.New(), byKey: map[payloadKey]*list.Element{}}
}

func payloadSize(k payloadKey, p payload) int {
	return len(k.tenant) + len(k.chat) + len(p.role) + len(p.content) + 96
}

// generation is read before a file read; put ignores results read under an
// older generation.
func (c *payloadCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

func (c *payloadCache) get(k payloadKey) (payload, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok {
		return payload{}, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cachedPayload).p, true
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
	c.bytes += payloadSize(k, p)
	for c.bytes > c.maxBytes && c.order.Len() > 0 {
		c.remove(c.order.Back())
	}
}

func (c *payloadCache) remove(e *list.Element) {
	cp := e.Value.(*cachedPayload)
	c.order.Remove(e)
	delete(c.byKey, cp.key)
	c.bytes -= payloadSize(cp.key, cp.p)
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
		c.bytes += len(p.episodeID) - len(cp.p.episodeID)
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
