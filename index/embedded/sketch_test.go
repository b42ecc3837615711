package embedded

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/rag"
)

// TestSketchEstimate: the estimate of a query with at most minQueryDims
// nonzero components (all of them used) is its exact int8 dot product, at
// dimensions that do and do not fill a word; a dense query uses no more
// than dim/4 components, those holding at least 90% of its squared norm
// when that many suffice.
func TestSketchEstimate(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dim := range []int{8, 63, 64, 101, 384} {
		for range 200 {
			q, d := make([]int8, dim), make([]int8, dim)
			for i := range d {
				d[i] = int8(r.IntN(255) - 127)
			}
			for range 1 + r.IntN(minQueryDims) {
				q[r.IntN(dim)] = int8(r.IntN(255) - 127)
			}
			if got, want := newSketchQuery(q).estimate(d), dotI8(q, d); got != want {
				t.Fatalf("dim %d: estimate = %d, want %d", dim, got, want)
			}
		}
		q := make([]int8, dim)
		for i := range q {
			q[i] = int8(1 + r.IntN(127))
		}
		sq := newSketchQuery(q)
		if n := len(sq.dims); n > max(minQueryDims, dim/maxQueryDimsDiv) {
			t.Errorf("dim %d: a dense query uses %d components", dim, n)
		}
		var kept, total float64
		for i, e := range q {
			total += float64(e) * float64(e)
			if slices.Contains(sq.dims, int32(i)) {
				kept += float64(e) * float64(e)
			}
		}
		if len(sq.dims) < max(minQueryDims, dim/maxQueryDimsDiv) && kept < queryMass*total {
			t.Errorf("dim %d: %d components hold %.2f of the norm", dim, len(sq.dims), kept/total)
		}
	}
}

// chatText makes chat-like turns from a Zipf vocabulary (as the load
// benchmark's corpus does).
func chatText(r *rand.Rand, vocab []string, zipf *rand.Zipf, words int) string {
	w := make([]string, words)
	for i := range w {
		w[i] = vocab[zipf.Uint64()]
	}
	return strings.Join(w, " ")
}

