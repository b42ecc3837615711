package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/engine/enginetest"
	"github.com/contextd/contextd/store/sqlite"
)

type harness struct {
	t     *testing.T
	srv   *httptest.Server
	key   string
	store *sqlite.Store
}

// storeService is an engine on a fresh SQLite store, for tests that need
// a service but not its store.
func storeService(t testing.TB) *engine.Service {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return enginetest.New(st)
}

func newHarness(t *testing.T, mutate func(*Options)) *harness {
	return newHarnessWith(t, mutate, nil)
}

// newHarnessWith is newHarness with wire, when set, completing the
// service's deps (every store role is the store's).
func newHarnessWith(t *testing.T, mutate func(*Options), wire func(*engine.Deps, *sqlite.Store)) *harness {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var o Options
	if mutate != nil {
		mutate(&o)
	}
	d := enginetest.Deps(st)
	if wire != nil {
		wire(&d, st)
	}
	srv := httptest.NewServer(NewHandler(Deps{Service: engine.New(d), Options: o}))
	t.Cleanup(srv.Close)
	return &harness{t: t, srv: srv, store: st}
}

type reply struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (h *harness) do(method, path, body string, hdr ...string) reply {
	h.t.Helper()
	req, err := http.NewRequest(method, h.srv.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if h.key != "" {
		req.Header.Set("Authorization", "Bearer "+h.key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &r.body)
	return r
}

func (r reply) errCode() string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func (r reply) errField() string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e["field"].(string)
	return s
}

func TestEndToEnd(t *testing.T) {
	h := newHarness(t, nil)
	r := h.do("POST", "/v1/chats/c1/messages", `{"user_id":"u1","agent":"research","messages":[
		{"id":"m1","role":"user","content":"I prefer answers in French."},
		{"id":"m2","role":"assistant","content":"D'accord."},
		{"id":"m3","role":"user","content":"What's the capital of Peru?"}]}`)
	if r.status != 201 || r.body["appended"].(float64) != 3 || r.body["last_seq"].(float64) != 3 {
		t.Fatalf("append: %d %s", r.status, r.raw)
	}
	if r.header.Get("X-Request-Id") == "" {
		t.Error("no request id header")
	}
	if got := h.do("GET", "/healthz", "", "X-Request-Id", "sup-42.a").header.Get("X-Request-Id"); got != "sup-42.a" {
		t.Errorf("a plain caller id should be kept, got %q", got)
	}
	if got := h.do("GET", "/healthz", "", "X-Request-Id", "bad id\twith tab").header.Get("X-Request-Id"); got == "" || strings.Contains(got, " ") {
		t.Errorf("an odd caller id should be replaced, got %q", got)
	}
	// Idempotent retry.
	r = h.do("POST", "/v1/chats/c1/messages", `{"messages":[{"id":"m3","role":"user","content":"What's the capital of Peru?"}]}`)
	if r.status != 201 || r.body["appended"].(float64) != 0 || r.body["duplicates"].(float64) != 1 {
		t.Fatalf("retry: %d %s", r.status, r.raw)
	}
	r = h.do("GET", "/v1/chats/c1/messages?after_seq=1&limit=10", "")
	msgs, _ := r.body["messages"].([]any)
	if r.status != 200 || len(msgs) != 2 || r.body["next_after_seq"].(float64) != 3 {
		t.Fatalf("list: %d %s", r.status, r.raw)
	}
	r = h.do("POST", "/v1/context", `{"chat_id":"c1","query":"What's the capital of Peru?","budget_tokens":500}`)
	if r.status != 200 {
		t.Fatalf("context: %d %s", r.status, r.raw)
	}
	ctxText := r.body["context"].(string)
	if !strings.Contains(ctxText, "French") || strings.Contains(ctxText, "capital of Peru") {
		t.Errorf("context should hold the history but not the current query:\n%s", ctxText)
	}
	if r.body["agent"] != "research" || r.body["strategy"] != "running_summary" {
		t.Errorf("agent/strategy = %v/%v", r.body["agent"], r.body["strategy"])
	}
	usage := r.body["usage"].(map[string]any)
	if usage["total_tokens"].(float64) > 500 || usage["budget_tokens"].(float64) != 500 {
		t.Errorf("usage = %v", usage)
	}
	if _, ok := r.body["degraded"].([]any); !ok {
		t.Errorf("degraded must be a list: %s", r.raw)
	}
	// The alias.
	if r := h.do("POST", "/context", `{"chat_id":"c1"}`); r.status != 200 {
		t.Errorf("/context alias: %d %s", r.status, r.raw)
	}
	r = h.do("GET", "/v1/chats/c1/summary", "")
	if r.status != 200 || r.body["summary"] != nil {
		t.Errorf("summary before any: %d %s", r.status, r.raw)
	}
	if r := h.do("POST", "/v1/search", `{"query":"Peru"}`); r.status != 503 {
		t.Errorf("search without a vector store: %d %s", r.status, r.raw)
	}
	if r := h.do("DELETE", "/v1/chats/c1", ""); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	for _, p := range []string{"/v1/chats/c1/messages", "/v1/chats/c1/summary", "/v1/chats/c1/episodes"} {
		if r := h.do("GET", p, ""); r.status != 404 || r.errCode() != "not_found" {
			t.Errorf("GET %s after delete: %d %s", p, r.status, r.raw)
		}
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if r := h.do("GET", p, ""); r.status != 200 {
			t.Errorf("%s: %d", p, r.status)
		}
	}
	r = h.do("GET", "/metrics", "")
	if r.status != 200 || !strings.Contains(r.raw, "contextd_http_request_duration_seconds") {
		t.Errorf("metrics: %d", r.status)
	}
}

func TestBadInput(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.BodyLimit = 2 << 20 })
	h.do("POST", "/v1/chats/c1/messages", `{"messages":[{"role":"user","content":"seed"}]}`)
	big := strings.Repeat("a", 1<<20)
	cases := []struct {
		name, method, path, body string
		status                   int
		code, field              string
	}{
		{"malformed json", "POST", "/v1/chats/c1/messages", `{"messages":[`, 400, "invalid_json", ""},
		{"not json", "POST", "/v1/context", `hello`, 400, "invalid_json", ""},
		{"empty body", "POST", "/v1/context", ``, 400, "empty_body", ""},
		{"unknown field", "POST", "/v1/context", `{"chat_id":"c1","budget":5}`, 400, "unknown_field", "budget"},
		{"wrong type", "POST", "/v1/context", `{"chat_id":"c1","budget_tokens":"many"}`, 400, "invalid_type", "budget_tokens"},
		{"two values", "POST", "/v1/context", `{"chat_id":"c1"}{"chat_id":"c1"}`, 400, "invalid_json", ""},
		{"unknown role", "POST", "/v1/chats/c1/messages", `{"messages":[{"role":"wizard","content":"x"}]}`, 400, "invalid_role", "messages[0].role"},
		{"empty content", "POST", "/v1/chats/c1/messages", `{"messages":[{"role":"user","content":"   "}]}`, 400, "empty_content", "messages[0].content"},
		{"invalid utf8", "POST", "/v1/chats/c1/messages", "{\"messages\":[{\"role\":\"user\",\"content\":\"a\xffb\"}]}", 400, "invalid_utf8", ""},
		{"1MB message", "POST", "/v1/chats/c1/messages", `{"messages":[{"role":"user","content":"` + big + `"}]}`, 413, "too_large", "messages[0].content"},
		{"body over limit", "POST", "/v1/chats/c1/messages", `{"messages":[{"role":"user","content":"` + big + big + big + `"}]}`, 413, "body_too_large", ""},
		{"unknown chat", "POST", "/v1/context", `{"chat_id":"nope"}`, 404, "not_found", ""},
		{"budget 0", "POST", "/v1/context", `{"chat_id":"c1","budget_tokens":0}`, 400, "invalid_value", "budget_tokens"},
		{"budget negative", "POST", "/v1/context", `{"chat_id":"c1","budget_tokens":-1}`, 400, "invalid_value", "budget_tokens"},
		{"since after until", "POST", "/v1/context", `{"chat_id":"c1","since":"2024-05-09T00:00:00Z","until":"2024-05-08T00:00:00Z"}`, 400, "invalid_value", "since"},
		{"bad since", "POST", "/v1/context", `{"chat_id":"c1","since":"yesterday","append":[{"role":"user","content":"must not be stored"}]}`, 400, "invalid_time", "since"},
		{"bad until", "POST", "/v1/search", `{"query":"x","until":"2024-13-01"}`, 400, "invalid_time", "until"},
		{"search since after until", "POST", "/v1/search", `{"query":"x","since":"2024-05-09T00:00:00Z","until":"2024-05-08T00:00:00Z"}`, 400, "invalid_value", "since"},
		{"unknown kind", "POST", "/v1/search", `{"query":"x","kinds":["turn","summary"]}`, 400, "invalid_value", "kinds"},
		{"search k 0", "POST", "/v1/search", `{"query":"x","k":0}`, 400, "invalid_value", "k"},
		{"search k over 100", "POST", "/v1/search", `{"query":"x","k":101}`, 400, "invalid_value", "k"},
		{"unknown include", "POST", "/v1/context", `{"chat_id":"c1","include":["context","usage"]}`, 400, "invalid_value", "include"},
		{"include not a list", "POST", "/v1/context", `{"chat_id":"c1","include":"context"}`, 400, "invalid_type", "include"},
		{"bad include with append", "POST", "/v1/context", `{"chat_id":"c1","include":["x"],"append":[{"role":"user","content":"must not be stored"}]}`, 400, "invalid_value", "include"},
		{"bad after_seq", "GET", "/v1/chats/c1/messages?after_seq=x", ``, 400, "invalid_value", "after_seq"},
		{"unknown route", "GET", "/v2/nothing", ``, 404, "route_not_found", ""},
		{"search a chat of another user", "POST", "/v1/search", `{"query":"seed","chat_id":"c1","user_id":"someone-else"}`, 409, "chat_user_conflict", "user_id"},
		{"refresh takes no fields", "POST", "/v1/chats/c1/summary/refresh", `{"x":1}`, 400, "unknown_field", "x"},
		{"refresh body not json", "POST", "/v1/chats/c1/summary/refresh", `garbage`, 400, "invalid_json", ""},
		{"NUL in metadata", "POST", "/v1/chats/c1/messages", `{"messages":[{"role":"user","content":"m","metadata":{"k":["a\u0000b"]}}]}`, 400, "invalid_content", "messages[0].metadata"},
		{"NUL in a metadata key", "POST", "/v1/chats/c1/messages", `{"messages":[{"role":"user","content":"m","metadata":{"a\u0000":1}}]}`, 400, "invalid_content", "messages[0].metadata"},
		{"missing content", "POST", "/v1/chats/c1/messages", `{"messages":[{"role":"user"}]}`, 400, "empty_content", "messages[0].content"},
		{"one id, two messages", "POST", "/v1/chats/c1/messages", `{"messages":[{"id":"x","role":"user","content":"a"},{"id":"x","role":"user","content":"b"}]}`, 400, "invalid_value", "messages[1].id"},
		{"one id, two appended", "POST", "/v1/context", `{"chat_id":"c1","append":[{"id":"y","role":"user","content":"a"},{"id":"y","role":"assistant","content":"a"}]}`, 400, "invalid_value", "append[1].id"},
		{"zero created_at", "POST", "/v1/chats/c1/messages", `{"messages":[{"role":"user","content":"t","created_at":"0001-01-01T00:00:00Z"}]}`, 400, "invalid_time", "messages[0].created_at"},
		// Under /v1 too: a wrong URL is never mistaken for a missing chat.
		{"unknown v1 route", "GET", "/v1/nonexistent", ``, 404, "route_not_found", ""},
		{"v1 alone", "GET", "/v1", ``, 404, "route_not_found", ""},
		{"unknown chat subroute", "GET", "/v1/chats/c1/nothing", ``, 404, "route_not_found", ""},
		{"too deep for a chat id", "DELETE", "/v1/chats/c1/x/y", ``, 404, "route_not_found", ""},
		{"refresh is POST only", "GET", "/v1/chats/c1/summary/refresh", ``, 405, "method_not_allowed", ""},
		{"messages take no PUT", "PUT", "/v1/chats/c1/messages", `{"messages":[]}`, 405, "method_not_allowed", ""},
		{"search is POST", "GET", "/v1/search", ``, 405, "method_not_allowed", ""},
		{"context alias is POST", "GET", "/context", ``, 405, "method_not_allowed", ""},
		{"healthz is GET", "POST", "/healthz", ``, 405, "method_not_allowed", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.do(c.method, c.path, c.body)
			if r.status != c.status || r.errCode() != c.code || r.errField() != c.field {
				t.Errorf("got %d %q field %q, want %d %q field %q: %.300s", r.status, r.errCode(), r.errField(), c.status, c.code, c.field, r.raw)
			}
			e, _ := r.body["error"].(map[string]any)
			if msg, _ := e["message"].(string); msg == "" {
				t.Errorf("error without a message: %s", r.raw)
			}
			if allow := r.header.Get("Allow"); (c.status == 405) != (allow != "") {
				t.Errorf("status %d with Allow %q", r.status, allow)
			}
		})
	}
	// Nothing was stored by any of them.
	r := h.do("GET", "/v1/chats/c1/messages", "")
	if msgs, _ := r.body["messages"].([]any); len(msgs) != 1 {
		t.Fatalf("stored %d messages, want only the seed", len(msgs))
	}
}

