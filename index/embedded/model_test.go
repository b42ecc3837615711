package embedded

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

type pkey struct {
	chat string
	seq  int64
}

// TestRandomOpsMatchModel runs random upserts (out of order, replacing,
// with repeated and unsorted sparse indices), deletes by chat, user and
// agent, and reopens, and after each step checks the compact in-memory
// index against a plain map of points: counts, document frequencies,
// label reference counts, the sparse arena, the stored vectors, and query
// answers with their payload.
//
// It runs twice: with the default sketch threshold (these chats are far
// below it) and with every chat of 3 points or more keeping a sketch,
// checked against the vectors after each step too.
func TestRandomOpsMatchModel(t *testing.T) {
	for _, from := range []int{0, 3} {
		t.Run(fmt.Sprint("sketch from ", from), func(t *testing.T) { testRandomOps(t, SketchFrom(from)) })
	}
}

func testRandomOps(t *testing.T, opt Option) {
	const dim = 8
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 8))
	path := filepath.Join(t.TempDir(), "v.db")
	ix, err := Open(ctx, path, dim, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { ix.Close() }()
	model := map[pkey]rag.Point{}
	chats := []string{"c1", "c2", "c3", "c4"}
	users := []string{"u1", "u2", "u3"}
	agents := []string{"a1", "a2"}

	randPoint := func() rag.Point {
		p := rag.Point{Tenant: "t", ChatID: chats[r.IntN(len(chats))], Seq: int64(1 + r.IntN(30)),
			UserID: users[r.IntN(len(users))], Agent: agents[r.IntN(len(agents))],
			Role: []string{"user", "assistant"}[r.IntN(2)], CreatedAt: time.Unix(1700000000+int64(r.IntN(1000)), 0).UTC(),
			Dense: make([]float32, dim)}
		p.Content = fmt.Sprintf("%s/%d #%d", p.ChatID, p.Seq, r.IntN(1000))
		for i := range p.Dense {
			p.Dense[i] = float32(r.NormFloat64())
		}
		for n := r.IntN(6); n > 0; n-- { // unsorted, maybe repeated
			p.Sparse.Indices = append(p.Sparse.Indices, uint32(r.IntN(40)))
			p.Sparse.Values = append(p.Sparse.Values, float32(1+r.IntN(4))/2)
		}
		return p
	}

	for step := 0; step < 400; step++ {
		switch op := r.IntN(20); {
		case op < 14:
			batch := make([]rag.Point, 1+r.IntN(8))
			for i := range batch {
				batch[i] = randPoint()
			}
			if err := ix.Upsert(ctx, batch); err != nil {
				t.Fatal(err)
			}
			for _, p := range batch {
				model[pkey{p.ChatID, p.Seq}] = p
			}
		case op < 18:
			f := rag.Filter{Tenant: "t"}
			switch r.IntN(4) {
			case 0:
				f.ChatIDs = []string{chats[r.IntN(len(chats))]}
			case 1:
				f.UserID = users[r.IntN(len(users))]
			case 2:
				f.Agent = agents[r.IntN(len(agents))]
			case 3:
				f.UserID, f.ChatIDs = users[r.IntN(len(users))], []string{chats[r.IntN(len(chats))], chats[r.IntN(len(chats))]}
			}
			if err := ix.Delete(ctx, f); err != nil {
				t.Fatal(err)
			}
			for k, p := range model {
				if inFilter(f, p) {
					delete(model, k)
				}
			}
		default:
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			if ix, err = Open(ctx, path, dim, opt); err != nil {
				t.Fatal(err)
			}
		}
		checkModel(t, step, ix, model, users, agents, chats)
		checkSketch(t, fmt.Sprint("step ", step), ix)
		if t.Failed() {
			return
		}
	}
}

func inFilter(f rag.Filter, p rag.Point) bool {
	return p.Tenant == f.Tenant && (f.UserID == "" || p.UserID == f.UserID) && (f.Agent == "" || p.Agent == f.Agent) &&
		(len(f.ChatIDs) == 0 || slices.Contains(f.ChatIDs, p.ChatID))
}

