package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contextd/contextd/engine/enginetest"
	"github.com/contextd/contextd/internal/admit"
	"github.com/contextd/contextd/store/sqlite"
	"github.com/contextd/contextd/transport/api"
	"github.com/contextd/contextd/transport/mcpserver"
)

// newServer serves the whole API (with /mcp) over a fresh SQLite store.
func newServer(t testing.TB, keys []api.APIKey, allowDelete bool) string {
	t.Helper()
	return serve(t, keys, mcpserver.Options{Version: "test", AllowDelete: allowDelete})
}

// serve is newServer with the MCP options spelled out.
func serve(t testing.TB, keys []api.APIKey, o mcpserver.Options) string {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := enginetest.New(st)
	h := api.NewHandler(api.Deps{Service: svc, Options: api.Options{APIKeys: keys},
		MCP: mcpserver.NewHandler(svc, o)})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// bearer adds an API key to every request of the MCP client.
type bearer struct {
	key  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.key != "" {
		r.Header.Set("Authorization", "Bearer "+b.key)
	}
	return b.base.RoundTrip(r)
}

func connect(t testing.TB, url, key string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{key, http.DefaultTransport}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func call(t testing.TB, s *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured(t testing.TB, r *mcp.CallToolResult) map[string]any {
	t.Helper()
	b, _ := json.Marshal(r.StructuredContent)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return m
}

// toolErr reads the API error a failed tool call carries.
func toolErr(t testing.TB, r *mcp.CallToolResult) (code, field string) {
	t.Helper()
	if !r.IsError {
		t.Fatalf("want a tool error, got %s", textOf(r))
	}
	var e struct {
		Error struct{ Code, Field string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(textOf(r)), &e); err != nil {
		t.Fatalf("a tool error must be the API's error JSON, got %q", textOf(r))
	}
	return e.Error.Code, e.Error.Field
}

var turns = []any{
	map[string]any{"id": "m1", "role": "user", "content": "I am planning a trip to Lisbon in May. I am vegetarian."},
	map[string]any{"id": "m2", "role": "assistant", "content": "Booked: Casa Amora, May 3-7.", "name": "Travel Agent"},
	map[string]any{"id": "m3", "role": "user", "content": "Add a day trip to Sintra on May 5."},
}

func TestToolsListAndEachTool(t *testing.T) {
	url := newServer(t, nil, false)
	s := connect(t, url, "")
	list, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range list.Tools {
		names[tool.Name] = true
		if tool.Description == "" || tool.InputSchema == nil {
			t.Errorf("tool %s lacks a description or schema", tool.Name)
		}
	}
	for _, want := range []string{"get_context", "search_memory", "add_messages", "get_summary", "get_user_profile"} {
		if !names[want] {
			t.Errorf("tool %s missing: %v", want, names)
		}
	}
	if names["delete_chat"] || names["delete_message"] {
		t.Error("delete_chat and delete_message must be off unless server.mcp.allow_delete")
	}
	add := call(t, s, "add_messages", map[string]any{"chat_id": "trip", "user_id": "alice", "messages": turns})
	if add.IsError || structured(t, add)["appended"].(float64) != 3 {
		t.Fatalf("add_messages: %s", textOf(add))
	}
	again := call(t, s, "add_messages", map[string]any{"chat_id": "trip", "messages": turns})
	if structured(t, again)["duplicates"].(float64) != 3 {
		t.Fatalf("add_messages is not idempotent: %s", textOf(again))
	}
	ctx := call(t, s, "get_context", map[string]any{"chat_id": "trip", "query": "Which hotel?", "budget_tokens": 500})
	out := structured(t, ctx)
	if ctx.IsError || !strings.Contains(textOf(ctx), "Casa Amora") || out["context"] != textOf(ctx) {
		t.Fatalf("get_context: %s", textOf(ctx))
	}
	if u := out["usage"].(map[string]any); u["total_tokens"].(float64) > 500 {
		t.Errorf("usage over budget: %v", u)
	}
	sum := call(t, s, "get_summary", map[string]any{"chat_id": "trip"})
	if sum.IsError {
		t.Fatalf("get_summary: %s", textOf(sum))
	}
	if _, ok := structured(t, sum)["episodes"]; !ok {
		t.Errorf("get_summary lacks episodes: %v", structured(t, sum))
	}
	if p, ok := structured(t, sum)["preview"]; !ok || p != false { // no previewer here: what is stored
		t.Errorf("get_summary: preview %v (present %v), want false", p, ok)
	}
	prof := call(t, s, "get_user_profile", map[string]any{"user_id": "alice"})
	if prof.IsError || structured(t, prof)["user_id"] != "alice" {
		t.Fatalf("get_user_profile: %s", textOf(prof))
	}
	if code, _ := toolErr(t, call(t, s, "get_user_profile", map[string]any{"user_id": "nobody"})); code != "not_found" {
		t.Errorf("get_user_profile of an unknown user: %q", code)
	}
	// No vector store in this test server: search answers the API's 503.
	if code, _ := toolErr(t, call(t, s, "search_memory", map[string]any{"query": "Sintra"})); code != "backend_unavailable" {
		t.Errorf("search without a vector store: code %q", code)
	}
}

func TestArgumentErrorsCarryTheAPICodeAndField(t *testing.T) {
	s := connect(t, newServer(t, nil, false), "")
	call(t, s, "add_messages", map[string]any{"chat_id": "c", "messages": turns})
	for _, c := range []struct {
		tool        string
		args        map[string]any
		code, field string
	}{
		{"get_context", map[string]any{"chat_id": "nope"}, "not_found", ""},
		{"get_context", map[string]any{"chat_id": "c", "budget_tokens": 0}, "invalid_value", "budget_tokens"},
		{"get_context", map[string]any{"chat_id": "c", "strategy": "everything"}, "invalid_value", "strategy"},
		{"get_context", map[string]any{"chat_id": "c", "since": "yesterday"}, "invalid_time", "since"},
		{"add_messages", map[string]any{"chat_id": "c", "messages": []any{map[string]any{"role": "robot", "content": "x"}}}, "invalid_role", "messages[0].role"},
		{"add_messages", map[string]any{"chat_id": "c", "messages": []any{map[string]any{"role": "user", "content": "x", "created_at": "noon"}}}, "invalid_time", "messages[0].created_at"},
		{"search_memory", map[string]any{"query": "x", "kinds": []any{"summary"}}, "invalid_value", "kinds"},
		// Arguments the schema refuses: the same codes and fields as the
		// HTTP API's body checks.
		{"get_context", map[string]any{"budget_tokens": 500}, "missing_field", "chat_id"},
		{"get_context", map[string]any{"chat_id": "c", "budget_tokens": "many"}, "invalid_type", "budget_tokens"},
		{"get_context", map[string]any{"chat_id": "c", "budget_tokens": 1.5}, "invalid_type", "budget_tokens"},
		{"get_context", map[string]any{"chat_id": "c", "budget_tokens": nil}, "invalid_type", "budget_tokens"},
		{"get_context", map[string]any{"chat_id": "c", "budget": 500}, "unknown_field", "budget"},
		{"add_messages", map[string]any{"chat_id": "c", "messages": "[]"}, "invalid_type", "messages"},
		{"add_messages", map[string]any{"chat_id": "c"}, "missing_field", "messages"},
		{"add_messages", map[string]any{"chat_id": "c", "messages": []any{map[string]any{"role": "user"}}}, "missing_field", "messages[0].content"},
		{"add_messages", map[string]any{"chat_id": "c", "messages": []any{"hello"}}, "invalid_type", "messages[0]"},
		{"search_memory", map[string]any{"query": "x", "kinds": "episode"}, "invalid_type", "kinds"},
		{"search_memory", map[string]any{"query": "x", "k": "ten"}, "invalid_type", "k"},
		{"get_summary", map[string]any{}, "missing_field", "chat_id"},
		{"get_user_profile", map[string]any{"user_id": 7}, "invalid_type", "user_id"},
	} {
		code, field := toolErr(t, call(t, s, c.tool, c.args))
		if code != c.code || field != c.field {
			t.Errorf("%s %v: got %q/%q, want %q/%q", c.tool, c.args, code, field, c.code, c.field)
		}
	}
	// The session goes on after bad arguments.
	if r := call(t, s, "get_context", map[string]any{"chat_id": "c"}); r.IsError {
		t.Errorf("session broken after bad arguments: %s", textOf(r))
	}
}

// Generic MCP clients fill in arguments from the schema's type: every
// property has one plain JSON type (no ["null", ...] unions), optional ones
// are simply not required, and closed sets are enums.
func TestInputSchemasUsePlainTypes(t *testing.T) {
	s := connect(t, newServer(t, nil, true), "")
	list, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(tool, path string, v any)
	walk = func(tool, path string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			t.Errorf("%s %s: schema is %T", tool, path, v)
			return
		}
		if _, ok := m["type"].(string); !ok {
			t.Errorf("%s %s: type %v is not one plain type", tool, path, m["type"])
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for k, p := range props {
				walk(tool, path+"."+k, p)
			}
		}
		if items, ok := m["items"]; ok {
			walk(tool, path+"[]", items)
		}
	}
	enums := map[string]bool{}
	for _, tool := range list.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var sch any
		_ = json.Unmarshal(b, &sch)
		walk(tool.Name, "", sch)
		if strings.Contains(string(b), "null") {
			t.Errorf("%s: schema mentions null: %s", tool.Name, b)
		}
		if strings.Contains(string(b), `"enum"`) {
			enums[tool.Name] = true
		}
	}
	for _, want := range []string{"get_context", "add_messages", "search_memory"} {
		if !enums[want] {
			t.Errorf("%s: no enum in its schema (strategy, role or kinds)", want)
		}
	}
}

func TestTenantIsolationAndAuth(t *testing.T) {
	url := newServer(t, []api.APIKey{{Key: "key-a-0123456789", Tenant: "a"}, {Key: "key-b-0123456789", Tenant: "b"}}, true)
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	if _, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}, nil); err == nil {
		t.Fatal("connecting without a key must fail")
	}
	a, b := connect(t, url, "key-a-0123456789"), connect(t, url, "key-b-0123456789")
	call(t, a, "add_messages", map[string]any{"chat_id": "secret", "messages": turns})
	if code, _ := toolErr(t, call(t, b, "get_context", map[string]any{"chat_id": "secret"})); code != "not_found" {
		t.Fatalf("tenant b reads tenant a's chat: code %q", code)
	}
	if code, _ := toolErr(t, call(t, b, "delete_chat", map[string]any{"chat_id": "secret"})); code != "not_found" {
		t.Fatalf("tenant b deletes tenant a's chat: code %q", code)
	}
	if r := call(t, a, "get_context", map[string]any{"chat_id": "secret"}); r.IsError || !strings.Contains(textOf(r), "Lisbon") {
		t.Fatalf("tenant a lost its chat: %s", textOf(r))
	}
	if r := call(t, a, "delete_chat", map[string]any{"chat_id": "secret"}); r.IsError {
		t.Fatalf("delete_chat: %s", textOf(r))
	}
	if code, _ := toolErr(t, call(t, a, "get_context", map[string]any{"chat_id": "secret"})); code != "not_found" {
		t.Fatal("the chat survived delete_chat")
	}
}

