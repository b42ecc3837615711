package worker

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/contextd/contextd/derive/extractive"
	"github.com/contextd/contextd/jobs/budget"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/sqlite"
)

func openStore(t testing.TB) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

var chatKey = memory.ChatKey{Tenant: "t1", ChatID: "c1"}

func appendTurns(t testing.TB, st memory.Core, key memory.ChatKey, n int) {
	t.Helper()
	c, err := st.Chat(context.Background(), key)
	start := int64(0)
	if err == nil {
		start = c.LastSeq
	}
	var msgs []memory.Message
	for i := 1; i <= n; i++ {
		seq := start + int64(i)
		role := memory.RoleUser
		if seq%2 == 0 {
			role = memory.RoleAssistant
		}
		msgs = append(msgs, memory.Message{Role: role, Content: fmt.Sprintf("turn %d: we discussed the rollout plan for service %d.", seq, seq%3)})
	}
	if _, err := st.Append(context.Background(), memory.AppendRequest{Chat: key, Agent: "a", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
}

func baseSettings() Settings {
	return Settings{RecentTurns: 10, TriggerTurns: 10, TriggerTokens: 0, Cooldown: time.Hour, MaxTokens: 800, Structured: true, Persist: true, Enabled: true}
}

// extractiveEpisodes gives a fake summarizer the extractive episode
// summaries and prompt version, so a fake only overrides what it tests.
type extractiveEpisodes struct{}

func (extractiveEpisodes) SummarizeEpisode(ctx context.Context, req memory.EpisodeRequest) (memory.EpisodeResult, error) {
	return extractive.New().SummarizeEpisode(ctx, req)
}

func (extractiveEpisodes) PromptVersion(memory.Prompts) string { return extractive.PromptVersion }

// fakeSum wraps the extractive summarizer, records what it is given and can
// block until released or report token usage like an LLM.
type fakeSum struct {
	extractiveEpisodes
	mu        sync.Mutex
	name      string
	reqs      []memory.SummarizeRequest
	started   chan struct{} // receives once per call when not nil
	release   chan struct{} // when not nil, calls wait for it (or ctx)
	ignoreCtx bool          // finish even when ctx is cancelled
	in, out   int
	version   func(memory.Prompts) string
}

func (f *fakeSum) Name() string {
	if f.name == "" {
		return "fake-llm"
	}
	return f.name
}

func (f *fakeSum) UsesLLM() bool { return f.name != "extractive" }

func (f *fakeSum) PromptVersion(p memory.Prompts) string {
	if f.version != nil {
		return f.version(p)
	}
	return p.Version()
}

func (f *fakeSum) Summarize(ctx context.Context, req memory.SummarizeRequest) (memory.SummarizeResult, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	if f.started != nil {
		f.started <- struct{}{}
	}
	if f.release != nil {
		if f.ignoreCtx {
			<-f.release
		} else {
			select {
			case <-f.release:
			case <-ctx.Done():
				return memory.SummarizeResult{}, ctx.Err()
			}
		}
	}
	res, err := extractive.New().Summarize(context.Background(), req)
	res.Summary.Model = f.Name()
	res.Summary.PromptVersion = f.PromptVersion(req.Prompts)
	res.InputTokens, res.OutputTokens = f.in, f.out
	return res, err
}

func (f *fakeSum) calls() []memory.SummarizeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]memory.SummarizeRequest(nil), f.reqs...)
}

func newWorker(st memory.Core, sum memory.Summarizer, owner string, s func() Settings) *Worker {
	w := &Worker{Env: &Env{Summarizer: sum, Fallback: extractive.New(), Settings: func(string) Settings { return s() }},
		Store: st, Summary: &Extender{Store: st}, Owner: owner, Poll: 5 * time.Millisecond, Lease: time.Minute}
	if es, ok := st.(CloserStore); ok {
		w.Episodes = &Closer{Env: w.Env, Store: es}
	}
	return w
}

