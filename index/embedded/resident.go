package embedded

import (
	"container/list"
	"sync"
	"sync/atomic"
)

// defaultResidentBytes bounds the RAM the chats' rows (sketch.go) and
// postings (postings.go) take together: 32 MB holds the rows of about
// 87,000 points at 384 dims (eight chats of 10,000 turns). A chat's rows
// and postings are built by the first query that uses them: a chat past
// the sketch's or the postings' floor, or a warm one (warm). They leave
// RAM when the bound is reached, least recently used chat first, or when
// unused for residentAge queries (expire); the chat's next query builds
// them again (one read of its region, what an exact search reads
// anyway). Without the bound, a thousand chats of a thousand points each
// would keep 384 MB.
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
	// clock counts whole-chat queries (warm); a chat's lastQuery and
	// resUsed are readings of it.
	clock atomic.Uint64
	// warmFrom: a chat of fewer points is never warm (0: none is).
	warmFrom int
}

const (
	// warmReuse: a chat queried again within this many whole-chat queries
	// of any chat is warm (warm). Under a load spread evenly over a
	// thousand chats a chat comes back after ~1,000 queries, so about 3%
	// of queries find their chat warm; a hot chat's every query does.
	warmReuse = 32
	// residentAge: rows and postings unused for this many whole-chat
	// queries are dropped (expire), so what a chat once warm keeps in RAM
	// follows the chats that are hot now, not the bound alone.
	residentAge = 8 * warmReuse
	// warmBuild: a chat builds its rows and postings at this warmth, its
	// third query in a row. Under a load spread evenly over a thousand
	// chats one query in ~30 finds its chat within warmReuse, one in
	// ~1,000 twice in a row; building at the second (rows are large
	// allocations, postings cost about fifteen sparse scans) raised peak
	// RSS at 1,000 chats × 1,000 turns by 16–20 MB for structures hardly
	// ever used again. A hot chat reaches its third query at once.
	warmBuild = 2
	// defaultWarmFrom: a smaller chat's whole search reads under 400 KB;
	// keeping it is not worth the RAM.
	defaultWarmFrom = 1024
)

// warm records a query of all of c's points and reports how warm c is:
// the number of its queries in a row, this one included, each within
// warmReuse whole-chat queries of any chat after the one before (0: c
// is cold, or under warmFrom points). From warmBuild on, its search
// builds its rows and postings (scan), kept while the chat stays in use
// (resident's LRU, expire): a hot chat of a few thousand points otherwise
// reads ~2.5 MB of vectors and terms from the scratch files on every
// query, a fifth of a context's CPU at 2,000 long turns
// (docs/performance.md, "Twenty-third pass"). Only whole-chat queries
// count: one request's drills and fact lookups query the same chat again
// within microseconds, which says nothing about the next request.
func (r *resident) warm(c *chat) int {
	if r.warmFrom <= 0 || c.len() < r.warmFrom {
		return 0
	}
	now := r.clock.Add(1)
	prev := c.lastQuery.Swap(now)
	if now%warmReuse == 0 {
		// Chats that stop being queried leave RAM even when no other chat
		// is warm (and would call admit or touch).
		r.mu.Lock()
		r.expire(nil)
		r.mu.Unlock()
	}
	if prev == 0 || now-prev > warmReuse {
		c.warmth.Store(0)
		return 0
	}
	return int(c.warmth.Add(1))
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
	c.resUsed = r.clock.Load()
	for e := r.lru.Back(); r.used > r.budget && e != nil && e != c.resEl; {
		prev := e.Prev()
		r.evict(e)
		e = prev
	}
	r.expire(c)
}

// expire drops the rows and postings that went unused for residentAge
// whole-chat queries, least recently used first, never keep's (its
// caller holds them). Caller holds r.mu.
func (r *resident) expire(keep *chat) {
	for e := r.lru.Back(); e != nil && e.Value.(*chat) != keep && r.stale(e.Value.(*chat)); {
		prev := e.Prev()
		r.evict(e)
		e = prev
	}
}

// stale reports whether o's rows and postings went unused for
// residentAge whole-chat queries. Caller holds r.mu.
func (r *resident) stale(o *chat) bool { return r.clock.Load()-o.resUsed > residentAge }

// evict drops the rows and postings of e's chat. Caller holds r.mu.
func (r *resident) evict(e *list.Element) {
	o := e.Value.(*chat)
	o.rowsMu.Lock()
	o.rows, o.post = nil, nil
	o.rowsMu.Unlock()
	r.used -= o.resBytes
	r.lru.Remove(e)
	o.resEl, o.resBytes = nil, 0
}

// touch marks c's rows recently used, and drops other chats' that have
// gone stale (least recently used first: amortised O(1)). Never c's own:
// the caller holds c's rows.
func (r *resident) touch(c *chat) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.resEl == nil {
		return
	}
	r.lru.MoveToFront(c.resEl)
	c.resUsed = r.clock.Load()
	r.expire(c)
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
