package rag_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contextd/contextd/index/embedded"
	"github.com/contextd/contextd/jobs/index"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// env is a store, an embedded index, and an indexer and retriever over them.
type env struct {
	store *fakeStore
	index *embedded.Index
	emb   rag.Embedder
	ixr   *index.Indexer
	ret   *rag.Retriever
}

func newEnv(t testing.TB, emb rag.Embedder) *env {
	t.Helper()
	if emb == nil {
		emb = rag.NewHashingEmbedder(256)
	}
	dim := 256
	if d, ok := emb.(rag.Dimensioner); ok {
		dim = d.Dimensions()
	}
	idx, err := embedded.Open(context.Background(), filepath.Join(t.TempDir(), "v.db"), dim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	st := newFakeStore()
	sp := rag.NewSparseEncoder()
	return &env{store: st, index: idx, emb: emb,
		ixr: &index.Indexer{Store: st, Embedder: emb, Sparse: sp, Index: idx, Owner: "test", BatchSize: 4},
		ret: &rag.Retriever{Embedder: emb, Sparse: sp, Index: idx, Store: st}}
}

func (e *env) drain(t testing.TB) int {
	t.Helper()
	n, err := e.ixr.DrainOnce(context.Background())
	if err != nil {
		t.Fatalf("DrainOnce: %v", err)
	}
	return n
}

// filler returns n distinct, unrelated chat turns.
func filler(n int, topic string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s note number %d about the weekly %s schedule", topic, i, topic)
	}
	return out
}

func seqsOf(turns []rag.Turn) []string {
	var out []string
	for _, t := range turns {
		s := fmt.Sprintf("%s/%d", t.ChatID, t.Seq)
		if t.Neighbor {
			s += "n"
		}
		if t.Chosen {
			s += "c"
		}
		if t.ChoseFrom > 0 {
			s += fmt.Sprintf("<%d", t.ChoseFrom)
		}
		out = append(out, s)
	}
	return out
}

