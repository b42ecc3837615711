package loadgen

import (
	"context"
	"sync/atomic"
	"time"
)

// clock is time as the open loop sees it; tests replace it.
type clock interface {
	Now() time.Time
	// SleepUntil returns at t or later, or with ctx's error when it ends first.
	SleepUntil(ctx context.Context, t time.Time) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) SleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// plan is an open-loop schedule (as wrk2 sends): request i (0 <= i < n) is
// due at start + i/rate, whatever became of the requests before it. Any free
// client takes the next request not yet taken, so a slow answer holds back
// only the requests that find every client busy, and a request's latency
// counts from when it was due, not from when a client got to it: time spent
// queued behind a stalled server is measured, not omitted (coordinated
// omission). n = floor(rate * duration) bounds the run in count; cutoff
// bounds it in time: a request still untaken when a client looks at the
// clock past cutoff is not sent and counts as unsent.
type plan struct {
	clk    clock
	start  time.Time
	rate   float64
	n      int64
	cutoff time.Time
	next   atomic.Int64
	unsent atomic.Int64
}

func newPlan(clk clock, start time.Time, rate float64, d, grace time.Duration) *plan {
	return &plan{clk: clk, start: start, rate: rate, n: int64(rate * d.Seconds()), cutoff: start.Add(d + grace)}
}

// due is when request i is to be sent: start + i/rate, computed from i
// (not by adding intervals), so rounding does not drift over a long run.
func (s *plan) due(i int64) time.Time {
	return s.start.Add(time.Duration(float64(i) / s.rate * float64(time.Second)))
}

// take waits until the next untaken request is due and returns its index
// and due time; ok is false when every request is taken, when the cutoff
// has passed (the untaken rest then count as unsent) or ctx ended.
func (s *plan) take(ctx context.Context) (i int64, due time.Time, ok bool) {
	if s.clk.Now().After(s.cutoff) {
		if rest := s.n - s.next.Swap(s.n); rest > 0 {
			s.unsent.Add(rest)
		}
		return 0, time.Time{}, false
	}
	i = s.next.Add(1) - 1
	if i >= s.n {
		return 0, time.Time{}, false
	}
	due = s.due(i)
	if err := s.clk.SleepUntil(ctx, due); err != nil {
		return 0, time.Time{}, false
	}
	return i, due, true
}

// lateness is how late a request due at due left at sent, from a client
// whose previous request was answered at prevDone (zero: none). busy says
// that client was still waiting for that answer when the request fell due:
// since a free client takes the next request at once, every client was
// busy then (waiting on the server, mostly). Otherwise a client was free
// and the lag is the load generator's own (its timer or goroutine ran
// late: the machine's CPU was taken by something else).
func lateness(due, sent, prevDone time.Time) (lag time.Duration, busy bool) {
	return sent.Sub(due), prevDone.After(due)
}
