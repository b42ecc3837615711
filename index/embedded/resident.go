package embedded

import (
	"container/list"
	"sync"
)

// defaultResidentBytes bounds the RAM the chats' rows (sketch.go) and
// postings (postings.go) take together: 32 MB holds the rows of about 87,000 points at 384 dims (eight
// chats of 10,000 turns). A chat's rows are built by the first query that
// uses them and, when the bound is reached, the least recently used
// chat's rows are dropped (its next query builds them again: one read of
// its region, what an exact search reads anyway). Without the bound, a
// thousand chats of a thousand points each would keep 384 MB.
const defaultResidentBytes = 32 << 20

// resident is the LRU of the chats whose rows or postings are in RAM. Lock order: a
// query holds the index's read lock, then at most one chat's rowsMu, then
// resident.mu, under which it may take other chats' rowsMu (never its own:
// it calls admit and touch after releasing it). Writers (the index's write
// lock) take resident.mu alone.
type resident struct {
	mu     sync.Mutex
	budget int64
	used   int64
	lru    list.List // *chat, most recently used first
}

// admit records bytes more of c in RAM (rows or postings just built),
// makes c the most recently used, and drops the least recently used other
// chats' rows and postings until the total is within budget.
func (r *resident) admit(c *chat, bytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.resEl == nil {
		c.resEl = r.lru.PushFront(c)
	} else {
		r.lru.MoveToFront(c.resEl)
	}
	c.resBytes += bytes
	r.used += bytes
	for e := r.lru.Back(); r.used > r.budget && e != nil && e != c.resEl; {
		prev := e.Prev()
		o := e.Value.(*chat)
		o.rowsMu.Lock()
		o.rows, o.post = nil, nil
		o.rowsMu.Unlock()
		r.used -= o.resBytes
		r.lru.Remove(e)
		o.resEl, o.resBytes = nil, 0
		e = prev
	}
}

// touch marks c's rows recently used.
func (r *resident) touch(c *chat) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.resEl != nil {
		r.lru.MoveToFront(c.resEl)
	}
}

// grew records that a write grew c's rows by bytes. Caller holds the
// index's write lock.
func (r *resident) grew(c *chat, bytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.resEl != nil {
		c.resBytes += bytes
		r.used += bytes
	}
}

// drop forgets c's rows and postings (the chat is gone, or a delete made
// it too small to use them) and sets them nil. Caller holds the index's
// write lock.
func (r *resident) drop(c *chat) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c.rows, c.post = nil, nil
	if c.resEl != nil {
		r.used -= c.resBytes
		r.lru.Remove(c.resEl)
		c.resEl, c.resBytes = nil, 0
	}
}

// dropPostings forgets c's postings only (a write they cannot follow).
// Caller holds the index's write lock.
func (r *resident) dropPostings(c *chat) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.post == nil {
		return
	}
	if c.resEl != nil {
		c.resBytes -= c.post.bytes
		r.used -= c.post.bytes
		if c.rows == nil {
			r.lru.Remove(c.resEl)
			c.resEl, c.resBytes = nil, 0
		}
	}
	c.post = nil
}