// A message repeated whole in one request (a client's retry folded in) is
// stored once, as a later request repeating it is; only the same id on
// another message is refused (TestBadInput).
func TestRepeatedMessageInOneRequestIsStoredOnce(t *testing.T) {
	h := newHarness(t, nil)
	r := h.do("POST", "/v1/chats/c1/messages", `{"messages":[{"id":"x","role":"user","content":"a"},{"id":"x","role":"user","content":"a"}]}`)
	if r.status != 201 {
		t.Fatalf("append: %d %s", r.status, r.raw)
	}
	r = h.do("GET", "/v1/chats/c1/messages", "")
	if msgs, _ := r.body["messages"].([]any); len(msgs) != 1 {
		t.Fatalf("stored %d messages, want 1: %s", len(msgs), r.raw)
	}
}

// A known path with another method answers 405 and lists, in Allow, the
// methods it takes.
func TestWrongMethodAllow(t *testing.T) {
	h := newHarness(t, nil)
	for _, c := range []struct{ method, path, allow string }{
		{"GET", "/v1/chats/c1/summary/refresh", "POST"},
		{"PUT", "/v1/chats/c1/messages", "GET, POST"},
		{"PATCH", "/v1/chats/c1", "DELETE"},
		{"POST", "/v1/users/u1", "DELETE"},
		{"GET", "/v1/context", "POST"},
		{"DELETE", "/healthz", "GET"},
		{"PUT", "/mcp", ""}, // no MCP server in this harness: no such route
	} {
		r := h.do(c.method, c.path, "")
		want := 405
		if c.allow == "" {
			want = 404
		}
		if r.status != want || r.header.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d Allow %q, want %d Allow %q: %s", c.method, c.path, r.status, r.header.Get("Allow"), want, c.allow, r.raw)
		}
	}
}

