package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock's time moves only when told to, or when a sleeper asks for a
// later time (it then jumps there): the schedule's arithmetic is checked
// without depending on how fast this machine is.
type fakeClock struct {
	mu        sync.Mutex
	now       time.Time
	oversleep time.Duration // a sleeper wakes this much after its time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t.Add(c.oversleep)
	}
	return ctx.Err()
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestPlanDueTimes(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &fakeClock{now: t0}
	p := newPlan(clk, t0, 300, 10*time.Second, time.Second)
	if p.n != 3000 {
		t.Fatalf("n = %d, want floor(300/s * 10s) = 3000", p.n)
	}
	// Request i is due at exactly t0 + i/R (to the nanosecond's rounding),
	// with no drift at the end of the run.
	for _, i := range []int64{0, 1, 2, 3, 299, 300, 1499, 2999} {
		want := t0.Add(time.Duration(i) * time.Second / 300)
		if got := p.due(i); got.Sub(want).Abs() > time.Nanosecond {
			t.Errorf("due(%d) = +%s, want +%s", i, got.Sub(t0), want.Sub(t0))
		}
	}
	// Taken in order, each returned at its due time when nobody is late.
	for want := range int64(3000) {
		i, due, ok := p.take(context.Background())
		if !ok || i != want || !due.Equal(p.due(want)) || !clk.Now().Equal(due) {
			t.Fatalf("take %d: got %d at +%s (ok %v), clock +%s", want, i, due.Sub(t0), ok, clk.Now().Sub(t0))
		}
	}
	if _, _, ok := p.take(context.Background()); ok {
		t.Fatal("took a request past n")
	}
	if p.unsent.Load() != 0 {
		t.Fatalf("unsent %d with all sent", p.unsent.Load())
	}
}

// One client and a server four times slower than the rate: each request
// leaves when the one before is answered, later and later, and its latency
// is its wait for the client plus its service, counted from when it was due.
func TestPlanLatencyIncludesQueueing(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &fakeClock{now: t0}
	p := newPlan(clk, t0, 100, 50*time.Millisecond, time.Hour) // 5 requests, 10 ms apart
	const service = 40 * time.Millisecond
	var lat, lag []time.Duration
	var busy []bool
	var prevDone time.Time
	for {
		_, due, ok := p.take(context.Background())
		if !ok {
			break
		}
		l, b := lateness(due, clk.Now(), prevDone)
		lag, busy = append(lag, l), append(busy, b)
		clk.advance(service)
		prevDone = clk.Now()
		lat = append(lat, prevDone.Sub(due))
	}
	wantLat := []time.Duration{40, 70, 100, 130, 160}
	wantLag := []time.Duration{0, 30, 60, 90, 120}
	if len(lat) != len(wantLat) {
		t.Fatalf("%d requests, want %d", len(lat), len(wantLat))
	}
	for k := range lat {
		if lat[k] != wantLat[k]*time.Millisecond || lag[k] != wantLag[k]*time.Millisecond {
			t.Errorf("request %d: latency %s lag %s, want %dms and %dms", k, lat[k], lag[k], wantLat[k], wantLag[k])
		}
		if lat[k] != lag[k]+service {
			t.Errorf("request %d: latency %s is not its lag %s plus the service %s", k, lat[k], lag[k], service)
		}
		// All but the first fell due while the one client was busy.
		if busy[k] != (k > 0) {
			t.Errorf("request %d: busy %v", k, busy[k])
		}
	}
}

// A generator whose timers wake late (CPU starved) sends late although a
// client was waiting: that lag is told apart from a busy client's.
func TestPlanLateWakeIsTheGenerators(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &fakeClock{now: t0, oversleep: 3 * time.Millisecond}
	p := newPlan(clk, t0, 100, 30*time.Millisecond, time.Hour) // due at 0, 10, 20 ms
	var prevDone time.Time
	for k := range 3 {
		_, due, ok := p.take(context.Background())
		if !ok {
			t.Fatalf("take %d failed", k)
		}
		lag, busy := lateness(due, clk.Now(), prevDone)
		clk.advance(time.Millisecond) // a fast server
		prevDone = clk.Now()
		// Request 0 is due at once (no sleep, no oversleep); 1 and 2 are
		// slept for and woken 3 ms late.
		want := 3 * time.Millisecond
		if k == 0 {
			want = 0
		}
		if busy || lag != want {
			t.Errorf("request %d: busy %v lag %s, want a free client and %s", k, busy, lag, want)
		}
	}
}

