// Package background holds what the background workers (the summariser,
// the indexer) share about running beside the request path.
package background

import "runtime"

// Yield is called by a background worker between units of its work (a
// chat, an episode, a batch of turns). The worker goes to the back of the
// run queue, so requests that became runnable meanwhile run first; without
// it, a worker kept one of the two Ps of a small server for its whole
// time slice (up to 10 ms) while requests queued behind the other.
// Measured under `CHURN=200 make bench-http` (five alternating rounds):
// the p99 of `/v1/context` 3–4 ms lower (docs/performance.md, "Eleventh
// pass"). It never starves the worker: the scheduler takes from that
// queue at least every 61 turns and whenever a P has nothing else.
func Yield() { runtime.Gosched() }
