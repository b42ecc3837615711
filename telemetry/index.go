package telemetry

import (
	"context"

	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/contextd/contextd/internal/tracing"
	"github.com/contextd/contextd/rag"
)

// Index makes queries and upserts to the vector index client spans
// ("contextd.vector.query", "contextd.vector.upsert"); every other method
// passes straight through. Vectors and payloads are never recorded.
type Index struct {
	rag.Index
	tracer trace.Tracer
	system string
}

var _ rag.Index = (*Index)(nil)

// NewIndex wraps inner; system is db.system.name ("qdrant", "embedded").
func NewIndex(inner rag.Index, t trace.Tracer, system string) *Index {
	return &Index{Index: inner, tracer: tracing.Or(t), system: system}
}

func (x *Index) start(ctx context.Context, op, tenant string) (context.Context, trace.Span) {
	ctx, span := x.tracer.Start(ctx, "contextd.vector."+op, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		span.SetAttributes(semconv.DBSystemNameKey.String(x.system), semconv.DBOperationName(op), tracing.TenantKey.String(tenant))
	}
	return ctx, span
}

// Query runs one hybrid query.
func (x *Index) Query(ctx context.Context, q rag.Query) ([]rag.Hit, error) {
	ctx, span := x.start(ctx, "query", q.Filter.Tenant)
	if span.IsRecording() && len(q.Filter.ChatIDs) == 1 {
		span.SetAttributes(tracing.ChatKey.String(q.Filter.ChatIDs[0]))
	}
	hits, err := x.Index.Query(ctx, q)
	count(span, len(hits))
	tracing.End(span, err)
	return hits, err
}

// Upsert writes points.
func (x *Index) Upsert(ctx context.Context, points []rag.Point) error {
	tenant := ""
	if len(points) > 0 {
		tenant = points[0].Tenant
	}
	ctx, span := x.start(ctx, "upsert", tenant)
	err := x.Index.Upsert(ctx, points)
	count(span, len(points))
	tracing.End(span, err)
	return err
}