func zipfVocab(r *rand.Rand, n int) ([]string, *rand.Zipf) {
	syll := []string{"ka", "lo", "mi", "ne", "ra", "tu", "se", "po", "di", "gan", "ter", "vel", "os", "qui", "bra", "ment"}
	vocab := make([]string, n)
	for i := range vocab {
		var b strings.Builder
		for k := 1 + r.IntN(4); k > 0; k-- {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		vocab[i] = b.String()
	}
	return vocab, rand.NewZipf(r, 1.1, 2, uint64(n-1))
}

// denseTop is chat c's dense top prefetch for dq, exact or by the sketch.
func denseTop(t *testing.T, ix *Index, c *chat, dq *denseQuery, prefetch int, sketch bool) []int32 {
	t.Helper()
	m := ix.matcher(rag.Filter{Tenant: "t"})
	top := newTopK(prefetch, c.len())
	if sketch {
		ix.sketchDense(c, ix.rowsOf(c), &m, true, dq, candidates(prefetch), top)
	} else if err := ix.exactDense(c, nil, &m, true, dq, top); err != nil {
		t.Fatal(err)
	}
	var out []int32
	for _, s := range top.sorted() {
		out = append(out, s.slot)
	}
	return out
}

// TestSketchRecall measures, on a chat of 4,000 points, how much of the
// exact dense top prefetch the sketch's rescored candidates keep, for the
// retriever's usual prefetch (88) and the smallest (20): hashing-embedder
// vectors of chat-like text (the default embedder; queries are a few words,
// as a chat's queries are) and Gaussian vectors clustered around topics
// (the shape of a learned embedder, where many points score alike). The
// thresholds are below what is measured (logged) by a margin, so the test
// fails on a real regression, not on noise.
// hashingPoints draws n turns of a Zipf vocabulary and queries of qMin to
// qMin+qSpan-1 words, embedded by the hashing embedder.
func hashingPoints(dim, n, queries, qMin, qSpan int) func(r *rand.Rand) (docs, qs [][]float32) {
	return func(r *rand.Rand) (docs, qs [][]float32) {
		emb := rag.NewHashingEmbedder(dim)
		vocab, zipf := zipfVocab(r, 5000)
		for range n {
			docs = append(docs, emb.Embed(chatText(r, vocab, zipf, 10+r.IntN(150))))
		}
		for range queries {
			qs = append(qs, emb.Embed(chatText(r, vocab, zipf, qMin+r.IntN(qSpan))))
		}
		return docs, qs
	}
}

func TestSketchRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 4,000-point chat twice")
	}
	const dim, n, queries = 384, 4000, 40
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		minMean float64 // mean recall over the queries
		points  func(r *rand.Rand) (docs, qs [][]float32)
	}{
		{"hashing", 0.95, hashingPoints(dim, n, queries, 3, 10)},
		{"hashing, queries of whole turns", 0.95, hashingPoints(dim, n, queries, 20, 150)},
		{"clustered", 0.93, func(r *rand.Rand) (docs, qs [][]float32) {
			topics := make([][]float32, 20)
			for i := range topics {
				topics[i] = randomVec(r, dim, nil, 0)
			}
			for range n {
				docs = append(docs, randomVec(r, dim, topics[r.IntN(len(topics))], 0.6))
			}
			for range queries {
				qs = append(qs, randomVec(r, dim, topics[r.IntN(len(topics))], 0.6))
			}
			return docs, qs
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			docs, qs := tc.points(r)
			ix, err := Open(ctx, filepath.Join(t.TempDir(), "v.db"), dim, SketchFrom(1))
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			pts := make([]rag.Point, len(docs))
			for i, d := range docs {
				pts[i] = rag.Point{Tenant: "t", ChatID: "c", Seq: int64(i + 1), Role: "user", Content: "x", Dense: d, CreatedAt: time.Unix(1, 0)}
			}
			if err := ix.Upsert(ctx, pts); err != nil {
				t.Fatal(err)
			}
			c := ix.tenants["t"].chats["c"]
			for _, prefetch := range []int{20, 88} {
				var sum, worst float64 = 0, 1
				for _, qd := range qs {
					dq := &denseQuery{qv: make([]int8, dim)}
					dq.qscale = quantise(qd, dq.qv)
					dq.sketch = newSketchQuery(dq.qv)
					exact, approx := denseTop(t, ix, c, dq, prefetch, false), denseTop(t, ix, c, dq, prefetch, true)
					kept := 0
					for _, s := range exact {
						if slices.Contains(approx, s) {
							kept++
						}
					}
					rec := float64(kept) / float64(len(exact))
					sum, worst = sum+rec, min(worst, rec)
				}
				mean := sum / float64(len(qs))
				t.Logf("%s, prefetch %d, K %d of %d points: recall of the exact top list mean %.3f, worst %.3f", tc.name, prefetch, candidates(prefetch), n, mean, worst)
				if mean < tc.minMean {
					t.Errorf("%s, prefetch %d: mean recall %.3f < %.3f", tc.name, prefetch, mean, tc.minMean)
				}
			}
		})
	}
}

// TestSketchAllCandidatesIsExact: with K at least the chat's points, the
// candidates are every point, so the rescored list is the exact one
// (order and scores), whatever the vectors; and the exact scan of the rows
// in RAM is that of the file.
func TestSketchAllCandidatesIsExact(t *testing.T) {
	ctx := context.Background()
	const dim = 16
	r := rand.New(rand.NewPCG(5, 6))
	ix, err := Open(ctx, filepath.Join(t.TempDir(), "v.db"), dim, SketchFrom(1))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	var pts []rag.Point
	for i := range 300 {
		pts = append(pts, rag.Point{Tenant: "t", ChatID: "c", Seq: int64(i + 1), Role: "user", Content: "x",
			Dense: randomVec(r, dim, nil, 0), CreatedAt: time.Unix(1, 0)})
	}
	if err := ix.Upsert(ctx, pts); err != nil {
		t.Fatal(err)
	}
	c := ix.tenants["t"].chats["c"]
	m := ix.matcher(rag.Filter{Tenant: "t"})
	for range 50 {
		dq := &denseQuery{qv: make([]int8, dim)}
		dq.qscale = quantise(randomVec(r, dim, nil, 0), dq.qv)
		dq.sketch = newSketchQuery(dq.qv)
		exact, approx := newTopK(40, c.len()), newTopK(40, c.len())
		if err := ix.exactDense(c, nil, &m, true, dq, exact); err != nil {
			t.Fatal(err)
		}
		fromRows := newTopK(40, c.len())
		if err := ix.exactDense(c, ix.rowsOf(c), &m, true, dq, fromRows); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(exact.sorted(), fromRows.sorted()) {
			t.Fatalf("the exact scan of the rows differs from that of the file")
		}
		ix.sketchDense(c, ix.rowsOf(c), &m, true, dq, c.len(), approx)
		if !slices.Equal(exact.sorted(), approx.sorted()) {
			t.Fatalf("K = n: sketch list differs from the exact one")
		}
	}
}

