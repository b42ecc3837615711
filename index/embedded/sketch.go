// Sketch: a bounded candidate set for the dense side of long chats.
//
// The exact dense scan costs a chat's every point on every query: its
// dim-byte int8 vector read from the vector file (one pread of the chat's
// region: 3.8 MB at 10,000 points) and a dot product of dim multiply-adds.
// Past a few thousand points that is most of a query (docs/performance.md,
// seventeenth pass). A chat from sketchFrom points keeps its int8 vectors
// in RAM too, in slot order beside its other columns, and a query
//
//  1. estimates every point's score by a partial dot product over the
//     query's heaviest components only: those holding 90% of its squared
//     norm, at least 16 and at most dim/4 of them (40-50 for a hashing
//     query of a few words), with nothing read from the file;
//  2. keeps the best K estimates (candidates(prefetch)); and
//  3. rescores those exactly (the full int8 dot product the exact scan
//     computes), from the same rows.
//
// What was measured before choosing this (BenchmarkScanCost and
// TestSketchRecall, on the default hashing embedder's vectors of
// chat-like text; docs/performance.md has the numbers):
//
//   - a binary sketch (sign bits, popcount, the query at 4 bits) found
//     0.36 of the exact top 88 among its best 352 estimates: a hashing
//     vector is heavy-tailed, a word the query shares shows as one large
//     component, and sign bits cannot tell it from noise. 2-bit
//     components found 0.65-0.78, 4-bit ones 0.99;
//   - rescoring candidates from the vector file cost ~0.8 µs each (one
//     pread a candidate: they are scattered), five times an exact point of
//     the sequential scan, which ate most of what the estimates saved.
//
// So the rows are the int8 vectors themselves (dim bytes a point, for
// chats past sketchFrom only), and the estimate is the exact partial dot
// product over the components that carry the query.
//
// The answer is approximate: a point whose exact score would place it in
// the top prefetch but whose estimate is not in the top K is missed. The
// tests measure recall of the exact top list (sketch_test.go); the query
// falls back to the exact scan whenever completeness is promised (fewer
// hits than Limit, rag.Query's contract).
package embedded

import (
	"cmp"
	"slices"
)

const (
	// minCandidates is the least K: below a few hundred the rescoring
	// saves too little to be worth an approximation.
	minCandidates = 256
	// candidateFactor: K is this many times a query's prefetch (the
	// recall in sketch_test.go is measured at it).
	candidateFactor = 4
	// approxRatio: the sketch is used for a chat of at least approxRatio×K
	// points. Cost model (BenchmarkScanCost, this 2-core VM, per point):
	// the exact scan ~170 ns (its dot product and its share of the
	// region's read), an estimate ~37 ns, a rescored candidate ~230-350 ns
	// (its dot product from RAM, scattered, and the K-heap), so the sketch
	// is cheaper from n ≈ 2.3K; 3K leaves a margin for the estimator's
	// spread across queries and machines.
	approxRatio = 3
	// defaultSketchFrom: chats of fewer points are always searched
	// exactly. The sketch needs the chat's rows in RAM, and building them
	// costs a read of the region and a copy (more than the exact search it
	// replaces), repaid only by the queries that find them there. By the
	// cost model a query saves n·133 ns − K·300 ns: under 0.1 ms at 1,000
	// points (K = 256), 0.5 ms from 4,096. With a thousand chats of a
	// thousand points queried in turn, rows built from 768 points (the
	// least n the ratio allows) were evicted before their next use, and
	// each query paid the build: below 4,096 the saving does not repay it.
	defaultSketchFrom = 4096
	// queryMass: the estimate uses the query's heaviest components holding
	// this share of its squared norm ...
	queryMass = 0.9
	// ... but at least minQueryDims (all, when it has fewer nonzero) and
	// at most dim/maxQueryDimsDiv of them.
	minQueryDims    = 16
	maxQueryDimsDiv = 4
)

// candidates is K for a query whose dense side keeps prefetch.
func candidates(prefetch int) int { return max(minCandidates, candidateFactor*prefetch) }

// sketchQuery is a query prepared for estimates: the components it uses
// (ascending) and its values there.
type sketchQuery struct {
	dims []int32
	q    []int32
}

func newSketchQuery(qv []int8) *sketchQuery {
	dims := make([]int32, 0, len(qv))
	var total int64
	for i, e := range qv {
		if e != 0 {
			dims = append(dims, int32(i))
			total += int64(e) * int64(e)
		}
	}
	slices.SortFunc(dims, func(a, b int32) int { return cmp.Compare(abs8(qv[b]), abs8(qv[a])) })
	m, maxM := 0, max(minQueryDims, len(qv)/maxQueryDimsDiv)
	for kept := int64(0); m < len(dims) && m < maxM && (float64(kept) < queryMass*float64(total) || m < minQueryDims); m++ {
		kept += int64(qv[dims[m]]) * int64(qv[dims[m]])
	}
	sq := &sketchQuery{dims: dims[:m], q: make([]int32, m)}
	slices.Sort(sq.dims)
	for k, d := range sq.dims {
		sq.q[k] = int32(qv[d])
	}
	return sq
}

