// Package admit bounds how many CPU-bound reads (contexts, searches) run at
// once, over HTTP and MCP alike. With more at work than cores, each takes
// as long as all of them together; admitted few at a time, in arrival
// order, each finishes in its own time and the rest wait their turn
// (docs/performance.md, "Admission"). It also bounds the request bodies
// held in memory at once (Bytes).
package admit

import (
	"context"
	"sync"
)

// Gate admits at most n reads at once; the rest wait first come, first
// served (a channel serves its blocked senders in order). A nil Gate
// admits everything.
type Gate struct{ slots chan struct{} }

// New returns a Gate of n slots; nil (no limit) when n <= 0.
func New(n int) *Gate {
	if n <= 0 {
		return nil
	}
	return &Gate{slots: make(chan struct{}, n)}
}

// Enter waits for a slot, or returns ctx's error when ctx ends first. A
// nil error must be paired with one Leave.
func (g *Gate) Enter(ctx context.Context) error {
	if g == nil {
		return nil
	}
	select {
	case g.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Leave frees the slot Enter took.
func (g *Gate) Leave() {
	if g != nil {
		<-g.slots
	}
}

// Bytes is a budget of request-body bytes held in memory at once, over
// every request: a body is admitted only while the bodies already taken
// leave room for it, so many large bodies at once cannot grow the process
// past the budget (each is bounded alone by server.body_limit, but not
// their sum). A nil Bytes admits everything.
type Bytes struct {
	mu        sync.Mutex
	used, max int64
}

// NewBytes returns a budget of max bytes; nil (no limit) when max <= 0.
func NewBytes(max int64) *Bytes {
	if max <= 0 {
		return nil
	}
	return &Bytes{max: max}
}

// TryTake takes n bytes of the budget when they fit, without waiting: a
// refused client is told to retry, rather than parking its connection
// (and its unread body) here. A true must be paired with one Give(n).
func (b *Bytes) TryTake(n int64) bool {
	if b == nil || n <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.max {
		return false
	}
	b.used += n
	return true
}

// Give returns n bytes TryTake took.
func (b *Bytes) Give(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}
