// Package tracing is the OpenTelemetry API side of contextd's traces: the
// attribute keys every span shares and the small helpers the core packages
// (engine, jobs/worker, rag) use to open spans on a trace.Tracer they are
// given. It imports the OTel API only, never the SDK: the SDK, its exporters
// and sampling live in telemetry/, wired by cmd/contextd. With no tracer (nil)
// every helper falls back to a no-op one, so tracing off costs a context
// value and an interface call per span, nothing more.
package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Attribute keys of contextd's own spans. Spans carry identifiers (tenant,
// chat, agent, seqs, counts), never message content.
const (
	TenantKey   = attribute.Key("contextd.tenant")
	ChatKey     = attribute.Key("contextd.chat_id")
	AgentKey    = attribute.Key("contextd.agent")
	StrategyKey = attribute.Key("contextd.strategy")
	CountKey    = attribute.Key("contextd.count") // items a call handled (turns, points, hits)
	FromSeqKey  = attribute.Key("contextd.from_seq")
	ToSeqKey    = attribute.Key("contextd.to_seq")
	KindKey     = attribute.Key("contextd.kind")  // turn | episode
	ChatsKey    = attribute.Key("contextd.chats") // chats a batch spans
)

// Or returns t, or a no-op tracer when t is nil.
func Or(t trace.Tracer) trace.Tracer {
	if t == nil {
		return noop.Tracer{}
	}
	return t
}

// Start opens an internal span named name on t (nil: no-op) carrying the
// chat's tenant and id. Attributes are only built when the span records.
func Start(ctx context.Context, t trace.Tracer, name, tenant, chatID string) (context.Context, trace.Span) {
	ctx, span := Or(t).Start(ctx, name)
	if span.IsRecording() {
		span.SetAttributes(TenantKey.String(tenant), ChatKey.String(chatID))
	}
	return ctx, span
}

// End ends span, marking it failed when err is not nil. Error messages name
// ids and causes, never message content (the packages' errors do not quote
// it).
func End(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
