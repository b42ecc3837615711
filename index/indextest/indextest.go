// Package indextest is the conformance suite every rag.Index backend passes
// (index/embedded, index/qdrant). It uses small hand-made vectors (dim 8) so the
// expected order of every answer can be worked out by hand.
//
// Usage, in a backend's _test.go:
//
//	func TestConformance(t *testing.T) {
//		indextest.Run(t, func(t *testing.T, dim int) rag.Index { ... fresh, empty index ... })
//	}
//
// newIndex must return a fresh, empty index for each call; the suite closes it.
package indextest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/contextd/contextd/rag"
)

// Dim is the vector size the suite asks newIndex for.
const Dim = 8

// Run runs every conformance subtest against indexes made by newIndex.
func Run(t *testing.T, newIndex func(t *testing.T, dim int) rag.Index) {
	t.Helper()
	open := func(t *testing.T) rag.Index {
		t.Helper()
		ix := newIndex(t, Dim)
		t.Cleanup(func() { _ = ix.Close() })
		if err := ix.Ping(context.Background()); err != nil {
			t.Fatalf("Ping on a fresh index: %v", err)
		}
		return ix
	}
	t.Run("UpsertCount", func(t *testing.T) { testUpsertCount(t, open(t)) })
	t.Run("IdempotentUpsert", func(t *testing.T) { testIdempotent(t, open(t)) })
	t.Run("PayloadRoundTrip", func(t *testing.T) { testPayload(t, open(t)) })
	t.Run("Scoping", func(t *testing.T) { testScoping(t, open(t)) })
	t.Run("EmptyTenantRejected", func(t *testing.T) { testEmptyTenant(t, open(t)) })
	t.Run("ScoreThreshold", func(t *testing.T) { testThreshold(t, open(t)) })
	t.Run("Limit", func(t *testing.T) { testLimit(t, open(t)) })
	t.Run("RRFOrder", func(t *testing.T) { testRRF(t, open(t)) })
	t.Run("SideScores", func(t *testing.T) { testSideScores(t, open(t)) })
	t.Run("EmptySparse", func(t *testing.T) { testEmptySparse(t, open(t)) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, open(t)) })
	runEpisodes(t, open)
	runFacts(t, open)
}

// vec returns a Dim-sized vector starting with parts.
func vec(parts ...float32) []float32 {
	v := make([]float32, Dim)
	copy(v, parts)
	return v
}

// unit returns the basis vector i.
func unit(i int) []float32 {
	v := make([]float32, Dim)
	v[i] = 1
	return v
}

// cosVec returns a unit vector with cosine c to unit(0), leaning on axis 1.
func cosVec(c float64) []float32 {
	return vec(float32(c), float32(math.Sqrt(1-c*c)))
}

func sparse(pairs ...float32) rag.SparseVector {
	// pairs: index, value, index, value ... (indices given ascending)
	var sv rag.SparseVector
	for i := 0; i+1 < len(pairs); i += 2 {
		sv.Indices = append(sv.Indices, uint32(pairs[i]))
		sv.Values = append(sv.Values, pairs[i+1])
	}
	return sv
}

var t0 = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)

func point(tenant, user, chat, agent string, seq int64, dense []float32, sp rag.SparseVector) rag.Point {
	return rag.Point{
		Tenant: tenant, UserID: user, ChatID: chat, Agent: agent, Seq: seq,
		Role: "user", Content: fmt.Sprintf("%s/%s/%d", tenant, chat, seq),
		CreatedAt: t0.Add(time.Duration(seq) * time.Minute),
		Dense:     dense, Sparse: sp,
	}
}

func upsert(t *testing.T, ix rag.Index, pts ...rag.Point) {
	t.Helper()
	if err := ix.Upsert(context.Background(), pts); err != nil {
		t.Fatalf("Upsert: %v", err)
	}
}

func count(t *testing.T, ix rag.Index, f rag.Filter) int {
	t.Helper()
	n, err := ix.Count(context.Background(), f)
	if err != nil {
		t.Fatalf("Count(%+v): %v", f, err)
	}
	return n
}

