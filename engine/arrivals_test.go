package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
)

// drawFacts runs one facts-on-arrival drain over s's store, as the
// background job does after an append.
func drawFacts(t testing.TB, s *Service) {
	t.Helper()
	a := &Arrivals{svc: s, Store: s.store.(memory.Backend)}
	if _, err := a.DrainOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// An append only stores and kicks: its facts are drawn by the job, from a
// durable cursor, so turns appended before a crash (a new job on the same
// store) are drawn after it, and each append's turns are drawn once.
func TestFactsAreDrawnOffTheAppend(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	st := s.store.(memory.Backend)
	s.roles.facts, s.roles.profiles = st, st
	kicked := &Arrivals{svc: s, Store: st}
	s.jobs.arrivals = kicked
	for _, text := range []string{"I'm vegetarian.", "I live in Lisbon."} {
		if _, err := s.Append(ctx, "default", "c1", AppendInput{UserID: "u1", Messages: []InMessage{{Role: "user", Content: text}}}); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name    string
		drain   bool
		facts   int
		undrawn int64
	}{
		{"after the appends", false, 0, 2},
		{"after a restart's drain", true, 2, 0},
		{"drained again", true, 2, 0},
	}
	for _, st2 := range steps {
		if st2.drain {
			drawFacts(t, s) // a new job: nothing but the store carries over
		}
		fs, _, err := s.Facts(ctx, "default", "c1", 0, 10, true)
		if err != nil || len(fs) != st2.facts {
			t.Errorf("%s: %d facts (%v), want %d", st2.name, len(fs), err, st2.facts)
		}
		b, err := st.BacklogSizes(ctx)
		if err != nil || b.UndrawnTurns != st2.undrawn {
			t.Errorf("%s: undrawn turns %d (%v), want %d", st2.name, b.UndrawnTurns, err, st2.undrawn)
		}
	}
	if kicked.passes.Kicks() != 2 {
		t.Errorf("appends kicked the job %d times, want 2", kicked.passes.Kicks())
	}
}

// Arrivals.Pending, the gate before a request reads its chat's lag: true
// before Run (a backlog from before a restart) and while an append's kick
// is not served; false once Run has drawn everything kicked.
func TestArrivalsPending(t *testing.T) {
	s := newTestService(t)
	st := s.store.(memory.Backend)
	s.roles.facts, s.roles.profiles = st, st
	a := &Arrivals{svc: s, Store: st, PollInterval: 1e12}
	s.jobs.arrivals = a
	if !a.Pending() {
		t.Error("before Run: not pending")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = a.Run(ctx) }()
	waitUntil(t, func() bool { return !a.Pending() })
	if _, err := s.Append(ctx, "default", "c1", AppendInput{UserID: "u1", Messages: []InMessage{{Role: "user", Content: "I live in Lisbon."}}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := st.BacklogSizes(ctx); b.UndrawnTurns > 0 && !a.Pending() {
		t.Error("an append's kick not served: not pending")
	}
	waitUntil(t, func() bool { return !a.Pending() })
	if b, _ := st.BacklogSizes(ctx); b.UndrawnTurns != 0 {
		t.Errorf("not pending with %d undrawn turns", b.UndrawnTurns)
	}
}

// waitUntil polls cond for up to 10 s.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 10s")
		}
	}
}

// fullArrivals fails the facts job's cursor write as a full disk does.
type fullArrivals struct{ memory.Backend }

func (f fullArrivals) Done(ctx context.Context, kind memory.WorkKind, marks []memory.Mark) ([]memory.ChatKey, error) {
	if kind != memory.DrawFacts {
		return f.Backend.Done(ctx, kind, marks)
	}
	return nil, fmt.Errorf("sqlite: done draw_facts: %w", memory.ErrFull)
}

// TestArrivalsFullDiskMarksStorageFull: a facts pass whose write finds the
// disk full marks storage full (/readyz degraded) as a request's write
// does.
func TestArrivalsFullDiskMarksStorageFull(t *testing.T) {
	s := newTestService(t)
	st := s.store.(memory.Backend)
	s.roles.facts, s.roles.profiles = st, st
	a := &Arrivals{svc: s, Store: fullArrivals{st}, PollInterval: 1e12}
	s.jobs.arrivals = a
	appendN(t, s, "c1", 1, 3, 1) // before Run: StorageFull must come from the job
	if s.StorageFull() {
		t.Fatal("storage full before the job ran")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = a.Run(ctx) }()
	waitUntil(t, s.StorageFull)
}
