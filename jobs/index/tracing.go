package index

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/contextd/contextd/internal/tracing"
)

// spanIndex is the indexer's job span (the contract's Tracing section): one
// per batch of turns, episodes or facts embedded and upserted.
const spanIndex = "contextd.index"

// batchSpan opens the span of indexing n items of src's kind of chats in
// one batch: the tenant and chat attributes are set when the batch has one
// of each.
func (ix *Indexer) batchSpan(ctx context.Context, src *indexKind, shares []share, n int) (context.Context, trace.Span) {
	tenant, chat := shares[0].chat.Tenant, shares[0].chat.ID
	for _, p := range shares[1:] {
		if p.chat.Tenant != tenant {
			tenant, chat = "", ""
			break
		}
		if p.chat.ID != chat {
			chat = ""
		}
	}
	ctx, span := tracing.Start(ctx, ix.Tracer, spanIndex, tenant, chat)
	if span.IsRecording() {
		span.SetAttributes(tracing.KindKey.String(src.point), tracing.CountKey.Int(n), tracing.ChatsKey.Int(len(shares)))
	}
	return ctx, span
}