func query(t *testing.T, ix rag.Index, q rag.Query) []rag.Hit {
	t.Helper()
	hits, err := ix.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("Query: %v", err)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Fatalf("hits not in descending score order: %v", keys(hits))
		}
	}
	return hits
}

type key struct {
	Tenant, Chat string
	Seq          int64
}

func (k key) String() string { return fmt.Sprintf("%s/%s/%d", k.Tenant, k.Chat, k.Seq) }

func keys(hits []rag.Hit) []key {
	out := make([]key, len(hits))
	for i, h := range hits {
		out[i] = key{h.Tenant, h.ChatID, h.Seq}
	}
	return out
}

func sortedKeys(hits []rag.Hit) []key {
	ks := keys(hits)
	slices.SortFunc(ks, func(a, b key) int {
		if c := cmpStr(a.Tenant, b.Tenant); c != 0 {
			return c
		}
		if c := cmpStr(a.Chat, b.Chat); c != 0 {
			return c
		}
		return int(a.Seq - b.Seq)
	})
	return ks
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func testUpsertCount(t *testing.T, ix rag.Index) {
	upsert(t, ix,
		point("t1", "u1", "c1", "a", 1, unit(0), sparse(1, 1)),
		point("t1", "u1", "c1", "a", 2, unit(1), sparse(2, 1)),
		point("t1", "u1", "c1", "a", 3, unit(2), sparse(3, 1)),
		point("t1", "u2", "c2", "b", 1, unit(3), sparse(4, 1)),
		point("t1", "u2", "c2", "b", 2, unit(4), sparse(5, 1)),
	)
	for _, tc := range []struct {
		f    rag.Filter
		want int
	}{
		{rag.Filter{Tenant: "t1"}, 5},
		{rag.Filter{Tenant: "t1", ChatIDs: []string{"c1"}}, 3},
		{rag.Filter{Tenant: "t1", ChatIDs: []string{"c1", "c2"}}, 5},
		{rag.Filter{Tenant: "t1", UserID: "u2"}, 2},
		{rag.Filter{Tenant: "t1", Agent: "a"}, 3},
		{rag.Filter{Tenant: "t1", UserID: "u1", ChatIDs: []string{"c2"}}, 0},
		{rag.Filter{Tenant: "t2"}, 0},
	} {
		if got := count(t, ix, tc.f); got != tc.want {
			t.Errorf("Count(%+v) = %d, want %d", tc.f, got, tc.want)
		}
	}
	// An empty upsert is a no-op, not an error.
	if err := ix.Upsert(context.Background(), nil); err != nil {
		t.Errorf("Upsert(nil): %v", err)
	}
}

func testIdempotent(t *testing.T, ix rag.Index) {
	pts := []rag.Point{
		point("t1", "u1", "c1", "a", 1, unit(0), sparse(1, 1)),
		point("t1", "u1", "c1", "a", 2, unit(1), sparse(2, 1)),
		// Same seq in another chat and in another tenant: distinct points.
		point("t1", "u1", "c2", "a", 1, unit(2), sparse(3, 1)),
		point("t2", "u1", "c1", "a", 1, unit(3), sparse(4, 1)),
	}
	upsert(t, ix, pts...)
	upsert(t, ix, pts...)
	if got := count(t, ix, rag.Filter{Tenant: "t1"}); got != 3 {
		t.Fatalf("after re-upsert Count(t1) = %d, want 3", got)
	}
	if got := count(t, ix, rag.Filter{Tenant: "t2"}); got != 1 {
		t.Fatalf("after re-upsert Count(t2) = %d, want 1", got)
	}
	// Re-upserting with new content and vectors replaces the point.
	p := pts[0]
	p.Content = "replaced"
	p.Dense = unit(5)
	p.Sparse = sparse(9, 1)
	upsert(t, ix, p)
	if got := count(t, ix, rag.Filter{Tenant: "t1"}); got != 3 {
		t.Fatalf("after replace Count(t1) = %d, want 3", got)
	}
	hits := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t1"}, Dense: unit(5), Sparse: sparse(9, 1), Limit: 1, ScoreThreshold: 0.5})
	if len(hits) != 1 || hits[0].ChatID != "c1" || hits[0].Seq != 1 || hits[0].Content != "replaced" {
		t.Fatalf("replaced point not found by its new vectors: %+v", hits)
	}
	checkTerms(t, hits[0], 9)
	// Terms come sorted whatever order the vector was given in.
	p.Sparse = rag.SparseVector{Indices: []uint32{30, 10, 20}, Values: []float32{1, 1, 1}}
	upsert(t, ix, p)
	hits = query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t1", ChatIDs: []string{"c1"}}, Sparse: sparse(20, 1), Limit: 1})
	if len(hits) != 1 {
		t.Fatalf("re-upserted point not found by a term: %v", keys(hits))
	}
	checkTerms(t, hits[0], 10, 20, 30)
	hits = query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t1", ChatIDs: []string{"c1"}}, Sparse: sparse(2, 1), Limit: 1})
	if len(hits) != 1 || hits[0].Seq != 2 {
		t.Fatalf("query by seq 2's term: %v", keys(hits))
	}
	checkTerms(t, hits[0], 2)
	// The old vectors no longer match it.
	hits = query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t1"}, Dense: unit(0), Sparse: sparse(1, 1), Limit: 5, ScoreThreshold: 0.5})
	if len(hits) != 0 {
		t.Fatalf("old vectors still match: %v", keys(hits))
	}
}

func testPayload(t *testing.T, ix rag.Index) {
	loc := time.FixedZone("UTC+5:30", 5*3600+1800)
	want := rag.Point{
		Tenant: "tenant-ü", UserID: "user-é", ChatID: "chat/with:odd chars", Agent: "agent-ß",
		Seq: 1234567, Role: "assistant",
		Content:   "Grüße aus Köln — 東京の天気は晴れ 🌤️\nsecond line\t\"quoted\"",
		CreatedAt: time.Date(2024, 2, 29, 23, 59, 58, 123456789, loc),
		Dense:     vec(0.5, 0.5, 0.5, 0.5),
		Sparse:    sparse(7, 0.5, 4000000000, 1.5),
	}
	upsert(t, ix, want)
	hits := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: want.Tenant}, Dense: want.Dense, Sparse: sparse(7, 1), Limit: 5})
	if len(hits) != 1 {
		t.Fatalf("got %d hits, want 1", len(hits))
	}
	got := hits[0]
	if got.Tenant != want.Tenant || got.UserID != want.UserID || got.ChatID != want.ChatID ||
		got.Agent != want.Agent || got.Seq != want.Seq || got.Role != want.Role || got.Content != want.Content {
		t.Errorf("payload mismatch:\n got %+v\nwant %+v", got.Point, want)
	}
	if got.CreatedAt.Unix() != want.CreatedAt.Unix() {
		t.Errorf("CreatedAt = %v, want %v (to the second)", got.CreatedAt, want.CreatedAt)
	}
	if got.Score <= 0 {
		t.Errorf("Score = %v, want > 0", got.Score)
	}
	if math.Abs(float64(got.DenseScore)-1) > 1e-3 {
		t.Errorf("DenseScore = %v, want ~1 (same vector)", got.DenseScore)
	}
	if len(got.Dense) != 0 || len(got.Sparse.Indices) != 0 {
		t.Errorf("hit carries vectors; want them left empty")
	}
	checkTerms(t, got, 7, 4000000000)
}

