package embedded

import (
	"container/list"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// chat holds one chat's points as parallel columns, ordered by seq (a
// point's slot is its position). Only what filtering and scoring need is in
// memory; role, content and created_at are read from the file for the hits
// a query returns.
//
// Per point: a float32 scale, the position of its int8 vector in the
// chat's region of the scratch file (vecFile), the seq, the time (4 bytes,
// timeColumn), two interned label ids (user, agent) only in a chat whose
// points differ in them (chatLabels), and the offset and count of its
// sparse terms in the chat's arena (termFile: 6 bytes per term, its id and
// its weight as a bfloat16, see toBF16), with no per-point allocation: 28
// bytes.
type chat struct {
	id     string
	seqs   []int64    // point keys (keys.go), ascending
	times  timeColumn // unix seconds: a turn's time, a fact's valid_at, an episode's start (noTime: none)
	scales []float32  // vector[slot] ≈ q * scale
	vpos   []uint32   // position of slot's vector in vecs
	vecs   region     // the chat's vectors in the scratch file, in the order written
	holes  uint32     // positions in vecs no slot refers to any more
	// Sparse terms live in one arena per chat, in the term scratch file
	// (termfile.go): point slot's terms are entries [spOff[slot],
	// spOff[slot]+spLen[slot]) of region sp, sorted by index.
	spOff   []uint32
	spLen   []uint32
	sp      region
	garbage int // arena entries no point refers to any more
	// items holds what filters need of each episode and fact, by key.
	items map[int64]*item
	// rows are the chat's vectors in RAM too, dim int8s a slot in slot
	// order, for the sketch's estimates and rescoring (sketch.go): nil
	// until a query uses the sketch on this chat, then kept in step by
	// writes. A query (under the index's read lock) builds them under
	// rowsMu; writers hold the write lock.
	rows []int8
	// post is the chat's inverted index of sparse terms (postings.go): nil
	// until a query of a chat of postingsFrom points builds it; appends
	// keep it in step, other writes drop it. Built under rowsMu too.
	post   *postings
	rowsMu sync.Mutex
	// resEl is c's place in the index's resident LRU while it has rows,
	// resBytes what they were counted as (resident.go).
	resEl    *list.Element
	resBytes int64
	resUsed  uint64 // resident.clock when its rows or postings were last used
	// lastQuery is resident.clock at c's last whole-chat query, warmth
	// how many of them in a row came soon after the one before (warm).
	lastQuery atomic.Uint64
	warmth    atomic.Int32
	chatLabels
}

// chatLabels are a chat's user and agent label ids.
type chatLabels struct {
	users  []uint32 // label ids; nil while every point has user, see userOf
	agents []uint32 // label ids; nil while every point has agent, see agentOf
	// user and agent are the label ids every point of the chat has while
	// users or agents is nil (a column, once made, stays until the chat is
	// emptied): a query scoped to a user or an agent then skips or takes
	// the chat whole, and the chat keeps no per-point column of them (8
	// bytes a point, 8 MB at a million points of chats that are each one
	// user's with one agent).
	user, agent uint32
}

// label records that a point with these labels was put in a chat of n
// points (before it is inserted: an empty chat takes them as its own).
// The first point with another label than the chat's gives the chat that
// label's column.
func (c *chatLabels) label(n int, user, agent uint32) {
	if n == 0 {
		c.user, c.agent = user, agent
		c.users, c.agents = nil, nil
		return
	}
	if c.users == nil && user != c.user {
		c.users = fill(c.user, n)
	}
	if c.agents == nil && agent != c.agent {
		c.agents = fill(c.agent, n)
	}
}

// fill is a column of n ids, all id.
func fill(id uint32, n int) []uint32 {
	s := make([]uint32, n, n+max(n/8, 8))
	for i := range s {
		s[i] = id
	}
	return s
}

// userOf and agentOf are slot's label ids.
func (c *chatLabels) userOf(slot int) uint32 {
	if c.users == nil {
		return c.user
	}
	return c.users[slot]
}

func (c *chatLabels) agentOf(slot int) uint32 {
	if c.agents == nil {
		return c.agent
	}
	return c.agents[slot]
}

// setLabels sets slot's label ids (after label).
func (c *chatLabels) setLabels(slot int, user, agent uint32) {
	if c.users != nil {
		c.users[slot] = user
	}
	if c.agents != nil {
		c.agents[slot] = agent
	}
}

func (c *chat) len() int { return len(c.seqs) }

// terms returns slot's entries of b (c's whole arena, termFile.all).
func (c *chat) terms(b *termBuf, slot int) ([]uint32, []uint16) {
	o, n := c.spOff[slot], c.spLen[slot]
	return b.ids[o : o+n : o+n], b.ws[o : o+n : o+n]
}

// grow returns s with room for n more elements. Columns grow by 1/8
// (at least minExtra elements), not by append's 1.25-2x: they are the
// bulk of the index, and append's slack alone would cost 10-25%.
func grow[S ~[]E, E any](s S, n, minExtra int) S {
	if len(s)+n <= cap(s) {
		return s
	}
	c := len(s) + n
	c += max(c/8, minExtra)
	// Large allocations take whole 8 KiB pages: use the rest of the last one.
	var e E
	if size := int(unsafe.Sizeof(e)); c*size > 32<<10 {
		c = (c*size + 8191) / 8192 * 8192 / size
	}
	return append(make(S, 0, c), s...)
}

// insert puts a new point at slot (keeping seqs ascending) whose n terms
// are entries [off, off+n) of c's arena.
func (c *chat) insert(slot int, pos, off, n uint32, seq, t int64, user, agent uint32, scale float32) {
	const minPoints = 8
	c.seqs = grow(c.seqs, 1, minPoints)
	c.scales = grow(c.scales, 1, minPoints)
	c.vpos = grow(c.vpos, 1, minPoints)
	c.spOff = grow(c.spOff, 1, minPoints)
	c.spLen = grow(c.spLen, 1, minPoints)
	c.seqs = slices.Insert(c.seqs, slot, seq)
	c.times.insert(slot, t)
	if c.users != nil {
		c.users = slices.Insert(grow(c.users, 1, minPoints), slot, user)
	}
	if c.agents != nil {
		c.agents = slices.Insert(grow(c.agents, 1, minPoints), slot, agent)
	}
	c.scales = slices.Insert(c.scales, slot, scale)
	c.vpos = slices.Insert(c.vpos, slot, pos)
	c.spOff = slices.Insert(c.spOff, slot, off)
	c.spLen = slices.Insert(c.spLen, slot, n)
}

// setTerms points slot at n new entries from off of c's arena; its old
// ones become garbage.
func (c *chat) setTerms(slot int, off, n uint32) {
	c.garbage += int(c.spLen[slot])
	c.spOff[slot], c.spLen[slot] = off, n
}

// keep retains the slots for which keep is true, in order. It calls gone
// for every slot it drops, before dropping it. The caller compacts the
// arena (Index.maybeCompact).
func (c *chat) keep(keep func(slot int) bool, gone func(slot int)) {
	w, rb := 0, 0
	if c.rows != nil && c.len() > 0 {
		rb = len(c.rows) / c.len()
	}
	for r := range c.seqs {
		if !keep(r) {
			gone(r)
			c.garbage += int(c.spLen[r])
			c.holes++
			continue
		}
		if w != r {
			c.seqs[w], c.scales[w] = c.seqs[r], c.scales[r]
			c.times.move(w, r)
			c.setLabels(w, c.userOf(r), c.agentOf(r))
			c.spOff[w], c.spLen[w] = c.spOff[r], c.spLen[r]
			c.vpos[w] = c.vpos[r]
			if c.rows != nil {
				copy(c.rows[w*rb:(w+1)*rb], c.rows[r*rb:(r+1)*rb])
			}
		}
		w++
	}
	if w == len(c.seqs) {
		return
	}
	c.seqs, c.scales = c.seqs[:w], c.scales[:w]
	c.times.truncate(w)
	if c.users != nil {
		c.users = c.users[:w]
	}
	if c.agents != nil {
		c.agents = c.agents[:w]
	}
	c.spOff, c.spLen, c.vpos = c.spOff[:w], c.spLen[:w], c.vpos[:w]
	if c.rows != nil {
		c.rows = c.rows[:w*rb]
	}
	if 4*w < cap(c.seqs) { // give back what a large delete freed
		c.seqs, c.users, c.agents, c.scales = slices.Clone(c.seqs), slices.Clone(c.users), slices.Clone(c.agents), slices.Clone(c.scales) // Clone keeps nil
		c.times.clone()
		c.spOff, c.spLen, c.vpos = slices.Clone(c.spOff), slices.Clone(c.spLen), slices.Clone(c.vpos)
		if c.rows != nil {
			c.rows = slices.Clone(c.rows)
		}
	}
}

// labels interns the user and agent strings of the points: thousands of
// points share a handful of them, so a point keeps a 4-byte id. Ids are
// reference counted and reused, so erased users do not linger.
type labels struct {
	ids  map[string]uint32
	strs []string
	refs []int
	free []uint32
}

func newLabels() *labels { return &labels{ids: map[string]uint32{}} }

func (l *labels) acquire(s string) uint32 {
	if id, ok := l.ids[s]; ok {
		l.refs[id]++
		return id
	}
	s = strings.Clone(s) // do not pin a caller's larger buffer
	var id uint32
	if n := len(l.free); n > 0 {
		id, l.free = l.free[n-1], l.free[:n-1]
		l.strs[id], l.refs[id] = s, 1
	} else {
		id = uint32(len(l.strs))
		l.strs, l.refs = append(l.strs, s), append(l.refs, 1)
	}
	l.ids[s] = id
	return id
}

func (l *labels) release(id uint32) {
	if l.refs[id]--; l.refs[id] > 0 {
		return
	}
	delete(l.ids, l.strs[id])
	l.strs[id] = ""
	l.free = append(l.free, id)
}

func (l *labels) lookup(s string) (uint32, bool) {
	id, ok := l.ids[s]
	return id, ok
}

func (l *labels) str(id uint32) string { return l.strs[id] }
