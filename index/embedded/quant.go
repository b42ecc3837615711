package embedded

import (
	"math"
	"slices"

	"github.com/contextd/contextd/rag"
)

// quantise writes v, L2-normalised, into dst as symmetric int8 (x ≈ q*scale)
// and returns the scale. The largest component maps to ±127, so the
// rounding error of a component is at most scale/2. A zero or non-finite
// vector becomes all zeros with scale 0 (it scores 0 against everything,
// as the zero vector did unquantised).
func quantise(v []float32, dst []int8) float32 {
	var ss float64
	var m float32
	for _, x := range v {
		ss += float64(x) * float64(x)
		if a := float32(math.Abs(float64(x))); a > m {
			m = a
		}
	}
	if ss == 0 || math.IsInf(ss, 0) || math.IsNaN(ss) || math.IsInf(float64(m), 0) {
		clear(dst)
		return 0
	}
	inv := 1 / math.Sqrt(ss)
	scale := float64(m) * inv / 127 // of the normalised vector
	k := inv / scale                // x -> normalised x / scale
	for i, x := range v {
		// Round half away from zero, like math.Round but inlined: |f| <= 127.
		f := float64(x) * k
		if f < 0 {
			f -= 0.5
		} else {
			f += 0.5
		}
		dst[i] = int8(f)
	}
	return float32(scale)
}

// dotI8Go is the int8 dot product with int32 accumulation: each product is
// at most 128² and a vector has far fewer than 2^31/128² ≈ 131,000
// components, so it cannot overflow. Re-slicing to constant lengths lets
// the compiler drop the bounds checks (2.5× faster than indexing). dotI8
// (dot_amd64.go, dot_other.go) is this or the same sum in vector
// instructions: integer sums, so the two agree exactly (FuzzDotI8).
func dotI8Go(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	for len(a) >= 16 && len(b) >= 16 {
		x, y := a[:16:16], b[:16:16]
		s0 += int32(x[0])*int32(y[0]) + int32(x[4])*int32(y[4]) + int32(x[8])*int32(y[8]) + int32(x[12])*int32(y[12])
		s1 += int32(x[1])*int32(y[1]) + int32(x[5])*int32(y[5]) + int32(x[9])*int32(y[9]) + int32(x[13])*int32(y[13])
		s2 += int32(x[2])*int32(y[2]) + int32(x[6])*int32(y[6]) + int32(x[10])*int32(y[10]) + int32(x[14])*int32(y[14])
		s3 += int32(x[3])*int32(y[3]) + int32(x[7])*int32(y[7]) + int32(x[11])*int32(y[11]) + int32(x[15])*int32(y[15])
		a, b = a[16:], b[16:]
	}
	for i := range a {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}

// canonSparse returns s with indices sorted ascending and repeated indices
// merged (weights summed): s itself when it already is (the usual case),
// else fresh slices. Merging keeps the scores of the inverted index this
// replaced, where a repeated index added its weight to the same posting.
func canonSparse(s rag.SparseVector) rag.SparseVector {
	n := len(s.Indices)
	sorted := true
	for i := 1; i < n; i++ {
		if s.Indices[i] <= s.Indices[i-1] {
			sorted = false
			break
		}
	}
	if sorted {
		return s
	}
	out := rag.SparseVector{Indices: make([]uint32, 0, n), Values: make([]float32, 0, n)}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int {
		switch {
		case s.Indices[a] < s.Indices[b]:
			return -1
		case s.Indices[a] > s.Indices[b]:
			return 1
		}
		return 0
	})
	for _, p := range perm {
		if k := len(out.Indices); k > 0 && out.Indices[k-1] == s.Indices[p] {
			out.Values[k-1] += s.Values[p]
			continue
		}
		out.Indices = append(out.Indices, s.Indices[p])
		out.Values = append(out.Values, s.Values[p])
	}
	return out
}

// sparseQuery scores documents against a canonical query sparse vector.
// Its terms sit in an open-addressing table at most 1/4 full, so looking up
// a document term costs one multiply and usually one probe.
type sparseQuery struct {
	idx   []uint32
	w     []float32 // query weight × IDF
	table []int32   // position in idx + 1; 0 = empty
	shift uint
}

func newSparseQuery(idx []uint32, w []float32) *sparseQuery {
	bits := uint(8)
	for 1<<bits < 4*len(idx) {
		bits++
	}
	q := &sparseQuery{idx: idx, w: w, table: make([]int32, 1<<bits), shift: 32 - bits}
	mask := uint32(len(q.table) - 1)
	for k, t := range idx {
		h := q.slot(t)
		for q.table[h] != 0 {
			h = (h + 1) & mask
		}
		q.table[h] = int32(k + 1)
	}
	return q
}

// slot is term t's home in the table (Fibonacci hashing).
func (q *sparseQuery) slot(t uint32) uint32 { return (t * 0x9E3779B1) >> q.shift }

// score is Σ w[k]*dw[j] over the terms the query and the document (sorted,
// unique; weights as bfloat16) share, and whether they share any.
func (q *sparseQuery) score(di []uint32, dw []uint16) (float32, bool) {
	var s float32
	hit := false
	dw = dw[:len(di)]
	mask := uint32(len(q.table) - 1)
	for j, t := range di {
		for h := q.slot(t); ; h = (h + 1) & mask {
			k := q.table[h]
			if k == 0 {
				break
			}
			if q.idx[k-1] == t {
				s += q.w[k-1] * fromBF16(dw[j])
				hit = true
				break
			}
		}
	}
	return s, hit
}

// Sparse term weights are kept in RAM as bfloat16: float32's sign, exponent
// and top 7 mantissa bits, so 2 bytes instead of 4 (a quarter of the sparse
// columns; 11 MB at 1,000 chats × 200 turns). A weight keeps 8 significant
// bits: at most 0.4% off (rounded to nearest, ties to even), far below
// what separates BM25 weights of different term frequencies or lengths.
// The file keeps the float32 weights.
func toBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it a NaN
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

func fromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// bf16 rounds f to the bfloat16 the index keeps of it.
func bf16(f float32) float32 { return fromBF16(toBF16(f)) }

// appendBF16 appends vals as bfloat16 to dst.
func appendBF16(dst []uint16, vals []float32) []uint16 {
	for _, v := range vals {
		dst = append(dst, toBF16(v))
	}
	return dst
}
