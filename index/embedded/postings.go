// Postings: the sparse side of long chats without a scan of every point.
//
// The exact sparse scan looks up each of a point's terms in the query's
// table: for a chat of long turns ~100 terms a point, 11% of a
// 10,000-turn chat's query (docs/performance.md, sixteenth pass). A chat's
// inverted index (term -> the slots holding it, with their weights)
// touches only the points that share a query term. It is built by the
// first query of a chat of at least defaultPostingsFrom (4,096) points, kept in step by
// appends, dropped by other writes (the next query rebuilds it), and
// counted with the chat's rows in the resident LRU (resident.go).
//
// Scores are the scan's exactly: a point's terms and the query's are both
// ascending, so the scan adds a point's products in ascending term order;
// the postings are walked term by term in ascending order, adding each
// product to the point's sum in the same order, in the same float32
// arithmetic.
package embedded

// defaultPostingsFrom: chats of fewer points keep the exact sparse scan.
// Building postings costs about fifteen scans (a map append a term),
// repaid only by the queries that find them in RAM; below 4,096 points a
// scan costs under ~0.5 ms (~100-150 ns a point of long turns). With the
// floor at 1,024, a thousand chats of a thousand turns (and their
// episodes and facts: just over 1,024 points) queried in turn built
// postings that filled the resident bound (33 MB) and were evicted before
// their next use. The same floor as the rows' (defaultSketchFrom).
const defaultPostingsFrom = defaultSketchFrom

// postings is a chat's inverted index of sparse terms.
type postings struct {
	lists map[uint32]*plist
	n     int   // entries
	bytes int64 // what the resident LRU counts
}

type plist struct {
	slots []int32
	ws    []uint16 // bfloat16, as the arena
}

// postingBytes approximates a term's list and map entry beyond its
// entries (6 bytes each).
const postingBytes = 80

func (p *postings) add(slot int32, idx []uint32, ws []uint16) int64 {
	var grew int64
	for j, t := range idx {
		l := p.lists[t]
		if l == nil {
			l = &plist{}
			p.lists[t] = l
			grew += postingBytes
		}
		c := cap(l.slots)
		l.slots, l.ws = append(l.slots, slot), append(l.ws, ws[j])
		grew += int64(cap(l.slots)-c) * 6
	}
	p.n += len(idx)
	p.bytes += grew
	return grew
}

// buildPostings indexes c's terms (one read of its arena); nil when that
// read fails. Caller holds mu (a read lock will do) and c.rowsMu.
func (ix *Index) buildPostings(c *chat) *postings {
	b, err := ix.tf.all(c.sp)
	if err != nil {
		return nil
	}
	defer ix.tf.put(b)
	p := &postings{lists: make(map[uint32]*plist, (int(c.sp.n)-c.garbage)/8)}
	for s := range c.seqs {
		idx, ws := c.terms(b, s)
		p.add(int32(s), idx, ws)
	}
	return p
}

// postingsOf returns c's postings, building them when none are in RAM;
// nil when they cannot be built (the search scans instead). Caller holds
// mu (a read lock will do).
func (ix *Index) postingsOf(c *chat) *postings {
	c.rowsMu.Lock()
	if p := c.post; p != nil {
		c.rowsMu.Unlock()
		ix.res.touch(c)
		return p
	}
	p := ix.buildPostings(c)
	c.post = p
	c.rowsMu.Unlock()
	if p != nil {
		ix.res.admit(c, p.bytes)
	}
	return p
}

// putPostings keeps c's postings in step with a write of slot, whose
// terms are idx and ws: a point appended after every other gets its
// entries; any other write (a point inserted before others shifts their
// slots, a replaced one changes its terms) drops them. Caller holds the
// index's write lock.
func (ix *Index) putPostings(c *chat, slot int, found bool, idx []uint32, ws []uint16) {
	p := c.post
	if p == nil {
		return
	}
	if found || slot != c.len()-1 {
		ix.res.dropPostings(c)
		return
	}
	ix.res.grew(c, p.add(int32(slot), idx, ws))
}

// sparsePostings scores the points of c that m accepts (all: every one)
// and share a query term into stop, from c's postings. Caller holds mu.
func sparsePostings(c *chat, p *postings, m *matcher, all bool, sq *sparseQuery, stop *topKHeap) {
	acc := make([]float32, c.len())
	hit := make([]bool, c.len())
	touched := make([]int32, 0, 256)
	for k, t := range sq.idx {
		l := p.lists[t]
		if l == nil {
			continue
		}
		w, ws := sq.w[k], l.ws[:len(l.slots)]
		for j, s := range l.slots {
			if !hit[s] {
				hit[s] = true
				touched = append(touched, s)
			}
			acc[s] += w * fromBF16(ws[j])
		}
	}
	for _, s := range touched { // any order: the heap's order is total (cmpScored)
		if (all || m.ok(c, int(s))) && stop.admits(acc[s]) {
			stop.push(scored{ref{c, s}, acc[s]})
		}
	}
}