func TestRetrieveScopeAndExclusion(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	// c1 (user u1): the Postgres fact at seq 3, chatter, the same fact again
	// near the end (inside the recent window).
	c1 := filler(12, "gardening")
	c1[2] = "Our production database is PostgreSQL 15 running on port 6543"
	c1[10] = "Reminder: production database PostgreSQL listens on port 6543"
	e.store.add("t1", "c1", "u1", "a1", c1...)
	e.store.add("t1", "c2", "u1", "a1", "The staging database is PostgreSQL 14 on port 5432", "ok thanks")
	e.store.add("t1", "c3", "u2", "a1", "My PostgreSQL database port is 7777")
	e.store.add("t2", "c1", "u1", "a1", "Other tenant: PostgreSQL database port 9999")
	if n := e.drain(t); n != 12+2+1+1 {
		t.Fatalf("indexed %d", n)
	}
	if e.store.unindexed() != 0 {
		t.Fatalf("backlog left: %d", e.store.unindexed())
	}

	base := rag.Request{Tenant: "t1", ChatID: "c1", UserID: "u1", Query: "which port does the PostgreSQL database use?", K: 2}

	got, err := e.ret.Retrieve(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(seqsOf(got), " "); s != "c1/3 c1/11" {
		t.Errorf("chat scope: %s, want c1/3 c1/11", s)
	}
	if got[0].Similarity <= 0 || got[0].Score <= 0 || got[0].Role != "user" || !strings.Contains(got[0].Content, "6543") {
		t.Errorf("hit payload: %+v", got[0])
	}

	// The recent window starts at seq 9: seq 11 must not come back, and K
	// is still filled from older turns.
	req := base
	req.ExcludeFromSeq = 9
	got, err = e.ret.Retrieve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Seq != 3 && got[1].Seq != 3 {
		t.Errorf("with window: %v", seqsOf(got))
	}
	for _, tr := range got {
		if tr.ChatID == "c1" && tr.Seq >= 9 {
			t.Errorf("returned a turn of the recent window: %v", seqsOf(got))
		}
	}

	// User scope: the user's other chat is searched (and the window still
	// applies only to this chat); another user's and tenant's chats are not.
	req.Scope = rag.ScopeUser
	req.K = 5
	got, err = e.ret.Retrieve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Join(seqsOf(got), " ")
	if !strings.Contains(s, "c1/3") || !strings.Contains(s, "c2/1") {
		t.Errorf("user scope missing the user's hits: %s", s)
	}
	if strings.Contains(s, "c3/") || strings.Contains(s, "c1/11") {
		t.Errorf("user scope leaked another user's chat or the window: %s", s)
	}
	for _, tr := range got {
		if strings.Contains(tr.Content, "9999") {
			t.Errorf("hit from another tenant: %+v", tr)
		}
	}
	// Chronological order.
	for i := 1; i < len(got); i++ {
		if got[i].CreatedAt.Before(got[i-1].CreatedAt) {
			t.Errorf("not chronological: %v", seqsOf(got))
		}
	}

	// Search over the whole tenant, best first.
	hits, err := e.ret.Search(ctx, rag.SearchRequest{Tenant: "t1", Query: "PostgreSQL port 7777", K: 1})
	if err != nil || len(hits) != 1 || hits[0].ChatID != "c3" {
		t.Errorf("Search: %v %v", seqsOf(hits), err)
	}
	if hits, _ := e.ret.Search(ctx, rag.SearchRequest{Tenant: "t2", Query: "PostgreSQL port"}); len(hits) != 1 || !strings.Contains(hits[0].Content, "9999") {
		t.Errorf("Search t2: %v", seqsOf(hits))
	}

	// Tenant scope (what /v1/search uses without chat_id).
	got, err = e.ret.Retrieve(ctx, rag.Request{Tenant: "t1", Scope: rag.ScopeTenant, Query: "PostgreSQL database port", K: 10})
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(seqsOf(got), " "); !strings.Contains(s, "c3/1") || !strings.Contains(s, "c2/1") || strings.Contains(s, "9999") {
		t.Errorf("tenant scope: %s", s)
	}
	got, _ = e.ret.Retrieve(ctx, rag.Request{Tenant: "t1", UserID: "u2", Scope: rag.ScopeTenant, Query: "PostgreSQL database port", K: 10})
	if s := strings.Join(seqsOf(got), " "); s != "c3/1" {
		t.Errorf("tenant scope narrowed to u2: %s", s)
	}

	// Empty query: nothing, no error. Missing tenant: error.
	if got, err := e.ret.Retrieve(ctx, rag.Request{Tenant: "t1", ChatID: "c1", Query: "  "}); err != nil || len(got) != 0 {
		t.Errorf("empty query: %v %v", got, err)
	}
	if _, err := e.ret.Retrieve(ctx, rag.Request{ChatID: "c1", Query: "x"}); err == nil {
		t.Error("missing tenant accepted")
	}
	// A huge query is truncated, not rejected.
	huge := base
	huge.Query = "PostgreSQL port " + strings.Repeat("lorem ipsum ", 5000)
	if _, err := e.ret.Retrieve(ctx, huge); err != nil {
		t.Errorf("huge query: %v", err)
	}
}

func TestRetrieveOverfetchPastLargeWindow(t *testing.T) {
	e := newEnv(t, nil)
	// 60 turns all about kafka (would all rank high), the older ones less so.
	turns := make([]string, 60)
	for i := range turns {
		turns[i] = fmt.Sprintf("kafka consumer lag alert number %d", i)
	}
	turns[0] = "kafka lag seen first time"
	turns[1] = "kafka consumer lag was first noticed on monday"
	e.store.add("t", "c", "u", "a", turns...)
	e.drain(t)
	got, err := e.ret.Retrieve(context.Background(), rag.Request{Tenant: "t", ChatID: "c",
		Query: "kafka consumer lag alert", K: 2, ExcludeFromSeq: 3})
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(seqsOf(got), " "); s != "c/1 c/2" {
		t.Errorf("got %s, want c/1 c/2 (everything from seq 3 is in the window)", s)
	}
}

func TestRetrieveNeighbors(t *testing.T) {
	e := newEnv(t, nil)
	turns := filler(20, "cooking")
	turns[9] = "The wifi password for the office is hunter2"
	e.store.add("t", "c", "u", "a", turns...)
	e.drain(t)
	req := rag.Request{Tenant: "t", ChatID: "c", Query: "office wifi password", K: 1, Neighbors: 2, ExcludeFromSeq: 12}
	got, err := e.ret.Retrieve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// Hit 10; neighbours 8, 9, 11 (12 is in the window).
	if s := strings.Join(seqsOf(got), " "); s != "c/8n c/9n c/10 c/11n" {
		t.Fatalf("got %s, want c/8n c/9n c/10 c/11n", s)
	}
	for _, tr := range got {
		if tr.Neighbor && (tr.Score != got[2].Score || tr.Content == "") {
			t.Errorf("neighbour %+v should carry the hit's score and content", tr)
		}
	}
	// Two hits whose neighbourhoods overlap: no duplicates.
	turns2 := filler(6, "music")
	turns2[1] = "invoice 4471 was paid"
	turns2[3] = "invoice 4471 refund requested"
	e.store.add("t", "d", "u", "a", turns2...)
	e.drain(t)
	got, err = e.ret.Retrieve(context.Background(), rag.Request{Tenant: "t", ChatID: "d", Query: "invoice 4471", K: 2, Neighbors: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(seqsOf(got), " "); s != "d/1n d/2 d/3n d/4 d/5n" {
		t.Errorf("overlapping neighbourhoods: %s", s)
	}
}

// A neighbour after its hit that asks a question brings the turn after it,
// its answer (once: an answer's own question brings nothing more); a
// question before its hit is answered by the hit.
func TestNeighbourQuestionBringsItsAnswer(t *testing.T) {
	e := newEnv(t, nil)
	turns := filler(20, "cooking")
	turns[9] = "football is back on from monday, new day though, mondays 3:30-4:30 now"
	turns[10] = "yesss isla will be thrilled. same price?"
	turns[11] = "he's knocking off the two weeks we missed so £31.50 for the rest of half term. ok?"
	turns[8] = "did anyone hear from gary?"
	e.store.add("t", "c", "u", "a", turns...)
	e.drain(t)
	if s := neighbourhood(t, e, "football back on mondays"); s != "c/9n c/10 c/11n c/12n" {
		t.Fatalf("got %s, want c/9n c/10 c/11n c/12n (the answer to 11's question, nothing after it)", s)
	}
}

// neighbourhood is what chat c of tenant t retrieves for query: its best
// hit and the turns that hit brings (one neighbour each side, and more
// where the rules say so), as seqsOf writes them.
func neighbourhood(t *testing.T, e *env, query string) string {
	t.Helper()
	got, err := e.ret.Retrieve(context.Background(), rag.Request{Tenant: "t", ChatID: "c", Query: query, K: 1, Neighbors: 1})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(seqsOf(got), " ")
}

// A question put to everyone brings the turns after it, where the group
// answers one after another; a question to one person brings one.
func TestGroupQuestionBringsItsAnswers(t *testing.T) {
	checkNeighbourhoods(t, map[int]string{
		9:  "ok whats everyone's new forwarding address for the deposit form",
		10: "mine is 22 Birch Lane, Didsbury",
		11: "back at my mums for a bit. 7 Hollins Close, Bury",
		12: "flat 3, 118 Stockport Road",
		15: "whats your new forwarding address for the tax form",
	}, map[string]string{
		"everyone forwarding address deposit": "c/9n c/10 c/11n c/12n c/13n",
		"forwarding address tax form":         "c/15n c/16 c/17n",
	})
}

// checkNeighbourhoods stores a 24-turn chat of filler with the turns
// given (by index) and checks what each query's neighbourhood is.
func checkNeighbourhoods(t *testing.T, set map[int]string, want map[string]string) {
	t.Helper()
	e := newEnv(t, nil)
	turns := filler(24, "cooking")
	for i, c := range set {
		turns[i] = c
	}
	e.store.add("t", "c", "u", "a", turns...)
	e.drain(t)
	for query, w := range want {
		if s := neighbourhood(t, e, query); s != w {
			t.Errorf("%q: got %s, want %s", query, s, w)
		}
	}
}

func TestRetrieveErrorsWrapSentinels(t *testing.T) {
	e := newEnv(t, nil)
	e.store.add("t", "c", "u", "a", "hello world")
	e.drain(t)
	ctx := context.Background()
	req := rag.Request{Tenant: "t", ChatID: "c", Query: "hello"}

	bad := rag.Retriever{Embedder: failingEmbedder{}, Sparse: e.ret.Sparse, Index: e.ret.Index, Store: e.ret.Store}
	if _, err := bad.Retrieve(ctx, req); !errors.Is(err, rag.ErrEmbedder) {
		t.Errorf("embedder down: %v, want ErrEmbedder", err)
	}
	e.index.Close()
	if _, err := e.ret.Retrieve(ctx, req); !errors.Is(err, rag.ErrIndexUnavailable) {
		t.Errorf("index down: %v, want ErrIndexUnavailable", err)
	}
}

// flakyEmbedder fails while down is set, else delegates.
type flakyEmbedder struct {
	rag.Embedder
	down  atomic.Bool
	calls atomic.Int32
}

func (f *flakyEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	f.calls.Add(1)
	if f.down.Load() {
		return nil, errors.New("dial tcp: connection refused")
	}
	return f.Embedder.EmbedDocuments(ctx, texts)
}

func (f *flakyEmbedder) Dimensions() int { return f.Embedder.(rag.Dimensioner).Dimensions() }

func TestIndexerBacklogSurvivesEmbedderOutage(t *testing.T) {
	fl := &flakyEmbedder{Embedder: rag.NewHashingEmbedder(64)}
	e := newEnv(t, fl)
	ctx := context.Background()
	e.store.add("t", "c1", "u", "a", filler(10, "alpha")...)
	e.store.add("t", "c2", "u", "a", filler(3, "beta")...)

	fl.down.Store(true)
	n, err := e.ixr.DrainOnce(ctx)
	if !errors.Is(err, rag.ErrEmbedder) || n != 0 {
		t.Fatalf("outage: n=%d err=%v, want 0 and ErrEmbedder", n, err)
	}
	if !errors.Is(e.ixr.LastError(), rag.ErrEmbedder) {
		t.Errorf("LastError = %v", e.ixr.LastError())
	}
	if got := e.store.unindexed(); got != 13 {
		t.Fatalf("backlog %d after outage, want 13 (nothing marked)", got)
	}
	if c, _ := e.index.Count(ctx, rag.Filter{Tenant: "t"}); c != 0 {
		t.Errorf("index holds %d points after a failed embed", c)
	}
	if len(e.store.leases) != 0 {
		t.Errorf("lease left behind: %v", e.store.leases)
	}

	fl.down.Store(false)
	if n := e.drain(t); n != 13 {
		t.Fatalf("after recovery indexed %d, want 13", n)
	}
	if e.ixr.LastError() != nil {
		t.Errorf("LastError not cleared: %v", e.ixr.LastError())
	}
	if got := e.store.unindexed(); got != 0 {
		t.Errorf("backlog %d after recovery", got)
	}
	for chat, want := range map[string]int{"c1": 10, "c2": 3} {
		if c, _ := e.index.Count(ctx, rag.Filter{Tenant: "t", ChatIDs: []string{chat}}); c != want {
			t.Errorf("%s: %d points, want %d", chat, c, want)
		}
	}
	// Nothing pending: a drain is a no-op.
	if n := e.drain(t); n != 0 {
		t.Errorf("second drain indexed %d", n)
	}
}

func TestIndexerIndexOutageAndLeases(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	e.store.add("t", "mine", "u", "a", "one", "two")
	e.store.add("t", "theirs", "u", "a", "three")
	// Another replica holds the lease on "theirs".
	if ok, _ := memory.TryLease(ctx, e.store, memory.ChatKey{Tenant: "t", ChatID: "theirs"}, memory.LeaseIndex, "other", 0); !ok {
		t.Fatal("lease")
	}
	if n := e.drain(t); n != 2 {
		t.Fatalf("indexed %d, want 2 (leased chat skipped)", n)
	}
	if e.store.unindexed() != 1 {
		t.Fatalf("backlog %d, want 1", e.store.unindexed())
	}
	memory.ReleaseLease(ctx, e.store, memory.ChatKey{Tenant: "t", ChatID: "theirs"}, memory.LeaseIndex, "other")

	// Index down: nothing marked.
	e.index.Close()
	e.store.add("t", "mine", "u", "a", "four")
	if _, err := e.ixr.DrainOnce(ctx); !errors.Is(err, rag.ErrIndexUnavailable) {
		t.Errorf("index down: %v, want ErrIndexUnavailable", err)
	}
	if e.store.unindexed() != 2 {
		t.Errorf("backlog %d after index failure, want 2", e.store.unindexed())
	}
}

func TestIndexerPayloadAndDeletedChat(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	e.store.add("t", "c", "user-7", "agent-x", "the quick brown fox")
	e.drain(t)
	hits, err := e.index.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t", UserID: "user-7", Agent: "agent-x"},
		Sparse: rag.NewSparseEncoder().EncodeQuery("fox"), Limit: 1})
	if err != nil || len(hits) != 1 {
		t.Fatalf("%v %v", hits, err)
	}
	if h := hits[0]; h.Role != "user" || h.Content != "the quick brown fox" || !h.CreatedAt.Equal(fakeT0.Add(1e9)) {
		t.Errorf("payload %+v", h.Point)
	}

	// A chat deleted while its batch was being embedded leaves no points.
	e.store.add("t", "gone", "u", "a", "short lived")
	e.ixr.Embedder = deleteDuring{Embedder: e.emb, del: func() { e.store.deleteChat(memory.ChatKey{Tenant: "t", ChatID: "gone"}) }}
	e.drain(t)
	if c, _ := e.index.Count(ctx, rag.Filter{Tenant: "t", ChatIDs: []string{"gone"}}); c != 0 {
		t.Errorf("deleted chat has %d points", c)
	}
}

// TestIndexerCoalescesKicks: a kick that comes while a pass runs (an
// append during the pass) is served by one pass MinInterval after that
// pass started, not by a pass right after it: appends that come faster than
// passes end gather into few passes.
func TestIndexerCoalescesKicks(t *testing.T) {
	e := newEnv(t, nil)
	var once sync.Once
	e.ixr.Embedder = deleteDuring{Embedder: e.emb, del: func() {
		once.Do(func() { // an append, and its kick, during the first pass
			e.store.add("t", "b", "u", "a", "a turn appended during the pass")
			e.ixr.Kick()
		})
	}}
	e.ixr.PollInterval = 1e12 // only kicks wake it
	e.ixr.MinInterval = 300 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = e.ixr.Run(ctx) }()
	e.store.add("t", "a", "u", "a", "the first turn")
	e.ixr.Kick()
	waitFor(t, func() bool {
		if e.store.unindexed() != 0 {
			return false
		}
		e.store.mu.Lock()
		defer e.store.mu.Unlock()
		return len(e.store.listed) > 0 && time.Since(e.store.listed[0]) > time.Second
	})
	e.store.mu.Lock()
	defer e.store.mu.Unlock()
	first, last := e.store.listed[0], e.store.listed[len(e.store.listed)-1]
	if gap := last.Sub(first); gap < e.ixr.MinInterval-20*time.Millisecond {
		t.Errorf("the pass for the kick during the first pass started %v after it; want about MinInterval (%v)", gap, e.ixr.MinInterval)
	}
}