func checkModel(t *testing.T, step int, ix *Index, model map[pkey]rag.Point, users, agents, chats []string) {
	t.Helper()
	ctx := context.Background()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("step %d: "+format, append([]any{step}, args...)...)
	}
	// Counts by every filter shape.
	filters := []rag.Filter{{Tenant: "t"}, {Tenant: "other"}}
	for _, u := range users {
		filters = append(filters, rag.Filter{Tenant: "t", UserID: u})
	}
	for _, a := range agents {
		filters = append(filters, rag.Filter{Tenant: "t", Agent: a}, rag.Filter{Tenant: "t", Agent: a, UserID: users[0]})
	}
	for _, c := range chats {
		filters = append(filters, rag.Filter{Tenant: "t", ChatIDs: []string{c}})
	}
	for _, f := range filters {
		want := 0
		for _, p := range model {
			if inFilter(f, p) {
				want++
			}
		}
		if got, err := ix.Count(ctx, f); err != nil || got != want {
			fail("Count(%+v) = %d, %v; want %d", f, got, err, want)
		}
	}

	ix.mu.RLock()
	// Document frequencies, label references, arena and vectors.
	df := map[uint32]int32{}
	refs := map[string]int{}
	for _, p := range model {
		for _, term := range canonSparse(p.Sparse).Indices {
			df[term]++
		}
		refs[p.UserID]++
		refs[p.Agent]++
	}
	if ix.n != len(model) {
		fail("n = %d, want %d", ix.n, len(model))
	}
	if len(ix.df) != len(df) {
		fail("df has %d terms, want %d", len(ix.df), len(df))
	}
	for term, n := range df {
		if ix.df[term] != n {
			fail("df[%d] = %d, want %d", term, ix.df[term], n)
		}
	}
	if len(ix.labels.ids) != len(refs) {
		fail("%d labels interned, want %d", len(ix.labels.ids), len(refs))
	}
	for s, n := range refs {
		if id, ok := ix.labels.lookup(s); !ok || ix.labels.refs[id] != n {
			fail("label %q: refs %v, want %d", s, ix.labels.refs[id], n)
		}
	}
	for _, tn := range ix.tenants {
		for id, c := range tn.chats {
			if c.len() == 0 {
				fail("empty chat %s kept", id)
			}
			if !slices.IsSorted(c.seqs) || len(slices.Compact(slices.Clone(c.seqs))) != c.len() {
				fail("chat %s seqs not strictly ascending: %v", id, c.seqs)
			}
			used := 0
			bp, err := ix.vf.read(c.vecs)
			if err != nil {
				fail("chat %s: read vectors: %v", id, err)
				continue
			}
			vecs := make([]int8, len(*bp))
			for i, b := range *bp {
				vecs[i] = int8(b)
			}
			ix.vf.put(bp)
			if c.vecs.n > c.vecs.capacity() || uint32(c.len())+c.holes != c.vecs.n {
				fail("chat %s: %d points + %d holes in a region of %d used, %d capacity", id, c.len(), c.holes, c.vecs.n, c.vecs.capacity())
			}
			seen := map[uint32]bool{}
			for i := range c.seqs {
				if c.vpos[i] >= c.vecs.n || seen[c.vpos[i]] {
					fail("%s/%d: vector position %d out of range or shared", id, c.seqs[i], c.vpos[i])
					continue
				}
				seen[c.vpos[i]] = true
				used += int(c.spLen[i])
				p, ok := model[pkey{id, c.seqs[i]}]
				if !ok {
					fail("point %s/%d in memory, not in the model", id, c.seqs[i])
					continue
				}
				want := canonSparse(p.Sparse)
				tb, err := ix.termsOf(c, i)
				if err != nil {
					fail("%s/%d terms: %v", id, c.seqs[i], err)
					continue
				}
				gi, gv := slices.Clone(tb.ids), slices.Clone(tb.ws)
				ix.tf.put(tb)
				if !slices.Equal(gi, want.Indices) || !slices.Equal(gv, appendBF16(nil, want.Values)) {
					fail("%s/%d terms %v %v, want %v %v", id, c.seqs[i], gi, gv, want.Indices, want.Values)
				}
				q := make([]int8, ix.dim)
				at := int(c.vpos[i]) * ix.dim
				if s := quantise(p.Dense, q); s != c.scales[i] || !slices.Equal(q, vecs[at:at+ix.dim]) {
					fail("%s/%d dense vector differs", id, c.seqs[i])
				}
				if ix.labels.str(c.userOf(i)) != p.UserID || ix.labels.str(c.agentOf(i)) != p.Agent {
					fail("%s/%d labels %q %q, want %q %q", id, c.seqs[i], ix.labels.str(c.userOf(i)), ix.labels.str(c.agentOf(i)), p.UserID, p.Agent)
				}
			}
			if used+c.garbage != int(c.sp.n) || c.sp.n > c.sp.capacity() || 2*c.garbage > int(c.sp.n) && c.garbage > 0 {
				fail("chat %s arena: %d used + %d garbage != %d (capacity %d)", id, used, c.garbage, c.sp.n, c.sp.capacity())
			}
		}
	}
	n := ix.n
	ix.mu.RUnlock()

	// Every point comes back, with its payload, from a dense-only query.
	hits, err := ix.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t"}, Dense: []float32{1, 0, 0, 0, 0, 0, 0, 0}, Limit: max(n, 1)})
	if err != nil || len(hits) != len(model) {
		fail("dense query: %d hits, %v; want %d", len(hits), err, len(model))
	}
	for _, h := range hits {
		p := model[pkey{h.ChatID, h.Seq}]
		if h.Content != p.Content || h.Role != p.Role || !h.CreatedAt.Equal(p.CreatedAt) || h.UserID != p.UserID || h.Agent != p.Agent {
			fail("hit %s/%d payload %+v, want %+v", h.ChatID, h.Seq, h.Point, p)
		}
		want := float32(rag.Cosine(p.Dense, []float32{1, 0, 0, 0, 0, 0, 0, 0}))
		if math.Abs(float64(h.DenseScore-want)) > 0.01 {
			fail("hit %s/%d DenseScore %v, want %v", h.ChatID, h.Seq, h.DenseScore, want)
		}
	}
	// A sparse-only query finds exactly the points sharing a term, ranked
	// by BM25 weight × IDF over the model.
	for _, term := range []uint32{0, 7, 21, 39} {
		f := rag.Filter{Tenant: "t", UserID: users[int(term)%len(users)]}
		hits, err := ix.Query(ctx, rag.Query{Filter: f, Sparse: rag.SparseVector{Indices: []uint32{term, term + 1}, Values: []float32{1, 0.5}}, Limit: 1000})
		if err != nil {
			fail("sparse query: %v", err)
			continue
		}
		var want []pkey
		score := map[pkey]float64{}
		idf := func(tm uint32) float64 {
			nt := float64(df[tm])
			return math.Log(1 + (float64(len(model))-nt+0.5)/(nt+0.5))
		}
		for k, p := range model {
			if !inFilter(f, p) {
				continue
			}
			sp := canonSparse(p.Sparse)
			shared := false
			for j, tm := range sp.Indices {
				switch tm {
				case term:
					score[k] += idf(tm) * float64(bf16(sp.Values[j]))
					shared = true
				case term + 1:
					score[k] += 0.5 * idf(tm) * float64(bf16(sp.Values[j]))
					shared = true
				}
			}
			if shared {
				want = append(want, k)
			}
		}
		if len(hits) != len(want) {
			fail("sparse query for %d/%s: %d hits, want %d", term, f.UserID, len(hits), len(want))
			continue
		}
		for i := 1; i < len(hits); i++ {
			a, b := score[pkey{hits[i-1].ChatID, hits[i-1].Seq}], score[pkey{hits[i].ChatID, hits[i].Seq}]
			if b > a+1e-4 {
				fail("sparse query for %d: hit %d scores %v after %v", term, i, b, a)
			}
		}
	}
}

