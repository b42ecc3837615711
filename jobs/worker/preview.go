package worker

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// Previewer is how the request path gets a current extractive summary
// without doing the Extender's job (engine.Previewer): it computes, in
// memory, what the head will be once the Worker extends it over (cursor,
// last_seq-RecentTurns], and never takes the lease nor writes. Writing
// from a request queued it behind the single SQLite writer (appends, the
// indexer, the worker's own batches): that wait, not the summarising, was
// the read path's tail right after an import. The Worker is kicked and
// persists the extension as usual, under its lease.
//
// Previews are kept per chat and extended from the last one when only new
// turns arrived, so each turn is analysed about once on the read side
// however many reads come before the worker. A preview is keyed by
// everything that changes what the head would be (the chat's creation,
// its cursor, its deletion mark), so a re-created chat, a worker's write
// or a forgotten message makes it start over.
type Previewer struct {
	// Env is the Worker's: the same summariser, settings and filters, and
	// its Kick.
	*Env
	Store turnReader
	// Episodes: the Worker closes episodes (it has a Closer), so the
	// summary of an agent that keeps them is a root covering the chat
	// from its start.
	Episodes bool

	mu       sync.Mutex
	previews map[memory.ChatKey]preview
}

// Preview returns nil when the summary does not lag, the agent's
// summariser is an LLM (its summaries stay in the background) or the agent
// keeps no summary.
func (p *Previewer) Preview(ctx context.Context, chat memory.Chat, head *memory.SummaryRecord) (*memory.SummaryRecord, error) {
	p.init()
	s := p.settings(chat.Agent)
	if !p.InlineFor(chat.Agent) || !s.Persist {
		return nil, nil
	}
	cursor := chat.SummaryCursor
	upTo := chat.LastSeq - int64(s.RecentTurns)
	if upTo <= cursor {
		return nil, nil
	}
	pk := previewKey{created: chat.CreatedAt, cursor: cursor, dirty: chat.DirtyMark}
	// A kept preview fewer than a trigger's turns behind is served as is:
	// the turns after it are shown verbatim (its covered_to_seq says
	// which), as they are after a stored head that lags by less. Extending
	// it on every read made each read after an append (the AI SDK's call)
	// analyse and merge the new turn: a tenth of that call's CPU.
	if rec, ok := p.keptWithin(chat.Key(), pk, upTo, int64(max(1, s.TriggerTurns))); ok {
		return rec, nil
	}
	prev, from := p.previewBase(chat.Key(), pk, head)
	if from >= upTo {
		return p.previewAt(chat.Key(), pk, upTo)
	}
	turns, err := readTurns(ctx, p.Store, chat.Key(), from, upTo)
	if err != nil {
		return nil, err
	}
	if len(turns) == 0 {
		return nil, nil
	}
	last := turns[len(turns)-1].Seq
	if p.Prepare != nil {
		turns = p.Prepare(chat.Agent, turns)
	}
	sum := memory.Summary{}
	if prev != nil {
		sum = prev.Clone()
	}
	if len(turns) > 0 {
		res, err := p.Summarizer.Summarize(ctx, memory.SummarizeRequest{Chat: chat, Prev: prev, Turns: turns,
			Prompts: s.Prompts, Model: s.Model, Structured: s.Structured || s.Episodes.Enabled, MaxTokens: s.MaxTokens})
		if err != nil {
			return nil, fmt.Errorf("worker: preview: %w", err)
		}
		sum = res.Summary
	}
	sum.CoveredToSeq, sum.Stale, sum.UpdatedAt = last, false, p.Now().UTC()
	switch {
	case s.Episodes.Enabled && p.Episodes:
		sum.CoveredFromSeq = 1 // the root covers the chat from its start
	case head != nil && head.CoveredFromSeq > 0:
		sum.CoveredFromSeq = head.CoveredFromSeq
	case sum.CoveredFromSeq == 0:
		sum.CoveredFromSeq = cursor + 1
	}
	stampModel(&sum, p.Summarizer.Name(), p.Summarizer.PromptVersion(s.Prompts))
	rec := memory.SummaryRecord{Summary: sum, TokenCount: tokens.Summary(sum), FromSeq: cursor + 1, ToSeq: last}
	p.keepPreview(chat.Key(), pk, rec)
	p.Kick() // the worker persists it (or its own equivalent) under the lease
	out := rec
	out.Summary = rec.Summary.Clone()
	return &out, nil
}

// previewKey is what a chat's preview was computed from.
type previewKey struct {
	created       time.Time
	cursor, dirty int64
}

func (k previewKey) same(o previewKey) bool {
	return k.created.Equal(o.created) && k.cursor == o.cursor && k.dirty == o.dirty
}

// previewCacheChats bounds the previews kept: one per chat read while its
// summary lagged (a few KB each); past it the map starts over.
const previewCacheChats = 2048

type preview struct {
	key previewKey
	rec memory.SummaryRecord
}

// previewBase returns the summary to extend and the seq after which turns
// are still to be analysed: the chat's last preview when it was computed
// from the same state, else the head at the cursor.
func (p *Previewer) previewBase(key memory.ChatKey, pk previewKey, head *memory.SummaryRecord) (*memory.Summary, int64) {
	p.mu.Lock()
	pv, ok := p.previews[key]
	p.mu.Unlock()
	if ok && pv.key.same(pk) {
		sum := pv.rec.Summary.Clone()
		return &sum, pv.rec.ToSeq
	}
	if head == nil || head.CoveredToSeq != pk.cursor {
		return nil, pk.cursor
	}
	sum := head.Summary.Clone()
	return &sum, pk.cursor
}

// previewAt returns the kept preview when it already covers upTo.
func (p *Previewer) previewAt(key memory.ChatKey, pk previewKey, upTo int64) (*memory.SummaryRecord, error) {
	p.mu.Lock()
	pv, ok := p.previews[key]
	p.mu.Unlock()
	if !ok || !pv.key.same(pk) || pv.rec.ToSeq < upTo {
		return nil, nil
	}
	out := pv.rec
	out.Summary = pv.rec.Summary.Clone()
	return &out, nil
}

// keptWithin returns the kept preview when it was computed from the same
// state and covers all but fewer than lag turns up to upTo.
func (p *Previewer) keptWithin(key memory.ChatKey, pk previewKey, upTo, lag int64) (*memory.SummaryRecord, bool) {
	p.mu.Lock()
	pv, ok := p.previews[key]
	p.mu.Unlock()
	if !ok || !pv.key.same(pk) || upTo-pv.rec.ToSeq >= lag {
		return nil, false
	}
	out := pv.rec
	out.Summary = pv.rec.Summary.Clone()
	return &out, true
}

func (p *Previewer) keepPreview(key memory.ChatKey, pk previewKey, rec memory.SummaryRecord) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.previews == nil || len(p.previews) >= previewCacheChats {
		p.previews = map[memory.ChatKey]preview{} // a cache: recomputed when missing
	}
	p.previews[key] = preview{key: pk, rec: rec}
}
