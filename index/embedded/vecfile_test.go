package embedded

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/contextd/contextd/rag"
)

func vecPoint(chat string, seq int64, dense []float32) rag.Point {
	return rag.Point{Tenant: "t", UserID: "u", ChatID: chat, Agent: "a", Seq: seq, Role: "user",
		Content: "turn", CreatedAt: time.Unix(1700000000+seq, 0), Dense: dense,
		Sparse: rag.SparseVector{Indices: []uint32{uint32(seq)}, Values: []float32{1}}}
}

// The scratch file is unlinked while open (where the OS allows), so
// neither a running index nor a crashed one leaves it in the directory.
func TestScratchFileLeavesNothing(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("an open file cannot be unlinked on Windows: it is removed on Close")
	}
	dir := t.TempDir()
	ix, err := Open(context.Background(), filepath.Join(dir, "vectors.db"), 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Upsert(context.Background(), []rag.Point{vecPoint("c", 1, []float32{1, 0, 0, 0})}); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if name := e.Name(); !slices.Contains([]string{"vectors.db", "vectors.db-wal", "vectors.db-shm"}, name) {
				t.Errorf("%s: %s left in the index's directory", when, name)
			}
		}
	}
	check("open")
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	check("closed")
}

// A chat's region grows, is compacted after deletes, and keeps every
// point's vector: queries by each vector find its point first.
func TestRegionsGrowAndCompact(t *testing.T) {
	ctx := context.Background()
	ix, err := Open(ctx, filepath.Join(t.TempDir(), "vectors.db"), 8)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	vec := func(seq int64) []float32 {
		v := make([]float32, 8)
		v[seq%8] = 1
		v[(seq/8)%8] += float32(seq%5) + 1 // never the zero vector
		return v
	}
	var pts []rag.Point
	for seq := int64(1); seq <= 100; seq++ { // regions of 16, 32, 64, 128
		pts = append(pts, vecPoint("c", seq, vec(seq)))
	}
	if err := ix.Upsert(ctx, pts); err != nil {
		t.Fatal(err)
	}
	// Drop two thirds: the region is compacted.
	if err := ix.Delete(ctx, rag.Filter{Tenant: "t", ChatIDs: []string{"c"}, FromSeq: 1, ToSeq: 66}); err != nil {
		t.Fatal(err)
	}
	c := ix.tenants["t"].chats["c"]
	if c.holes != 0 || c.vecs.n != 34 {
		t.Errorf("after deleting 66 of 100: %d holes, %d vectors in the region; want 0, 34", c.holes, c.vecs.n)
	}
	for seq := int64(67); seq <= 100; seq++ {
		hits, err := ix.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t"}, Dense: vec(seq), Limit: 40})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, h := range hits {
			found = found || h.Seq == seq && h.DenseScore > 0.99
		}
		if !found {
			t.Fatalf("query by seq %d's vector: it is not among the hits with cosine ~1", seq)
		}
	}
}

// When the scratch file fails, an upsert fails (the indexer retries it)
// and a query fails (the answer is degraded, not wrong), and nothing is
// lost: the index file has every point, and a reopen loads them.
func TestScratchFileFailure(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "vectors.db")
	ix, err := Open(ctx, path, 4)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Upsert(ctx, []rag.Point{vecPoint("c", 1, []float32{1, 0, 0, 0})}); err != nil {
		t.Fatal(err)
	}
	_ = ix.vf.f.Close() // the disk goes away
	if err := ix.Upsert(ctx, []rag.Point{vecPoint("c", 2, []float32{0, 1, 0, 0}), vecPoint("d", 1, []float32{0, 0, 1, 0})}); err == nil {
		t.Error("upsert with a failing scratch file succeeded")
	}
	if _, err := ix.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t"}, Dense: []float32{1, 0, 0, 0}, Limit: 5}); err == nil {
		t.Error("dense query with a failing scratch file succeeded")
	}
	if n, err := ix.Count(ctx, rag.Filter{Tenant: "t"}); err != nil || n != 1 {
		t.Errorf("count in memory = %d, %v; want the 1 point put before the failure", n, err)
	}
	if ix.tenants["t"].chats["d"] != nil {
		t.Error("a chat whose first point failed is kept empty")
	}
	_ = ix.Close()
	if ix, err = Open(ctx, path, 4); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if n, err := ix.Count(ctx, rag.Filter{Tenant: "t"}); err != nil || n != 3 {
		t.Errorf("after reopening: %d points, %v; want all 3 (the index file had them)", n, err)
	}
	hits, err := ix.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t"}, Dense: []float32{0, 1, 0, 0}, Limit: 1})
	if err != nil || len(hits) != 1 || hits[0].ChatID != "c" || hits[0].Seq != 2 {
		t.Errorf("after reopening, query by c/2's vector: %+v, %v", hits, err)
	}
}