func TestPlanCutoffCountsUnsent(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &fakeClock{now: t0}
	p := newPlan(clk, t0, 10, time.Second, time.Second) // 10 requests, cutoff at +2s
	for range 3 {
		if _, _, ok := p.take(context.Background()); !ok {
			t.Fatal("take failed before the cutoff")
		}
	}
	clk.advance(5 * time.Second) // a stalled server
	if _, _, ok := p.take(context.Background()); ok {
		t.Fatal("took a request past the cutoff")
	}
	if _, _, ok := p.take(context.Background()); ok {
		t.Fatal("took a request past the cutoff, twice")
	}
	if got := p.unsent.Load(); got != 7 {
		t.Fatalf("unsent %d, want the 7 untaken", got)
	}
}

func TestPlanEachRequestOnce(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := &fakeClock{now: t0}
	p := newPlan(clk, t0, 1000, 2*time.Second, time.Hour)
	seen := make([]int32, p.n)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				i, _, ok := p.take(context.Background())
				if !ok {
					return
				}
				seen[i]++ // distinct i per take: no race if correct
			}
		})
	}
	wg.Wait()
	for i, n := range seen {
		if n != 1 {
			t.Fatalf("request %d taken %d times", i, n)
		}
	}
}

// Through HTTP with a server slower than the rate and one client: the
// requests queue behind each other, so they leave late, and each one's
// latency includes how late it left. Only lower bounds are asserted (a
// sleep takes at least its time), never how fast anything was.
func TestOpenLoopMeasuresQueueingThroughHTTP(t *testing.T) {
	const service = 20 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(service)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"usage":{"budget_tokens":500,"total_tokens":1}}`))
	}))
	defer srv.Close()
	o := Options{Chats: 1, Turns: 10, Clients: 1, Duration: 100 * time.Millisecond, Rate: 200, Mix: 1, Budget: 500}
	if err := o.Check(); err != nil {
		t.Fatal(err)
	}
	client := newClient(1)
	defer client.CloseIdleConnections()
	ph, err := measure(context.Background(), client, "slow", srv.URL, Corpus{Seed: 1}, o, false)
	if err != nil {
		t.Fatal(err)
	}
	op := ph.Open
	if op == nil || op.Scheduled != 20 {
		t.Fatalf("open loop %+v: want 20 requests due (200/s for 0.1s)", op)
	}
	row, _ := ph.Row(routeNames[routeContext])
	// 20 requests due in 100 ms, one client, >= 20 ms each, cutoff 100 ms
	// after the end: at most 11 can be sent; the rest are reported unsent.
	if row.Requests+op.Unsent != op.Scheduled || op.Unsent < 9 || row.Errors != 0 {
		t.Fatalf("sent %d (%d errors) + unsent %d, want %d in all and >= 9 unsent", row.Requests, row.Errors, op.Unsent, op.Scheduled)
	}
	// The second request was due at 5 ms and left after the first answer
	// (>= 20 ms): at least 15 ms late.
	if op.LagMax < service-5*time.Millisecond {
		t.Fatalf("max lag %s, want >= 15ms", op.LagMax)
	}
	// The request that left latest still took its service after its lag,
	// and its latency counts both.
	if row.Max < op.LagMax+service {
		t.Fatalf("max latency %s < max lag %s + service %s: the queueing is not counted", row.Max, op.LagMax, service)
	}
	// Every request but the first found the one client busy.
	if op.Busy != row.Requests-1 {
		t.Fatalf("%d requests found the client busy, want all %d but the first", op.Busy, row.Requests)
	}
	if row.P50 > row.P99 || row.P99 > row.P999 || row.P999 > row.Max {
		t.Fatalf("quantiles out of order: %+v", row)
	}
}

// A warmup runs the schedule but records nothing: the server sees the
// warmup's requests and the measured ones, the report only the latter.
func TestWarmupIsNotRecorded(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	client := newClient(4)
	defer client.CloseIdleConnections()
	for _, rate := range []float64{40, 0} {
		hits.Store(0)
		o := Options{Chats: 1, Turns: 10, Clients: 4, Duration: 500 * time.Millisecond, Warmup: 250 * time.Millisecond, Rate: rate, Mix: 1, Budget: 500}
		if err := o.Check(); err != nil {
			t.Fatal(err)
		}
		ph, err := measure(context.Background(), client, "w", srv.URL, Corpus{Seed: 1}, o, false)
		if err != nil {
			t.Fatal(err)
		}
		row, _ := ph.Row("all")
		if rate > 0 {
			// 40/s: 10 due in the 250 ms of warmup, 20 in the 500 ms measured.
			if ph.Open.Scheduled != 20 || row.Requests+ph.Open.Unsent != 20 || hits.Load() != 10+row.Requests {
				t.Fatalf("open loop: scheduled %d, recorded %d, unsent %d, server saw %d; want 20, 20 in all, and 10 more seen",
					ph.Open.Scheduled, row.Requests, ph.Open.Unsent, hits.Load())
			}
		} else if row.Requests == 0 || hits.Load() <= row.Requests {
			t.Fatalf("closed loop: recorded %d of the %d the server saw; want some, and fewer than it saw", row.Requests, hits.Load())
		}
	}
}
