package engine

import (
	"cmp"
	"container/heap"
	"slices"
)

// ranking yields the ranked budget's candidates best first, by value and
// then by the order they were made in: the order a stable sort by exact
// value gives. A lazy retrieved turn is valued by its floor (an upper
// bound of its value) and cut only when that bound reaches the front:
// then its exact value places it among the candidates cut and waiting.
// One whose floor does not fit in the most the budget can ever have
// left is passed over uncut: wherever its exact value would place it,
// taking it would fail. Candidates below where the budget runs out are
// never cut.
type ranking struct {
	p       *packer
	cs      []candidate // by value, an upper bound for the lazy ones
	at      int
	waiting candHeap // cut lazy turns, by exact value
	most    struct{ remaining, tailN, left int }
}

func (p *packer) newRanking(cs []candidate) *ranking {
	for k := range cs {
		cs[k].pos = k
	}
	slices.SortFunc(cs, rankOrder)
	return &ranking{p: p, cs: cs, most: struct{ remaining, tailN, left int }{-1, -1, 0}}
}

// rankOrder: higher value first, then the order made.
func rankOrder(a, b candidate) int {
	return cmp.Or(cmp.Compare(b.value, a.value), cmp.Compare(a.pos, b.pos))
}

// next is the best candidate left, false when none is.
func (r *ranking) next() (candidate, bool) {
	for r.at < len(r.cs) {
		c := r.cs[r.at]
		if len(r.waiting) > 0 && rankOrder(r.waiting[0], c) < 0 {
			break
		}
		r.at++
		if !c.bound {
			return c, true
		}
		if r.p.leastCost(c.i) > r.mostLeft() {
			continue // can never fit: never cut
		}
		c.value, c.bound = value(c.rel, r.p.costRAG(c.i)+r.p.partnerCost(r.p.in.RAG[c.i])), false // the bound leaves out the options: still a bound
		heap.Push(&r.waiting, c)
	}
	if len(r.waiting) == 0 {
		return candidate{}, false
	}
	return heap.Pop(&r.waiting).(candidate), true
}

// mostLeft is the most the budget can have left from now on: what is
// left, and what showing a verbatim turn not kept yet in place of its
// kept retrieved turn (takeVerb) can give back: the hit's cost less the
// verbatim turn's, when that is more.
func (r *ranking) mostLeft() int {
	p := r.p
	if r.most.remaining == p.remaining && r.most.tailN == p.verb.tailN {
		return r.most.left
	}
	left := p.remaining
	// takeVerb refunds every kept candidate of the turn (the hit and its
	// parts, unkeepHit) and spends at least the verbatim turn's cost once,
	// or undoes both: summed per turn, not per candidate.
	refund := map[int]int{} // verbatim index -> the kept candidates' costs
	for j, kept := range p.rag.keep {
		h := p.in.RAG[j]
		if !kept || h.ChatID != "" || h.Episode != nil || h.Fact != nil {
			continue
		}
		if vi, ok := p.verb.bySeq[h.Seq]; ok && !p.verb.keep[vi] {
			refund[vi] += p.rag.cost[j]
		}
	}
	for vi, c := range refund {
		left += max(0, c-p.verb.cost[vi])
	}
	r.most.remaining, r.most.tailN, r.most.left = p.remaining, p.verb.tailN, left
	return left
}

// candHeap orders candidates by rankOrder, best on top.
type candHeap []candidate

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return rankOrder(h[i], h[j]) < 0 }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(candidate)) }
func (h *candHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
