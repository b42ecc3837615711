package embedded_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextd/contextd/index/embedded"
	"github.com/contextd/contextd/index/indextest"
	"github.com/contextd/contextd/rag"
)

func open(t *testing.T, path string, dim int) *embedded.Index {
	t.Helper()
	ix, err := embedded.Open(context.Background(), path, dim)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return ix
}

func TestConformance(t *testing.T) {
	indextest.Run(t, func(t *testing.T, dim int) rag.Index {
		return open(t, filepath.Join(t.TempDir(), "vectors.db"), dim)
	})
}

func pt(chat string, seq int64, dense []float32, terms ...uint32) rag.Point {
	sv := rag.SparseVector{}
	for _, term := range terms {
		sv.Indices = append(sv.Indices, term)
		sv.Values = append(sv.Values, 1)
	}
	return rag.Point{Tenant: "t", UserID: "u", ChatID: chat, Agent: "a", Seq: seq, Role: "user",
		Content: chat + " turn", CreatedAt: time.Unix(1700000000+seq, 0), Dense: dense, Sparse: sv}
}

func TestPersistsAcrossRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "vectors.db")
	ix := open(t, path, 4)
	if err := ix.Upsert(ctx, []rag.Point{
		pt("c1", 1, []float32{1, 0, 0, 0}, 5),
		pt("c1", 2, []float32{0, 1, 0, 0}, 6),
		pt("c2", 1, []float32{0, 0, 1, 0}, 5),
	}); err != nil {
		t.Fatal(err)
	}
	zero := pt("c3", 1, []float32{0, 0, 0, 1}, 9)
	zero.CreatedAt = time.Time{}
	if err := ix.Upsert(ctx, []rag.Point{zero}); err != nil {
		t.Fatal(err)
	}
	if err := ix.Delete(ctx, rag.Filter{Tenant: "t", ChatIDs: []string{"c2"}}); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Count(ctx, rag.Filter{Tenant: "t"}); !errors.Is(err, embedded.ErrClosed) {
		t.Errorf("Count after Close: %v, want ErrClosed", err)
	}

	ix = open(t, path, 4)
	defer ix.Close()
	n, err := ix.Count(ctx, rag.Filter{Tenant: "t"})
	if err != nil || n != 3 {
		t.Fatalf("after reopen Count = %d, %v; want 3", n, err)
	}
	if hits, _ := ix.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t", ChatIDs: []string{"c3"}}, Dense: []float32{0, 0, 0, 1}, Limit: 1}); len(hits) != 1 || !hits[0].CreatedAt.IsZero() {
		t.Errorf("zero CreatedAt did not survive: %+v", hits)
	}
	hits, err := ix.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t"}, Dense: []float32{0, 2, 0, 0},
		Sparse: rag.SparseVector{Indices: []uint32{6}, Values: []float32{1}}, Limit: 1})
	if err != nil || len(hits) != 1 {
		t.Fatalf("Query after reopen: %v %v", hits, err)
	}
	if h := hits[0]; h.ChatID != "c1" || h.Seq != 2 || h.Content != "c1 turn" || h.CreatedAt.Unix() != 1700000002 {
		t.Errorf("reloaded hit = %+v", h)
	}
	// The reloaded sparse postings work: term 5 only in c1/1 now.
	hits, err = ix.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t"},
		Sparse: rag.SparseVector{Indices: []uint32{5}, Values: []float32{1}}, Limit: 5})
	if err != nil || len(hits) != 1 || hits[0].Seq != 1 {
		t.Errorf("sparse after reopen: %+v %v", hits, err)
	}
}

func TestDimensionMismatch(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "vectors.db")
	ix := open(t, path, 4)
	if err := ix.Upsert(ctx, []rag.Point{pt("c", 1, []float32{1, 2, 3})}); !errors.Is(err, rag.ErrDimensionMismatch) {
		t.Errorf("Upsert of a 3-dim point: %v, want ErrDimensionMismatch", err)
	}
	if _, err := ix.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t"}, Dense: []float32{1}, Limit: 1}); !errors.Is(err, rag.ErrDimensionMismatch) {
		t.Errorf("Query with a 1-dim vector: %v, want ErrDimensionMismatch", err)
	}
	ix.Close()

	_, err := embedded.Open(ctx, path, 8)
	if !errors.Is(err, rag.ErrDimensionMismatch) {
		t.Fatalf("reopen with another dim: %v, want ErrDimensionMismatch", err)
	}
	for _, want := range []string{"4", "8", path, "embedder.dimensions", "delete"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// The same dim still opens.
	open(t, path, 4).Close()
}

