package engine

import (
	"context"

	"github.com/contextd/contextd/memory"
)

// Previewer computes, in memory and without writing, what a lagging
// summary will be once the background worker extends it (memory/worker's
// Preview: extractive summarisers only; nil for an LLM's, which stay in the
// background).
type Previewer interface {
	Preview(ctx context.Context, chat memory.Chat, head *memory.SummaryRecord) (*memory.SummaryRecord, error)
}

// preview gives a lagging summary's answer the extension the worker is
// about to write, so the first context after a bulk import carries a
// current summary instead of summary_stale — without taking the chat's
// lease or writing from the request: a write here queued behind every
// other writer of the store, which was the read path's tail while the
// background was busy. On failure the answer goes out with the summary as
// stored (summary_stale) and the worker catches up.
func (s *Service) preview(ctx context.Context, p *plan) {
	if s.Previews == nil {
		return
	}
	rec, err := s.Previews.Preview(ctx, p.chat, p.head)
	if err != nil {
		s.log().Debug("summary preview", "chat", p.chat.ID, "err", err)
		return
	}
	if rec == nil {
		return
	}
	p.head, p.cursor = rec, rec.CoveredToSeq
	p.lags = s.lagging(p.chat, p.cursor)
}
