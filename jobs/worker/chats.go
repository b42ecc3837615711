package worker

import (
	"sync"
	"time"

	"github.com/contextd/contextd/memory"
)

// chatStates is what this process remembers per chat for the jobs: when
// the summary job last ran and its backoff, the state a chat was last
// found idle in, the fallbacks of the last summary write, and the jobs
// running here.
type chatStates struct {
	mu      sync.Mutex
	chats   map[memory.ChatKey]*chatState
	running map[memory.ChatKey]chan struct{} // jobs this process runs, by chat
}

type chatState struct {
	lastRun  time.Time // last successful background extension
	failures int
	retryAt  time.Time
	degraded []string // fallbacks the head summary was written with
	// idleSeq/idleCursor: the chat's (last_seq, cursor) when it was last
	// found not triggered. The trigger depends only on those two, so the
	// chat is not checked again (no SQL, no token counting) until one moves.
	idleSeq, idleCursor int64
}

func newChatStates() *chatStates {
	return &chatStates{chats: map[memory.ChatKey]*chatState{}, running: map[memory.ChatKey]chan struct{}{}}
}

// get returns the chat's state; the caller holds mu.
func (c *chatStates) get(k memory.ChatKey) *chatState {
	st := c.chats[k]
	if st == nil {
		st = &chatState{}
		c.chats[k] = st
	}
	return st
}

// idle reports whether ch was found not triggered in its current state.
func (c *chatStates) idle(ch memory.Chat) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.get(ch.Key())
	return st.idleSeq == ch.LastSeq && st.idleCursor == ch.SummaryCursor && ch.LastSeq > 0
}

func (c *chatStates) markIdle(ch memory.Chat) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.get(ch.Key())
	st.idleSeq, st.idleCursor = ch.LastSeq, ch.SummaryCursor
}

// waiting reports whether the chat waits out its backoff, or its cooldown
// after the last run.
func (c *chatStates) waiting(k memory.ChatKey, now time.Time, cooldown time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.get(k)
	return now.Before(st.retryAt) || (!st.lastRun.IsZero() && now.Before(st.lastRun.Add(cooldown)))
}

func (c *chatStates) succeeded(k memory.ChatKey, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.get(k)
	st.lastRun, st.failures, st.retryAt = now, 0, time.Time{}
}

// failed schedules a retry with exponential backoff (1s, 2s, 4s ... 5m)
// and returns the failures so far and the delay.
func (c *chatStates) failed(k memory.ChatKey, now time.Time) (int, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.get(k)
	st.failures++
	delay := time.Second << min(st.failures-1, 9)
	delay = min(delay, 5*time.Minute)
	st.retryAt = now.Add(delay)
	return st.failures, delay
}

// prune forgets chats whose cooldown and backoff are long over.
func (c *chatStates) prune(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.chats) < 10000 {
		return
	}
	cut := now.Add(-10 * time.Minute)
	for k, st := range c.chats {
		if st.lastRun.Before(cut) && st.retryAt.Before(cut) {
			delete(c.chats, k)
		}
	}
}

func (c *chatStates) setDegraded(k memory.ChatKey, degraded []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.get(k).degraded = degraded
}

func (c *chatStates) lastDegraded(k memory.ChatKey) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.chats[k]; ok {
		return append([]string(nil), st.degraded...)
	}
	return nil
}

// job returns a channel closed when this process's job on the chat ends
// (nil, which blocks forever, when none runs here).
func (c *chatStates) job(k memory.ChatKey) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running[k]
}

// startJob records that this process runs a job on the chat; the returned
// func ends it.
func (c *chatStates) startJob(k memory.ChatKey) func() {
	done := make(chan struct{})
	c.mu.Lock()
	c.running[k] = done
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.running, k)
		c.mu.Unlock()
		close(done)
	}
}