// TestIndexerLoneKickRunsAtOnce: a kick while the indexer is idle runs a
// pass at once, however long MinInterval is, so that a turn appended
// alone is searchable right away.
func TestIndexerLoneKickRunsAtOnce(t *testing.T) {
	e := newEnv(t, nil)
	e.ixr.PollInterval = 1e12
	e.ixr.MinInterval = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = e.ixr.Run(ctx) }()
	for i := range 3 {
		time.Sleep(20 * time.Millisecond) // idle
		start := time.Now()
		e.store.add("t", fmt.Sprint("lone", i), "u", "a", "a turn appended alone")
		e.ixr.Kick()
		waitFor(t, func() bool { return e.store.unindexed() == 0 })
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("append %d indexed after %v", i, d)
		}
	}
}

// TestWaitIndexedHurriesTheGather: WaitIndexed cannot tell whether the
// running pass took in a turn appended during it, so it waits for the
// next pass, which gathers kicks for MinInterval (an hour here); it
// hurries that pass and returns once the turn is in the index, so a search
// right after an append sees it.
func TestWaitIndexedHurriesTheGather(t *testing.T) {
	e := newEnv(t, nil)
	var once sync.Once
	during := make(chan struct{})
	e.ixr.Embedder = deleteDuring{Embedder: e.emb, del: func() {
		once.Do(func() { // an append, and its kick, during the first pass
			e.store.add("t", "b", "u", "a", "the zebra appended during the pass")
			e.ixr.Kick()
			close(during)
		})
	}}
	e.ixr.PollInterval = 1e12
	e.ixr.MinInterval = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = e.ixr.Run(ctx) }()
	e.store.add("t", "a", "u", "a", "the first turn")
	e.ixr.Kick()
	<-during
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if !e.ixr.WaitIndexed(wctx) {
		t.Fatalf("WaitIndexed: false (%v); backlog %d", wctx.Err(), e.store.unindexed())
	}
	hits, err := e.index.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t", ChatIDs: []string{"b"}},
		Sparse: rag.NewSparseEncoder().EncodeQuery("zebra"), Limit: 1})
	if err != nil || len(hits) != 1 {
		t.Fatalf("the turn appended during the pass: hits %v, err %v", hits, err)
	}
	// Nothing appended since: no wait at all, even with a done context.
	done, stop := context.WithCancel(ctx)
	stop()
	if !e.ixr.WaitIndexed(done) {
		t.Error("WaitIndexed with nothing pending: false")
	}
}

