package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/contextd/contextd/jobs/budget"
	"github.com/contextd/contextd/memory"
)

// Env is what the chat jobs (Extender, Closer, Rebuilder), the loop that
// runs them (Worker) and the request path's Previewer share: the
// summarisers and the budget they spend from, the agents' settings and
// filters, the hooks that report writes, and what this process remembers
// per chat (the fallbacks of its last summary write, its jobs in flight).
// Set the exported fields; the zero values of the optional ones take the
// defaults noted.
type Env struct {
	Summarizer memory.Summarizer
	// Fallback is the deterministic summarizer (no LLM: UsesLLM is false):
	// it writes when the daily token budget is spent and rebuilds
	// stretches without the model, and its Name labels what was written
	// without the model (a root folded while the model failed), which the
	// model redoes once it answers. Required with an LLM Summarizer;
	// default: the Summarizer itself when it uses no LLM.
	Fallback memory.Summarizer
	// Budget is the tenants' daily LLM token budget every summariser call
	// spends from (default: a budget.Daily without a cap).
	Budget   memory.TokenBudget
	Settings func(agent string) Settings
	// Prepare, when set, turns the eligible turns into what the summarizer
	// reads (the agent's filters: routing noise skipped, labels stripped).
	// Turns it removes still count as covered, so noise never stalls the
	// cursor.
	Prepare func(agent string, turns []memory.Message) []memory.Message
	// OnWrite, when set, is told each background job's failure and each
	// summary write that succeeded (nil): readiness keeps a full disk's
	// (storage degraded until a write succeeds), as for a request's.
	OnWrite func(error)
	// OnDerived, when set, is told after a job stored episodes or facts
	// (closed, rebuilt or superseded) that are to be indexed: the
	// indexer's Kick, so they are retrievable within its pass, not its
	// poll, and a read waiting for the index waits for them too.
	OnDerived func()
	Logger    *slog.Logger
	Now       func() time.Time
	// Tracer opens a span per summary job (nil: no-op).
	Tracer trace.Tracer

	once  sync.Once
	kick  chan struct{}
	chats *chatStates
}

// EnsureDefaults fills the optional fields left zero with their defaults.
// The Worker and the Previewer call it (once) themselves.
func (e *Env) EnsureDefaults() {
	if e.Logger == nil {
		e.Logger = slog.New(slog.DiscardHandler)
	}
	if e.Now == nil {
		e.Now = time.Now
	}
	if e.Fallback == nil && e.Summarizer != nil && !e.Summarizer.UsesLLM() {
		e.Fallback = e.Summarizer // a deterministic summarizer is its own fallback
	}
	if e.Budget == nil {
		e.Budget = &budget.Daily{Now: func() time.Time { return e.Now() }}
	}
}

func (e *Env) init() {
	e.once.Do(func() {
		e.EnsureDefaults()
		e.kick = make(chan struct{}, 1)
		e.chats = newChatStates()
	})
}