func TestIDFAndRRFScores(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "v.db"), 2)
	defer ix.Close()
	// Term 1 in 3 of 4 points (common), term 2 in 1 (rare). A query with both
	// terms must prefer the rare-term point over a common-term one even
	// though each matches one term with the same weight.
	if err := ix.Upsert(ctx, []rag.Point{
		pt("c", 1, []float32{1, 0}, 1),
		pt("c", 2, []float32{1, 0}, 1),
		pt("c", 3, []float32{1, 0}, 1),
		pt("c", 4, []float32{1, 0}, 2),
	}); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t"},
		Sparse: rag.SparseVector{Indices: []uint32{1, 2}, Values: []float32{1, 1}}, Limit: 4})
	if err != nil || len(hits) != 4 {
		t.Fatalf("%v %v", hits, err)
	}
	if hits[0].Seq != 4 {
		t.Errorf("rare term point not first: %+v", hits)
	}
	// Sparse only: ranks 1..4 give 1/(60+r) exactly.
	for r, h := range hits {
		if want := float32(1) / float32(rag.RRFK+r+1); h.Score != want {
			t.Errorf("rank %d score %v, want %v", r+1, h.Score, want)
		}
		if h.DenseScore != 0 {
			t.Errorf("sparse-only hit has DenseScore %v", h.DenseScore)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "v.db"), 4)
	defer ix.Close()
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			chat := string(rune('a' + w))
			for i := int64(1); i <= 25; i++ {
				if err := ix.Upsert(ctx, []rag.Point{pt(chat, i, []float32{1, float32(i), 0, float32(w)}, uint32(i))}); err != nil {
					t.Error(err)
					return
				}
				if _, err := ix.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t"}, Dense: []float32{1, 1, 1, 1},
					Sparse: rag.SparseVector{Indices: []uint32{uint32(i)}, Values: []float32{1}}, Limit: 3}); err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	if n, err := ix.Count(ctx, rag.Filter{Tenant: "t"}); err != nil || n != 100 {
		t.Errorf("Count = %d, %v; want 100", n, err)
	}
}

// TestQueriesDuringWrites: a hit's content is read from the file after the
// ranking, while writers may delete or replace it. Every hit returned must
// carry its point's payload, never an error, an empty or a stale one.
func TestQueriesDuringWrites(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "v.db"), 4)
	defer ix.Close()
	content := func(chat string, seq int64, gen int) string { return fmt.Sprintf("%s/%d/gen%d", chat, seq, gen) }
	write := func(chat string, gen int) error {
		pts := make([]rag.Point, 20)
		for i := range pts {
			pts[i] = pt(chat, int64(i+1), []float32{1, float32(i), 0, 1}, 7)
			pts[i].Content = content(chat, int64(i+1), gen)
		}
		return ix.Upsert(ctx, pts)
	}
	for _, c := range []string{"a", "b"} {
		if err := write(c, 0); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // rewrite and delete chat "a" over and over
		defer wg.Done()
		for gen := 1; ; gen++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := write("a", gen); err != nil {
				t.Error(err)
				return
			}
			if err := ix.Delete(ctx, rag.Filter{Tenant: "t", ChatIDs: []string{"a"}}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := 0; i < 300; i++ {
		hits, err := ix.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t"}, Dense: []float32{1, 1, 0, 1},
			Sparse: rag.SparseVector{Indices: []uint32{7}, Values: []float32{1}}, Limit: 40})
		if err != nil {
			t.Fatal(err)
		}
		nb := 0
		for _, h := range hits {
			if !strings.HasPrefix(h.Content, fmt.Sprintf("%s/%d/gen", h.ChatID, h.Seq)) || h.Role == "" || h.CreatedAt.IsZero() {
				t.Fatalf("hit %s/%d with payload %q %q %v", h.ChatID, h.Seq, h.Content, h.Role, h.CreatedAt)
			}
			if h.ChatID == "b" {
				nb++
			}
		}
		if nb != 20 {
			t.Fatalf("query %d: %d hits from the untouched chat, want 20", i, nb)
		}
	}
	close(stop)
	wg.Wait()
}