// TestWaitIndexedDoesNotWaitForAFailingIndexer: with the index down, or
// no Run, WaitIndexed answers false at once instead of holding a search
// until its deadline.
func TestWaitIndexedDoesNotWaitForAFailingIndexer(t *testing.T) {
	e := newEnv(t, nil)
	e.store.add("t", "a", "u", "a", "a turn")
	e.ixr.Kick()
	if e.ixr.WaitIndexed(context.Background()) {
		t.Error("WaitIndexed without Run: true")
	}
	e.ixr.PollInterval = 1e12
	e.index.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = e.ixr.Run(ctx) }()
	waitFor(t, func() bool { return e.ixr.LastError() != nil })
	e.store.add("t", "a", "u", "a", "another turn")
	e.ixr.Kick()
	res := make(chan bool, 1)
	go func() { res <- e.ixr.WaitIndexed(ctx) }() // no deadline: it must not need one
	select {
	case ok := <-res:
		if ok {
			t.Error("WaitIndexed with the index down: true")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitIndexed with the index down still waiting after 10s")
	}
}

// delayedEmbedder embeds documents after a delay: a pass that takes a while.
type delayedEmbedder struct {
	rag.Embedder
	delay time.Duration
}

func (s delayedEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	time.Sleep(s.delay)
	return s.Embedder.EmbedDocuments(ctx, texts)
}

