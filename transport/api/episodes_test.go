package api

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/engine/enginetest"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/sqlite"
)

func TestEpisodesEndpoint(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv := httptest.NewServer(NewHandler(Deps{Service: enginetest.New(st)}))
	t.Cleanup(srv.Close)
	h := &harness{t: t, srv: srv}

	if r := h.do("POST", "/v1/chats/c1/messages", `{"messages":[`+
		`{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"},`+
		`{"role":"assistant","content":"d"},{"role":"user","content":"e"},{"role":"assistant","content":"f"}]}`); r.status != 201 {
		t.Fatalf("append: %d %s", r.status, r.raw)
	}
	r := h.do("GET", "/v1/chats/c1/episodes", "")
	if eps, ok := r.body["episodes"].([]any); r.status != 200 || !ok || len(eps) != 0 || r.body["next_after_seq"].(float64) != 0 {
		t.Fatalf("no episodes yet: %d %s", r.status, r.raw)
	}
	t0 := time.Date(2023, 5, 3, 9, 0, 0, 0, time.UTC)
	var eps []memory.Episode
	for i := int64(0); i < 3; i++ {
		eps = append(eps, memory.Episode{FromSeq: 2*i + 1, ToSeq: 2*i + 2, StartedAt: t0, EndedAt: t0.Add(time.Hour), Short: "gist"})
	}
	if _, err := st.CloseEpisodes(ctx, memory.ChatKey{Tenant: memory.DefaultTenant, ChatID: "c1"}, 0, eps); err != nil {
		t.Fatal(err)
	}
	r = h.do("GET", "/v1/chats/c1/episodes?limit=2", "")
	page, _ := r.body["episodes"].([]any)
	if r.status != 200 || len(page) != 2 || r.body["next_after_seq"].(float64) != 4 {
		t.Fatalf("first page: %d %s", r.status, r.raw)
	}
	first := page[0].(map[string]any)
	for _, f := range []string{"id", "chat_id", "from_seq", "to_seq", "turns", "started_at", "ended_at", "short", "summary", "model", "prompt_version", "created_at"} {
		if _, ok := first[f]; !ok {
			t.Errorf("episode lacks %q: %v", f, first)
		}
	}
	r = h.do("GET", "/v1/chats/c1/episodes?after_seq=4&limit=2", "")
	if page, _ := r.body["episodes"].([]any); r.status != 200 || len(page) != 1 || r.body["next_after_seq"].(float64) != 6 {
		t.Fatalf("second page: %d %s", r.status, r.raw)
	}
	r = h.do("GET", "/v1/chats/c1/summary", "")
	if latest, _ := r.body["episodes"].([]any); r.status != 200 || len(latest) != 3 {
		t.Errorf("summary's newest episodes: %d %s", r.status, r.raw)
	}
	for _, c := range []struct{ path, field string }{
		{"/v1/chats/c1/episodes?after_seq=-1", "after_seq"},
		{"/v1/chats/c1/episodes?after_seq=x", "after_seq"},
		{"/v1/chats/c1/episodes?limit=0", "limit"},
		{"/v1/chats/c1/episodes?limit=5000", "limit"},
	} {
		r := h.do("GET", c.path, "")
		e, _ := r.body["error"].(map[string]any)
		if r.status != 400 || e["field"] != c.field {
			t.Errorf("GET %s: %d %s, want 400 naming %s", c.path, r.status, r.raw, c.field)
		}
	}
	if r := h.do("GET", "/v1/chats/nope/episodes", ""); r.status != 404 {
		t.Errorf("unknown chat: %d %s", r.status, r.raw)
	}
	if r := h.do("DELETE", "/v1/chats/c1", ""); r.status != 204 {
		t.Fatal(r.raw)
	}
	if r := h.do("GET", "/v1/chats/c1/episodes", ""); r.status != 404 {
		t.Errorf("episodes of a deleted chat: %d %s", r.status, r.raw)
	}
}

// The summary endpoint answers the newest chain_limit records of the chain
// (default 50), head first: a long-lived chat's chain is thousands.
func TestSummaryChainLimit(t *testing.T) {
	h := newHarness(t, nil)
	if r := h.do("POST", "/v1/chats/c/messages", `{"messages":[`+strings.Repeat(`{"role":"user","content":"x"},`, 9)+`{"role":"user","content":"x"}]}`); r.status != 201 {
		t.Fatalf("append: %d %s", r.status, r.raw)
	}
	key := memory.ChatKey{Tenant: "default", ChatID: "c"}
	for to := int64(1); to <= 3; to++ {
		if _, err := memory.AppendSummary(context.Background(), h.store, key, to-1, memory.SummaryRecord{
			Summary: memory.Summary{CoveredFromSeq: 1, CoveredToSeq: to, Narrative: fmt.Sprint("up to ", to)}, FromSeq: to, ToSeq: to}); err != nil {
			t.Fatal(err)
		}
	}
	chain := func(q string) []any {
		r := h.do("GET", "/v1/chats/c/summary"+q, "")
		if r.status != 200 {
			t.Fatalf("summary%s: %d %s", q, r.status, r.raw)
		}
		return r.body["chain"].([]any)
	}
	if n := len(chain("")); n != 3 {
		t.Errorf("default: %d records, want all 3", n)
	}
	two := chain("?chain_limit=2")
	if len(two) != 2 || two[0].(map[string]any)["to_seq"].(float64) != 3 {
		t.Errorf("chain_limit=2: %v, want the newest two, head first", two)
	}
	for _, bad := range []string{"0", "1001", "x"} {
		if r := h.do("GET", "/v1/chats/c/summary?chain_limit="+bad, ""); r.status != 400 || r.errField() != "chain_limit" {
			t.Errorf("chain_limit=%s: %d %s", bad, r.status, r.raw)
		}
	}
}

// A recent turn lists every field the contract names, name included
// ("" when the turn has none).
func TestRecentTurnHasName(t *testing.T) {
	h := newHarness(t, nil)
	if r := h.do("POST", "/v1/chats/n/messages", `{"messages":[{"role":"user","content":"hello there"}]}`); r.status != 201 {
		t.Fatalf("append: %d %s", r.status, r.raw)
	}
	r := h.do("POST", "/v1/context", `{"chat_id":"n"}`)
	recent := r.body["sections"].(map[string]any)["recent"].([]any)
	if len(recent) != 1 {
		t.Fatalf("recent %v", recent)
	}
	for _, k := range []string{"seq", "role", "name", "content", "created_at"} {
		if _, ok := recent[0].(map[string]any)[k]; !ok {
			t.Errorf("recent turn lacks %q: %v", k, recent[0])
		}
	}
}
