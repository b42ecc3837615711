package worker

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/contextd/contextd/internal/tracing"
	"github.com/contextd/contextd/memory"
)

// Span names of the background jobs (the contract's Tracing section).
const (
	spanSummarise    = "contextd.summarise"
	spanEpisodeClose = "contextd.episode.close"
	spanProfileMerge = "contextd.profile.merge"
)

// episodeSpan opens the span of closing one episode (its summary: one LLM
// call, or extractive), named by the seqs it owns.
func (e *Env) episodeSpan(ctx context.Context, chat memory.Chat, ep memory.Episode) (context.Context, trace.Span) {
	ctx, span := tracing.Start(ctx, e.Tracer, spanEpisodeClose, chat.Tenant, chat.ID)
	if span.IsRecording() {
		span.SetAttributes(tracing.FromSeqKey.Int64(ep.FromSeq), tracing.ToSeqKey.Int64(ep.ToSeq))
	}
	return ctx, span
}
