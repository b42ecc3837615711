package api

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/contextd/contextd/derive/extractive"
	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/engine/enginetest"
	"github.com/contextd/contextd/index/embedded"
	"github.com/contextd/contextd/internal/metrics"
	"github.com/contextd/contextd/jobs/index"
	"github.com/contextd/contextd/jobs/worker"
	"github.com/contextd/contextd/rag"
	"github.com/contextd/contextd/store/sqlite"
)

// newServiceHarness is newHarness with the engine shaped by setup (a real
// engine on SQLite, as the binary wires it).
func newServiceHarness(t *testing.T, setup func(d *engine.Deps, st *sqlite.Store)) *harness {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	d := enginetest.Deps(st)
	if setup != nil {
		setup(&d, st)
	}
	srv := httptest.NewServer(NewHandler(Deps{Service: engine.New(d)}))
	t.Cleanup(srv.Close)
	return &harness{t: t, srv: srv}
}

func (h *harness) count(chat string) int {
	h.t.Helper()
	r := h.do("GET", "/v1/chats/"+chat+"/messages", "")
	msgs, _ := r.body["messages"].([]any)
	return len(msgs)
}

// A chat's user is fixed by its first append: naming another is a 409, on
// append and on context alike, and nothing is stored.
func TestChatUserConflict(t *testing.T) {
	h := newHarness(t, nil)
	turn := `"messages":[{"role":"user","content":"hello"}]`
	if r := h.do("POST", "/v1/chats/c1/messages", `{"user_id":"u1",`+turn+`}`); r.status != 201 {
		t.Fatalf("first append: %d %s", r.status, r.raw)
	}
	if r := h.do("POST", "/v1/chats/nouser/messages", `{`+turn+`}`); r.status != 201 {
		t.Fatalf("append without a user: %d %s", r.status, r.raw)
	}
	for _, c := range []struct {
		name, method, path, body string
		status                   int
	}{
		{"append naming another user", "POST", "/v1/chats/c1/messages", `{"user_id":"u2",` + turn + `}`, 409},
		{"context naming another user", "POST", "/v1/context", `{"chat_id":"c1","user_id":"u2"}`, 409},
		{"context appending as another user", "POST", "/v1/context", `{"chat_id":"c1","user_id":"u2","append":[{"role":"user","content":"x"}]}`, 409},
		{"a user for a chat created without one", "POST", "/v1/chats/nouser/messages", `{"user_id":"u1",` + turn + `}`, 409},
		{"context naming a user for a chat without one", "POST", "/v1/context", `{"chat_id":"nouser","user_id":"u1"}`, 409},
		{"append naming the same user", "POST", "/v1/chats/c1/messages", `{"user_id":"u1",` + turn + `}`, 201},
		{"append naming no user", "POST", "/v1/chats/c1/messages", `{` + turn + `}`, 201},
		{"context naming the same user", "POST", "/v1/context", `{"chat_id":"c1","user_id":"u1"}`, 200},
		{"context naming no user", "POST", "/v1/context", `{"chat_id":"c1"}`, 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := h.do(c.method, c.path, c.body)
			if r.status != c.status {
				t.Fatalf("got %d, want %d: %s", r.status, c.status, r.raw)
			}
			if c.status == 409 && (r.errCode() != "chat_user_conflict" || r.errField() != "user_id") {
				t.Errorf("got %q field %q, want chat_user_conflict on user_id: %s", r.errCode(), r.errField(), r.raw)
			}
		})
	}
	// Only the three accepted appends stored anything.
	if n := h.count("c1"); n != 3 {
		t.Errorf("c1 holds %d turns, want 3 (the refused appends stored nothing)", n)
	}
	if n := h.count("nouser"); n != 1 {
		t.Errorf("nouser holds %d turns, want 1", n)
	}
}

// An agent agents.yaml does not define gets the supervisor's settings, and
// the context says so.
func TestUnknownAgentIsDegraded(t *testing.T) {
	h := newServiceHarness(t, func(d *engine.Deps, _ *sqlite.Store) {
		d.AgentDefined = func(a string) bool { return a == "research" }
	})
	turn := `"messages":[{"role":"user","content":"hello"}]`
	for _, c := range []struct {
		name, chat, appendAgent, contextAgent string
		unknown                               bool
	}{
		{"defined agent", "c1", "research", "", false},
		{"default agent", "c2", "", "", false},
		{"typo on the chat", "c3", "reserch", "", true},
		{"typo on the context call", "c1", "research", "reserch", true},
		{"defined agent on the context call", "c3", "reserch", "research", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if r := h.do("POST", "/v1/chats/"+c.chat+"/messages", fmt.Sprintf(`{"agent":%q,%s}`, c.appendAgent, turn)); r.status != 201 {
				t.Fatalf("append: %d %s", r.status, r.raw)
			}
			body := fmt.Sprintf(`{"chat_id":%q}`, c.chat)
			if c.contextAgent != "" {
				body = fmt.Sprintf(`{"chat_id":%q,"agent":%q}`, c.chat, c.contextAgent)
			}
			r := h.do("POST", "/v1/context", body)
			if r.status != 200 {
				t.Fatalf("context: %d %s", r.status, r.raw)
			}
			got := slices.Contains(degraded(r), "unknown_agent")
			if got != c.unknown {
				t.Errorf("unknown_agent in degraded = %v, want %v: %v", got, c.unknown, r.body["degraded"])
			}
		})
	}
}

