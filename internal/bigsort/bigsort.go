// Package bigsort sorts slices of big structs (retrieval hits are ~300
// bytes) without moving them during the sort: the generic sorts of package
// slices swap and rotate elements O(n log n) times, and for such elements
// the copies, not the comparisons, were the cost (7% of a rag_augmented
// request's CPU).
package bigsort

import "slices"

// Stable sorts s stably by cmp. It sorts the elements' indexes, then moves
// each element once, in place.
func Stable[T any](s []T, cmp func(a, b *T) int) {
	if len(s) < 2 {
		return
	}
	idx := make([]int, len(s))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return cmp(&s[i], &s[j]) })
	permute(s, idx)
}

// permute sets s[k] = old s[idx[k]] for every k, following the
// permutation's cycles; idx is consumed (left as the identity).
func permute[T any](s []T, idx []int) {
	for start := range idx {
		if idx[start] == start {
			continue
		}
		tmp := s[start]
		j := start
		for {
			k := idx[j]
			idx[j] = j
			if k == start {
				s[j] = tmp
				break
			}
			s[j] = s[k]
			j = k
		}
	}
}
