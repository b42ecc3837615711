package engine

import (
	"context"

	"github.com/contextd/contextd/memory"
)

// Previewer computes, in memory and without writing, what a lagging
// summary will be once the background worker extends it (jobs/worker's
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
	rec, err := s.jobs.previews.Preview(ctx, p.chat, p.head)
	if err != nil {
		s.obs.logger.Debug("summary preview", "chat", p.chat.ID, "err", err)
		return
	}
	if rec == nil {
		return
	}
	p.head, p.cursor = rec, rec.CoveredToSeq
	p.lags = s.lagging(p.chat, p.cursor)
}

// SummaryView is a chat's summary as GET …/summary answers it: the
// summary a context of the chat would show (when the chat does not fit
// the budget whole), and the stored chain.
type SummaryView struct {
	Summary *memory.Summary
	// Chain holds the stored records, head first (never the preview).
	Chain []memory.SummaryRecord
	// Preview: Summary is not stored yet — it is the extension the worker
	// is about to write, computed for this answer as for a context's.
	Preview bool
}

// SummaryView answers what a context would use: the stored head, or —
// when it lags and the agent's summariser can preview (extractive) — the
// preview a context computes in its place (preview), so the summary read
// right after a bulk append is not null while the context shows one.
func (s *Service) SummaryView(ctx context.Context, tenant, chatID string, chainLimit int) (SummaryView, error) {
	v, chat, err := s.storedSummary(ctx, tenant, chatID, chainLimit)
	if err != nil || chat.SummaryDirty || !s.lagging(chat, chat.SummaryCursor) {
		return v, err // a dirty summary is withheld from contexts too
	}
	var head *memory.SummaryRecord
	if len(v.Chain) > 0 {
		h := v.Chain[0]
		head = &h
	}
	rec, err := s.jobs.previews.Preview(ctx, chat, head)
	if err != nil {
		s.obs.logger.Debug("summary preview", "chat", chat.ID, "err", err)
		return v, nil // the stored summary, as a context would show it
	}
	if rec == nil {
		return v, nil
	}
	sum := rec.Summary.Clone()
	sum.Normalize()
	sum.Stale = s.isStale(chat, rec)
	v.Summary, v.Preview = &sum, true
	return v, nil
}