// /mcp keeps the methods the transport needs; another is a 405.
func TestMCPMethods(t *testing.T) {
	mcp := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	srv := httptest.NewServer(NewHandler(Deps{Service: storeService(t), MCP: mcp}))
	t.Cleanup(srv.Close)
	h := &harness{t: t, srv: srv}
	for _, c := range []struct {
		method string
		status int
		allow  string
	}{
		{"POST", 202, ""}, {"GET", 202, ""}, {"DELETE", 202, ""},
		{"PUT", 405, "DELETE, GET, POST"},
	} {
		if r := h.do(c.method, "/mcp", ""); r.status != c.status || r.header.Get("Allow") != c.allow {
			t.Errorf("%s /mcp: %d Allow %q, want %d Allow %q", c.method, r.status, r.header.Get("Allow"), c.status, c.allow)
		}
	}
}

// Metadata comes back as it went in: an integer past 2^53 (another
// system's id) is not rounded through float64, and a number JSON allows
// but float64 cannot hold is kept, not refused.
func TestMetadataNumbersKeepTheirDigits(t *testing.T) {
	h := newHarness(t, nil)
	r := h.do("POST", "/v1/chats/c1/messages", `{"messages":[{"role":"user","content":"m","metadata":{"discord_msg_id":1234567890123456789,"huge":1e400,"f":0.1}}]}`)
	if r.status != 201 {
		t.Fatalf("append: %d %s", r.status, r.raw)
	}
	r = h.do("GET", "/v1/chats/c1/messages", "")
	for _, want := range []string{`"discord_msg_id":1234567890123456789`, `"huge":1e400`, `"f":0.1`} {
		if !strings.Contains(r.raw, want) {
			t.Errorf("listing lacks %s: %s", want, r.raw)
		}
	}
}