// Kick wakes the Worker's Run for an immediate scan (e.g. after an append).
func (e *Env) Kick() {
	e.init()
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

func (e *Env) settings(agent string) Settings {
	if e.Settings == nil {
		return DefaultSettings()
	}
	return e.Settings(agent)
}

// InlineFor reports whether a lagging summary of the agent's chats may be
// extended on the request path: only when the summariser declares it
// writes without an LLM (UsesLLM false: extractive), which costs well under
// a millisecond per few hundred turns. LLM summaries stay in the background.
func (e *Env) InlineFor(agent string) bool {
	return e.Summarizer != nil && !e.Summarizer.UsesLLM() && e.settings(agent).Enabled
}

// Stale reports whether head was written under prompts other than the
// agent's current ones (a summary the extractive summarizer wrote is never
// stale: it uses no prompts).
func (e *Env) Stale(agent string, head *memory.SummaryRecord) bool {
	e.init()
	p := e.settings(agent).Prompts
	if head == nil || head.PromptVersion == e.Fallback.PromptVersion(p) {
		return false
	}
	return head.PromptVersion != e.Summarizer.PromptVersion(p)
}

// LastDegraded returns the fallbacks taken when this process last wrote the
// chat's summary (e.g. llm_unavailable), so answers built on that summary
// can report them. Empty when the last extension took none, or when another
// process wrote it.
func (e *Env) LastDegraded(key memory.ChatKey) []string {
	e.init()
	return e.chats.lastDegraded(key)
}

// budgetSpent reports whether sum writes with an LLM and the tenant's
// daily token budget is spent: the fallback then does the work.
func (e *Env) budgetSpent(tenant string, sum memory.Summarizer) bool {
	return sum.UsesLLM() && e.Budget.Exhausted(tenant)
}

// summaryTurns are the turns a summary reads: no tombstones, through the
// agent's filters.
func (e *Env) summaryTurns(chat memory.Chat, turns []memory.Message) []memory.Message {
	turns = alive(turns)
	if e.Prepare != nil && len(turns) > 0 {
		turns = e.Prepare(chat.Agent, turns)
	}
	return turns
}

// wrote tells OnWrite a store failure, or (nil) that a write succeeded.
func (e *Env) wrote(err error) {
	if e.OnWrite != nil {
		e.OnWrite(err)
	}
}

// derived tells OnDerived that episodes or facts were stored.
func (e *Env) derived() {
	if e.OnDerived != nil {
		e.OnDerived()
	}
}

// headWriter is the store role that writes a chat's summary head.
type headWriter interface {
	SummaryHead(ctx context.Context, key memory.ChatKey) (*memory.SummaryRecord, error)
	memory.SummaryWriter
}

// write stores rec as the chat's new head unless the cursor moved.
func (e *Env) write(ctx context.Context, st headWriter, key memory.ChatKey, cursor int64, s Settings, rec memory.SummaryRecord, degraded []string, calls, inTokens int) (out *memory.SummaryRecord, _ []string, err error) {
	defer func() {
		if err != nil || out == nil || out.CoveredToSeq != rec.CoveredToSeq {
			return // not ours: someone else's head stands
		}
		e.chats.setDegraded(key, append([]string(nil), degraded...))
	}()
	if !s.Persist {
		return &rec, degraded, nil
	}
	written, err := memory.AppendSummary(ctx, st, key, cursor, rec)
	if errors.Is(err, memory.ErrCursorMoved) {
		// Someone else extended it first: theirs stands.
		head, herr := st.SummaryHead(ctx, key)
		if herr != nil {
			return nil, nil, fmt.Errorf("worker: summary head: %w", herr)
		}
		return head, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("worker: append summary: %w", err)
	}
	e.wrote(nil)
	e.Logger.Debug("summary extended", "tenant", key.Tenant, "chat", key.ChatID,
		"from", rec.FromSeq, "to", rec.ToSeq, "calls", calls, "in_tokens", inTokens, "degraded", degraded)
	return &written, degraded, nil
}

// turnReader is the store role that reads a chat's turns.
type turnReader interface {
	Messages(ctx context.Context, key memory.ChatKey, afterSeq int64, limit int) ([]memory.Message, error)
}

// readTurns returns the chat's turns in (after, upTo].
func readTurns(ctx context.Context, st turnReader, key memory.ChatKey, after, upTo int64) ([]memory.Message, error) {
	var out []memory.Message
	for after < upTo {
		page, err := st.Messages(ctx, key, after, int(min(upTo-after, 500)))
		if err != nil {
			return nil, fmt.Errorf("worker: messages: %w", err)
		}
		if len(page) == 0 {
			break
		}
		for _, m := range page {
			if m.Seq <= upTo {
				out = append(out, m)
			}
		}
		after = page[len(page)-1].Seq
	}
	return out, nil
}

// alive leaves the tombstones out.
func alive(turns []memory.Message) []memory.Message {
	out := make([]memory.Message, 0, len(turns))
	for _, t := range turns {
		if !t.Deleted {
			out = append(out, t)
		}
	}
	return out
}