// rebuilding gives w a Rebuilder over st, erasing with er and editing
// profiles when they are given.
func rebuilding(w *Worker, st RebuildStore, er PointEraser, profiles ProfileEditor) {
	w.Rebuilder = &Rebuilder{Env: w.Env, Store: st, Episodes: w.Episodes, Erase: er, Profiles: profiles}
}

// previewer is the request path's Previewer beside w.
func previewer(w *Worker) *Previewer {
	return &Previewer{Env: w.Env, Store: w.Store, Episodes: w.Episodes != nil}
}

func cursor(t *testing.T, st memory.Core) int64 {
	t.Helper()
	c, err := st.Chat(context.Background(), chatKey)
	if err != nil {
		t.Fatal(err)
	}
	return c.SummaryCursor
}

func seqs(ms []memory.Message) (int64, int64) {
	if len(ms) == 0 {
		return 0, 0
	}
	return ms[0].Seq, ms[len(ms)-1].Seq
}

func TestOnlyTurnsOutsideWindowAfterCursor(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	f := &fakeSum{}
	w := newWorker(st, f, "w1", baseSettings)
	appendTurns(t, st, chatKey, 30)
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	calls := f.calls()
	if len(calls) != 1 {
		t.Fatalf("%d calls", len(calls))
	}
	if a, b := seqs(calls[0].Turns); a != 1 || b != 20 || calls[0].Prev != nil {
		t.Fatalf("first extension got turns %d..%d", a, b)
	}
	if c := cursor(t, st); c != 20 {
		t.Fatalf("cursor %d", c)
	}
	appendTurns(t, st, chatKey, 5) // 5 new eligible: under the trigger
	if err := w.Drain(ctx); err != nil || len(f.calls()) != 1 {
		t.Fatalf("drain below trigger: %v, %d calls", err, len(f.calls()))
	}
	appendTurns(t, st, chatKey, 5)
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	calls = f.calls()
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	if a, b := seqs(calls[1].Turns); a != 21 || b != 30 || calls[1].Prev == nil || calls[1].Prev.CoveredToSeq != 20 {
		t.Fatalf("second extension got turns %d..%d prev %+v", a, b, calls[1].Prev)
	}
	chain, err := st.SummaryChain(ctx, chatKey)
	if err != nil || len(chain) != 2 || chain[0].FromSeq != 21 || chain[0].ToSeq != 30 || chain[0].CoveredFromSeq != 1 || chain[0].CoveredToSeq != 30 || chain[0].TokenCount <= 0 {
		t.Fatalf("chain %v %+v", err, chain)
	}
}

func TestTriggerTokens(t *testing.T) {
	st := openStore(t)
	f := &fakeSum{}
	s := baseSettings()
	s.TriggerTurns, s.TriggerTokens = 100, 30
	w := newWorker(st, f, "w1", func() Settings { return s })
	appendTurns(t, st, chatKey, 11) // one eligible turn of ~15 tokens
	if err := w.Drain(context.Background()); err != nil || len(f.calls()) != 0 {
		t.Fatalf("%v %d calls", err, len(f.calls()))
	}
	appendTurns(t, st, chatKey, 2) // three eligible turns: > 30 tokens
	if err := w.Drain(context.Background()); err != nil || len(f.calls()) != 1 {
		t.Fatalf("%v %d calls", err, len(f.calls()))
	}
}

func TestBurstTriggersOnceWithinCooldown(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	f := &fakeSum{}
	now := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	w := newWorker(st, f, "w1", baseSettings)
	w.Now = func() time.Time { return now }
	w.init()
	for i := 0; i < 6; i++ { // a burst: 6 appends of 5 turns, a scan after each
		appendTurns(t, st, chatKey, 5)
		if _, err := w.pass(ctx, nil); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
	}
	if n := len(f.calls()); n != 1 {
		t.Fatalf("burst caused %d summaries, want 1", n)
	}
	now = now.Add(time.Hour) // cooldown over
	if _, err := w.pass(ctx, nil); err != nil {
		t.Fatal(err)
	}
	calls := f.calls()
	if len(calls) != 2 {
		t.Fatalf("%d calls after cooldown", len(calls))
	}
	if a, b := seqs(calls[1].Turns); a != calls[0].Turns[len(calls[0].Turns)-1].Seq+1 || b != 20 {
		t.Fatalf("second run got %d..%d", a, b)
	}
}