// checkTerms checks a turn hit's Terms, when the index sets them: its
// sparse vector's indices, sorted and unique.
func checkTerms(t *testing.T, h rag.Hit, want ...uint32) {
	t.Helper()
	if h.Terms != nil && !slices.Equal(h.Terms, want) {
		t.Errorf("hit %s/%d Terms = %v, want %v (its sparse indices, sorted, unique)", h.ChatID, h.Seq, h.Terms, want)
	}
}

func testScoping(t *testing.T, ix rag.Index) {
	// Every point has the same vectors: only the filter decides what comes back.
	d, s := unit(0), sparse(42, 1)
	all := []rag.Point{
		point("t1", "u1", "c1", "a1", 1, d, s),
		point("t1", "u1", "c1", "a1", 2, d, s),
		point("t1", "u1", "c2", "a2", 1, d, s),
		point("t1", "u2", "c3", "a1", 1, d, s),
		point("t2", "u1", "c1", "a1", 1, d, s), // same user/chat ids, other tenant
		point("t2", "u1", "c9", "a1", 1, d, s),
	}
	upsert(t, ix, all...)
	k := func(tenant, chat string, seq int64) key { return key{tenant, chat, seq} }
	for _, tc := range []struct {
		name string
		f    rag.Filter
		want []key
	}{
		{"tenant", rag.Filter{Tenant: "t1"}, []key{k("t1", "c1", 1), k("t1", "c1", 2), k("t1", "c2", 1), k("t1", "c3", 1)}},
		{"other tenant", rag.Filter{Tenant: "t2"}, []key{k("t2", "c1", 1), k("t2", "c9", 1)}},
		{"unknown tenant", rag.Filter{Tenant: "t3"}, []key{}},
		{"user", rag.Filter{Tenant: "t1", UserID: "u1"}, []key{k("t1", "c1", 1), k("t1", "c1", 2), k("t1", "c2", 1)}},
		{"user other", rag.Filter{Tenant: "t1", UserID: "u2"}, []key{k("t1", "c3", 1)}},
		{"one chat", rag.Filter{Tenant: "t1", ChatIDs: []string{"c1"}}, []key{k("t1", "c1", 1), k("t1", "c1", 2)}},
		{"chats", rag.Filter{Tenant: "t1", ChatIDs: []string{"c2", "c3"}}, []key{k("t1", "c2", 1), k("t1", "c3", 1)}},
		{"chat of other tenant", rag.Filter{Tenant: "t1", ChatIDs: []string{"c9"}}, []key{}},
		{"agent", rag.Filter{Tenant: "t1", Agent: "a1"}, []key{k("t1", "c1", 1), k("t1", "c1", 2), k("t1", "c3", 1)}},
		{"user and agent", rag.Filter{Tenant: "t1", UserID: "u1", Agent: "a2"}, []key{k("t1", "c2", 1)}},
		{"user and chats", rag.Filter{Tenant: "t1", UserID: "u2", ChatIDs: []string{"c1", "c3"}}, []key{k("t1", "c3", 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits := query(t, ix, rag.Query{Filter: tc.f, Dense: d, Sparse: s, Limit: 20})
			got := sortedKeys(hits)
			if len(got) != len(tc.want) || !slices.Equal(got, tc.want) {
				t.Errorf("Query(%+v) = %v, want %v", tc.f, got, tc.want)
			}
			for _, h := range hits {
				if h.Tenant != tc.f.Tenant {
					t.Errorf("hit from tenant %q in a query for %q", h.Tenant, tc.f.Tenant)
				}
			}
			if n := count(t, ix, tc.f); n != len(tc.want) {
				t.Errorf("Count(%+v) = %d, want %d", tc.f, n, len(tc.want))
			}
		})
	}
}

func testEmptyTenant(t *testing.T, ix rag.Index) {
	ctx := context.Background()
	upsert(t, ix, point("t1", "u1", "c1", "a", 1, unit(0), sparse(1, 1)))
	if _, err := ix.Query(ctx, rag.Query{Filter: rag.Filter{ChatIDs: []string{"c1"}}, Dense: unit(0), Sparse: sparse(1, 1), Limit: 5}); err == nil {
		t.Error("Query without tenant: no error")
	}
	if _, err := ix.Count(ctx, rag.Filter{UserID: "u1"}); err == nil {
		t.Error("Count without tenant: no error")
	}
	if err := ix.Delete(ctx, rag.Filter{ChatIDs: []string{"c1"}}); err == nil {
		t.Error("Delete without tenant: no error")
	}
	if err := ix.Upsert(ctx, []rag.Point{point("", "u1", "c1", "a", 2, unit(0), sparse(1, 1))}); err == nil {
		t.Error("Upsert of a point without tenant: no error")
	}
	if got := count(t, ix, rag.Filter{Tenant: "t1"}); got != 1 {
		t.Errorf("after rejected calls Count(t1) = %d, want 1", got)
	}
}

func testThreshold(t *testing.T, ix rag.Index) {
	f := rag.Filter{Tenant: "t1"}
	upsert(t, ix,
		point("t1", "u", "c", "a", 1, cosVec(0.95), sparse(10, 1)), // dense match
		point("t1", "u", "c", "a", 2, unit(2), sparse(77, 1)),      // sparse-only match (cos 0)
		point("t1", "u", "c", "a", 3, unit(3), sparse(11, 1)),      // neither (cos 0, no shared term)
		point("t1", "u", "c", "a", 4, cosVec(0.3), sparse(12, 1)),  // dense, below threshold
	)
	q := rag.Query{Filter: f, Dense: unit(0), Sparse: sparse(77, 1), Limit: 10, ScoreThreshold: 0.5}
	hits := query(t, ix, q)
	got := map[int64]rag.Hit{}
	for _, h := range hits {
		got[h.Seq] = h
	}
	if _, ok := got[1]; !ok {
		t.Errorf("dense match above threshold missing: %v", keys(hits))
	}
	if h, ok := got[2]; !ok {
		t.Errorf("sparse-only match missing: %v", keys(hits))
	} else if h.DenseScore != 0 {
		t.Errorf("sparse-only match has DenseScore %v, want 0", h.DenseScore)
	}
	if _, ok := got[3]; ok {
		t.Errorf("point matching neither side returned: %v", keys(hits))
	}
	if _, ok := got[4]; ok {
		t.Errorf("dense candidate below threshold returned: %v", keys(hits))
	}
	if h := got[1]; math.Abs(float64(h.DenseScore)-0.95) > 1e-3 {
		t.Errorf("DenseScore = %v, want 0.95", h.DenseScore)
	}
	if len(hits) != 2 {
		t.Errorf("got %d hits, want 2: %v", len(hits), keys(hits))
	}
	// Without a threshold every dense candidate in scope counts.
	q.ScoreThreshold = 0
	hits = query(t, ix, q)
	if len(hits) != 4 {
		t.Errorf("no threshold: got %d hits, want 4: %v", len(hits), keys(hits))
	}
}

// testSideScores: a hit carries each side's own score, 0 for a side that
// did not rank it, and the lexical score says by how much a point
// matched: both query terms score above one.
func testSideScores(t *testing.T, ix rag.Index) {
	upsert(t, ix,
		point("t1", "u", "c", "a", 1, unit(0), sparse(11, 1)),        // dense only
		point("t1", "u", "c", "a", 2, unit(2), sparse(77, 1)),        // one query term
		point("t1", "u", "c", "a", 3, unit(3), sparse(77, 1, 78, 1)), // both query terms
		point("t1", "u", "c", "a", 4, unit(4), sparse(12, 1, 13, 1)), // neither side
		point("t1", "u", "c", "a", 5, cosVec(0.9), sparse(78, 1)),    // both sides
	)
	q := rag.Query{Filter: rag.Filter{Tenant: "t1"}, Dense: unit(0), Sparse: sparse(77, 1, 78, 1), Limit: 10, ScoreThreshold: 0.5}
	got := map[int64]rag.Hit{}
	for _, h := range query(t, ix, q) {
		got[h.Seq] = h
	}
	for seq, want := range map[int64]struct{ dense, sparse bool }{1: {true, false}, 2: {false, true}, 3: {false, true}, 5: {true, true}} {
		h, ok := got[seq]
		if !ok {
			t.Errorf("seq %d missing: %v", seq, got)
			continue
		}
		if (h.DenseScore > 0) != want.dense || (h.SparseScore > 0) != want.sparse {
			t.Errorf("seq %d: DenseScore %v, SparseScore %v; want dense %v, sparse %v", seq, h.DenseScore, h.SparseScore, want.dense, want.sparse)
		}
	}
	if _, ok := got[4]; ok {
		t.Errorf("a point neither side ranked was returned")
	}
	if got[3].SparseScore <= got[2].SparseScore {
		t.Errorf("both query terms score %v, one term %v: want more", got[3].SparseScore, got[2].SparseScore)
	}
}

func testLimit(t *testing.T, ix rag.Index) {
	var pts []rag.Point
	for i := 1; i <= 10; i++ {
		c := 1 - float64(i)/20 // seq 1 is the closest
		pts = append(pts, point("t1", "u", "c", "a", int64(i), cosVec(c), sparse(5, 1)))
	}
	upsert(t, ix, pts...)
	for _, limit := range []int{1, 3, 10} {
		hits := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t1"}, Dense: unit(0), Limit: limit})
		if len(hits) != limit {
			t.Fatalf("Limit %d: got %d hits", limit, len(hits))
		}
		for i, h := range hits {
			if h.Seq != int64(i+1) {
				t.Fatalf("Limit %d: dense-only order %v, want seqs 1..%d", limit, keys(hits), limit)
			}
		}
	}
	hits := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t1"}, Dense: unit(0), Sparse: sparse(5, 1), Limit: 20})
	if len(hits) != 10 {
		t.Fatalf("Limit above the matches: got %d hits, want 10", len(hits))
	}
}

func testRRF(t *testing.T, ix rag.Index) {
	// Query: dense = unit(0), sparse term 100. Within the scope:
	//   seq 1 "Y": dense rank 1 (cos 1.0), no shared term.
	//   seq 2 "Z": sparse rank 1 (weight 3), dense cos 0 (below the 0.1 threshold).
	//   seq 3 "X": dense rank 2 (cos 0.9), sparse rank 2 (weight 2).
	//   seq 4 "W": dense rank 3 (cos 0.5), sparse rank 3 (weight 1).
	// RRF: X = 1/(k+2)+1/(k+2) beats Y and Z (1/(k+1) each); W = 2/(k+3)
	// also beats them. So the order is X, W, then Y and Z in either order.
	upsert(t, ix,
		point("t1", "u", "c", "a", 1, unit(0), sparse(7, 1)),
		point("t1", "u", "c", "a", 2, unit(4), sparse(100, 3)),
		point("t1", "u", "c", "a", 3, cosVec(0.9), sparse(100, 2)),
		point("t1", "u", "c", "a", 4, cosVec(0.5), sparse(100, 1)),
		// Another chat out of scope, better on both sides: must not interfere.
		point("t1", "u", "other", "a", 1, unit(0), sparse(100, 9)),
	)
	hits := query(t, ix, rag.Query{
		Filter: rag.Filter{Tenant: "t1", ChatIDs: []string{"c"}},
		Dense:  unit(0), Sparse: sparse(100, 1), Limit: 10, ScoreThreshold: 0.1,
	})
	var seqs []int64
	for _, h := range hits {
		seqs = append(seqs, h.Seq)
	}
	if len(seqs) != 4 || seqs[0] != 3 || seqs[1] != 4 {
		t.Fatalf("RRF order = %v, want [3 4 then 1,2 in any order]", seqs)
	}
	if rest := []int64{min(seqs[2], seqs[3]), max(seqs[2], seqs[3])}; rest[0] != 1 || rest[1] != 2 {
		t.Fatalf("RRF order = %v, want [3 4 then 1,2 in any order]", seqs)
	}
	if !(hits[0].Score > hits[1].Score && hits[1].Score > hits[2].Score) {
		t.Errorf("scores not strictly decreasing over the ranks: %v %v %v", hits[0].Score, hits[1].Score, hits[2].Score)
	}
	if math.Abs(float64(hits[2].Score-hits[3].Score)) > 1e-6 {
		t.Errorf("points ranked first by one side each should tie: %v vs %v", hits[2].Score, hits[3].Score)
	}
	// Limit cuts the fused list, not the sides.
	top := query(t, ix, rag.Query{
		Filter: rag.Filter{Tenant: "t1", ChatIDs: []string{"c"}},
		Dense:  unit(0), Sparse: sparse(100, 1), Limit: 1, Prefetch: 4, ScoreThreshold: 0.1,
	})
	if len(top) != 1 || top[0].Seq != 3 {
		t.Errorf("Limit 1: %v, want seq 3", keys(top))
	}
}

func testEmptySparse(t *testing.T, ix rag.Index) {
	// A query of stopwords has no sparse terms; a turn may have none either.
	upsert(t, ix,
		point("t1", "u", "c", "a", 1, unit(0), rag.SparseVector{}),
		point("t1", "u", "c", "a", 2, unit(1), sparse(3, 1)),
	)
	hits := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t1"}, Dense: unit(0), Limit: 5, ScoreThreshold: 0.5})
	if len(hits) != 1 || hits[0].Seq != 1 {
		t.Errorf("dense-only query: %v, want seq 1", keys(hits))
	}
}

func testDelete(t *testing.T, ix rag.Index) {
	ctx := context.Background()
	d, s := unit(0), sparse(1, 1)
	upsert(t, ix,
		point("t1", "u1", "c1", "a", 1, d, s),
		point("t1", "u1", "c1", "a", 2, d, s),
		point("t1", "u1", "c2", "a", 1, d, s),
		point("t1", "u2", "c3", "a", 1, d, s),
		point("t1", "u2", "c4", "a", 1, d, s),
		point("t2", "u1", "c1", "a", 1, d, s),
	)
	if err := ix.Delete(ctx, rag.Filter{Tenant: "t1", ChatIDs: []string{"c1"}}); err != nil {
		t.Fatalf("Delete chat: %v", err)
	}
	for _, tc := range []struct {
		f    rag.Filter
		want int
	}{
		{rag.Filter{Tenant: "t1", ChatIDs: []string{"c1"}}, 0},
		{rag.Filter{Tenant: "t1", ChatIDs: []string{"c2"}}, 1},
		{rag.Filter{Tenant: "t1"}, 3},
		{rag.Filter{Tenant: "t2", ChatIDs: []string{"c1"}}, 1},
	} {
		if got := count(t, ix, tc.f); got != tc.want {
			t.Errorf("after chat delete Count(%+v) = %d, want %d", tc.f, got, tc.want)
		}
	}
	if hits := query(t, ix, rag.Query{Filter: rag.Filter{Tenant: "t1", ChatIDs: []string{"c1"}}, Dense: d, Sparse: s, Limit: 5}); len(hits) != 0 {
		t.Errorf("deleted chat still answers: %v", keys(hits))
	}
	if err := ix.Delete(ctx, rag.Filter{Tenant: "t1", UserID: "u2"}); err != nil {
		t.Fatalf("Delete user: %v", err)
	}
	for _, tc := range []struct {
		f    rag.Filter
		want int
	}{
		{rag.Filter{Tenant: "t1", UserID: "u2"}, 0},
		{rag.Filter{Tenant: "t1", UserID: "u1"}, 1},
		{rag.Filter{Tenant: "t2", UserID: "u1"}, 1},
	} {
		if got := count(t, ix, tc.f); got != tc.want {
			t.Errorf("after user delete Count(%+v) = %d, want %d", tc.f, got, tc.want)
		}
	}
	// Deleting what is not there is fine.
	if err := ix.Delete(ctx, rag.Filter{Tenant: "t3", ChatIDs: []string{"nope"}}); err != nil {
		t.Errorf("Delete of nothing: %v", err)
	}
	// Deleted points can be upserted again.
	upsert(t, ix, point("t1", "u1", "c1", "a", 1, d, s))
	if got := count(t, ix, rag.Filter{Tenant: "t1", ChatIDs: []string{"c1"}}); got != 1 {
		t.Errorf("re-upsert after delete: Count = %d, want 1", got)
	}
}
