package rag

import (
	"hash/maphash"
	"sync"
)

// hitCache keeps what is read from a hit's text (its term set, the option
// it chooses): the same turns come back query after query, and
// tokenising them was a fifth of a rag_augmented request's CPU, reading
// their choices another 8%. Bounded; past hitCacheSize it starts over.
// Entries are keyed by a 64-bit hash of the hitKey (four strings and three
// integers: ~110 bytes a map slot, 32 hashed; ~11 MB of a 1,000-chat
// server's live heap, most of it keys). Two of 50,000 entries share a hash
// with a chance of about 1e-10, and a wrong entry can only change which
// of two hits is called a near-duplicate, or which earlier turn a choice
// looks for.
type hitCache[V any] struct {
	mu   sync.Mutex
	seed maphash.Seed
	m    map[uint64]V
}

// hitKey is a hit's identity and length: a passage of a turn is not the
// turn, a fact is not the turn it came from.
type hitKey struct {
	tenant, chat    string
	id              string
	kind            string
	seq             int64
	passage, length int
}

const hitCacheSize = 50_000

// get returns read(t.Content), computed once per hit.
func (c *hitCache[V]) get(tenant string, t Turn, read func(string) V) V {
	k := hitKey{tenant: tenant, chat: t.ChatID, id: t.id(), kind: t.Kind, seq: t.Seq, length: len(t.Content)}
	if len(t.Passages) > 0 {
		k.passage = t.Passages[0].From
	}
	c.mu.Lock()
	if c.m == nil {
		c.seed, c.m = maphash.MakeSeed(), make(map[uint64]V, 1024)
	}
	h := maphash.Comparable(c.seed, k)
	v, ok := c.m[h]
	c.mu.Unlock()
	if ok {
		return v
	}
	v = read(t.Content)
	c.mu.Lock()
	if len(c.m) >= hitCacheSize {
		c.m = make(map[uint64]V, 1024)
	}
	c.m[h] = v
	c.mu.Unlock()
	return v
}
