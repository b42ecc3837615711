package embedded

import (
	"math/rand/v2"
	"testing"
)

// TestFusionOneChatMatchesMap: the slot-indexed fusion of a one-chat query
// gives every candidate the scores the map gives it, and no other.
func TestFusionOneChatMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	c := &chat{id: "c", seqs: make([]int64, 300)}
	list := func(n int) []scored {
		out := make([]scored, 0, n)
		seen := map[int32]bool{}
		for len(out) < n {
			slot := int32(r.IntN(len(c.seqs)))
			if !seen[slot] { // a ranked list names a point once
				seen[slot] = true
				out = append(out, scored{ref{c, slot}, r.Float32()})
			}
		}
		return out
	}
	for range 200 {
		dense, sparse := list(r.IntN(120)), list(r.IntN(120))
		one, m := newFusion(dense, sparse), &fusion{m: map[ref]fusedScore{}}
		if len(dense)+len(sparse) > 0 && one.one == nil {
			t.Fatal("a one-chat query took the map")
		}
		for _, f := range []*fusion{one, m} {
			for i, s := range dense {
				f.add(s.ref, 1/float32(60+i+1), s.score, 0)
			}
			for i, s := range sparse {
				f.add(s.ref, 1/float32(60+i+1), 0, s.score)
			}
		}
		got, calls := map[ref]fusedScore{}, 0
		one.each(func(r ref, a fusedScore) { got[r] = a; calls++ })
		if calls != len(m.m) || len(got) != len(m.m) {
			t.Fatalf("%d candidates (%d distinct), want %d", calls, len(got), len(m.m))
		}
		for r, want := range m.m {
			if got[r] != want || one.get(r) != want {
				t.Fatalf("slot %d: %+v, want %+v", r.slot, got[r], want)
			}
		}
	}
}