func (s delayedEmbedder) Dimensions() int { return s.Embedder.(rag.Dimensioner).Dimensions() }

// TestIndexerLeasesInOneWrite: a pass over many chats with a turn and a
// fact each takes and gives back their leases a few writes at a time, not
// two writes per chat and backlog, and leaves none held.
func TestIndexerLeasesInOneWrite(t *testing.T) {
	e := newEnv(t, nil)
	e.ixr.Kinds = []memory.WorkKind{memory.IndexFacts}
	upserts := &countUpserts{Index: e.index}
	e.ixr.Index = upserts
	const chats = 30
	for i := range chats {
		c := fmt.Sprint("c", i)
		e.store.add("t", c, "u", "a", "a turn of the trickle")
		e.store.addFacts(memory.ChatKey{Tenant: "t", ChatID: c}, memory.Fact{ID: "f" + c, Text: "the user lives in Lisbon", Seqs: []int64{1}})
	}
	if n := e.drain(t); n != 2*chats {
		t.Fatalf("indexed %d, want %d turns and facts", n, 2*chats)
	}
	e.store.mu.Lock()
	defer e.store.mu.Unlock()
	// Turns: a listing's chats taken at once, released after their batch
	// (BatchSize 4 here: a write per batch), the second listing finds
	// nothing; facts: taken and released at once.
	if max := 2 + chats/e.ixr.BatchSize + 1 + 4; e.store.leaseW > max {
		t.Errorf("%d lease writes for %d chats; want at most %d", e.store.leaseW, chats, max)
	}
	if len(e.store.leases) != 0 {
		t.Errorf("leases still held after the drain: %v", e.store.leases)
	}
	// Turns and facts each a batch of BatchSize at a time, across chats.
	if max := 2 * (chats/e.ixr.BatchSize + 1); upserts.n > max {
		t.Errorf("%d upserts for %d chats' turns and facts; want at most %d", upserts.n, chats, max)
	}
}

