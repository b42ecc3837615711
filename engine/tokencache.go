package engine

import (
	"hash/maphash"
	"sync"

	"github.com/contextd/contextd/internal/tokens"
)

// turnKey names one stored turn's rendering. Stored turns never change, so
// their token counts can be remembered across requests; the length guards
// against a truncated or re-created turn of the same seq.
type turnKey struct {
	tok          string // the tokenizer's name
	tenant, chat string
	seq          int64
	n            int
	passages     []PassageRef // the passages shown of a long turn (nil = whole)
}

// tokenCache remembers the cl100k cost of rendered turns (bounded). The
// counts only steer packing; the assembler still measures the whole
// context exactly, so a stale entry can never break the budget.
//
// Entries are keyed by a 64-bit hash of the turnKey, not the key itself:
// three strings and two integers made each entry ~160 bytes with the map's
// overhead (42 MB of a 1,000-chat server's heap). Two of 2^18 turns share a
// hash with a chance of about 1e-8, and the exact measure above covers
// even that. They sit in two flat arrays, two ways per set, the newest
// first: 12 bytes an entry and nothing for the GC to scan, where two
// generations of maps sized for 2^17 entries each took ~9 MB
// (docs/performance.md, "Ninth pass").
type tokenCache struct {
	mu   sync.Mutex
	seed maphash.Seed
	keys []uint64 // 0: an empty way
	vals []int32
	mask uint64 // of a set's first way
}

// newTokenCache holds up to about size counts (rounded up to a power of
// two, at least 2).
func newTokenCache(size int) *tokenCache {
	n := 2
	for n < size {
		n *= 2
	}
	return &tokenCache{seed: maphash.MakeSeed(), keys: make([]uint64, n), vals: make([]int32, n), mask: uint64(n-1) &^ 1}
}

// hash is k's identity in the cache, and the set it goes in. A whole
// turn's set follows from its chat and seq (the chat's hash plus twice the
// seq), so a request counting a run of consecutive turns reads a few
// adjacent cache lines of the arrays, not a random line a turn: most of
// this cache's cost was those misses (docs/performance.md, "Thirty-third
// pass"). A snippet's set is drawn from its whole identity.
func (c *tokenCache) hash(k turnKey) (set, key uint64) {
	var h maphash.Hash
	h.SetSeed(c.seed)
	for _, s := range [...]string{k.tok, k.tenant, k.chat} {
		h.WriteString(s)
		h.WriteByte(0)
	}
	chat := h.Sum64()
	var b [16]byte
	put := func(x, y int64) {
		for i := range 8 {
			b[i], b[8+i] = byte(x>>(8*i)), byte(y>>(8*i))
		}
		h.Write(b[:])
	}
	put(k.seq, int64(k.n))
	// Two snippets of one turn can have the same length: their offsets
	// tell them apart.
	for _, pa := range k.passages {
		put(int64(pa.From), int64(pa.To))
	}
	key = max(h.Sum64(), 1) // 0 marks an empty way
	if len(k.passages) > 0 {
		return key & c.mask, key
	}
	return (chat + 2*uint64(k.seq)) & c.mask, key
}

// cost returns the tokens of t's rendering (renderTurn); k names it. The
// rendering is built only on a miss: most requests find every turn here.
func (c *tokenCache) cost(tok tokens.Counter, k turnKey, t Turn) int {
	k.tok = tok.Name()
	return c.memo(k, func() int { return tok.Count(renderTurn(t)) })
}

// memo returns the count k names (k.tok says what is counted), computing
// it with count on a miss.
func (c *tokenCache) memo(k turnKey, count func() int) int {
	if c == nil {
		return count()
	}
	set, key := c.hash(k)
	c.mu.Lock()
	n, ok := c.getAt(set, key)
	c.mu.Unlock()
	if ok {
		return int(n)
	}
	v := count()
	c.mu.Lock()
	c.putAt(set, key, int32(v))
	c.mu.Unlock()
	return v
}

// getAt finds k in the set whose first way is i and makes it the set's
// newest.
func (c *tokenCache) getAt(i, k uint64) (int32, bool) {
	switch k {
	case c.keys[i]:
		return c.vals[i], true
	case c.keys[i+1]:
		c.keys[i], c.keys[i+1] = c.keys[i+1], c.keys[i]
		c.vals[i], c.vals[i+1] = c.vals[i+1], c.vals[i]
		return c.vals[i], true
	}
	return 0, false
}

// putAt makes k the newest entry of the set whose first way is i; the
// set's older one goes.
func (c *tokenCache) putAt(i, k uint64, n int32) {
	if c.keys[i] != k {
		c.keys[i+1], c.vals[i+1] = c.keys[i], c.vals[i]
	}
	c.keys[i], c.vals[i] = k, n
}