// TestSketchQueriesKeepTheContract runs whole queries on a chat large
// enough for the sketch: a filter that leaves few points, a threshold no
// point reaches but a few, and a Limit above what qualifies all answer
// exactly what the exact scan answers (fewer hits than Limit promise
// every qualifying point), and the sketch stays in step with the vectors
// through inserts before existing points (episodes), replacements, deletes
// and a reopen.
func TestSketchQueriesKeepTheContract(t *testing.T) {
	ctx := context.Background()
	const dim = 64
	r := rand.New(rand.NewPCG(7, 8))
	path := filepath.Join(t.TempDir(), "v.db")
	open := func(opts ...Option) *Index {
		ix, err := Open(ctx, path, dim, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	ix := open(SketchFrom(64))
	vocab, zipf := zipfVocab(r, 500)
	emb, sp := rag.NewHashingEmbedder(dim), rag.NewSparseEncoder()
	point := func(seq int64) rag.Point {
		text := chatText(r, vocab, zipf, 5+r.IntN(30))
		return rag.Point{Tenant: "t", ChatID: "c", UserID: fmt.Sprint("u", seq%3), Seq: seq, Role: "user", Content: text,
			Dense: emb.Embed(text), Sparse: sp.EncodeDocument(text), CreatedAt: time.Unix(1000+seq, 0)}
	}
	var pts []rag.Point
	for seq := int64(1); seq <= 1500; seq++ {
		pts = append(pts, point(seq))
	}
	if err := ix.Upsert(ctx, pts); err != nil {
		t.Fatal(err)
	}
	check := func(stage string, ix *Index) {
		t.Helper()
		checkSketch(t, stage, ix)
		exactIx := open(SketchFrom(-1)) // the same file, searched exactly
		defer exactIx.Close()
		for i := range 20 {
			text := chatText(r, vocab, zipf, 3+r.IntN(5))
			q := rag.Query{Filter: rag.Filter{Tenant: "t", ChatIDs: []string{"c"}}, Dense: emb.Embed(text), Limit: 10}
			switch i % 4 {
			case 1:
				q.Filter.FromSeq, q.Filter.ToSeq = 100, 110 // 11 points: fewer hits than Limit
				q.Limit = 20
			case 2:
				q.ScoreThreshold = 0.6 // a few qualify at most
			case 3:
				q.Sparse = sp.EncodeQuery(text)
				q.Filter.UserID = "u1"
			}
			got, err := ix.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			want, err := exactIx.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) < q.Limit && !sameHits(got, want) {
				t.Errorf("%s, query %d: %d hits (< Limit %d) differ from the exact %d", stage, i, len(got), q.Limit, len(want))
			}
			if len(want) >= q.Limit && len(got) != q.Limit {
				t.Errorf("%s, query %d: %d hits, the exact scan %d", stage, i, len(got), len(want))
			}
		}
	}
	check("loaded", ix)
	// The queries above took the sketch (else this test would test nothing).
	q := rag.Query{Filter: rag.Filter{Tenant: "t", ChatIDs: []string{"c"}}, Dense: emb.Embed("x"), Limit: 10}
	dq := &denseQuery{qv: make([]int8, dim)}
	dq.qscale = quantise(q.Dense, dq.qv)
	if _, approx, err := ix.rank(q, dq, rag.SparseVector{}, q.Candidates()); err != nil || !approx {
		t.Fatalf("a Limit 10 query on %d points: approx %v, %v; want the sketch", 1500, approx, err)
	}
	// Episodes go before every turn (negative keys), replacements in place.
	var more []rag.Point
	for i := int64(1); i <= 30; i++ {
		ep := point(i * 10)
		ep.Kind, ep.EpisodeID, ep.ToSeq, ep.StartedAt, ep.EndedAt = "episode", fmt.Sprint("ep", i), i*10+5, ep.CreatedAt, ep.CreatedAt
		more = append(more, ep, point(i*7))
	}
	if err := ix.Upsert(ctx, more); err != nil {
		t.Fatal(err)
	}
	check("episodes and replacements", ix)
	if err := ix.Delete(ctx, rag.Filter{Tenant: "t", UserID: "u2"}); err != nil {
		t.Fatal(err)
	}
	check("a user's points deleted", ix)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix = open(SketchFrom(64))
	defer ix.Close()
	check("reopened", ix)
	if err := ix.Delete(ctx, rag.Filter{Tenant: "t", FromSeq: 20}); err != nil {
		t.Fatal(err)
	}
	ix.mu.RLock()
	c := ix.tenants["t"].chats["c"]
	if c.rows != nil {
		t.Errorf("a chat cut to %d points keeps its rows (from 64)", c.len())
	}
	ix.mu.RUnlock()
}

func sameHits(a, b []rag.Hit) bool {
	return slices.EqualFunc(a, b, func(x, y rag.Hit) bool { return x.ChatID == y.ChatID && x.Seq == y.Seq && x.Kind == y.Kind })
}

// checkSketch checks every chat's rows against its vectors in the file,
// then builds the rows of every chat a query could search by the sketch,
// so that the writes after it keep them in step (checked next time).
func checkSketch(t *testing.T, stage string, ix *Index) {
	t.Helper()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	dim := ix.dim
	var used int64
	for _, tn := range ix.tenants {
		for _, c := range tn.chats {
			var have int64
			if c.rows != nil {
				have += int64(cap(c.rows))
			}
			if c.post != nil {
				have += c.post.bytes
				checkPostings(t, stage, ix, c)
			}
			used += have
			if have != c.resBytes || (have > 0) != (c.resEl != nil) {
				t.Errorf("%s: chat %s: rows and postings of %d bytes counted as %d (listed %v)", stage, c.id, have, c.resBytes, c.resEl != nil)
			}
		}
	}
	if used != ix.res.used || used > ix.res.budget {
		t.Errorf("%s: rows hold %d bytes, counted %d, budget %d", stage, used, ix.res.used, ix.res.budget)
	}
	for _, tn := range ix.tenants {
		for id, c := range tn.chats {
			if ix.postingsFrom > 0 && c.len() >= ix.postingsFrom {
				ix.postingsOf(c)
			}
			if c.rows == nil {
				if ix.sketchFrom > 0 && c.len() >= ix.sketchFrom && ix.rowsOf(c) == nil {
					t.Errorf("%s: chat %s: rows not built", stage, id)
				}
				continue
			}
			if len(c.rows) != c.len()*dim {
				t.Errorf("%s: chat %s: %d row bytes for %d points", stage, id, len(c.rows), c.len())
				continue
			}
			bp, err := ix.vf.read(c.vecs)
			if err != nil {
				t.Fatal(err)
			}
			for s := range c.seqs {
				p := int(c.vpos[s]) * dim
				if !slices.Equal(c.row(s, dim), asInt8((*bp)[p:p+dim])) {
					t.Errorf("%s: chat %s slot %d: row out of step with its vector", stage, id, s)
					break
				}
			}
			ix.vf.put(bp)
		}
	}
}

// BenchmarkScanCost is the cost model behind approxRatio: the dense side
// of one query (prefetch 188, the retriever's at rag_k 25) on one chat of n
// points (hashing-embedder vectors of chat-like text, the vector file in
// the page cache): the exact scan, and the sketch with K candidates
// rescored (K = 1: the estimates alone). ns/point is per point of the
// chat.
func BenchmarkScanCost(b *testing.B) {
	const dim = 384
	ctx := context.Background()
	r := rand.New(rand.NewPCG(9, 10))
	emb := rag.NewHashingEmbedder(dim)
	vocab, zipf := zipfVocab(r, 5000)
	for _, n := range []int{2000, 10000} {
		ix, err := Open(ctx, filepath.Join(b.TempDir(), fmt.Sprint("v", n, ".db")), dim, SketchFrom(1))
		if err != nil {
			b.Fatal(err)
		}
		pts := make([]rag.Point, n)
		for i := range pts {
			pts[i] = rag.Point{Tenant: "t", ChatID: "c", Seq: int64(i + 1), Role: "user", Content: "x",
				Dense: emb.Embed(chatText(r, vocab, zipf, 10+r.IntN(150))), CreatedAt: time.Unix(1, 0)}
		}
		if err := ix.Upsert(ctx, pts); err != nil {
			b.Fatal(err)
		}
		c := ix.tenants["t"].chats["c"]
		m := ix.matcher(rag.Filter{Tenant: "t"})
		dqs := make([]*denseQuery, 32)
		for i := range dqs {
			dq := &denseQuery{qv: make([]int8, dim)}
			dq.qscale = quantise(emb.Embed(chatText(r, vocab, zipf, 3+r.IntN(10))), dq.qv)
			dq.sketch = newSketchQuery(dq.qv)
			dqs[i] = dq
		}
		b.Run(fmt.Sprint("n-", n, "/exact"), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				if err := ix.exactDense(c, nil, &m, true, dqs[i%len(dqs)], newTopK(188, n)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/point")
		})
		for _, k := range []int{1, 256, 752} {
			b.Run(fmt.Sprint("n-", n, "/sketch-K-", k), func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					ix.sketchDense(c, ix.rowsOf(c), &m, true, dqs[i%len(dqs)], k, newTopK(188, n))
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/point")
			})
		}
		_ = ix.Close()
	}
}