// countUpserts counts an index's upserts.
type countUpserts struct {
	rag.Index
	n int
}

func (c *countUpserts) Upsert(ctx context.Context, ps []rag.Point) error {
	c.n++
	return c.Index.Upsert(ctx, ps)
}

type deleteDuring struct {
	rag.Embedder
	del func()
}

func (d deleteDuring) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	d.del()
	return d.Embedder.EmbedDocuments(ctx, texts)
}

func TestIndexerRunAndKick(t *testing.T) {
	e := newEnv(t, nil)
	e.ixr.PollInterval = 1e12 // only kicks wake it
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.ixr.Run(ctx) }()
	e.store.add("t", "c", "u", "a", "first turn", "second turn")
	e.ixr.Kick()
	e.ixr.Kick() // never blocks
	waitFor(t, func() bool { return e.store.unindexed() == 0 })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run returned %v", err)
	}
}

// A neighbour outside since/until is left out, as a hit there is: a caller
// who narrows the time range gets nothing from outside it.
func TestNeighboursKeepToTheTimeRange(t *testing.T) {
	e := newEnv(t, nil)
	// Turn n is at fakeT0 + n s: the hit is turn 3, its neighbours 2 and 4.
	e.store.add("t", "c", "u", "a", "weather chatter", "more chatter", "the laptop costs 900 euros", "ok", "bye")
	e.drain(t)
	at := fakeT0.Add(3 * time.Second)
	for _, tc := range []struct {
		name         string
		since, until time.Time
		want         string
	}{
		{"no range", time.Time{}, time.Time{}, "c/2n c/3 c/4n"},
		{"the hit's second", at, at, "c/3"},
		{"from the hit on", at, time.Time{}, "c/3 c/4n"},
	} {
		got, err := e.ret.Retrieve(context.Background(), rag.Request{Tenant: "t", ChatID: "c", Query: "laptop price", K: 1,
			Neighbors: 1, Since: tc.since, Until: tc.until})
		if err != nil {
			t.Fatal(err)
		}
		if s := strings.Join(seqsOf(got), " "); s != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, s, tc.want)
		}
	}
}