func degraded(r reply) []string {
	var out []string
	list, _ := r.body["degraded"].([]any)
	for _, d := range list {
		s, _ := d.(string)
		out = append(out, s)
	}
	return out
}

// searchHarness is an engine with the embedded index and the hashing
// embedder, every turn indexed.
func searchHarness(t *testing.T, turns ...string) *harness {
	t.Helper()
	var indexer *index.Indexer
	h := newServiceHarness(t, func(d *engine.Deps, st *sqlite.Store) {
		ix, err := embedded.Open(context.Background(), filepath.Join(t.TempDir(), "index"), 384)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ix.Close() })
		emb, sparse := rag.NewHashingEmbedder(384), rag.NewSparseEncoder()
		indexer = &index.Indexer{Store: st, Embedder: emb, Sparse: sparse, Index: ix, Owner: "test"}
		d.Index, d.Indexer = ix, indexer
		d.Retriever = &rag.Retriever{Embedder: emb, Sparse: sparse, Index: ix, Store: st}
	})
	var msgs []string
	for i, c := range turns {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, fmt.Sprintf(`{"role":%q,"content":%q}`, role, c))
	}
	if r := h.do("POST", "/v1/chats/c1/messages", `{"messages":[`+strings.Join(msgs, ",")+`]}`); r.status != 201 {
		t.Fatalf("append: %d %s", r.status, r.raw)
	}
	for {
		n, err := indexer.DrainOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return h
		}
	}
}

var travelTurns = []string{
	"We are planning a trip to Lisbon in October for the conference.",
	"Lisbon in October is mild; book the hotel near the river early.",
	"My sister is allergic to peanuts, so restaurants need to know.",
	"Noted: peanut allergy for every restaurant booking.",
	"The budget for the whole trip is 3000 euros.",
	"Understood, 3000 euros including flights and hotel.",
	"Can we add a day trip to Sintra?",
	"Yes, Sintra is 40 minutes by train from Rossio station.",
}

// /v1/search applies rag_similarity_threshold as /v1/context does: a
// nonsense query finds nothing, a real one still finds its turns, and
// min_score overrides the threshold.
func TestSearchAppliesTheSimilarityThreshold(t *testing.T) {
	h := searchHarness(t, travelTurns...)
	hits := func(body string) []map[string]any {
		t.Helper()
		r := h.do("POST", "/v1/search", body)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", body, r.status, r.raw)
		}
		var out []map[string]any
		list, _ := r.body["hits"].([]any)
		for _, x := range list {
			out = append(out, x.(map[string]any))
		}
		return out
	}
	if got := hits(`{"query":"xylophone quantum zebra","chat_id":"c1"}`); len(got) != 0 {
		t.Errorf("nonsense query: %d hits, want none: %v", len(got), got)
	}
	real := hits(`{"query":"which station does the Sintra train leave from?","chat_id":"c1"}`)
	if len(real) == 0 || !strings.Contains(real[0]["content"].(string), "Sintra") {
		t.Errorf("real query: want the Sintra turn first, got %v", real)
	}
	// The threshold is what leaves the nonsense out: without it the same
	// query returns the nearest turns, scored like real ones.
	if got := hits(`{"query":"xylophone quantum zebra","chat_id":"c1","min_score":-1}`); len(got) == 0 {
		t.Error("min_score -1 should let every dense candidate through")
	}
	if got := hits(`{"query":"which station does the Sintra train leave from?","chat_id":"c1","min_score":0.99}`); len(got) == 0 {
		t.Error("a lexical match is kept whatever the dense threshold, as in /v1/context")
	}
	// Tenant-wide search (no chat) uses the supervisor's threshold too.
	if got := hits(`{"query":"xylophone quantum zebra"}`); len(got) != 0 {
		t.Errorf("tenant-wide nonsense query: %d hits, want none", len(got))
	}
	r := h.do("POST", "/v1/search", `{"query":"x","min_score":2}`)
	if r.status != 400 || r.errField() != "min_score" {
		t.Errorf("min_score 2: %d %s", r.status, r.raw)
	}
	// /v1/context agrees: the nonsense query retrieves nothing.
	r = h.do("POST", "/v1/context", `{"chat_id":"c1","query":"xylophone quantum zebra","strategy":"rag_augmented"}`)
	if rag := r.body["sections"].(map[string]any)["rag"].([]any); r.status != 200 || len(rag) != 0 {
		t.Errorf("context for nonsense: %d rag hits %v", r.status, rag)
	}
}

