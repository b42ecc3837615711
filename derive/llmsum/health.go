package llmsum

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/tmc/langchaingo/llms"
)

// Health is an llms.Model that remembers how its last call went. /readyz
// reports the LLM unavailable while its last call failed, and the
// Condenser on the request path does not call a model that failed within
// DownFor: a context call condensing eight messages waited out the LLM's
// timeout eight times, on every request. Every user of the model (the
// summariser in the background, the Condenser) feeds it; it blocks none
// of their calls itself (the summariser keeps its retries).
type Health struct {
	model llms.Model
	now   func() time.Time

	mu       sync.Mutex
	failedAt time.Time // zero: the last call answered, or none was made
	lastErr  error
}

// DownFor is how long the Condenser leaves a model that failed alone.
const DownFor = 30 * time.Second

// NewHealth wraps model.
func NewHealth(model llms.Model) *Health { return &Health{model: model, now: time.Now} }

// GenerateContent calls the model and records the outcome. A call the
// caller canceled says nothing about the model and is not recorded; one
// that ran out of time is a failure (the model was too slow).
func (h *Health) GenerateContent(ctx context.Context, msgs []llms.MessageContent, opts ...llms.CallOption) (*llms.ContentResponse, error) {
	resp, err := h.model.GenerateContent(ctx, msgs, opts...)
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled)) {
		return resp, err // the clients' wrap the cause in words: ask ctx too
	}
	h.mu.Lock()
	if err == nil {
		h.failedAt, h.lastErr = time.Time{}, nil
	} else {
		h.failedAt, h.lastErr = h.now(), err
	}
	h.mu.Unlock()
	return resp, err
}

// Call is GenerateContent with one prompt.
func (h *Health) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, h, prompt, opts...)
}

// Down reports whether the last call failed, and with what.
func (h *Health) Down() (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.failedAt.IsZero(), h.lastErr
}

// failedWithin reports whether the last call failed less than d ago.
func (h *Health) failedWithin(d time.Duration) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.failedAt.IsZero() && h.now().Sub(h.failedAt) < d
}