func TestBackoffOnFailure(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	now := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	fail := &failingSum{}
	w := newWorker(st, fail, "w1", baseSettings)
	w.Now = func() time.Time { return now }
	w.init()
	appendTurns(t, st, chatKey, 25)
	for i := 0; i < 5; i++ {
		if _, err := w.pass(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if fail.n != 1 {
		t.Fatalf("retried %d times without waiting", fail.n)
	}
	now = now.Add(1500 * time.Millisecond) // first backoff is 1s
	_, _ = w.pass(ctx, nil)
	now = now.Add(1500 * time.Millisecond) // second is 2s: not yet
	_, _ = w.pass(ctx, nil)
	if fail.n != 2 {
		t.Fatalf("%d attempts, want 2", fail.n)
	}
	if c := cursor(t, st); c != 0 {
		t.Fatalf("cursor moved to %d on failure", c)
	}
}

type failingSum struct {
	extractiveEpisodes
	n int
}

func (f *failingSum) Name() string  { return "failing" }
func (f *failingSum) UsesLLM() bool { return true }
func (f *failingSum) Summarize(context.Context, memory.SummarizeRequest) (memory.SummarizeResult, error) {
	f.n++
	return memory.SummarizeResult{}, errors.New("boom")
}

func TestCrashSafety(t *testing.T) {
	for _, ignoreCtx := range []bool{false, true} {
		t.Run(fmt.Sprintf("ignoreCtx=%v", ignoreCtx), func(t *testing.T) {
			st := openStore(t)
			appendTurns(t, st, chatKey, 30)
			block := &fakeSum{started: make(chan struct{}, 1), release: make(chan struct{}), ignoreCtx: ignoreCtx}
			w1 := newWorker(st, block, "w1", baseSettings)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- w1.Run(ctx) }()
			select {
			case <-block.started:
			case <-time.After(10 * time.Second):
				t.Fatal("summarizer never called")
			}
			cancel() // SIGTERM mid-job
			if ignoreCtx {
				close(block.release) // the summarizer finishes anyway
			}
			if err := <-done; err != nil {
				t.Fatalf("Run: %v", err)
			}
			if c := cursor(t, st); c != 0 {
				t.Fatalf("cursor moved to %d by abandoned work", c)
			}
			if chain, _ := st.SummaryChain(context.Background(), chatKey); len(chain) != 0 {
				t.Fatalf("abandoned work wrote %d records", len(chain))
			}
			// A new worker (another owner) picks the job up: the lease was
			// released.
			f2 := &fakeSum{}
			w2 := newWorker(st, f2, "w2", baseSettings)
			if err := w2.Drain(context.Background()); err != nil {
				t.Fatal(err)
			}
			if c := cursor(t, st); c != 20 || len(f2.calls()) != 1 {
				t.Fatalf("cursor %d after recovery, %d calls", c, len(f2.calls()))
			}
		})
	}
}

func TestLeaseExclusion(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	appendTurns(t, st, chatKey, 30)
	a := &fakeSum{started: make(chan struct{}, 1), release: make(chan struct{})}
	b := &fakeSum{}
	wa := newWorker(st, a, "wa", baseSettings)
	wb := newWorker(st, b, "wb", baseSettings)
	done := make(chan error, 1)
	go func() { done <- wa.Drain(ctx) }()
	<-a.started
	// B finds the chat leased: it does nothing, even when forced.
	if err := wb.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, _, err := wb.Extend(fctx, chatKey, true)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("forced extend while leased: %v", err)
	}
	if len(b.calls()) != 0 {
		t.Fatal("second worker summarised a leased chat")
	}
	close(a.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Now free, but already done: B has nothing to do.
	if err := wb.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if chain, _ := st.SummaryChain(ctx, chatKey); len(chain) != 1 || len(b.calls()) != 0 {
		t.Fatalf("%d records, %d calls by B", len(chain), len(b.calls()))
	}
}

func TestConcurrentWorkersOneRecord(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	appendTurns(t, st, chatKey, 40)
	var wg sync.WaitGroup
	sums := []*fakeSum{{}, {}, {}}
	for i, f := range sums {
		w := newWorker(st, f, fmt.Sprintf("w%d", i), baseSettings)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.Drain(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, f := range sums {
		total += len(f.calls())
	}
	chain, _ := st.SummaryChain(ctx, chatKey)
	if len(chain) != total || cursor(t, st) != 30 {
		t.Fatalf("%d records for %d calls, cursor %d", len(chain), total, cursor(t, st))
	}
	for i := 1; i < len(chain); i++ { // the chain never overlaps
		if chain[i-1].FromSeq != chain[i].ToSeq+1 {
			t.Fatalf("overlapping chain %+v", chain)
		}
	}
}

func TestCursorMovedIsNotAnError(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	appendTurns(t, st, chatKey, 30)
	// A summarizer during whose work another writer (not respecting the
	// lease) moves the cursor.
	sneaky := &sneakySum{st: st}
	w := newWorker(st, sneaky, "w1", baseSettings)
	rec, _, err := w.Extend(ctx, chatKey, true)
	if err != nil {
		t.Fatal(err)
	}
	if rec == nil || rec.Model != "other" || rec.CoveredToSeq != 5 {
		t.Fatalf("want the other writer's head, got %+v", rec)
	}
}

type sneakySum struct {
	extractiveEpisodes
	st memory.Core
}

func (s *sneakySum) Name() string  { return "sneaky" }
func (s *sneakySum) UsesLLM() bool { return true }
func (s *sneakySum) Summarize(ctx context.Context, req memory.SummarizeRequest) (memory.SummarizeResult, error) {
	if _, err := memory.AppendSummary(ctx, s.st, chatKey, 0, memory.SummaryRecord{Summary: memory.Summary{Model: "other", CoveredFromSeq: 1, CoveredToSeq: 5}, FromSeq: 1, ToSeq: 5}); err != nil {
		return memory.SummarizeResult{}, err
	}
	return extractive.New().Summarize(ctx, req)
}

func TestDailyTokenBudget(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	now := time.Date(2025, 5, 1, 10, 0, 0, 0, time.UTC)
	f := &fakeSum{in: 80, out: 30}
	w := newWorker(st, f, "w1", baseSettings)
	w.Now = func() time.Time { return now }
	b := &budget.Daily{Limit: 100, Now: func() time.Time { return now }}
	w.Budget = b
	appendTurns(t, st, chatKey, 20)
	rec, deg, err := w.Extend(ctx, chatKey, true)
	if err != nil || len(deg) != 0 || rec.Model != "fake-llm" {
		t.Fatalf("%v %v %+v", err, deg, rec)
	}
	if got := b.UsedToday("t1"); got != 110 {
		t.Fatalf("used %d", got)
	}
	if got := b.UsedToday("t2"); got != 0 {
		t.Fatalf("other tenant used %d", got)
	}
	appendTurns(t, st, chatKey, 10)
	rec, deg, err = w.Extend(ctx, chatKey, true)
	if err != nil || len(deg) != 1 || deg[0] != DegradedBudgetExhausted || rec.Model != "extractive" || rec.CoveredToSeq != 20 {
		t.Fatalf("over budget: %v %v %+v", err, deg, rec)
	}
	if len(f.calls()) != 1 {
		t.Fatal("the LLM summarizer was called over budget")
	}
	now = now.Add(24 * time.Hour) // a new UTC day
	appendTurns(t, st, chatKey, 10)
	rec, deg, err = w.Extend(ctx, chatKey, true)
	if err != nil || len(deg) != 0 || rec.Model != "fake-llm" || b.UsedToday("t1") != 110 {
		t.Fatalf("next day: %v %v %+v", err, deg, rec)
	}
}

func TestPromptChangeRefreshes(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	f := &fakeSum{}
	s := baseSettings()
	s.Prompts = memory.Prompts{System: "A", Compression: "{transcript}", Extension: "{existing_summary}{new_messages}"}
	w := newWorker(st, f, "w1", func() Settings { return s })
	appendTurns(t, st, chatKey, 30)
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	head, _ := st.SummaryHead(ctx, chatKey)
	if w.Stale("a", head) {
		t.Fatal("fresh head reported stale")
	}
	s.Prompts.System = "B" // the operator edits the agent's prompt
	if !w.Stale("a", head) {
		t.Fatal("head under old prompts not stale")
	}
	// One new turn is far below the trigger, but the stale head is redone.
	appendTurns(t, st, chatKey, 1)
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	head, _ = st.SummaryHead(ctx, chatKey)
	if len(f.calls()) != 2 || head.PromptVersion != s.Prompts.Version() || head.CoveredToSeq != 21 || w.Stale("a", head) {
		t.Fatalf("%d calls, head %+v", len(f.calls()), head)
	}
	// A forced refresh with no new turn rewrites the summary in place.
	s.Prompts.System = "C"
	rec, _, err := w.Extend(ctx, chatKey, true)
	if err != nil || rec.PromptVersion != s.Prompts.Version() || rec.CoveredToSeq != 21 || len(f.calls()) != 3 || len(f.calls()[2].Turns) != 0 {
		t.Fatalf("%v %+v", err, rec)
	}
	// Extractive summaries are never stale.
	if w.Stale("a", &memory.SummaryRecord{Summary: memory.Summary{PromptVersion: extractive.PromptVersion}}) {
		t.Fatal("extractive head stale")
	}
}

func TestDisabledAndNotPersisted(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	f := &fakeSum{}
	s := baseSettings()
	s.Enabled = false
	w := newWorker(st, f, "w1", func() Settings { return s })
	appendTurns(t, st, chatKey, 30)
	if err := w.Drain(ctx); err != nil || len(f.calls()) != 0 {
		t.Fatalf("strategy none summarised: %v", err)
	}
	s.Enabled, s.Persist = true, false
	if err := w.Drain(ctx); err != nil || len(f.calls()) != 0 {
		t.Fatalf("persist=false summarised in background: %v", err)
	}
	rec, _, err := w.Extend(ctx, chatKey, true)
	if err != nil || rec == nil || rec.CoveredToSeq != 20 {
		t.Fatalf("%v %+v", err, rec)
	}
	if c := cursor(t, st); c != 0 {
		t.Fatalf("persist=false wrote the cursor: %d", c)
	}
}

func TestExtendUnknownChat(t *testing.T) {
	w := newWorker(openStore(t), &fakeSum{}, "w1", baseSettings)
	if _, _, err := w.Extend(context.Background(), memory.ChatKey{Tenant: "t", ChatID: "nope"}, true); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("err %v", err)
	}
}

func TestRunKick(t *testing.T) {
	st := openStore(t)
	f := &fakeSum{}
	w := newWorker(st, f, "w1", baseSettings)
	w.Poll = time.Hour // only Kick wakes it
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	appendTurns(t, st, chatKey, 30)
	w.Kick()
	deadline := time.Now().Add(10 * time.Second)
	for cursorOrZero(st) != 20 && time.Now().Before(deadline) {
		w.Kick()
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c := cursorOrZero(st); c != 20 {
		t.Fatalf("cursor %d", c)
	}
}

func cursorOrZero(st memory.Core) int64 {
	c, err := st.Chat(context.Background(), chatKey)
	if err != nil {
		return 0
	}
	return c.SummaryCursor
}

// Prepare filters what the summarizer reads, but the cursor still covers
// every eligible turn, and a backlog of pure noise advances it too.
func TestPrepareFiltersButCoversEverything(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	f := &fakeSum{}
	w := newWorker(st, f, "w1", baseSettings)
	dropOdd := func(_ string, ts []memory.Message) []memory.Message {
		var out []memory.Message
		for _, m := range ts {
			if m.Seq%2 == 0 {
				out = append(out, m)
			}
		}
		return out
	}
	w.Prepare = dropOdd
	appendTurns(t, st, chatKey, 31) // eligible 1..21: the last one (21) is odd
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	calls := f.calls()
	if len(calls) != 1 {
		t.Fatalf("%d calls", len(calls))
	}
	for _, m := range calls[0].Turns {
		if m.Seq%2 != 0 {
			t.Fatalf("summarizer saw filtered turn %d", m.Seq)
		}
	}
	if c := cursor(t, st); c != 21 {
		t.Fatalf("cursor %d, want 21 (past the filtered last turn)", c)
	}
	// Only noise after the cursor: the cursor still moves, no summarizer call.
	w.Prepare = func(string, []memory.Message) []memory.Message { return nil }
	appendTurns(t, st, chatKey, 12)
	if _, _, err := w.Extend(ctx, chatKey, true); err != nil {
		t.Fatal(err)
	}
	if c := cursor(t, st); c != 33 {
		t.Fatalf("cursor %d after a noise-only backlog, want 33", c)
	}
	if len(f.calls()) != 1 {
		t.Fatalf("summarizer called for noise only")
	}
	head, err := st.SummaryHead(ctx, chatKey)
	if err != nil || head == nil || head.Narrative == "" || head.FromSeq != 22 || head.ToSeq != 33 {
		t.Fatalf("head after noise-only extension: %v %+v", err, head)
	}
}

func TestLastDegradedRemembersFallbacks(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	w := newWorker(st, &degradingSum{}, "w1", baseSettings)
	appendTurns(t, st, chatKey, 30)
	if _, _, err := w.Extend(ctx, chatKey, true); err != nil {
		t.Fatal(err)
	}
	if got := w.LastDegraded(chatKey); len(got) != 1 || got[0] != "summary_narrative_only" {
		t.Fatalf("LastDegraded = %v", got)
	}
	w.Summarizer = &fakeSum{}
	appendTurns(t, st, chatKey, 3)
	if _, _, err := w.Extend(ctx, chatKey, true); err != nil {
		t.Fatal(err)
	}
	if got := w.LastDegraded(chatKey); len(got) != 0 {
		t.Fatalf("after a clean extension LastDegraded = %v", got)
	}
}

// degradingSum summarises extractively but reports a fallback.
type degradingSum struct{ fakeSum }

func (d *degradingSum) Summarize(ctx context.Context, req memory.SummarizeRequest) (memory.SummarizeResult, error) {
	res, err := d.fakeSum.Summarize(ctx, req)
	res.Degraded = []string{"summary_narrative_only"}
	return res, err
}

// countingStore counts the reads triggered() makes.
type countingStore struct {
	memory.Core
	mu    sync.Mutex
	reads int
}

func (c *countingStore) SummaryHead(ctx context.Context, key memory.ChatKey) (*memory.SummaryRecord, error) {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.Core.SummaryHead(ctx, key)
}

func (c *countingStore) Messages(ctx context.Context, key memory.ChatKey, after int64, limit int) ([]memory.Message, error) {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.Core.Messages(ctx, key, after, limit)
}

// A chat found below its trigger is not re-checked until it changes.
func TestIdleChatsAreNotRechecked(t *testing.T) {
	ctx := context.Background()
	cs := &countingStore{Core: openStore(t)}
	settings := func() Settings { s := baseSettings(); s.TriggerTurns = 50; s.TriggerTokens = 100000; return s }
	w := newWorker(cs, &fakeSum{}, "w1", settings)
	w.MinPending = 1
	w.init()
	appendTurns(t, cs, chatKey, 20) // 10 eligible: below both triggers
	if _, err := w.pass(ctx, nil); err != nil {
		t.Fatal(err)
	}
	first := cs.reads
	if first == 0 {
		t.Fatal("the first pass should check the chat")
	}
	for i := 0; i < 5; i++ {
		if _, err := w.pass(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	if cs.reads != first {
		t.Fatalf("idle chat re-checked: %d reads after %d", cs.reads, first)
	}
	appendTurns(t, cs, chatKey, 1)
	if _, err := w.pass(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if cs.reads == first {
		t.Fatal("a changed chat must be checked again")
	}
}
