package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/contextd/contextd/internal/tracing"
	"github.com/contextd/contextd/memory"
)

// ProfileSource is what the profiler reads and writes.
type ProfileSource interface {
	memory.ProfileStore
	memory.Backlogs // MergeProfile
	Chat(ctx context.Context, key memory.ChatKey) (memory.Chat, error)
	SummaryHead(ctx context.Context, key memory.ChatKey) (*memory.SummaryRecord, error)
}

// Profiler merges changed chat summaries into their users' profiles, in
// the background. Its work is derived from stored state (a chat whose
// summary moved past what its user's profile merged), so a crash loses
// nothing; a merge is idempotent, and profiles are written with
// compare-and-swap, so replicas may run it side by side. Each user is
// updated at most once per Cooldown; the cost of a merge is that of the
// one chat summary that changed.
type Profiler struct {
	Store ProfileSource
	// Merger, when set (an LLM is configured), merges each changed summary
	// into the profile in one call with the agent's prompt; otherwise the
	// merge is deterministic.
	Merger ProfileMerger
	// Budget is the tenants' daily token budget the Merger spends from
	// (nil: no cap); once spent, changes are merged deterministically.
	Budget   memory.TokenBudget
	Prompt   func(agent string) string // the agent's user_profile_prompt ("" = default)
	Model    string
	Cooldown time.Duration // per user; default DefaultProfileCooldown
	Poll     time.Duration // default DefaultPoll
	Now      func() time.Time
	Logger   *slog.Logger
	// Tracer opens a span per profile merge (nil: no-op).
	Tracer trace.Tracer

	once     sync.Once
	mu       sync.Mutex
	last     map[[2]string]time.Time // (tenant, user) → last merge
	degraded map[[2]string][]string  // (tenant, user) → fallbacks of its last merge
}

// ProfileMerger merges a profile with a chat's summary (derive/llmsum).
type ProfileMerger interface {
	MergeProfile(ctx context.Context, prompt string, existing memory.Profile, chat memory.Summary) (memory.SummarizeResult, error)
}

// Degraded reasons of a profile merge.
const (
	DegradedProfileInvalid = "profile_merge_invalid" // the LLM's reply held no profile: the previous one stands
	DegradedProfileLLM     = "profile_llm_unavailable"
)

// LastDegraded names the fallbacks the user's last profile merge took.
func (p *Profiler) LastDegraded(tenant, userID string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.degraded[[2]string{tenant, userID}]
}

func (p *Profiler) note(user [2]string, reasons ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.degraded == nil {
		p.degraded = map[[2]string][]string{}
	}
	p.degraded[user] = reasons
}

// DefaultProfileCooldown is the least time between two merges into one
// user's profile.
const DefaultProfileCooldown = 10 * time.Second

