package embedded_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/index/embedded"
	"github.com/contextd/contextd/rag"
)

// corpus makes chat-like turns of 10-60 words (the load benchmark's shape)
// from a Zipf-distributed 5,000-word vocabulary plus ticket ids and amounts,
// so sparse vectors and content strings have realistic sizes.
type corpus struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	vocab []string
}

func newCorpus(seed uint64) *corpus {
	r := rand.New(rand.NewPCG(seed, 11))
	vocab := make([]string, 5000)
	syll := []string{"ka", "lo", "mi", "ne", "ra", "tu", "se", "po", "di", "gan", "ter", "vel", "os", "qui", "bra", "ment"}
	for i := range vocab {
		var b strings.Builder
		for n := 1 + r.IntN(4); n > 0; n-- {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		vocab[i] = b.String()
	}
	return &corpus{r: r, zipf: rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1)), vocab: vocab}
}

func (c *corpus) turn() string {
	n := 10 + c.r.IntN(51)
	w := make([]string, n)
	for i := range w {
		switch c.r.IntN(40) {
		case 0:
			w[i] = fmt.Sprintf("INC-%d", 1000+c.r.IntN(9000))
		case 1:
			w[i] = fmt.Sprintf("$%d.%02d", c.r.IntN(5000), c.r.IntN(100))
		default:
			w[i] = c.vocab[c.zipf.Uint64()]
		}
	}
	return strings.Join(w, " ")
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

var benchChats = flag.Int("embedded.chats", 250, "BenchmarkMemoryPerTurn: chats of 200 turns (1000: the load benchmark's 200,000 turns)")

// BenchmarkMemoryPerTurn measures the live heap the index keeps per point:
// 50,000 turns (dim 384, hashing embedder, BM25 sparse vectors) across 250
// chats of one tenant, 5 users, inserted in batches of 50 as the indexer
// does, then a full GC; then the time to re-open the file and the heap of
// the re-opened index. -args -embedded.chats 1000 runs the load
// benchmark's size (200,000 turns).
func BenchmarkMemoryPerTurn(b *testing.B) {
	const perChat, dim, batch = 200, 384, 50
	chats := *benchChats
	ctx := context.Background()
	emb := rag.NewHashingEmbedder(dim)
	sp := rag.NewSparseEncoder()
	c := newCorpus(3)
	var perTurn, opened float64
	for i := 0; i < b.N; i++ {
		path := filepath.Join(b.TempDir(), fmt.Sprint("v", i, ".db"))
		before := heapInUse()
		ix, err := embedded.Open(ctx, path, dim)
		if err != nil {
			b.Fatal(err)
		}
		for seq := 1; seq <= perChat; seq += batch {
			for ch := 0; ch < chats; ch++ {
				pts := make([]rag.Point, 0, batch)
				for s := seq; s < seq+batch; s++ {
					text := c.turn()
					pts = append(pts, rag.Point{Tenant: "tenant-1", UserID: fmt.Sprint("user-", ch%5),
						ChatID: fmt.Sprintf("chat-%04d", ch), Agent: "assistant", Seq: int64(s),
						Role: []string{"user", "assistant"}[s%2], Content: text,
						CreatedAt: time.Unix(1700000000+int64(s), 0), Dense: emb.Embed(text), Sparse: sp.EncodeDocument(text)})
				}
				if err := ix.Upsert(ctx, pts); err != nil {
					b.Fatal(err)
				}
			}
		}
		perTurn = float64(heapInUse()-before) / float64(chats*perChat)
		if err := ix.Close(); err != nil {
			b.Fatal(err)
		}
		// Re-open: the load path builds the same in-memory index from the file.
		before = heapInUse()
		start := time.Now()
		ix, err = embedded.Open(ctx, path, dim)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "open-ms")
		opened = float64(heapInUse()-before) / float64(chats*perChat)
		if n, err := ix.Count(ctx, rag.Filter{Tenant: "tenant-1"}); err != nil || n != chats*perChat {
			b.Fatalf("Count after reopen = %d, %v", n, err)
		}
		_ = ix.Close()
	}
	b.ReportMetric(perTurn, "heap-B/turn")
	b.ReportMetric(opened, "reopened-B/turn")
}

// BenchmarkQuery measures the index query alone on a 700-turn chat (30
// other chats, 6,000 more turns, in the index) by Limit: 5 (a plain
// rag_k), 26 (the retriever's over-fetch for k = 5) and 400 (rag_fill at an
// 8,000-token budget). The hits' content is read from the file, so the
// cost grows with Limit.
func BenchmarkQuery(b *testing.B) {
	ctx := context.Background()
	const dim = 384
	emb := rag.NewHashingEmbedder(dim)
	sp := rag.NewSparseEncoder()
	ix, err := embedded.Open(ctx, filepath.Join(b.TempDir(), "v.db"), dim)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	c := newCorpus(5)
	load := func(tenant, chat string, n int) {
		pts := make([]rag.Point, 0, n)
		for i := 1; i <= n; i++ {
			text := c.turn()
			pts = append(pts, rag.Point{Tenant: tenant, UserID: "u", ChatID: chat, Agent: "a", Seq: int64(i),
				Role: "user", Content: text, CreatedAt: time.Unix(int64(i), 0), Dense: emb.Embed(text), Sparse: sp.EncodeDocument(text)})
		}
		if err := ix.Upsert(ctx, pts); err != nil {
			b.Fatal(err)
		}
	}
	load("t", "big", 700)
	for i := 0; i < 30; i++ {
		load(fmt.Sprint("t", i%3), fmt.Sprint("other", i), 200)
	}
	qs := make([]rag.Query, 64)
	for i := range qs {
		text := strings.Join(strings.Fields(c.turn())[:6], " ")
		qs[i] = rag.Query{Filter: rag.Filter{Tenant: "t", ChatIDs: []string{"big"}}, Dense: emb.Embed(text), Sparse: sp.EncodeQuery(text)}
	}
	for _, limit := range []int{5, 26, 400} {
		b.Run(fmt.Sprint("limit-", limit), func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for i := 0; b.Loop(); i++ {
				q := qs[i%len(qs)]
				q.Limit = limit
				start := time.Now()
				hits, err := ix.Query(ctx, q)
				if err != nil || len(hits) == 0 {
					b.Fatal(err, len(hits))
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
		})
	}
}

// BenchmarkUpsertSmall: the indexer's usual write under a stream of
// appends, a few turns of one chat per call (one transaction each).
func BenchmarkUpsertSmall(b *testing.B) {
	ix, err := embedded.Open(context.Background(), filepath.Join(b.TempDir(), "v.db"), 64)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	emb := rag.NewHashingEmbedder(64)
	seq := int64(0)
	for b.Loop() {
		pts := make([]rag.Point, 3)
		for i := range pts {
			seq++
			text := fmt.Sprintf("turn %d about the hotel in lisbon", seq)
			v, _ := emb.EmbedQuery(context.Background(), text)
			pts[i] = rag.Point{Tenant: "t", ChatID: "c", Seq: seq, Role: "user", Content: text, Dense: v, CreatedAt: time.Unix(seq, 0)}
		}
		if err := ix.Upsert(context.Background(), pts); err != nil {
			b.Fatal(err)
		}
	}
}
