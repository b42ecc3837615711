package embedded

import (
	"math/rand/v2"
	"testing"
)

// naiveDot is the definition the fast versions must meet.
func naiveDot(a, b []int8) int32 {
	var s int32
	for i := range a {
		s += int32(a[i]) * int32(b[i])
	}
	return s
}

func TestDotI8(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fill := func(n int, f func(int) int8) []int8 {
		v := make([]int8, n)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	for _, n := range []int{0, 1, 15, 16, 31, 32, 33, 63, 64, 65, 100, 384, 385, 1024} {
		cases := map[string][2][]int8{
			"random":        {fill(n, func(int) int8 { return int8(r.IntN(256) - 128) }), fill(n, func(int) int8 { return int8(r.IntN(256) - 128) })},
			"min times min": {fill(n, func(int) int8 { return -128 }), fill(n, func(int) int8 { return -128 })},
			"max times min": {fill(n, func(int) int8 { return 127 }), fill(n, func(int) int8 { return -128 })},
			"alternating":   {fill(n, func(i int) int8 { return int8(127 - 255*(i%2)) }), fill(n, func(i int) int8 { return int8(-128 + 255*(i%2)) })},
		}
		for name, c := range cases {
			want := naiveDot(c[0], c[1])
			if got := dotI8(c[0], c[1]); got != want {
				t.Errorf("n=%d %s: dotI8 = %d, want %d", n, name, got, want)
			}
			if got := dotI8Go(c[0], c[1]); got != want {
				t.Errorf("n=%d %s: dotI8Go = %d, want %d", n, name, got, want)
			}
		}
	}
}

// FuzzDotI8: the vector version and the scalar one are the same sum, on
// every length and every value, a tail not a multiple of 32 included;
// b longer than a is cut to a's length, as the scan's slices are.
func FuzzDotI8(f *testing.F) {
	f.Add([]byte{1, 2, 3}, []byte{4, 5, 6, 7})
	f.Add(make([]byte, 64), make([]byte, 64))
	f.Fuzz(func(t *testing.T, x, y []byte) {
		if len(y) < len(x) {
			x, y = y, x
		}
		a, b := make([]int8, len(x)), make([]int8, len(y))
		for i := range x {
			a[i] = int8(x[i])
		}
		for i := range y {
			b[i] = int8(y[i])
		}
		if got, want := dotI8(a, b), naiveDot(a, b[:len(a)]); got != want {
			t.Fatalf("dotI8 = %d, want %d (len %d)", got, want, len(a))
		}
	})
}

func BenchmarkDotI8(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	x, y := make([]int8, 384), make([]int8, 384)
	for i := range x {
		x[i], y[i] = int8(r.IntN(255)-127), int8(r.IntN(255)-127)
	}
	for _, c := range []struct {
		name string
		dot  func(a, b []int8) int32
	}{{"dotI8", dotI8}, {"dotI8Go", dotI8Go}} {
		b.Run(c.name, func(b *testing.B) {
			var s int32
			for b.Loop() {
				s += c.dot(x, y)
			}
			_ = s
		})
	}
}
