package telemetry

import (
	"context"
	"fmt"
	"net/url"

	"github.com/tmc/langchaingo/llms"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/contextd/contextd/internal/tracing"
	"github.com/contextd/contextd/rag"
)

// GenAI is the endpoint a model or an embedder calls: its provider as
// agents.yaml names it (openai, ollama, anthropic, googleai, hashing), the
// model and the base URL ("" for the provider's default).
type GenAI struct {
	Provider, Model, BaseURL string
}

// The deprecated gen_ai.system is set beside gen_ai.provider.name: many
// trace backends still key their LLM views on it.
const genAISystemKey = attribute.Key("gen_ai.system")

// providerName maps agents.yaml's provider to gen_ai.provider.name's
// well-known values; others pass as they are.
func providerName(p string) string {
	switch p {
	case "googleai":
		return "gcp.gemini"
	case "", "hashing":
		return "contextd.hashing"
	}
	return p
}

// start opens a GenAI client span: "{operation} {model}".
func (g GenAI) start(ctx context.Context, t trace.Tracer, op attribute.KeyValue, model string) (context.Context, trace.Span) {
	name := op.Value.AsString()
	if model != "" {
		name += " " + model
	}
	ctx, span := t.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		p := providerName(g.Provider)
		span.SetAttributes(op, semconv.GenAIProviderNameKey.String(p), genAISystemKey.String(p))
		if model != "" {
			span.SetAttributes(semconv.GenAIRequestModel(model))
		}
		if u, err := url.Parse(g.BaseURL); err == nil && u.Hostname() != "" {
			span.SetAttributes(semconv.ServerAddress(u.Hostname()))
		}
	}
	return ctx, span
}

// fail marks a GenAI span failed with error.type (the Go error's type, not
// its text, which may quote a provider's reply).
func fail(span trace.Span, err error) {
	if err == nil || !span.IsRecording() {
		return
	}
	span.SetAttributes(semconv.ErrorTypeKey.String(fmt.Sprintf("%T", err)))
	span.SetStatus(codes.Error, "call failed")
}

// Embedder makes each call to an embedder an "embeddings" GenAI client
// span. The texts are never recorded, only how many there were.
type Embedder struct {
	inner  rag.Embedder
	tracer trace.Tracer
	ep     GenAI
}

var _ rag.Embedder = (*Embedder)(nil)

// NewEmbedder wraps inner; t nil is a no-op tracer.
func NewEmbedder(inner rag.Embedder, t trace.Tracer, ep GenAI) *Embedder {
	return &Embedder{inner: inner, tracer: tracing.Or(t), ep: ep}
}

// EmbedDocuments embeds texts in one call.
func (e *Embedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	ctx, span := e.ep.start(ctx, e.tracer, semconv.GenAIOperationNameEmbeddings, e.ep.Model)
	defer span.End()
	if span.IsRecording() {
		span.SetAttributes(tracing.CountKey.Int(len(texts)))
	}
	vecs, err := e.inner.EmbedDocuments(ctx, texts)
	fail(span, err)
	return vecs, err
}

// EmbedQuery embeds one query.
func (e *Embedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	ctx, span := e.ep.start(ctx, e.tracer, semconv.GenAIOperationNameEmbeddings, e.ep.Model)
	defer span.End()
	v, err := e.inner.EmbedQuery(ctx, text)
	fail(span, err)
	return v, err
}

// Model makes each call to a langchaingo model a "chat" GenAI client span
// with the request's model and limits and the reply's token usage. Prompts
// and replies are never recorded.
type Model struct {
	inner  llms.Model
	tracer trace.Tracer
	ep     GenAI
}

var _ llms.Model = (*Model)(nil)

// NewModel wraps inner; t nil is a no-op tracer.
func NewModel(inner llms.Model, t trace.Tracer, ep GenAI) *Model {
	return &Model{inner: inner, tracer: tracing.Or(t), ep: ep}
}

// GenerateContent calls the model once.
func (m *Model) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var o llms.CallOptions
	for _, opt := range options {
		opt(&o)
	}
	model := m.ep.Model
	if o.Model != "" {
		model = o.Model
	}
	ctx, span := m.ep.start(ctx, m.tracer, semconv.GenAIOperationNameChat, model)
	defer span.End()
	if span.IsRecording() && o.MaxTokens > 0 {
		span.SetAttributes(semconv.GenAIRequestMaxTokens(o.MaxTokens))
	}
	resp, err := m.inner.GenerateContent(ctx, msgs, options...)
	fail(span, err)
	if err == nil && span.IsRecording() {
		usage(span, resp)
	}
	return resp, err
}

// Call is langchaingo's deprecated single-prompt call, routed through
// GenerateContent (one span).
func (m *Model) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// usage records the reply's token counts and finish reason where the
// provider reported them (each langchaingo client names them its own way).
func usage(span trace.Span, resp *llms.ContentResponse) {
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return
	}
	ch := resp.Choices[0]
	if n, ok := intOf(ch.GenerationInfo, "PromptTokens", "InputTokens", "input_tokens", "prompt_tokens"); ok {
		span.SetAttributes(semconv.GenAIUsageInputTokens(n))
	}
	if n, ok := intOf(ch.GenerationInfo, "CompletionTokens", "OutputTokens", "output_tokens", "completion_tokens"); ok {
		span.SetAttributes(semconv.GenAIUsageOutputTokens(n))
	}
	if ch.StopReason != "" {
		span.SetAttributes(semconv.GenAIResponseFinishReasons(ch.StopReason))
	}
}

func intOf(info map[string]any, keys ...string) (int, bool) {
	for _, k := range keys {
		switch v := info[k].(type) {
		case int:
			return v, true
		case int32:
			return int(v), true
		case int64:
			return int(v), true
		case float64:
			return int(v), true
		}
	}
	return 0, false
}
