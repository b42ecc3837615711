//go:build amd64 && !purego

package embedded

import "golang.org/x/sys/cpu"

// hasAVX2 is read once: the CPU does not change under a running process.
var hasAVX2 = cpu.X86.HasAVX2

// dotI8AVX2 sums a[i]*b[i] for i < n, n a multiple of 32 (dot_amd64.s).
//
//go:noescape
func dotI8AVX2(a, b *int8, n int) int32

// dotI8 is dotI8Go's sum, 32 components at a time in AVX2 where the CPU
// has it: the exact scan of a long chat spent a tenth of a context
// request's CPU in the scalar loop (docs/performance.md, "Twenty-third
// pass").
func dotI8(a, b []int8) int32 {
	b = b[:len(a)]
	n := len(a) &^ 31
	if !hasAVX2 || n == 0 {
		return dotI8Go(a, b)
	}
	return dotI8AVX2(&a[0], &b[0], n) + dotI8Go(a[n:], b[n:])
}