func TestFiftyConcurrentSessions(t *testing.T) {
	url := newServer(t, nil, false)
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Go(func() {
			s := connect(t, url, "")
			chat := fmt.Sprintf("chat-%d", i)
			if r := call(t, s, "add_messages", map[string]any{"chat_id": chat, "messages": turns}); r.IsError {
				errs <- fmt.Errorf("%s add: %s", chat, textOf(r))
				return
			}
			r := call(t, s, "get_context", map[string]any{"chat_id": chat, "query": "hotel"})
			if r.IsError || !strings.Contains(textOf(r), "Casa Amora") {
				errs <- fmt.Errorf("%s context: %s", chat, textOf(r))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestDeleteMessageTool: delete_message forgets one turn (destructive, a
// plain schema); a second delete and another tenant's chat are not_found,
// as in the API's error JSON.
func TestDeleteMessageTool(t *testing.T) {
	url := newServer(t, []api.APIKey{{Key: "key-a-0123456789", Tenant: "a"}, {Key: "key-b-0123456789", Tenant: "b"}}, true)
	a, b := connect(t, url, "key-a-0123456789"), connect(t, url, "key-b-0123456789")
	list, err := a.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var tool *mcp.Tool
	for _, tl := range list.Tools {
		if tl.Name == "delete_message" {
			tool = tl
		}
	}
	if tool == nil || tool.Annotations == nil || tool.Annotations.DestructiveHint == nil || !*tool.Annotations.DestructiveHint {
		t.Fatalf("delete_message missing or not destructive: %+v", tool)
	}
	schema, _ := json.Marshal(tool.InputSchema)
	if !strings.Contains(string(schema), `"message_id"`) || strings.Contains(string(schema), `"type":[`) {
		t.Errorf("delete_message schema %s: want message_id with plain types", schema)
	}
	call(t, a, "add_messages", map[string]any{"chat_id": "trip", "messages": turns})
	if code, _ := toolErr(t, call(t, b, "delete_message", map[string]any{"chat_id": "trip", "message_id": "m3"})); code != "not_found" {
		t.Fatalf("tenant b deletes tenant a's message: code %q", code)
	}
	if r := call(t, a, "delete_message", map[string]any{"chat_id": "trip", "message_id": "m3"}); r.IsError {
		t.Fatalf("delete_message: %s", textOf(r))
	}
	if code, _ := toolErr(t, call(t, a, "delete_message", map[string]any{"chat_id": "trip", "message_id": "m3"})); code != "not_found" {
		t.Errorf("second delete: code %q, want not_found", code)
	}
	if code, field := toolErr(t, call(t, a, "delete_message", map[string]any{"chat_id": "trip", "message_id": ""})); code != "missing_field" || field != "message_id" {
		t.Errorf("empty message_id: %q %q", code, field)
	}
	r := call(t, a, "get_context", map[string]any{"chat_id": "trip"})
	if r.IsError || strings.Contains(textOf(r), "Sintra") || !strings.Contains(textOf(r), "Casa Amora") {
		t.Errorf("context after the delete: %s", textOf(r))
	}
}

// TestReadGate: get_context and search_memory pass the read gate the HTTP
// routes pass. With its one slot taken, both answer the timeout error once
// their wait is up, while add_messages (not a read) goes through; with the
// slot free, get_context answers.
func TestReadGate(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := enginetest.New(st)
	gate := admit.New(1)
	h := api.NewHandler(api.Deps{Service: svc, Reads: gate,
		MCP: mcpserver.NewHandler(svc, mcpserver.Options{Version: "test", Reads: gate, ReadWait: 100 * time.Millisecond})})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s := connect(t, srv.URL, "")

	add := call(t, s, "add_messages", map[string]any{"chat_id": "c1", "messages": []map[string]any{{"role": "user", "content": "the hotel in lisbon"}}})
	if add.IsError {
		t.Fatalf("add_messages: %s", textOf(add))
	}
	if err := gate.Enter(context.Background()); err != nil {
		t.Fatal(err)
	}
	for tool, args := range map[string]map[string]any{
		"get_context":   {"chat_id": "c1", "query": "hotel"},
		"search_memory": {"query": "hotel"},
	} {
		res := call(t, s, tool, args)
		if !res.IsError || !strings.Contains(textOf(res), `"code":"timeout"`) {
			t.Errorf("%s with the gate full: %s", tool, textOf(res))
		}
	}
	if res := call(t, s, "add_messages", map[string]any{"chat_id": "c1", "messages": []map[string]any{{"role": "assistant", "content": "booked"}}}); res.IsError {
		t.Errorf("add_messages waited for the read gate: %s", textOf(res))
	}
	gate.Leave()
	if res := call(t, s, "get_context", map[string]any{"chat_id": "c1", "query": "hotel"}); res.IsError || !strings.Contains(textOf(res), "lisbon") {
		t.Errorf("get_context with the gate free: %s", textOf(res))
	}
}