// A refresh with nothing to summarise says why instead of a bare null.
func TestRefreshSaysWhyThereIsNoSummary(t *testing.T) {
	h := newServiceHarness(t, func(d *engine.Deps, st *sqlite.Store) {
		d.SummaryJobs = &worker.Worker{Env: &worker.Env{Summarizer: extractive.New(), Settings: func(string) worker.Settings {
			return worker.Settings{RecentTurns: 10, TriggerTurns: 1, MaxTokens: 800, Persist: true, Enabled: true}
		}}, Store: st, Summary: &worker.Extender{Store: st}}
	})
	var msgs []string
	for i := range 6 {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"turn number %d about the Lisbon trip"}`, i+1))
	}
	h.do("POST", "/v1/chats/young/messages", `{"messages":[`+strings.Join(msgs, ",")+`]}`)
	r := h.do("POST", "/v1/chats/young/summary/refresh", "")
	if r.status != 200 || r.body["summary"] != nil {
		t.Fatalf("young chat: %d %s", r.status, r.raw)
	}
	want := "all 6 turns are within the recent window (summary_recent_turns: 10)"
	if r.body["reason"] != want {
		t.Errorf("reason = %q, want %q", r.body["reason"], want)
	}
	for range 10 {
		msgs = append(msgs, `{"role":"assistant","content":"more about hotels near the river in Lisbon"}`)
	}
	h.do("POST", "/v1/chats/older/messages", `{"messages":[`+strings.Join(msgs, ",")+`]}`)
	r = h.do("POST", "/v1/chats/older/summary/refresh", "")
	if r.status != 200 || r.body["summary"] == nil {
		t.Fatalf("older chat: %d %s", r.status, r.raw)
	}
	if _, has := r.body["reason"]; has {
		t.Errorf("a refresh that summarised gives no reason: %s", r.raw)
	}
}

// /metrics is behind the API keys when keys are configured (any tenant's
// key), and names no tenant unless tenant labels are on.
func TestMetricsAuthAndTenantLabels(t *testing.T) {
	for _, labels := range []bool{false, true} {
		t.Run(fmt.Sprintf("tenant_labels=%v", labels), func(t *testing.T) {
			st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			m := metrics.NewWith(metrics.Options{TenantLabels: labels})
			m.Known([]string{"acme-secret", "globex-secret"})
			o := Options{APIKeys: []APIKey{{Key: "key-acme", Tenant: "acme-secret"}, {Key: "key-globex", Tenant: "globex-secret"}},
				RateLimit: RateLimit{RequestsPerSecond: 0.001, Burst: 1}}
			srv := httptest.NewServer(NewHandler(Deps{Service: enginetest.New(st), Options: o, Metrics: m}))
			t.Cleanup(srv.Close)
			h := &harness{t: t, srv: srv}
			if r := h.do("GET", "/metrics", ""); r.status != 401 || r.errCode() != "unauthorized" {
				t.Fatalf("metrics without a key: %d %s", r.status, r.raw)
			}
			h.key = "wrong"
			if r := h.do("GET", "/metrics", ""); r.status != 401 {
				t.Fatalf("metrics with a wrong key: %d", r.status)
			}
			h.key = "key-acme"
			h.do("POST", "/v1/context", `{"chat_id":"x"}`)
			if r := h.do("POST", "/v1/context", `{"chat_id":"x"}`); r.status != 429 {
				t.Fatalf("want acme rate limited: %d", r.status)
			}
			h.key = "key-globex" // any tenant's key reads the metrics
			r := h.do("GET", "/metrics", "")
			if r.status != 200 || !strings.Contains(r.raw, "contextd_rate_limited_total") {
				t.Fatalf("metrics with a key: %d %.300s", r.status, r.raw)
			}
			named := strings.Contains(r.raw, "acme-secret") || strings.Contains(r.raw, "globex-secret")
			if named != labels {
				t.Errorf("tenant names in metrics = %v, want %v", named, labels)
			}
			want := "contextd_rate_limited_total 1"
			if labels {
				want = `contextd_rate_limited_total{tenant="acme-secret"} 1`
			}
			if !strings.Contains(r.raw, want) {
				t.Errorf("metrics lack %q", want)
			}
		})
	}
}

// One name per concept on the wire: the contract's spelling, summarised.
func TestUsageSpellsSummarised(t *testing.T) {
	h := newHarness(t, nil)
	h.do("POST", "/v1/chats/c1/messages", `{"messages":[{"role":"user","content":"hello"}]}`)
	r := h.do("POST", "/v1/context", `{"chat_id":"c1"}`)
	usage, _ := r.body["usage"].(map[string]any)
	if _, ok := usage["summarised_turns"]; !ok {
		t.Errorf("usage lacks summarised_turns: %v", usage)
	}
	if _, ok := usage["summarized_turns"]; ok {
		t.Errorf("usage still spells summarized_turns: %v", usage)
	}
}