// Hit payloads come from a cache after the first read; rewriting a point
// or deleting its chat must never serve the old payload.
func TestPayloadCacheFollowsWrites(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "v.db"), 4)
	content := func() string {
		t.Helper()
		hits, err := ix.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t"}, Dense: []float32{1, 0, 0, 0}, Limit: 1})
		if err != nil || len(hits) != 1 {
			t.Fatalf("query: %v %v", hits, err)
		}
		return hits[0].Content
	}
	p := pt("c", 1, []float32{1, 0, 0, 0})
	for _, want := range []string{"first", "second"} {
		p.Content = want
		if err := ix.Upsert(ctx, []rag.Point{p}); err != nil {
			t.Fatal(err)
		}
		if got, again := content(), content(); got != want || again != want {
			t.Fatalf("content %q then %q, want %q", got, again, want)
		}
	}
	if err := ix.Delete(ctx, rag.Filter{Tenant: "t", ChatIDs: []string{"c"}}); err != nil {
		t.Fatal(err)
	}
	p.Content = "after the chat was erased and recreated"
	if err := ix.Upsert(ctx, []rag.Point{p}); err != nil {
		t.Fatal(err)
	}
	if got := content(); got != p.Content {
		t.Fatalf("content %q, want %q", got, p.Content)
	}
}

// A query scoped to a user or an agent skips the chats whose points all
// have another (and takes whole those whose points all have it): a chat
// that gains a point of another user, or whose point changes hands, is
// searched point by point from then on.
func TestUserScopeSkipsOtherUsersChats(t *testing.T) {
	ctx := context.Background()
	ix := open(t, filepath.Join(t.TempDir(), "v.db"), 4)
	var points []rag.Point
	for c, user := range []string{"ann", "bob", "cy"} {
		for seq := int64(1); seq <= 3; seq++ {
			p := pt(fmt.Sprintf("c%d", c), seq, []float32{1, float32(seq), 0, 0}, 7)
			p.UserID = user
			points = append(points, p)
		}
	}
	if err := ix.Upsert(ctx, points); err != nil {
		t.Fatal(err)
	}
	count := func(user, agent string) map[string]int {
		t.Helper()
		got := map[string]int{}
		for _, q := range []rag.Query{
			{Dense: []float32{1, 1, 0, 0}}, {Sparse: rag.SparseVector{Indices: []uint32{7}, Values: []float32{1}}},
		} {
			q.Filter, q.Limit = rag.Filter{Tenant: "t", UserID: user, Agent: agent}, 100
			hits, err := ix.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				if user != "" && h.UserID != user || agent != "" && h.Agent != agent {
					t.Errorf("query for %q/%q: hit %s/%d of %q/%q", user, agent, h.ChatID, h.Seq, h.UserID, h.Agent)
				}
				got[h.ChatID]++
			}
		}
		return got
	}
	for _, tc := range []struct {
		step        string
		change      func() rag.Point
		user, agent string
		want        map[string]int // hits per chat, dense + sparse
	}{
		{"one user a chat", nil, "bob", "", map[string]int{"c1": 6}},
		{"an agent no chat has", nil, "", "zed", map[string]int{}},
		{"bob's turn in ann's chat", func() rag.Point { p := pt("c0", 4, []float32{1, 0, 0, 0}, 7); p.UserID = "bob"; return p },
			"bob", "", map[string]int{"c0": 2, "c1": 6}},
		{"still only ann's turns for ann", nil, "ann", "", map[string]int{"c0": 6}},
		{"cy's turn handed to ann", func() rag.Point { p := pt("c2", 2, []float32{1, 2, 0, 0}, 7); p.UserID = "ann"; return p },
			"cy", "", map[string]int{"c2": 4}},
		{"other agent in bob's chat", func() rag.Point { p := pt("c1", 1, []float32{1, 1, 0, 0}, 7); p.UserID, p.Agent = "bob", "b"; return p },
			"bob", "a", map[string]int{"c0": 2, "c1": 4}},
	} {
		if tc.change != nil {
			if err := ix.Upsert(ctx, []rag.Point{tc.change()}); err != nil {
				t.Fatal(err)
			}
		}
		if got := count(tc.user, tc.agent); !maps.Equal(got, tc.want) {
			t.Errorf("%s: hits per chat %v, want %v", tc.step, got, tc.want)
		}
	}
}

// An erased chat's points are gone from the file, not left in its free
// pages (secure_delete).
func TestErasedPointsLeaveTheFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "vectors.db")
	ix := open(t, path, 3)
	var pts []rag.Point
	for i := range 50 {
		p := pt("secret", int64(i+1), []float32{1, 0, 0})
		p.Content = "the Wombatsun vault code is 7731"
		pts = append(pts, p)
	}
	if err := ix.Upsert(ctx, append(pts, pt("other", 1, []float32{0, 1, 0}))); err != nil {
		t.Fatal(err)
	}
	if err := ix.Delete(ctx, rag.Filter{Tenant: "t", ChatIDs: []string{"secret"}}); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal"} {
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte("Wombatsun")) {
			t.Errorf("%s still holds the erased text", filepath.Base(f))
		}
	}
}