// TestSketchRowsUnderConcurrentUse: queries build a chat's rows under the
// read lock (several at once) while writes append to it and replace
// points; run with -race. The rows end in step with the vectors.
func TestSketchRowsUnderConcurrentUse(t *testing.T) {
	ctx := context.Background()
	const dim = 16
	ix, err := Open(ctx, filepath.Join(t.TempDir(), "v.db"), dim, SketchFrom(8))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	r := rand.New(rand.NewPCG(11, 12))
	point := func(seq int64) rag.Point {
		return rag.Point{Tenant: "t", ChatID: "c", Seq: seq, Role: "user", Content: "x", Dense: randomVec(r, dim, nil, 0), CreatedAt: time.Unix(1, 0)}
	}
	var pts []rag.Point
	for seq := int64(1); seq <= 900; seq++ {
		pts = append(pts, point(seq))
	}
	if err := ix.Upsert(ctx, pts); err != nil {
		t.Fatal(err)
	}
	qs := make([][]float32, 8)
	for i := range qs {
		qs[i] = randomVec(r, dim, nil, 0)
	}
	done := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := range 50 {
				if _, err := ix.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t", ChatIDs: []string{"c"}}, Dense: qs[(g+i)%len(qs)], Limit: 5}); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for seq := int64(901); seq <= 960; seq++ {
		if err := ix.Upsert(ctx, []rag.Point{point(seq), point(seq - 500)}); err != nil {
			t.Fatal(err)
		}
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	checkSketch(t, "after concurrent use", ix)
}

// TestResidentRowsBounded: with room for one chat's rows, querying two
// chats by the sketch in turn keeps one chat's rows at a time, counted
// exactly, and answers stay those of a fresh build.
func TestResidentRowsBounded(t *testing.T) {
	ctx := context.Background()
	const dim = 16
	ix, err := Open(ctx, filepath.Join(t.TempDir(), "v.db"), dim, SketchFrom(8))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	r := rand.New(rand.NewPCG(13, 14))
	for _, chat := range []string{"a", "b"} {
		var pts []rag.Point
		for seq := int64(1); seq <= 1000; seq++ {
			pts = append(pts, rag.Point{Tenant: "t", ChatID: chat, Seq: seq, Role: "user", Content: "x", Dense: randomVec(r, dim, nil, 0), CreatedAt: time.Unix(1, 0)})
		}
		if err := ix.Upsert(ctx, pts); err != nil {
			t.Fatal(err)
		}
	}
	ix.res.budget = 1200 * dim // one chat's rows (with their slack), not two
	q := randomVec(r, dim, nil, 0)
	var first []rag.Hit
	for i := range 6 {
		chat := []string{"a", "b"}[i%2]
		hits, err := ix.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t", ChatIDs: []string{chat}}, Dense: q, Limit: 5})
		if err != nil || len(hits) != 5 {
			t.Fatalf("query %d: %d hits, %v", i, len(hits), err)
		}
		if i == 0 {
			first = hits
		} else if chat == "a" && !sameHits(hits, first) {
			t.Errorf("query %d: chat a answers differently after its rows were rebuilt", i)
		}
		ix.mu.RLock()
		a, b := ix.tenants["t"].chats["a"], ix.tenants["t"].chats["b"]
		if (a.rows != nil) == (b.rows != nil) {
			t.Errorf("query %d (chat %s): rows in RAM: a %v, b %v; want only the last queried", i, chat, a.rows != nil, b.rows != nil)
		}
		ix.mu.RUnlock()
		checkSketch(t, fmt.Sprint("query ", i), ix)
	}
}

// checkPostings checks c's postings against its terms: each (slot, term,
// weight) once, nothing else.
func checkPostings(t *testing.T, stage string, ix *Index, c *chat) {
	t.Helper()
	type entry struct {
		slot int32
		term uint32
		w    uint16
	}
	want := map[entry]int{}
	b, err := ix.tf.all(c.sp)
	if err != nil {
		t.Fatalf("%s: chat %s: read its arena: %v", stage, c.id, err)
	}
	defer ix.tf.put(b)
	for s := range c.seqs {
		idx, ws := c.terms(b, s)
		for j, term := range idx {
			want[entry{int32(s), term, ws[j]}]++
		}
	}
	n := 0
	for term, l := range c.post.lists {
		for j, s := range l.slots {
			e := entry{s, term, l.ws[j]}
			if want[e] == 0 {
				t.Errorf("%s: chat %s: posting %+v not in its terms", stage, c.id, e)
				return
			}
			want[e]--
			n++
		}
	}
	if n != c.post.n || n != int(c.sp.n)-c.garbage {
		t.Errorf("%s: chat %s: %d postings (counted %d), %d terms", stage, c.id, n, c.post.n, int(c.sp.n)-c.garbage)
	}
}

// TestPostingsScoreAsTheScan: sparse-only queries answer the same hits
// with the same scores (bit for bit) from the postings as from the scan,
// through appends (kept in step) and an episode before every turn and a
// delete (postings dropped and rebuilt).
func TestPostingsScoreAsTheScan(t *testing.T) {
	ctx := context.Background()
	const dim = 8
	r := rand.New(rand.NewPCG(15, 16))
	path := filepath.Join(t.TempDir(), "v.db")
	ix, err := Open(ctx, path, dim, SketchFrom(50))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	vocab, zipf := zipfVocab(r, 300)
	sp := rag.NewSparseEncoder()
	point := func(seq int64) rag.Point {
		text := chatText(r, vocab, zipf, 5+r.IntN(40))
		return rag.Point{Tenant: "t", ChatID: "c", UserID: fmt.Sprint("u", seq%2), Seq: seq, Role: "user", Content: text,
			Dense: randomVec(r, dim, nil, 0), Sparse: sp.EncodeDocument(text), CreatedAt: time.Unix(seq, 0)}
	}
	add := func(pts ...rag.Point) {
		if err := ix.Upsert(ctx, pts); err != nil {
			t.Fatal(err)
		}
	}
	compare := func(stage string) {
		t.Helper()
		scan, err := Open(ctx, path, dim, SketchFrom(-1))
		if err != nil {
			t.Fatal(err)
		}
		defer scan.Close()
		for i := range 10 {
			q := rag.Query{Filter: rag.Filter{Tenant: "t", ChatIDs: []string{"c"}}, Sparse: sp.EncodeQuery(chatText(r, vocab, zipf, 2+r.IntN(6))), Limit: 30}
			if i%2 == 1 {
				q.Filter.UserID = "u1"
			}
			got, err1 := ix.Query(ctx, q)
			want, err2 := scan.Query(ctx, q)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if !sameHits(got, want) || !slices.EqualFunc(got, want, func(a, b rag.Hit) bool { return a.Score == b.Score }) {
				t.Fatalf("%s, query %d: postings answer %d hits, the scan %d, or other scores", stage, i, len(got), len(want))
			}
		}
		ix.mu.RLock()
		if c := ix.tenants["t"].chats["c"]; c.post == nil {
			t.Errorf("%s: no postings after queries", stage)
		}
		ix.mu.RUnlock()
	}
	var pts []rag.Point
	for seq := int64(1); seq <= 400; seq++ {
		pts = append(pts, point(seq))
	}
	add(pts...)
	compare("loaded")
	for seq := int64(401); seq <= 420; seq++ {
		add(point(seq))
	}
	compare("appended")
	ep := point(30)
	ep.Kind, ep.EpisodeID, ep.ToSeq, ep.StartedAt, ep.EndedAt = "episode", "ep", 40, ep.CreatedAt, ep.CreatedAt
	add(ep, point(7))
	compare("an episode and a replacement")
	if err := ix.Delete(ctx, rag.Filter{Tenant: "t", FromSeq: 100, ToSeq: 150}); err != nil {
		t.Fatal(err)
	}
	compare("deleted")
	checkSketch(t, "end", ix)
}