func TestAuthAndTenantIsolation(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.APIKeys = []APIKey{{Key: "key-a", Tenant: "a"}, {Key: "key-b", Tenant: "b"}}
	})
	if r := h.do("POST", "/v1/context", `{"chat_id":"c1"}`); r.status != 401 || r.errCode() != "unauthorized" {
		t.Fatalf("no key: %d %s", r.status, r.raw)
	}
	h.key = "wrong"
	if r := h.do("POST", "/v1/context", `{"chat_id":"c1"}`); r.status != 401 {
		t.Fatalf("wrong key: %d", r.status)
	}
	if r := h.do("GET", "/healthz", ""); r.status != 200 {
		t.Fatalf("healthz needs no key: %d", r.status)
	}
	// Under /v1 the key is checked before the route.
	if r := h.do("GET", "/v1/nonexistent", ""); r.status != 401 {
		t.Fatalf("unknown route with a wrong key: %d %s", r.status, r.raw)
	}
	// The scheme is case-insensitive; anything but a bearer key is not one.
	for auth, want := range map[string]int{"bearer key-a": 404, "BEARER key-a": 404, "Basic key-a": 401, "key-a": 401} {
		if r := h.do("GET", "/v1/chats/nope/messages", "", "Authorization", auth); r.status != want {
			t.Errorf("Authorization %q: %d, want %d", auth, r.status, want)
		}
	}
	h.key = "key-a"
	if r := h.do("GET", "/v1/nonexistent", ""); r.status != 404 || r.errCode() != "route_not_found" {
		t.Fatalf("unknown route: %d %s", r.status, r.raw)
	}
	if r := h.do("POST", "/v1/chats/c1/messages", `{"user_id":"u","messages":[{"role":"user","content":"secret of tenant a"}]}`); r.status != 201 {
		t.Fatalf("append as a: %d %s", r.status, r.raw)
	}
	h.key = "key-b"
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/chats/c1/messages", ""},
		{"POST", "/v1/chats/c1/messages", `{"messages":[]}`},
		{"POST", "/v1/context", `{"chat_id":"c1"}`},
		{"GET", "/v1/chats/c1/summary", ""},
		{"GET", "/v1/chats/c1/episodes", ""},
		{"POST", "/v1/chats/c1/summary/refresh", ""},
		{"DELETE", "/v1/chats/c1", ""},
		{"DELETE", "/v1/users/u", ""},
	} {
		r := h.do(c.method, c.path, c.body)
		if c.path == "/v1/chats/c1/messages" && c.method == "POST" {
			if r.status != 400 { // empty batch is invalid before any lookup
				t.Errorf("%s %s as b: %d", c.method, c.path, r.status)
			}
			continue
		}
		if r.status != 404 || strings.Contains(r.raw, "secret") {
			t.Errorf("%s %s as b: %d %s", c.method, c.path, r.status, r.raw)
		}
	}
	h.key = "key-a"
	r := h.do("GET", "/v1/chats/c1/messages", "")
	if msgs, _ := r.body["messages"].([]any); r.status != 200 || len(msgs) != 1 {
		t.Fatalf("tenant a lost its chat: %d %s", r.status, r.raw)
	}
}