// EnsureDefaults fills the optional fields left zero with their defaults:
// the one place the profiler's defaults live. Run and Pass call it (once)
// themselves; call it before reading the fields.
func (p *Profiler) EnsureDefaults() {
	if p.Cooldown <= 0 {
		p.Cooldown = DefaultProfileCooldown
	}
	if p.Poll <= 0 {
		p.Poll = DefaultPoll
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
}

func (p *Profiler) now() time.Time { return p.Now().UTC() }

// Run merges until ctx ends.
func (p *Profiler) Run(ctx context.Context) error {
	p.once.Do(p.EnsureDefaults)
	poll := p.Poll
	for {
		if _, err := p.Pass(ctx, false); err != nil && ctx.Err() == nil {
			p.Logger.Warn("profile pass", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(poll):
		}
	}
}

// Pass merges the pending chat summaries (all of them when force, else
// skipping users inside their cooldown) and reports how many it merged.
func (p *Profiler) Pass(ctx context.Context, force bool) (int, error) {
	p.once.Do(p.EnsureDefaults)
	work, err := p.Store.Pending(ctx, memory.MergeProfile, 200)
	if err != nil {
		return 0, fmt.Errorf("profiler: %w", err)
	}
	done := 0
	merged := map[[2]string]bool{}
	for _, w := range work {
		c := w.Chat
		user := [2]string{c.Tenant, c.UserID}
		if !force && (merged[user] || p.cooling(user)) {
			continue // one update per user per cooldown; the work waits
		}
		if err := p.merge(ctx, c); err != nil {
			return done, err
		}
		merged[user] = true
		done++
	}
	p.mu.Lock()
	if p.last == nil {
		p.last = map[[2]string]time.Time{}
	}
	for u := range merged {
		p.last[u] = p.now()
	}
	p.mu.Unlock()
	return done, nil
}

func (p *Profiler) cooling(user [2]string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.last[user]
	return ok && p.now().Before(t.Add(p.Cooldown))
}

// merge folds the chat's current summary into its user's profile.
func (p *Profiler) merge(ctx context.Context, c memory.Chat) error {
	ctx, span := tracing.Start(ctx, p.Tracer, spanProfileMerge, c.Tenant, c.ID)
	defer span.End()
	head, err := p.Store.SummaryHead(ctx, c.Key())
	if errors.Is(err, memory.ErrNotFound) {
		return nil // erased meanwhile
	}
	if err != nil || head == nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		st, v, err := p.Store.Profile(ctx, c.Tenant, c.UserID)
		if err != nil {
			return fmt.Errorf("profiler: %w", err)
		}
		// Checked after the profile is read: a message deleted later
		// removes its items after this save or makes it conflict.
		if ok, err := p.current(ctx, c.Key(), head.ID); !ok || err != nil {
			return err // the summary is merged once rebuilt without it
		}
		next, ok := p.mergeOne(ctx, c, st, head.Summary)
		if !ok { // the previous profile stands; the change is not retried
			break
		}
		err = p.Store.SaveProfile(ctx, c.Tenant, c.UserID, next, v)
		if err == nil {
			break
		}
		if !errors.Is(err, memory.ErrConflict) || attempt == 3 {
			return fmt.Errorf("profiler: %w", err)
		}
	}
	_, err = p.Store.Done(ctx, memory.MergeProfile, []memory.Mark{{Chat: c.Key(), ToSeq: head.CoveredToSeq}})
	return err
}

// mergeOne merges the chat's summary: with the LLM when there is one (one
// call; a failure or a reply without a profile leaves the previous profile,
// reported), else deterministically.
func (p *Profiler) mergeOne(ctx context.Context, c memory.Chat, st memory.ProfileState, sum memory.Summary) (memory.ProfileState, bool) {
	user := [2]string{c.Tenant, c.UserID}
	if p.Merger == nil {
		return memory.MergeChat(st, c.UserID, c.ID, sum, p.now()), true
	}
	prompt := ""
	if p.Prompt != nil {
		prompt = p.Prompt(c.Agent)
	}
	if p.Budget != nil && p.Budget.Exhausted(c.Tenant) { // merged without the model meanwhile
		p.note(user, DegradedBudgetExhausted)
		return memory.MergeChat(st, c.UserID, c.ID, sum, p.now()), true
	}
	res, err := p.Merger.MergeProfile(ctx, prompt, st.Profile, sum)
	if p.Budget != nil {
		p.Budget.Spend(c.Tenant, res.InputTokens, res.OutputTokens)
	}
	merged := res.Summary
	if err != nil {
		reason := DegradedProfileLLM
		if errors.Is(err, memory.ErrProfileReply) {
			reason = DegradedProfileInvalid
		}
		p.note(user, reason)
		p.Logger.Warn("profile merge", "err", err)
		return st, false
	}
	p.note(user)
	next := memory.ApplyMerged(st, c.UserID, c.ID, sum, merged, p.now())
	next.Profile.Model = p.Model
	return next, true
}

// current reports whether the chat's head is still headID and not waiting
// for a rebuild (a message it may hold was deleted).
func (p *Profiler) current(ctx context.Context, key memory.ChatKey, headID string) (bool, error) {
	c, err := p.Store.Chat(ctx, key)
	if errors.Is(err, memory.ErrNotFound) {
		return false, nil // erased meanwhile: nothing to merge
	}
	if err != nil {
		return false, fmt.Errorf("profiler: %w", err)
	}
	if c.SummaryDirty {
		return false, nil
	}
	head, err := p.Store.SummaryHead(ctx, key)
	if err != nil {
		return false, fmt.Errorf("profiler: %w", err)
	}
	return head != nil && head.ID == headID, nil
}
