package telemetry

import (
	"context"
	"errors"

	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/internal/tracing"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// TracedStore makes the calls /v1/context makes to the store client spans
// ("contextd.store.chat", ...); every other method passes straight through.
type TracedStore struct {
	engine.ChatStore
	tracer trace.Tracer
	system string
}

var (
	_ engine.ChatStore = (*TracedStore)(nil)
	_ rag.Neighbors    = (*TracedStore)(nil)
)

// NewStore wraps inner; system is db.system.name ("sqlite", "postgresql").
func NewStore(inner engine.ChatStore, t trace.Tracer, system string) *TracedStore {
	return &TracedStore{ChatStore: inner, tracer: tracing.Or(t), system: system}
}

func (s *TracedStore) start(ctx context.Context, op string, key memory.ChatKey) (context.Context, trace.Span) {
	ctx, span := s.tracer.Start(ctx, "contextd.store."+op, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		span.SetAttributes(semconv.DBSystemNameKey.String(s.system), semconv.DBOperationName(op),
			tracing.TenantKey.String(key.Tenant), tracing.ChatKey.String(key.ChatID))
	}
	return ctx, span
}

// Chat reads a chat.
func (s *TracedStore) Chat(ctx context.Context, key memory.ChatKey) (memory.Chat, error) {
	ctx, span := s.start(ctx, "chat", key)
	c, err := s.ChatStore.Chat(ctx, key)
	tracing.End(span, notFoundIsFine(err))
	return c, err
}

// Messages reads a chat's turns after a seq.
func (s *TracedStore) Messages(ctx context.Context, key memory.ChatKey, afterSeq int64, limit int) ([]memory.Message, error) {
	ctx, span := s.start(ctx, "messages", key)
	msgs, err := s.ChatStore.Messages(ctx, key, afterSeq, limit)
	count(span, len(msgs))
	tracing.End(span, notFoundIsFine(err))
	return msgs, err
}

// MessagesBySeq reads given turns (retrieval's neighbours).
func (s *TracedStore) MessagesBySeq(ctx context.Context, key memory.ChatKey, seqs []int64) ([]memory.Message, error) {
	ctx, span := s.start(ctx, "messages_by_seq", key)
	msgs, err := s.ChatStore.MessagesBySeq(ctx, key, seqs)
	count(span, len(msgs))
	tracing.End(span, err)
	return msgs, err
}

// Append stores turns.
func (s *TracedStore) Append(ctx context.Context, req memory.AppendRequest) (memory.AppendResult, error) {
	ctx, span := s.start(ctx, "append", req.Chat)
	res, err := s.ChatStore.Append(ctx, req)
	count(span, len(req.Messages))
	tracing.End(span, err)
	return res, err
}

// SummaryHead reads a chat's summary head.
func (s *TracedStore) SummaryHead(ctx context.Context, key memory.ChatKey) (*memory.SummaryRecord, error) {
	ctx, span := s.start(ctx, "summary_head", key)
	rec, err := s.ChatStore.SummaryHead(ctx, key)
	tracing.End(span, notFoundIsFine(err))
	return rec, err
}

// notFoundIsFine: an unknown chat is an answer, not a failed call.
func notFoundIsFine(err error) error {
	if errors.Is(err, memory.ErrNotFound) {
		return nil
	}
	return err
}

func count(span trace.Span, n int) {
	if span.IsRecording() {
		span.SetAttributes(tracing.CountKey.Int(n))
	}
}