// TestIndexerPending: the cheap gate before a request reads its chat's
// lag says pending until Run has served every kick with a pass that
// succeeded — before Run, while a kick waits, while the index is down.
func TestIndexerPending(t *testing.T) {
	e := newEnv(t, nil)
	if !e.ixr.Pending() {
		t.Error("before Run: not pending (a backlog from before a restart would go unnamed)")
	}
	e.ixr.PollInterval = 1e12
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = e.ixr.Run(ctx) }()
	waitFor(t, func() bool { return !e.ixr.Pending() })
	e.store.add("t", "a", "u", "a", "a turn")
	e.ixr.Kick()
	if !e.ixr.Pending() && e.store.unindexed() > 0 {
		t.Error("a kick not yet served: not pending")
	}
	waitFor(t, func() bool { return !e.ixr.Pending() })
	if n := e.store.unindexed(); n != 0 {
		t.Errorf("not pending with %d turns unindexed", n)
	}
	e.index.Close()
	e.store.add("t", "a", "u", "a", "another turn")
	e.ixr.Kick()
	waitFor(t, func() bool { return e.ixr.LastError() != nil })
	if !e.ixr.Pending() {
		t.Error("the index down: not pending")
	}
}

// A question asking for a kind of value (lex.AskedKinds) meets the turn
// holding one, though they share no word: "what's the best number to call
// Olu on?" is answered by "sorry typo, its 07836 551 240 not 204".
func TestAskedKindMeetsItsValue(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	for _, c := range []string{
		"Olu starts on tuesday, can you set up his laptop",
		"Olu needs the finance build and a docking station",
		"Olu's manager is Dana, she approves the mailbox",
		"Olu will call you when he gets in",
		"his old number was 07836 551 204",
		"sorry typo, its 07836 551 240 not 204",
		"the laptop is a ThinkPad, the best one we have",
		"Olu can collect it from the 3rd floor",
		"Olu asked about the VPN too, call me if it breaks",
	} {
		e.store.add("t", "c", "u", "a", c)
	}
	e.drain(t)
	enc := rag.NewSparseEncoder()
	for _, c := range []struct{ query, want string }{
		{"what's the best number to call Olu on?", "07836 551 2"},
		{"is Olu's laptop a ThinkPad?", "ThinkPad"}, // no kind asked: the words decide
	} {
		hits, err := e.index.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t"}, Sparse: enc.EncodeQuery(c.query), Limit: 1})
		if err != nil || len(hits) != 1 {
			t.Fatalf("%q: %v %v", c.query, hits, err)
		}
		if !strings.Contains(hits[0].Content, c.want) {
			t.Errorf("%q: best hit %q, want the turn holding %q", c.query, hits[0].Content, c.want)
		}
	}
}

