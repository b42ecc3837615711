package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/derive/llmsum/llmtest"
	"github.com/contextd/contextd/telemetry"
)

// Words that appear only in message content: no span may carry them.
var secrets = []string{"kilimanjaro", "zanzibar", "okapi"}

// newTracedApp wires a whole contextd tracing into an in-memory exporter.
func newTracedApp(t *testing.T, mutate func(*config.Config)) (*App, *httptest.Server, *tracetest.InMemoryExporter) {
	t.Helper()
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Storage.SQLitePath = filepath.Join(dir, "contextd.db")
	cfg.Vector.EmbeddedPath = filepath.Join(dir, "vectors.db")
	if mutate != nil {
		mutate(cfg)
	}
	exp := tracetest.NewInMemoryExporter()
	app, err := buildTraced(context.Background(), cfg, slog.New(slog.DiscardHandler), telemetry.WithExporter(exp, telemetry.Config{SampleRatio: 1}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(app.Close)
	srv := httptest.NewServer(app.Handler)
	t.Cleanup(srv.Close)
	return app, srv, exp
}

// spanTree indexes exported spans by name and by parent.
type spanTree struct {
	all      tracetest.SpanStubs
	children map[trace.SpanID][]tracetest.SpanStub
}

func newSpanTree(spans tracetest.SpanStubs) spanTree {
	st := spanTree{all: spans, children: map[trace.SpanID][]tracetest.SpanStub{}}
	for _, s := range spans {
		st.children[s.Parent.SpanID()] = append(st.children[s.Parent.SpanID()], s)
	}
	return st
}

// log prints the trees, one span a line, indented under its parent.
func (st spanTree) log(t *testing.T) {
	ids := map[trace.SpanID]bool{}
	for _, s := range st.all {
		ids[s.SpanContext.SpanID()] = true
	}
	var walk func(s tracetest.SpanStub, depth int)
	walk = func(s tracetest.SpanStub, depth int) {
		t.Logf("%s%s %v", strings.Repeat("  ", depth), s.Name, s.Attributes)
		for _, c := range st.children[s.SpanContext.SpanID()] {
			walk(c, depth+1)
		}
	}
	for _, s := range st.all {
		if !ids[s.Parent.SpanID()] {
			walk(s, 0)
		}
	}
}

func (st spanTree) named(name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range st.all {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// child returns s's first child whose name starts with prefix.
func (st spanTree) child(s tracetest.SpanStub, prefix string) (tracetest.SpanStub, bool) {
	for _, c := range st.children[s.SpanContext.SpanID()] {
		if strings.HasPrefix(c.Name, prefix) {
			return c, true
		}
	}
	return tracetest.SpanStub{}, false
}

func attr(s tracetest.SpanStub, key string) attribute.Value {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// leaks lists every attribute, event or status of the spans that quotes a
// secret.
func leaks(spans tracetest.SpanStubs) []string {
	var out []string
	check := func(where, v string) {
		for _, s := range secrets {
			if strings.Contains(strings.ToLower(v), s) {
				out = append(out, where+"="+v)
			}
		}
	}
	for _, s := range spans {
		check(s.Name, s.Name)
		check(s.Name+" status", s.Status.Description)
		for _, kv := range s.Attributes {
			check(s.Name+" "+string(kv.Key), kv.Value.Emit())
		}
		for _, ev := range s.Events {
			for _, kv := range ev.Attributes {
				check(s.Name+" event "+string(kv.Key), kv.Value.Emit())
			}
		}
	}
	return out
}

const (
	testTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	testSpanID  = "00f067aa0ba902b7"
)

// The whole tree: a /v1/context request joined to the caller's trace, a
// span per stage with the store, index and embedder calls under them, and
// the background jobs with their GenAI calls; no message content anywhere.
func TestTraceTree(t *testing.T) {
	llm := llmtest.New(t, llmtest.Always(llmtest.Reply{Content: `{"short":"a plan","summary":{"narrative":"plans"}}`, PromptTokens: 120, CompletionTokens: 30}))
	app, srv, exp := newTracedApp(t, func(c *config.Config) {
		c.LLM = config.LLM{Provider: "openai", Model: "gpt-test", BaseURL: llm.URL, APIKey: "k", Timeout: 10 * time.Second}
		m := &c.Supervisor.Memory
		m.SummaryRecentTurns, m.SummaryTriggerTurns, m.EpisodeMinTurns, m.EpisodeMaxTurns = 2, 1, 1, 3
	})
	ctx := context.Background()
	body := `{"user_id":"alice","messages":[` + strings.Repeat(`{"role":"user","content":"the kilimanjaro launch code is zanzibar"},{"role":"assistant","content":"noted, okapi"},`, 4) +
		`{"role":"user","content":"thanks"}]}`
	if st, b := call(t, "POST", srv.URL+"/v1/chats/c1/messages", "", body); st != 201 {
		t.Fatalf("append: %d %s", st, b)
	}
	if _, err := app.Indexer.DrainOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if err := app.Worker.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Profiler.Pass(ctx, true); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", srv.URL+"/v1/context", strings.NewReader(
		`{"chat_id":"c1","user_id":"alice","query":"what is the kilimanjaro code?","strategy":"rag_augmented"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+testTraceID+"-"+testSpanID+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("context: %d", resp.StatusCode)
	}
	if err := app.Tracing.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	st := newSpanTree(exp.GetSpans())
	if testing.Verbose() {
		st.log(t)
	}

	servers := st.named("POST /v1/context")
	if len(servers) != 1 {
		t.Fatalf("%d server spans for /v1/context, want 1", len(servers))
	}
	srvSpan := servers[0]
	if srvSpan.SpanContext.TraceID().String() != testTraceID || srvSpan.Parent.SpanID().String() != testSpanID || !srvSpan.Parent.IsRemote() {
		t.Errorf("server span trace %s parent %s, want the caller's %s / %s", srvSpan.SpanContext.TraceID(), srvSpan.Parent.SpanID(), testTraceID, testSpanID)
	}
	if srvSpan.SpanKind != trace.SpanKindServer || attr(srvSpan, "http.route").AsString() != "/v1/context" ||
		attr(srvSpan, "http.response.status_code").AsInt64() != 200 || attr(srvSpan, "contextd.tenant").AsString() != "default" ||
		attr(srvSpan, "contextd.chat_id").AsString() != "c1" {
		t.Errorf("server span kind %v attributes %v", srvSpan.SpanKind, srvSpan.Attributes)
	}
	for _, stage := range []string{"contextd.plan", "contextd.summary", "contextd.load", "contextd.retrieve", "contextd.profile", "contextd.pack"} {
		s, ok := st.child(srvSpan, stage)
		if !ok {
			t.Errorf("no %s span under the server span", stage)
			continue
		}
		if attr(s, "contextd.tenant").AsString() != "default" || attr(s, "contextd.chat_id").AsString() != "c1" {
			t.Errorf("%s attributes %v, want tenant and chat id", stage, s.Attributes)
		}
	}
	for stage, calls := range map[string][]string{
		"contextd.plan":     {"contextd.store.chat"},
		"contextd.summary":  {"contextd.store.summary_head"},
		"contextd.retrieve": {"embeddings", "contextd.vector.query"},
	} {
		s, _ := st.child(srvSpan, stage)
		for _, c := range calls {
			cs, ok := st.child(s, c)
			if !ok {
				t.Errorf("no %s span under %s", c, stage)
			} else if cs.SpanKind != trace.SpanKindClient {
				t.Errorf("%s kind %v, want client", c, cs.SpanKind)
			}
		}
	}

	checkJobs(t, st)
	if l := leaks(st.all); len(l) > 0 {
		t.Errorf("message content in spans: %q", l)
	}
}

// checkJobs: the background jobs' spans and their outside calls.
func checkJobs(t *testing.T, st spanTree) {
	t.Helper()
	idx := st.named("contextd.index")
	if len(idx) == 0 {
		t.Fatal("no contextd.index span")
	}
	for _, c := range []string{"embeddings", "contextd.vector.upsert"} {
		if _, ok := st.child(idx[0], c); !ok {
			t.Errorf("no %s under contextd.index", c)
		}
	}
	sums := st.named("contextd.summarise")
	if len(sums) == 0 {
		t.Fatal("no contextd.summarise span")
	}
	ep, ok := st.child(sums[0], "contextd.episode.close")
	if !ok {
		t.Fatal("no contextd.episode.close under contextd.summarise")
	}
	if attr(ep, "contextd.from_seq").AsInt64() < 1 || attr(ep, "contextd.to_seq").AsInt64() < attr(ep, "contextd.from_seq").AsInt64() {
		t.Errorf("episode span seqs %v", ep.Attributes)
	}
	chat, ok := st.child(ep, "chat gpt-test")
	if !ok {
		t.Fatal("no GenAI chat span under contextd.episode.close")
	}
	if attr(chat, "gen_ai.operation.name").AsString() != "chat" || attr(chat, "gen_ai.request.model").AsString() != "gpt-test" ||
		attr(chat, "gen_ai.usage.input_tokens").AsInt64() != 120 || attr(chat, "gen_ai.usage.output_tokens").AsInt64() != 30 {
		t.Errorf("GenAI span attributes %v", chat.Attributes)
	}
	merges := st.named("contextd.profile.merge")
	if len(merges) == 0 {
		t.Fatal("no contextd.profile.merge span")
	}
	if _, ok := st.child(merges[0], "chat "); !ok {
		t.Error("no GenAI chat span under contextd.profile.merge")
	}
}

// A tool call's work is traced under its own POST /mcp, as an API call's
// under its request: not under the session's initialize (the SDK runs a
// tool on the session's context), and the caller's traceparent is joined.
func TestMCPToolCallTracedUnderItsRequest(t *testing.T) {
	app, srv, exp := newTracedApp(t, nil)
	post := func(session, traceparent, body string) string {
		t.Helper()
		version := ""
		if session != "" {
			version = "2025-06-18"
		}
		status, h := postHeaders(t, srv.URL+"/mcp", body, "Accept", "application/json, text/event-stream",
			"Mcp-Session-Id", session, "Mcp-Protocol-Version", version, "traceparent", traceparent)
		if status >= 300 {
			t.Fatalf("POST /mcp %.40s: %d", body, status)
		}
		return h.Get("Mcp-Session-Id")
	}
	session := post("", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	post(session, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	post(session, "00-"+testTraceID+"-"+testSpanID+"-01",
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_messages","arguments":{"chat_id":"m1","messages":[{"role":"user","content":"hello"}]}}}`)
	if err := app.Tracing.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := newSpanTree(exp.GetSpans())
	appends := st.named("contextd.store.append")
	if len(appends) != 1 {
		st.log(t)
		t.Fatalf("%d store.append spans, want 1", len(appends))
	}
	if got := appends[0].SpanContext.TraceID().String(); got != testTraceID {
		st.log(t)
		t.Errorf("the tool call's append is in trace %s, want the caller's %s", got, testTraceID)
	}
}

// A request refused for want of a key has no tenant on its span: "default"
// would name a real tenant that made no request.
func TestRefusedRequestHasNoTenant(t *testing.T) {
	app, srv, exp := newTracedApp(t, func(c *config.Config) {
		c.Server.Auth.APIKeys = []config.APIKey{{Key: "k-0123456789abcdef", Tenant: "acme"}}
	})
	if st, _ := call(t, "POST", srv.URL+"/v1/context", "", `{"chat_id":"c1"}`); st != 401 {
		t.Fatalf("no key: %d, want 401", st)
	}
	if st, _ := call(t, "POST", srv.URL+"/v1/context", "k-0123456789abcdef", `{"chat_id":"c1"}`); st != 404 {
		t.Fatalf("with the key: %d, want 404", st)
	}
	if err := app.Tracing.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var tenants []string
	for _, s := range newSpanTree(exp.GetSpans()).named("POST /v1/context") {
		tenants = append(tenants, attr(s, "contextd.tenant").Emit())
	}
	if len(tenants) != 2 || tenants[0] != "" || tenants[1] != "acme" {
		t.Errorf("span tenants %q, want none for the 401 and acme", tenants)
	}
}
