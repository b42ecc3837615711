package telemetry

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/contextd/contextd/derive/llmsum/llmtest"
	"github.com/contextd/contextd/rag"
)

func recorder() (*tracetest.SpanRecorder, trace.Tracer) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	return sr, tp.Tracer("test")
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// leaks reports any attribute, event or status text of the spans that
// contains one of the secrets.
func leaks(spans []sdktrace.ReadOnlySpan, secrets ...string) []string {
	var out []string
	check := func(where, v string) {
		for _, s := range secrets {
			if strings.Contains(strings.ToLower(v), strings.ToLower(s)) {
				out = append(out, where+": "+v)
			}
		}
	}
	for _, sp := range spans {
		check(sp.Name()+" name", sp.Name())
		check(sp.Name()+" status", sp.Status().Description)
		for _, kv := range sp.Attributes() {
			check(sp.Name()+" "+string(kv.Key), kv.Value.Emit())
		}
		for _, ev := range sp.Events() {
			for _, kv := range ev.Attributes {
				check(sp.Name()+" event "+string(kv.Key), kv.Value.Emit())
			}
		}
	}
	return out
}

func TestModelSpan(t *testing.T) {
	srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Content: "the reply mentions zanzibar", PromptTokens: 42, CompletionTokens: 7}))
	sr, tracer := recorder()
	m := NewModel(srv.Model(t, "gpt-test"), tracer, GenAI{Provider: "openai", Model: "gpt-test", BaseURL: srv.URL})
	msgs := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "the prompt mentions kilimanjaro")}
	if _, err := m.GenerateContent(context.Background(), msgs, llms.WithModel("gpt-other"), llms.WithMaxTokens(100)); err != nil {
		t.Fatal(err)
	}
	spans := sr.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	a := attrs(s)
	if s.Name() != "chat gpt-other" || s.SpanKind() != trace.SpanKindClient {
		t.Errorf("span %q kind %v, want client span \"chat gpt-other\" (the call's model wins)", s.Name(), s.SpanKind())
	}
	want := map[attribute.Key]any{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.system": "openai",
		"gen_ai.request.model": "gpt-other", "gen_ai.request.max_tokens": int64(100),
		"gen_ai.usage.input_tokens": int64(42), "gen_ai.usage.output_tokens": int64(7), "server.address": "127.0.0.1",
	}
	for k, v := range want {
		if got := a[k].AsInterface(); got != v {
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
	if l := leaks(spans, "kilimanjaro", "zanzibar"); len(l) > 0 {
		t.Errorf("message content in spans: %q", l)
	}
}

func TestModelSpanFailure(t *testing.T) {
	srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Status: http.StatusInternalServerError}))
	sr, tracer := recorder()
	m := NewModel(srv.Model(t, "gpt-test"), tracer, GenAI{Provider: "openai", Model: "gpt-test"})
	if _, err := m.Call(context.Background(), "say kilimanjaro"); err == nil {
		t.Fatal("want the server's error")
	}
	spans := sr.Ended()
	if len(spans) != 1 || spans[0].Status().Code != codes.Error || attrs(spans[0])["error.type"].AsString() == "" {
		t.Fatalf("want one failed span with error.type, got %d", len(spans))
	}
	if l := leaks(spans, "kilimanjaro"); len(l) > 0 {
		t.Errorf("message content in spans: %q", l)
	}
}

type failingEmbedder struct{}

func (failingEmbedder) EmbedDocuments(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("down")
}
func (failingEmbedder) EmbedQuery(context.Context, string) ([]float32, error) {
	return nil, errors.New("down")
}

func TestEmbedderSpans(t *testing.T) {
	sr, tracer := recorder()
	e := NewEmbedder(rag.NewHashingEmbedder(16), tracer, GenAI{Provider: "hashing"})
	if _, err := e.EmbedDocuments(context.Background(), []string{"kilimanjaro", "zanzibar"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.EmbedQuery(context.Background(), "kilimanjaro"); err != nil {
		t.Fatal(err)
	}
	bad := NewEmbedder(failingEmbedder{}, tracer, GenAI{Provider: "openai", Model: "text-embedding-3-small"})
	if _, err := bad.EmbedQuery(context.Background(), "zanzibar"); err == nil {
		t.Fatal("want the embedder's error")
	}
	spans := sr.Ended()
	if len(spans) != 3 {
		t.Fatalf("%d spans, want 3", len(spans))
	}
	if a := attrs(spans[0]); spans[0].Name() != "embeddings" || a["gen_ai.operation.name"].AsString() != "embeddings" ||
		a["gen_ai.provider.name"].AsString() != "contextd.hashing" || a["contextd.count"].AsInt64() != 2 {
		t.Errorf("documents span %q %v", spans[0].Name(), a)
	}
	if s := spans[2]; s.Name() != "embeddings text-embedding-3-small" || s.Status().Code != codes.Error ||
		attrs(s)["gen_ai.request.model"].AsString() != "text-embedding-3-small" {
		t.Errorf("failed span %q status %v", s.Name(), s.Status())
	}
	if l := leaks(spans, "kilimanjaro", "zanzibar"); len(l) > 0 {
		t.Errorf("texts in spans: %q", l)
	}
}

// With no tracer the wrappers cost nothing but pass calls through.
func TestWrappersWithoutTracer(t *testing.T) {
	e := NewEmbedder(rag.NewHashingEmbedder(8), nil, GenAI{})
	v, err := e.EmbedQuery(context.Background(), "x")
	if err != nil || len(v) != 8 {
		t.Fatalf("EmbedQuery = %d dims, %v", len(v), err)
	}
}
