package embedded

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/contextd/contextd/rag"
)

func exactCos(a, b []float32) float64 { return rag.Cosine(a, b) }

func TestQuantiseRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    []float32
		want []int8
		zero bool
	}{
		{"basis", []float32{0, 3, 0}, []int8{0, 127, 0}, false},
		{"negative max", []float32{-2, 1, 0}, []int8{-127, 64, 0}, false},
		{"zero", []float32{0, 0, 0}, []int8{0, 0, 0}, true},
		{"nan", []float32{float32(math.NaN()), 1, 0}, []int8{0, 0, 0}, true},
		{"inf", []float32{float32(math.Inf(1)), 1, 0}, []int8{0, 0, 0}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := make([]int8, len(tc.v))
			scale := quantise(tc.v, q)
			if !slices.Equal(q, tc.want) {
				t.Errorf("quantise(%v) = %v, want %v", tc.v, q, tc.want)
			}
			if (scale == 0) != tc.zero {
				t.Errorf("scale = %v, zero vector %v", scale, tc.zero)
			}
		})
	}
}

// randomUnit returns a random vector with Gaussian components (the shape
// of a learned embedding) plus a shared offset, as real embeddings have.
func randomVec(r *rand.Rand, dim int, base []float32, mix float64) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
		if base != nil {
			v[i] = float32(mix*float64(base[i]) + (1-mix)*float64(v[i]))
		}
	}
	return v
}

// TestQuantisedScores measures what int8 quantisation changes against
// exact float32 cosine, on hashing-embedder vectors of chat-like text and
// on Gaussian vectors clustered around a topic (like a learned embedder,
// where many candidates have close scores): the score error, and how many
// of the exact top-20 the quantised top-20 keeps.
func TestQuantisedScores(t *testing.T) {
	const dim, docs, queries, k = 384, 2000, 50, 20
	r := rand.New(rand.NewPCG(1, 2))
	emb := rag.NewHashingEmbedder(dim)
	words := make([]string, 800)
	for i := range words {
		words[i] = fmt.Sprintf("w%dx%d", i, r.IntN(1000))
	}
	text := func(n int) string {
		s := ""
		for i := 0; i < n; i++ {
			s += words[int(math.Min(float64(len(words)-1), r.ExpFloat64()*120))] + " "
		}
		return s
	}
	topic := randomVec(r, dim, nil, 0)
	sets := map[string]func(doc bool) []float32{
		"hashing": func(doc bool) []float32 {
			if doc {
				return emb.Embed(text(10 + r.IntN(50)))
			}
			return emb.Embed(text(6))
		},
		"gaussian": func(bool) []float32 { return randomVec(r, dim, topic, 0.6) },
	}
	for name, gen := range sets {
		t.Run(name, func(t *testing.T) {
			vs := make([][]float32, docs)
			qs := make([][]int8, docs)
			scales := make([]float32, docs)
			for i := range vs {
				vs[i] = gen(true)
				qs[i] = make([]int8, dim)
				scales[i] = quantise(vs[i], qs[i])
			}
			var maxErr float64
			kept := 0
			for range queries {
				qv := gen(false)
				qq := make([]int8, dim)
				qscale := quantise(qv, qq)
				exact := make([]float64, docs)
				approx := make([]float64, docs)
				for i := range vs {
					exact[i] = exactCos(qv, vs[i])
					approx[i] = float64(float32(dotI8(qq, qs[i])) * qscale * scales[i])
					maxErr = max(maxErr, math.Abs(exact[i]-approx[i]))
				}
				kept += overlap(top(exact, k), top(approx, k))
			}
			recall := float64(kept) / (queries * k)
			t.Logf("max |cos error| %.5f, top-%d kept %.4f", maxErr, k, recall)
			if maxErr > 0.01 {
				t.Errorf("max cosine error %.5f > 0.01", maxErr)
			}
			if recall < 0.95 {
				t.Errorf("quantised top-%d keeps %.3f of the exact top-%d, want >= 0.95", k, recall, k)
			}
		})
	}
}

func top(s []float64, k int) []int {
	idx := make([]int, len(s))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case s[a] > s[b]:
			return -1
		case s[a] < s[b]:
			return 1
		}
		return 0
	})
	return idx[:k]
}

func overlap(a, b []int) int {
	n := 0
	for _, x := range a {
		if slices.Contains(b, x) {
			n++
		}
	}
	return n
}

func TestCanonSparse(t *testing.T) {
	got := canonSparse(rag.SparseVector{Indices: []uint32{9, 3, 9, 1}, Values: []float32{1, 2, 0.5, 4}})
	if !slices.Equal(got.Indices, []uint32{1, 3, 9}) || !slices.Equal(got.Values, []float32{4, 2, 1.5}) {
		t.Errorf("canonSparse = %+v, want indices [1 3 9] values [4 2 1.5]", got)
	}
	in := rag.SparseVector{Indices: []uint32{1, 2}, Values: []float32{1, 1}}
	if got := canonSparse(in); &got.Indices[0] != &in.Indices[0] {
		t.Error("an already canonical vector was copied")
	}
}

func TestSparseQueryScore(t *testing.T) {
	// Many query terms (forces a bigger table) including ones that collide
	// in the table; document terms sorted.
	r := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		qm := map[uint32]float32{}
		for n := 1 + r.IntN(300); len(qm) < n; {
			qm[uint32(r.IntN(2000))] = float32(1 + r.IntN(3))
		}
		var qi []uint32
		for t := range qm {
			qi = append(qi, t)
		}
		slices.Sort(qi)
		qw := make([]float32, len(qi))
		for k, t := range qi {
			qw[k] = qm[t]
		}
		sq := newSparseQuery(qi, qw)
		var di []uint32
		for t := range uint32(2000) {
			if r.IntN(50) == 0 {
				di = append(di, t)
			}
		}
		dw := make([]float32, len(di))
		var want float32
		wantHit := false
		for j, t := range di {
			dw[j] = float32(j%4) + 0.5
			if w, ok := qm[t]; ok {
				want += w * dw[j]
				wantHit = true
			}
		}
		got, hit := sq.score(di, appendBF16(nil, dw)) // j%4 + 0.5 is exact in bfloat16
		if hit != wantHit || math.Abs(float64(got-want)) > 1e-3 {
			t.Fatalf("trial %d: score = %v, %v; want %v, %v", trial, got, hit, want, wantHit)
		}
	}
}

// bfloat16 round trips: exact for values with 8 significant bits, within
// 0.4% (half a unit in the last place) for any other finite weight, and
// order-preserving.
func TestBF16(t *testing.T) {
	for _, f := range []float32{0, 1, 0.5, 2.25, -3, 1 << 20, float32(math.Inf(1))} {
		if got := bf16(f); got != f {
			t.Errorf("bf16(%v) = %v, want exact", f, got)
		}
	}
	if got := bf16(float32(math.NaN())); !math.IsNaN(float64(got)) {
		t.Errorf("bf16(NaN) = %v", got)
	}
	r := rand.New(rand.NewPCG(5, 6))
	prev, prevH := float32(0), float32(0)
	for range 100000 {
		f := float32(r.Float64() * 3)
		h := bf16(f)
		if d := math.Abs(float64(h-f)) / float64(f); d > 1.0/256 {
			t.Fatalf("bf16(%v) = %v: %.4f%% off", f, h, 100*d)
		}
		if (f > prev && h < prevH) || (f < prev && h > prevH) {
			t.Fatalf("order: %v < %v but bf16 %v > %v", prev, f, prevH, h)
		}
		prev, prevH = f, h
	}
}
