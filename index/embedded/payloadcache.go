package embedded

import (
	"container/list"
	"hash/maphash"
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
	// byKey finds an entry by its key's hash (the entry holds the key and
	// is checked; a colliding key replaces it): a hash keeps the map's
	// slots at 16 bytes instead of 48.
	byKey map[uint64]*list.Element
	seed  maphash.Seed
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
// heap, the second owner after the index's columns, for a hit rate that a
// corpus that size keeps low anyway. 8 MB holds about 25,000 hits: every
// hit of a few hundred hot chats.
const defaultPayloadCacheBytes = 8 << 20

// entryOverhead is what an entry costs besides its own strings: the list
// element, the entry and its map slot (measured: a map slot with its share
// of the control words, tombstones left by evictions and the slack of the
// last growth costs about four times its 16 bytes).
const entryOverhead = int(unsafe.Sizeof(list.Element{})+unsafe.Sizeof(cachedPayload{})) + 64

func newPayloadCache(maxBytes int) *payloadCache {
	return &payloadCache{maxBytes: maxBytes, order: list.New(), byKey: map[uint64]*list.Element{}, seed: maphash.MakeSeed()}
}

func (c *payloadCache) hash(k payloadKey) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(k.tenant)
	h.WriteByte(0)
	h.WriteString(k.chat)
	var b [8]byte
	for i := range b {
		b[i] = byte(k.seq >> (8 * i))
	}
	h.Write(b[:])
	return h.Sum64()
}

// find returns k's entry, if cached. Caller holds mu.
func (c *payloadCache) find(k payloadKey) (uint64, *list.Element) {
	h := c.hash(k)
	if e, ok := c.byKey[h]; ok && e.Value.(*cachedPayload).key == k {
		return h, e
	}
	return h, nil
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
		if _, e := c.find(keys(i)); e != nil {
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
	h, e := c.find(k)
	if e != nil {
		return
	}
	if old, ok := c.byKey[h]; ok { // another key with the same hash
		c.remove(old)
	}
	c.byKey[h] = c.order.PushFront(&cachedPayload{k, p})
	c.bytes += payloadSize(p)
	for c.bytes > c.maxBytes && c.order.Len() > 0 {
		c.remove(c.order.Back())
	}
}

func (c *payloadCache) remove(e *list.Element) {
	cp := e.Value.(*cachedPayload)
	c.order.Remove(e)
	delete(c.byKey, c.hash(cp.key))
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
	if _, e := c.find(k); e != nil {
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
		if _, e := c.find(k); e != nil {
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
	c.byKey = map[uint64]*list.Element{}
	c.bytes = 0
}