func TestRateLimit(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.RateLimit = RateLimit{RequestsPerSecond: 0.5, Burst: 2} })
	var statuses []int
	var last reply
	for i := 0; i < 4; i++ {
		last = h.do("POST", "/v1/context", `{"chat_id":"x"}`)
		statuses = append(statuses, last.status)
	}
	if statuses[0] != 404 || statuses[1] != 404 || statuses[3] != 429 {
		t.Fatalf("statuses = %v, want two 404s (burst) then 429", statuses)
	}
	if last.header.Get("Retry-After") == "" || last.errCode() != "rate_limited" {
		t.Errorf("429 without Retry-After or code: %v %s", last.header, last.raw)
	}
}

func TestPanicIsA500InTheErrorShape(t *testing.T) {
	mw := recoverPanics(discardLogger())
	h := mw(func(c echoContext) error { panic("boom") })
	e := newEcho()
	req := httptest.NewRequest("GET", "/", nil)
	rec := httptest.NewRecorder()
	c := e.NewContext(req, rec)
	if err := h(c); err != nil {
		e.HTTPErrorHandler(err, c)
	}
	var body map[string]map[string]string
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	if rec.Code != 500 || body["error"]["code"] != "internal" {
		t.Fatalf("got %d %s", rec.Code, rec.Body.String())
	}
}