// TestOpensFloat32File: files written before quantisation hold float32
// vectors. They open as they are, next to rows written since (int8), and
// a vector of neither size is a dimension mismatch.
func TestOpensFloat32File(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v.db")
	ix, err := Open(ctx, path, 4)
	if err != nil {
		t.Fatal(err)
	}
	// A row as the float32 version wrote it: raw vector, unsorted sparse.
	legacy := func(v []float32) []byte {
		b := make([]byte, 0, 16)
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		return b
	}
	insert := func(seq int64, dense []byte) {
		t.Helper()
		if _, err := ix.db.ExecContext(ctx, `INSERT INTO points (tenant, chat_id, seq, user_id, agent, role, content, created_at, dense, sparse) VALUES ('t', 'c', ?, 'u', 'a', 'user', ?, 0, ?, ?)`,
			seq, fmt.Sprint("legacy ", seq), dense, encodeSparse(rag.SparseVector{Indices: []uint32{9, 4}, Values: []float32{1, 2}})); err != nil {
			t.Fatal(err)
		}
	}
	insert(1, legacy([]float32{3, 0, 0, 4}))
	insert(2, legacy([]float32{0, 1, 0, 0}))
	if err := ix.Upsert(ctx, []rag.Point{{Tenant: "t", UserID: "u", ChatID: "c", Agent: "a", Seq: 3, Role: "user",
		Content: "new 3", Dense: []float32{0, 0, 1, 0}}}); err != nil {
		t.Fatal(err)
	}
	ix.Close()

	if ix, err = Open(ctx, path, 4); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    []float32
		seq  int64
		cos  float64
		text string
	}{
		{[]float32{0.6, 0, 0, 0.8}, 1, 1, "legacy 1"},
		{[]float32{0, 2, 0, 0}, 2, 1, "legacy 2"},
		{[]float32{0, 0, 5, 0}, 3, 1, "new 3"},
		{[]float32{1, 0, 0, 0}, 1, 0.6, "legacy 1"},
	} {
		hits, err := ix.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t"}, Dense: tc.q, Limit: 1})
		if err != nil || len(hits) != 1 || hits[0].Seq != tc.seq || hits[0].Content != tc.text || math.Abs(float64(hits[0].DenseScore)-tc.cos) > 0.01 {
			t.Errorf("query %v: %+v, %v; want seq %d %q cos %v", tc.q, hits, err, tc.seq, tc.text, tc.cos)
		}
	}
	// Sparse of a legacy row: repeated/unsorted indices were canonicalised.
	hits, err := ix.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t"}, Sparse: rag.SparseVector{Indices: []uint32{4}, Values: []float32{1}}, Limit: 5})
	if err != nil || len(hits) != 2 {
		t.Errorf("sparse query over legacy rows: %+v, %v", hits, err)
	}
	insert(4, make([]byte, 7)) // neither 4+4 nor 4*4 bytes
	ix.Close()
	if _, err := Open(ctx, path, 4); !errors.Is(err, rag.ErrDimensionMismatch) {
		t.Errorf("open with a 7-byte vector: %v, want ErrDimensionMismatch", err)
	}
}

