package bigsort

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

type item struct {
	key, id int
	pad     [32]int64
}

// TestStableMatchesSlices holds Stable to slices.SortStableFunc on random
// inputs with many equal keys, where stability shows.
func TestStableMatchesSlices(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 70 {
		for range 20 {
			s := make([]item, n)
			for i := range s {
				s[i] = item{key: r.IntN(5), id: i}
				s[i].pad[0] = int64(i)
			}
			want := slices.Clone(s)
			slices.SortStableFunc(want, func(a, b item) int { return cmp.Compare(b.key, a.key) })
			Stable(s, func(a, b *item) int { return cmp.Compare(b.key, a.key) })
			if !slices.Equal(s, want) {
				t.Fatalf("n=%d: got %v, want %v", n, ids(s), ids(want))
			}
		}
	}
}

func ids(s []item) []int {
	out := make([]int, len(s))
	for i := range s {
		out[i] = s[i].id
	}
	return out
}

func BenchmarkStable(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]item, 80)
	for i := range src {
		src[i] = item{key: r.IntN(40), id: i}
	}
	s := make([]item, len(src))
	b.Run("bigsort", func(b *testing.B) {
		for b.Loop() {
			copy(s, src)
			Stable(s, func(a, b *item) int { return cmp.Compare(b.key, a.key) })
		}
	})
	b.Run("slices", func(b *testing.B) {
		for b.Loop() {
			copy(s, src)
			slices.SortStableFunc(s, func(a, b item) int { return cmp.Compare(b.key, a.key) })
		}
	})
}