// A turn making a choice brings the turn, a few before it, that first
// named what it chose: "going with the crown" needs "The Crown at
// Pangbourne … fits 55, £40 a head". A choice of nothing named before
// brings nothing more.
func TestChoiceBringsWhatWasChosen(t *testing.T) {
	t.Run("by place", func(t *testing.T) {
		// Chosen by place, the options a few turns before come as the
		// choice's other half (c), next to it or not; options retrieved
		// bring the choice made among them (<: chose from).
		checkNeighbourhoods(t, map[int]string{
			4:  "two options for the cake: 1) crumbs bakery, lemon drizzle, £85 2) gail from the choir, carrot cake, £60, gluten free",
			5:  "gail did auntie's wedding, so good",
			6:  "ok do the second one, i'll text her tonight",
			7:  "texted gail, she confirmed saturday pickup",
			14: "the music options are 1) a DJ, £300 2) a playlist",
			15: "ok do the second one",
			16: "playlist made, shared it with everyone",
			20: "the second one was better anyway, confirmed pickup",
		}, map[string]string{
			"texted confirmed saturday pickup":          "c/5nc c/7n<5 c/8 c/9n",
			"playlist made shared everyone":             "c/15nc c/16n<15 c/17 c/18n",
			"crumbs bakery lemon drizzle carrot gluten": "c/4n c/5 c/6n c/7n<5", // the options bring their choice
		})
	})
	checkNeighbourhoods(t, map[int]string{
		5:  "the boathouse have double booked the room, ringing round all afternoon",
		6:  "The Crown at Pangbourne has a function room that fits 55, £40 a head",
		7:  "the crown is lovely, we went there for owen's birthday",
		8:  "ok we're going with the crown then. booked it, same plan, 7pm start",
		15: "fine, lemon drizzle it is, order placed for the party",
	}, map[string]string{
		"booked same plan 7pm start":       "c/7n c/8n c/9 c/10n",
		"lemon drizzle order placed party": "c/15n c/16 c/17n",
	})
}

// A passage of a long turn is measured against a typical passage, not a
// turn: the passage naming Frau Brandt's new number matches more of the
// question than the short turns do, and ranks first.
func TestPassageMeasuredAgainstPassages(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	letter := "ok so the hausverwaltung also sent a LETTER letter, the paper kind, and it's long and annoying, so here's the summary before wednesday so we can talk about it. " +
		"first, the heating check is on tuesday 6 october between 8 and 12, someone needs to let the guy in to all four rooms because the thermostats get new batteries and a reading. " +
		"second, the smoke detectors get checked the same day, same guy. third, the annoying part: the rent goes up. it's the index clause in our contract, they adjust it to inflation, and from 1 november the total warm rent is €2,260 instead of €2,140, so that's 565 each. " +
		"they attached the calculation and it looks legit, I checked it against the index table online. fourth, the Betriebskostenabrechnung for last year came with it and we owe a Nachzahlung of €312, which has to be paid by 15 october, to the same account as the rent. " +
		"fifth, they are repainting the staircase in october so there'll be stuff in the hallway for a week. and sixth, Frau Brandt has a new direct number because they changed phone systems, it's 030 4471 2305, the old one doesn't work anymore. that's all, sorry for the essay"
	for _, c := range []string{
		"they fixed it yes. I'll call Frau Brandt",
		"her number is 030 4471 2290, she picks up between 9 and 12 only",
		letter,
		"my iban for her is DE44 1001 0010 0987 6543 21, can you forward it noor?",
		"who's home for the heating guy on the 6th? I'm already packing that week",
		"the bike cellar code is 2719, then push hard, the door sticks",
	} {
		e.store.add("t", "c", "u", "a", c)
	}
	e.drain(t)
	hits, err := e.index.Query(ctx, rag.Query{Filter: rag.Filter{Tenant: "t"}, Sparse: rag.NewSparseEncoder().EncodeQuery("whats frau brandt's number?"), Limit: 1})
	if err != nil || len(hits) != 1 {
		t.Fatalf("query: %v %v", hits, err)
	}
	if !strings.Contains(hits[0].Content, "030 4471 2305") {
		t.Errorf("best hit %q, want the letter's passage with the new number", hits[0].Content)
	}
}
