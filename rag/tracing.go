package rag

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/contextd/contextd/internal/tracing"
	"github.com/contextd/contextd/memory"
)

// spanIndex is the indexer's job span (the contract's Tracing section): one
// per batch of turns or episodes embedded and upserted.
const spanIndex = "contextd.index"

// indexSpan opens the span of indexing n items of kind (memory.KindTurn or
// memory.KindEpisode) of chat c.
func (ix *Indexer) indexSpan(ctx context.Context, c memory.Chat, kind string, n int) (context.Context, trace.Span) {
	ctx, span := tracing.Start(ctx, ix.Tracer, spanIndex, c.Tenant, c.ID)
	if span.IsRecording() {
		span.SetAttributes(tracing.KindKey.String(kind), tracing.CountKey.Int(n))
	}
	return ctx, span
}

// batchSpan opens the span of indexing n turns of chats in one batch: the
// tenant and chat attributes are set when the batch has one of each.
func (ix *Indexer) batchSpan(ctx context.Context, chats []pendingChat, n int) (context.Context, trace.Span) {
	tenant, chat := chats[0].chat.Tenant, chats[0].chat.ID
	for _, p := range chats[1:] {
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
		span.SetAttributes(tracing.KindKey.String(memory.KindTurn), tracing.CountKey.Int(n), tracing.ChatsKey.Int(len(chats)))
	}
	return ctx, span
}
