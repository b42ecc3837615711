// Package admit bounds how many CPU-bound reads (contexts, searches) run at
// once, over HTTP and MCP alike. With more at work than cores, each takes
// as long as all of them together; admitted few at a time, in arrival
// order, each finishes in its own time and the rest wait their turn
// (docs/performance.md, "Admission").
package admit

import "context"

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