func TestDecodeRejectsBodyOverLimitWithoutContentLength(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.BodyLimit = 1024 })
	req, _ := http.NewRequest("POST", h.srv.URL+"/v1/context", io.MultiReader(bytes.NewReader([]byte(`{"chat_id":"`)), strings.NewReader(strings.Repeat("x", 4096)), strings.NewReader(`"}`)))
	req.ContentLength = -1 // chunked
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 413 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
}

// include leaves out the parts a caller does not need; usage and degraded
// always come.
func TestContextInclude(t *testing.T) {
	h := newHarness(t, nil)
	h.do("POST", "/v1/chats/c1/messages", `{"messages":[{"role":"user","content":"hello there"},{"role":"assistant","content":"hi"}]}`)
	for _, c := range []struct {
		include string
		want    []string
	}{
		{``, []string{"context", "messages", "sections"}},
		{`,"include":[]`, []string{"context", "messages", "sections"}},
		{`,"include":["messages"]`, []string{"messages"}},
		{`,"include":["context"]`, []string{"context"}},
		{`,"include":["sections","context"]`, []string{"context", "sections"}},
	} {
		r := h.do("POST", "/v1/context", `{"chat_id":"c1"`+c.include+`}`)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", c.include, r.status, r.raw)
		}
		for _, part := range []string{"context", "messages", "sections"} {
			_, has := r.body[part]
			if has != slices.Contains(c.want, part) {
				t.Errorf("include %s: has %s = %v", c.include, part, has)
			}
		}
		if _, ok := r.body["usage"].(map[string]any); !ok {
			t.Errorf("include %s: usage missing", c.include)
		}
		if _, ok := r.body["degraded"].([]any); !ok {
			t.Errorf("include %s: degraded missing", c.include)
		}
	}
	// The parts that come are the same as in a full answer.
	full := h.do("POST", "/v1/context", `{"chat_id":"c1"}`)
	ctx := h.do("POST", "/v1/context", `{"chat_id":"c1","include":["context"]}`)
	if full.body["context"] != ctx.body["context"] || full.body["context"] == "" {
		t.Errorf("context differs: %q vs %q", full.body["context"], ctx.body["context"])
	}
}
