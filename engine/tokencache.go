package engine

import (
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
	passages     string // the passages shown of a long turn ("" = whole)
}

// tokenCache remembers the cl100k cost of rendered turns (two generations,
// bounded). The counts only steer packing; the assembler still measures the
// whole context exactly, so a stale entry can never break the budget.
type tokenCache struct {
	mu        sync.Mutex
	cur, prev map[turnKey]int32
	max       int
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{cur: map[turnKey]int32{}, prev: map[turnKey]int32{}, max: max}
}

// cost returns the tokens of text, the rendering of the turn k names.
func (c *tokenCache) cost(tok tokens.Counter, k turnKey, text string) int {
	k.tok = tok.Name()
	if c == nil {
		return tok.Count(text)
	}
	c.mu.Lock()
	n, ok := c.cur[k]
	if !ok {
		if n, ok = c.prev[k]; ok {
			c.put(k, n)
		}
	}
	c.mu.Unlock()
	if ok {
		return int(n)
	}
	v := tok.Count(text)
	c.mu.Lock()
	c.put(k, int32(v))
	c.mu.Unlock()
	return v
}

func (c *tokenCache) put(k turnKey, n int32) {
	if len(c.cur) >= c.max {
		c.prev, c.cur = c.cur, make(map[turnKey]int32, c.max)
	}
	c.cur[k] = n
}
