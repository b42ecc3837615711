package embedded

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/contextd/contextd/rag"
)

// TestWarmChatKeepsRowsAndPostings: a chat under the sketch's and the
// postings' floors keeps its rows and postings in RAM only while it is
// queried again soon (warm): not after its first query, nor when other
// chats' queries come between its own; both from its third query in a
// row (warmBuild); its answers stay those of the scan; and
// once other chats take residentAge queries both are dropped again.
func TestWarmChatKeepsRowsAndPostings(t *testing.T) {
	ctx := context.Background()
	const dim = 16
	ix, err := Open(ctx, filepath.Join(t.TempDir(), "v.db"), dim) // default floors: far above these chats
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ix.res.warmFrom = 100
	r := rand.New(rand.NewPCG(21, 22))
	chats := make([]string, warmReuse+2)
	for i := range chats {
		chats[i] = fmt.Sprint("c", i)
		var pts []rag.Point
		for seq := int64(1); seq <= 200; seq++ {
			pts = append(pts, rag.Point{Tenant: "t", ChatID: chats[i], Seq: seq, Role: "user", Content: "x",
				Dense: randomVec(r, dim, nil, 0), Sparse: rag.SparseVector{Indices: []uint32{uint32(seq % 7), 100 + uint32(seq%13)}, Values: []float32{1, 0.5}},
				CreatedAt: time.Unix(1, 0)})
		}
		if err := ix.Upsert(ctx, pts); err != nil {
			t.Fatal(err)
		}
	}
	q := rag.Query{Dense: randomVec(r, dim, nil, 0), Sparse: rag.SparseVector{Indices: []uint32{3, 105}, Values: []float32{1, 1}}, Limit: 8}
	query := func(chat string) []rag.Hit {
		t.Helper()
		q.Filter = rag.Filter{Tenant: "t", ChatIDs: []string{chat}}
		hits, err := ix.Query(ctx, q)
		if err != nil || len(hits) != 8 {
			t.Fatalf("query of %s: %d hits, %v", chat, len(hits), err)
		}
		return hits
	}
	inRAM := func(chat string) (rows, post bool) {
		ix.mu.RLock()
		defer ix.mu.RUnlock()
		c := ix.tenants["t"].chats[chat]
		c.rowsMu.Lock()
		defer c.rowsMu.Unlock()
		return c.rows != nil, c.post != nil
	}
	a := chats[0]
	scanned := query(a)
	if rows, post := inRAM(a); rows || post {
		t.Fatalf("after one query: rows %v, postings %v; want neither", rows, post)
	}
	for _, c := range chats[1:] { // warmReuse+1 other chats between a's queries
		query(c)
	}
	query(a)
	if rows, post := inRAM(a); rows || post {
		t.Fatalf("queried again after %d others: rows %v, postings %v; want neither", len(chats)-1, rows, post)
	}
	warm := query(a)
	if rows, post := inRAM(a); rows || post {
		t.Fatalf("queried twice in a row: rows %v, postings %v; want neither yet", rows, post)
	}
	warmer := query(a)
	if rows, post := inRAM(a); !rows || !post {
		t.Fatalf("queried three times in a row: rows %v, postings %v; want both", rows, post)
	}
	if !sameHits(warm, scanned) || !sameHits(warmer, scanned) || !sameHits(query(a), scanned) {
		t.Errorf("a warm chat answers differently from its scan")
	}
	for i := 0; i <= residentAge+warmReuse; i++ {
		query(chats[1+i%(len(chats)-1)])
	}
	if rows, post := inRAM(a); rows || post {
		t.Errorf("after %d queries of other chats: rows %v, postings %v; want both dropped", residentAge+warmReuse, rows, post)
	}
	ix.res.mu.Lock()
	defer ix.res.mu.Unlock()
	var sum int64
	for e := ix.res.lru.Front(); e != nil; e = e.Next() {
		sum += e.Value.(*chat).resBytes
	}
	if sum != ix.res.used || ix.res.used > ix.res.budget {
		t.Errorf("resident bytes: counted %d, entries hold %d, budget %d", ix.res.used, sum, ix.res.budget)
	}
}
