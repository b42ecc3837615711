package background

import (
	"context"
	"sync"
	"sync/atomic"
)

// Passes is what a job that drains a backlog in passes (the indexer, the
// facts job) shares with the requests that wait for it (read-your-writes)
// or ask whether it is behind: the kicks counted, the kicks the last
// successful pass covered, whether the job runs and a pass is under way,
// its last error, and a signal at the end of each pass. The zero value is
// ready to use.
type Passes struct {
	once           sync.Once
	hurry          chan struct{}
	kicks, served  atomic.Uint64
	running, inRun atomic.Bool // inRun: a pass of the running job is under way

	mu      sync.Mutex
	lastErr error
	end     chan struct{} // closed (under mu) when a pass ends
}

func (p *Passes) init() {
	p.once.Do(func() { p.hurry, p.end = make(chan struct{}, 1), make(chan struct{}) })
}

// Hurry is the channel a waiter signals to cut a gathering pass short.
func (p *Passes) Hurry() chan struct{} { p.init(); return p.hurry }

// Kicked counts a kick: something stored that a pass must cover.
func (p *Passes) Kicked() { p.kicks.Add(1) }

// Kicks is how many kicks were counted.
func (p *Passes) Kicks() uint64 { return p.kicks.Load() }

// Starting marks the job running, with a pass under way before its first
// (Pending never sees a running, idle job before it has looked).
func (p *Passes) Starting() {
	p.init()
	p.inRun.Store(true)
	p.running.Store(true)
}

// Stopped marks the job stopped and wakes its waiters.
func (p *Passes) Stopped() {
	p.running.Store(false)
	p.inRun.Store(false)
	p.signalEnd()
}

// Begin starts a pass and returns the kicks it covers: whatever kicked
// before this call committed before the pass lists its backlog.
func (p *Passes) Begin() uint64 {
	p.init()
	p.inRun.Store(true)
	return p.kicks.Load()
}

// End ends a pass that covered covered kicks; a pass that failed serves
// none of them.
func (p *Passes) End(covered uint64, err error) {
	if err == nil {
		p.served.Store(covered)
	}
	p.inRun.Store(false)
	p.signalEnd()
}

func (p *Passes) signalEnd() {
	p.init()
	p.mu.Lock()
	close(p.end)
	p.end = make(chan struct{})
	p.mu.Unlock()
}

// SetErr records the last drain's error (nil once one succeeds).
func (p *Passes) SetErr(err error) {
	p.mu.Lock()
	p.lastErr = err
	p.mu.Unlock()
}

// LastError is the last drain's error.
func (p *Passes) LastError() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastErr
}

// Wait waits until a pass has covered every kick counted before the call,
// hurrying a gathering pass. False without that: the job is not running,
// its last drain failed, or ctx ended first.
func (p *Passes) Wait(ctx context.Context) bool {
	p.init()
	want := p.kicks.Load()
	for p.served.Load() < want {
		p.mu.Lock()
		end, failed := p.end, p.lastErr != nil
		p.mu.Unlock()
		if failed || !p.running.Load() {
			return false
		}
		if p.served.Load() >= want { // a pass ended before end was read
			return true
		}
		select {
		case p.hurry <- struct{}{}:
		default:
		}
		select {
		case <-end:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// Pending reports whether something stored may not be covered yet, as far
// as this process can tell without asking the store: the job is not
// running, a pass is under way, a kick is not served, or the last drain
// failed.
func (p *Passes) Pending() bool {
	return !p.running.Load() || p.inRun.Load() || p.served.Load() < p.kicks.Load() || p.LastError() != nil
}
