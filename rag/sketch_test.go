package rag

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// farFrom never calls a pair far that Jaccard calls near (it is a filter
// in front of the exact check), and it does tell unrelated sets apart.
func TestTermSketchIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	set := func(base []uint32, keep float64, extra int) []uint32 {
		var s []uint32
		for _, x := range base {
			if r.Float64() < keep {
				s = append(s, x)
			}
		}
		for range extra {
			s = append(s, r.Uint32())
		}
		slices.Sort(s)
		return slices.Compact(s)
	}
	far, unrelated := 0, 0
	for trial := range 20000 {
		base := set(nil, 0, 1+r.IntN(120))
		a := set(base, 0.7+0.3*r.Float64(), r.IntN(8))
		b := set(base, 0.7+0.3*r.Float64(), r.IntN(8))
		if trial%2 == 0 { // unrelated
			b = set(nil, 0, 1+r.IntN(120))
		}
		for _, limit := range []float64{0.5, 0.8, 0.95} {
			isFar := sketchOf(a).farFrom(sketchOf(b), len(a)+len(b), limit)
			if j := jaccard(a, b); isFar && j >= limit {
				t.Fatalf("trial %d: sketch says far, Jaccard %.3f >= %.2f (|a|=%d |b|=%d)", trial, j, limit, len(a), len(b))
			}
			if trial%2 == 0 && limit == 0.8 {
				unrelated++
				if isFar {
					far++
				}
			}
		}
	}
	if share := float64(far) / float64(unrelated); share < 0.9 {
		t.Errorf("the sketch told %.2f of unrelated pairs apart, want most (>= 0.9)", share)
	}
}
