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

// tokenCache remembers the cl100k cost of rendered turns (two generations,
// bounded). The counts only steer packing; the assembler still measures the
// whole context exactly, so a stale entry can never break the budget.
//
// Entries are keyed by a 64-bit hash of the turnKey, not the key itself:
// three strings and two integers made each entry ~160 bytes with the map's
// overhead (42 MB of a 1,000-chat server's heap); a hash makes it ~16. Two
// of 2^17 turns share a hash with a chance of about 1e-9, and the exact
// measure above covers even that.
type tokenCache struct {
	mu        sync.Mutex
	seed      maphash.Seed
	cur, prev map[uint64]int32
	max       int
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{seed: maphash.MakeSeed(), cur: map[uint64]int32{}, prev: map[uint64]int32{}, max: max}
}

// hash is k's identity in the cache.
func (c *tokenCache) hash(k turnKey) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	for _, s := range [...]string{k.tok, k.tenant, k.chat} {
		h.WriteString(s)
		h.WriteByte(0)
	}
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
	return h.Sum64()
}

// cost returns the tokens of t's rendering (renderTurn); k names it. The
// rendering is built only on a miss: most requests find every turn here.
func (c *tokenCache) cost(tok tokens.Counter, k turnKey, t Turn) int {
	k.tok = tok.Name()
	if c == nil {
		return tok.Count(renderTurn(t))
	}
	key := c.hash(k)
	c.mu.Lock()
	n, ok := c.cur[key]
	if !ok {
		if n, ok = c.prev[key]; ok {
			c.put(key, n)
		}
	}
	c.mu.Unlock()
	if ok {
		return int(n)
	}
	v := tok.Count(renderTurn(t))
	c.mu.Lock()
	c.put(key, int32(v))
	c.mu.Unlock()
	return v
}

func (c *tokenCache) put(k uint64, n int32) {
	if len(c.cur) >= c.max {
		c.prev, c.cur = c.cur, make(map[uint64]int32, c.max)
	}
	c.cur[k] = n
}
