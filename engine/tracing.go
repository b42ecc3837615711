package engine

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/contextd/contextd/internal/tracing"
)

// Span names of /v1/context's stages (the contract's Tracing section).
const (
	spanAppend   = "contextd.append"
	spanPlan     = "contextd.plan"
	spanLoad     = "contextd.load"
	spanRetrieve = "contextd.retrieve"
	spanSummary  = "contextd.summary"
	spanProfile  = "contextd.profile"
	spanPack     = "contextd.pack"
)

// planSpan opens the plan stage's span (reading the chat, resolving the
// plan) and names the chat on the request's span too: the HTTP layer only
// knows the chat id when it is in the path, /v1/context has it in the body.
func (s *Service) planSpan(ctx context.Context, tenant, chatID string) (context.Context, trace.Span) {
	if req := trace.SpanFromContext(ctx); req.IsRecording() {
		req.SetAttributes(tracing.ChatKey.String(chatID))
	}
	return tracing.Start(ctx, s.obs.tracer, spanPlan, tenant, chatID)
}

// stage opens the span of one stage of p's assembly, a child of the
// request's span, carrying the chat's ids, the agent and the strategy.
func (s *Service) stage(ctx context.Context, name string, p *plan) (context.Context, trace.Span) {
	ctx, span := tracing.Start(ctx, s.obs.tracer, name, p.chat.Tenant, p.chat.ID)
	if span.IsRecording() {
		span.SetAttributes(tracing.AgentKey.String(p.agent), tracing.StrategyKey.String(string(p.strategy)))
	}
	return ctx, span
}