func abs8(e int8) int32 { return max(int32(e), -int32(e)) }

// estimate is the dot product of the query and row over the query's
// selected components.
func (sq *sketchQuery) estimate(row []int8) int32 {
	var s int32
	q := sq.q[:len(sq.dims)]
	for k, d := range sq.dims {
		s += q[k] * int32(row[d])
	}
	return s
}

// row returns slot's vector from c's rows.
func (c *chat) row(slot, dim int) []int8 {
	return c.rows[slot*dim : (slot+1)*dim : (slot+1)*dim]
}

// rowsOf returns c's rows, building them from its vectors (one read of
// its region) when they are not in RAM; nil when that read fails (the
// search stays exact). Caller holds mu (a read lock will do).
func (ix *Index) rowsOf(c *chat) []int8 {
	c.rowsMu.Lock()
	if rows := c.rows; rows != nil {
		c.rowsMu.Unlock()
		ix.res.touch(c)
		return rows
	}
	rows := ix.buildRows(c)
	c.rows = rows
	c.rowsMu.Unlock()
	if rows != nil {
		ix.res.admit(c, int64(cap(rows)))
	}
	return rows
}

// inRAM returns c's rows and postings as far as they are in RAM (nil:
// not), marking them used; a search that does not build them reads the
// region and the arena instead. Caller holds mu (a read lock will do).
func (ix *Index) inRAM(c *chat) ([]int8, *postings) {
	c.rowsMu.Lock()
	rows, post := c.rows, c.post
	c.rowsMu.Unlock()
	if rows != nil || post != nil {
		ix.res.touch(c)
	}
	return rows, post
}

// buildRows copies c's vectors in slot order; nil when the read fails.
func (ix *Index) buildRows(c *chat) []int8 {
	bp, err := ix.vf.read(c.vecs)
	if err != nil {
		return nil
	}
	defer ix.vf.put(bp)
	dim := ix.dim
	rows := make([]int8, 0, (c.len()+max(c.len()/8, 64))*dim)
	for s := range c.seqs {
		p := int(c.vpos[s]) * dim
		rows = append(rows, asInt8((*bp)[p:p+dim])...)
	}
	return rows
}

// putSketch records q at slot of c's rows: in place when the point was
// there (found), else inserted. No-op for a chat without rows.
func (ix *Index) putSketch(c *chat, slot int, found bool, q []int8) {
	if c.rows == nil {
		return
	}
	dim := ix.dim
	if found {
		copy(c.row(slot, dim), q)
		return
	}
	before := cap(c.rows)
	c.rows = grow(c.rows, dim, 64*dim)
	c.rows = slices.Insert(c.rows, slot*dim, q...)
	if n := cap(c.rows) - before; n > 0 {
		ix.res.grew(c, int64(n))
	}
}

// candidate is a point whose estimate made the top K.
type candidate struct {
	est  float32
	slot int32
}

// sketchDense estimates c's points m accepts (all: every one) from its
// rows, keeps the best k estimates, and rescores those exactly into dtop
// (threshold as in scan). Caller holds mu.
func (ix *Index) sketchDense(c *chat, rows []int8, m *matcher, all bool, dq *denseQuery, k int, dtop *topKHeap) {
	dim, sq := ix.dim, dq.sketchQuery()
	h := candHeap(make([]candidate, 0, k))
	for i := range c.seqs {
		if !all && !m.ok(c, i) {
			continue
		}
		h.offer(candidate{float32(sq.estimate(rows[i*dim:(i+1)*dim])) * c.scales[i], int32(i)}, k)
	}
	for _, x := range h {
		p := int(x.slot) * dim
		s := float32(dotI8(dq.qv, rows[p:p+dim])) * dq.qscale * c.scales[x.slot]
		if (dq.threshold <= 0 || s >= dq.threshold) && dtop.admits(s) {
			dtop.push(scored{ref{c, x.slot}, s})
		}
	}
}

// candHeap keeps the k best estimates, its root the worst kept. Of equal
// estimates at the edge the one offered first (the lower slot) stays: any
// fixed rule will do, the rescoring orders the candidates.
type candHeap []candidate

func (h *candHeap) offer(x candidate, k int) {
	s := *h
	if len(s) < k {
		s = append(s, x)
		for i := len(s) - 1; i > 0; { // sift up
			p := (i - 1) / 2
			if s[p].est <= s[i].est {
				break
			}
			s[i], s[p] = s[p], s[i]
			i = p
		}
		*h = s
		return
	}
	if k == 0 || x.est <= s[0].est {
		return
	}
	s[0] = x
	for i := 0; ; { // sift down
		l, r, w := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].est < s[w].est {
			w = l
		}
		if r < len(s) && s[r].est < s[w].est {
			w = r
		}
		if w == i {
			break
		}
		s[i], s[w] = s[w], s[i]
		i = w
	}
}
