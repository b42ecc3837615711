package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// tempConfig is the built-in defaults with the SQLite file and the embedded
// index in a temporary directory of t.
func tempConfig(t testing.TB) *config.Config {
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Storage.SQLitePath = filepath.Join(dir, "contextd.db")
	cfg.Vector.EmbeddedPath = filepath.Join(dir, "vectors.db")
	return cfg
}

// newApp wires a whole contextd on the embedded default in a temp dir.
func newApp(t *testing.T, mutate func(*config.Config)) (*App, *httptest.Server) {
	t.Helper()
	cfg := tempConfig(t)
	if mutate != nil {
		mutate(cfg)
	}
	app, err := build(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(app.Close)
	srv := httptest.NewServer(app.Handler)
	t.Cleanup(srv.Close)
	return app, srv
}

func call(t *testing.T, method, url, key, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func sqlCount(t *testing.T, path, table, where string, args ...any) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM "+table+" WHERE "+where, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func sqlInt(t *testing.T, path, q string, args ...any) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Erasure: after DELETE of a chat or a user, no SQL row and no vector of it
// remains, and other chats are intact.
func TestErasureLeavesNothing(t *testing.T) {
	ctx := context.Background()
	app, srv := newApp(t, func(c *config.Config) {
		c.Supervisor.Memory.SummaryRecentTurns = 2
		c.Supervisor.Memory.SummaryTriggerTurns = 1
		c.Supervisor.Memory.EpisodeMinTurns = 1
		c.Supervisor.Memory.EpisodeMaxTurns = 2
	})
	for _, c := range []struct{ chat, user string }{{"c1", "alice"}, {"c2", "alice"}, {"c3", "bob"}} {
		body := `{"user_id":"` + c.user + `","messages":[` + strings.Repeat(`{"role":"user","content":"the launch plan for `+c.chat+` is ready"},`, 5) + `{"role":"assistant","content":"ok"}]}`
		if st, b := call(t, "POST", srv.URL+"/v1/chats/"+c.chat+"/messages", "", body); st != 201 {
			t.Fatalf("append: %d %s", st, b)
		}
	}
	if _, err := app.Indexer.DrainOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if err := app.Worker.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	db := app.Config.Storage.SQLitePath
	rowid := map[string]int{}
	for _, c := range []string{"c1", "c2", "c3"} {
		rowid[c] = sqlInt(t, db, "SELECT id FROM chats WHERE tenant = 'default' AND chat_id = ?", c)
	}
	if sqlCount(t, db, "conversation_summaries", "chat = ?", rowid["c1"]) == 0 {
		t.Fatal("setup: c1 should have a summary before erasure")
	}
	if sqlCount(t, db, "episodes", "chat = ?", rowid["c1"]) == 0 || sqlCount(t, db, "episodes", "chat = ?", rowid["c2"]) == 0 {
		t.Fatal("setup: c1 and c2 should have episodes before erasure")
	}
	if _, err := app.Indexer.DrainOnce(ctx); err != nil { // the episodes
		t.Fatal(err)
	}
	countVec := func(f rag.Filter) int {
		n, err := app.Index.Count(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	c1Episodes := rag.Filter{Tenant: "default", ChatIDs: []string{"c1"}, Kinds: []string{memory.KindEpisode}}
	if countVec(rag.Filter{Tenant: "default", ChatIDs: []string{"c1"}, Kinds: []string{memory.KindTurn}}) != 6 || countVec(c1Episodes) == 0 {
		t.Fatal("setup: c1 should have 6 turn vectors and episode vectors")
	}

	if st, b := call(t, "DELETE", srv.URL+"/v1/chats/c1", "", ""); st != 204 {
		t.Fatalf("delete chat: %d %s", st, b)
	}
	if n := sqlCount(t, db, "chats", "chat_id = 'c1'"); n != 0 {
		t.Errorf("chats still holds c1")
	}
	for _, table := range []string{"messages", "conversation_summaries", "leases", "episodes"} {
		if n := sqlCount(t, db, table, "chat = ?", rowid["c1"]); n != 0 {
			t.Errorf("%s still holds %d rows of c1", table, n)
		}
	}
	if n := countVec(rag.Filter{Tenant: "default", ChatIDs: []string{"c1"}}); n != 0 || countVec(c1Episodes) != 0 {
		t.Errorf("%d vectors of c1 remain", n)
	}
	// A vector an interrupted erase left (its last sweep failed after the
	// rows were gone) goes with the retry, which answers 404.
	stray := rag.Point{Tenant: "default", ChatID: "c1", Seq: 99, Role: "user", Content: "stray", CreatedAt: time.Now(),
		Dense: make([]float32, app.Config.Embedder.Dimensions)}
	stray.Dense[0] = 1
	if err := app.Index.Upsert(ctx, []rag.Point{stray}); err != nil || countVec(rag.Filter{Tenant: "default", ChatIDs: []string{"c1"}}) != 1 {
		t.Fatalf("setup: stray vector not stored: %v", err)
	}
	if st, _ := call(t, "DELETE", srv.URL+"/v1/chats/c1", "", ""); st != 404 {
		t.Errorf("second delete: %d, want 404", st)
	}
	if n := countVec(rag.Filter{Tenant: "default", ChatIDs: []string{"c1"}}); n != 0 {
		t.Errorf("the retried erase left %d stray vectors of c1", n)
	}

	if st, b := call(t, "DELETE", srv.URL+"/v1/users/alice", "", ""); st != 204 {
		t.Fatalf("delete user: %d %s", st, b)
	}
	if n := sqlCount(t, db, "chats", "user_id = 'alice'"); n != 0 {
		t.Errorf("chats still holds %d chats of alice", n)
	}
	for _, table := range []string{"messages", "conversation_summaries", "leases", "episodes"} {
		if n := sqlCount(t, db, table, "chat IN (?, ?)", rowid["c1"], rowid["c2"]); n != 0 {
			t.Errorf("%s still holds %d rows of alice", table, n)
		}
	}
	if n := countVec(rag.Filter{Tenant: "default", UserID: "alice"}); n != 0 {
		t.Errorf("%d vectors of alice remain", n)
	}
	if n := countVec(rag.Filter{Tenant: "default", UserID: "alice", Kinds: []string{memory.KindEpisode}}); n != 0 {
		t.Errorf("%d episode vectors of alice remain", n)
	}
	// Likewise a user's stray vector goes with a retried erase, a 404.
	stray = rag.Point{Tenant: "default", UserID: "alice", ChatID: "c2", Seq: 99, Role: "user", Content: "stray", CreatedAt: time.Now(),
		Dense: stray.Dense}
	if err := app.Index.Upsert(ctx, []rag.Point{stray}); err != nil || countVec(rag.Filter{Tenant: "default", UserID: "alice"}) != 1 {
		t.Fatalf("setup: stray vector of alice not stored: %v", err)
	}
	if st, _ := call(t, "DELETE", srv.URL+"/v1/users/alice", "", ""); st != 404 {
		t.Errorf("second user delete: %d, want 404", st)
	}
	if n := countVec(rag.Filter{Tenant: "default", UserID: "alice"}); n != 0 {
		t.Errorf("the retried user erase left %d stray vectors", n)
	}
	if n := countVec(rag.Filter{Tenant: "default", ChatIDs: []string{"c3"}, Kinds: []string{memory.KindTurn}}); n != 6 {
		t.Errorf("bob's chat lost vectors: %d", n)
	}
	if n := sqlCount(t, db, "messages", "chat = ?", rowid["c3"]); n != 6 {
		t.Errorf("bob's chat lost messages: %d", n)
	}
	b, err := app.Store.BacklogSizes(ctx)
	if err != nil || b.Unindexed != 0 {
		t.Errorf("backlog after erasure: %+v %v", b, err)
	}
}

// Search never crosses tenants, and a second tenant cannot touch the
// first tenant's chat through any endpoint.
func TestSearchAndEndpointsAreTenantScoped(t *testing.T) {
	ctx := context.Background()
	app, srv := newApp(t, func(c *config.Config) {
		c.Server.Auth.APIKeys = []config.APIKey{{Key: "key-aaaaaaaaaaaaaaaa", Tenant: "a"}, {Key: "key-bbbbbbbbbbbbbbbb", Tenant: "b"}}
	})
	ka, kb := "key-aaaaaaaaaaaaaaaa", "key-bbbbbbbbbbbbbbbb"
	if st, b := call(t, "POST", srv.URL+"/v1/chats/shared-id/messages", ka, `{"user_id":"u","messages":[{"role":"user","content":"the vault code is 7412 zebra"}]}`); st != 201 {
		t.Fatalf("append a: %d %s", st, b)
	}
	if st, b := call(t, "POST", srv.URL+"/v1/chats/other/messages", kb, `{"user_id":"u","messages":[{"role":"user","content":"nothing to see"}]}`); st != 201 {
		t.Fatalf("append b: %d %s", st, b)
	}
	if _, err := app.Indexer.DrainOnce(ctx); err != nil {
		t.Fatal(err)
	}
	st, body := call(t, "POST", srv.URL+"/v1/search", kb, `{"query":"vault code zebra"}`)
	if st != 200 || strings.Contains(body, "7412") {
		t.Fatalf("tenant b search: %d %s", st, body)
	}
	st, body = call(t, "POST", srv.URL+"/v1/search", kb, `{"query":"vault code zebra","user_id":"u"}`)
	if st != 200 || strings.Contains(body, "7412") {
		t.Fatalf("tenant b search by user: %d %s", st, body)
	}
	if st, body = call(t, "POST", srv.URL+"/v1/search", kb, `{"query":"vault","chat_id":"shared-id"}`); st != 404 {
		t.Fatalf("tenant b search in a's chat: %d %s", st, body)
	}
	st, body = call(t, "POST", srv.URL+"/v1/search", ka, `{"query":"vault code zebra"}`)
	if st != 200 || !strings.Contains(body, "7412") {
		t.Fatalf("tenant a search: %d %s", st, body)
	}
	// Context with append into another tenant's chat id creates b's own chat.
	st, body = call(t, "POST", srv.URL+"/v1/context", kb, `{"chat_id":"shared-id","query":"vault?","append":[{"role":"user","content":"vault?"}],"strategy":"rag_augmented"}`)
	if st != 200 || strings.Contains(body, "7412") {
		t.Fatalf("b's context on the same chat id: %d %s", st, body)
	}
	st, body = call(t, "GET", srv.URL+"/v1/chats/shared-id/messages", ka, "")
	var list struct{ Messages []json.RawMessage }
	_ = json.Unmarshal([]byte(body), &list)
	if st != 200 || len(list.Messages) != 1 {
		t.Fatalf("a's chat changed by b: %d %s", st, body)
	}
}

// After a short session /metrics shows every metric of the contract.
func TestMetricsAfterShortSession(t *testing.T) {
	ctx := context.Background()
	app, srv := newApp(t, func(c *config.Config) { c.Supervisor.Memory.SummaryRecentTurns = 1 })
	call(t, "POST", srv.URL+"/v1/chats/m1/messages", "", `{"messages":[{"role":"user","content":"hello there"},{"role":"assistant","content":"hi"}]}`)
	_, _ = app.Indexer.DrainOnce(ctx)
	call(t, "POST", srv.URL+"/v1/context", "", `{"chat_id":"m1","query":"hello","strategy":"rag_augmented"}`)
	call(t, "POST", srv.URL+"/v1/chats/m1/summary/refresh", "", "")
	_, body := call(t, "GET", srv.URL+"/metrics", "", "")
	for _, m := range []string{
		"contextd_http_request_duration_seconds_bucket",
		"contextd_appended_turns_total 2",
		`contextd_context_tokens_bucket{section="rag"`,
		`contextd_context_tokens_bucket{section="summary"`,
		`contextd_context_tokens_bucket{section="recent"`,
		"contextd_retrieval_duration_seconds_bucket",
		`contextd_summary_jobs_total{outcome="ok"} 1`,
		`contextd_llm_tokens_total{direction="in"}`,
		"contextd_backlog_unindexed_turns 0",
		"contextd_backlog_unsummarised_turns",
		`contextd_backend_up{backend="storage"} 1`,
		`contextd_backend_up{backend="vector"} 1`,
		`contextd_backend_up{backend="llm"} 0`,
	} {
		if !strings.Contains(body, m) {
			t.Errorf("metrics lack %q", m)
		}
	}
}