// A file written before episodes were indexed (no episode columns) opens,
// gains the columns, keeps its turns and takes episodes.
func TestOpensFileWithoutEpisodeColumns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	old := `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
	INSERT INTO meta VALUES ('dim', '4');
	CREATE TABLE points (tenant TEXT NOT NULL, chat_id TEXT NOT NULL, seq INTEGER NOT NULL, user_id TEXT NOT NULL,
		agent TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, created_at INTEGER NOT NULL,
		dense BLOB NOT NULL, sparse BLOB NOT NULL, PRIMARY KEY (tenant, chat_id, seq));`
	if _, err := db.ExecContext(ctx, old); err != nil {
		t.Fatal(err)
	}
	q := make([]int8, 4)
	scale := quantise([]float32{1, 0, 0, 0}, q)
	if _, err := db.ExecContext(ctx, `INSERT INTO points VALUES ('t', 'c', 1, 'u', 'a', 'user', 'old turn', 0, ?, ?)`,
		encodeDense(q, scale), encodeSparse(rag.SparseVector{})); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ix, err := Open(ctx, path, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ep := rag.Point{Tenant: "t", UserID: "u", ChatID: "c", Agent: "a", Seq: 1, Kind: memory.KindEpisode, ToSeq: 5,
		Content: "the episode", Dense: []float32{1, 0, 0, 0}}
	if err := ix.Upsert(ctx, []rag.Point{ep}); err != nil {
		t.Fatal(err)
	}
	if n, err := ix.Count(ctx, rag.Filter{Tenant: "t"}); err != nil || n != 2 {
		t.Fatalf("count %d %v, want the old turn and the episode", n, err)
	}
}
