package main

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// defaultMemoryLimit is serve's soft memory limit for the Go runtime when
// GOMEMLIMIT is not set: the GC collects before the heap passes it, and
// returns freed memory to the OS, instead of letting a large live heap
// double between collections. At 1,000 chats × 200 turns on the embedded
// default the live heap is ~100 MB since the index's vectors moved to a
// scratch file, so Go's own pacing stays under it (peak RSS ~295 MB); it
// binds on larger servers, and when the live heap was ~190 MB it held RSS
// at ~380 MB instead of ~620 (docs/performance.md "Memory";
// docs/operations.md, "Memory").
const defaultMemoryLimit = 320 << 20

// defaultGCPercent is serve's GOGC when GOGC is not set and the live heap
// is large (past ~92 MB, where 40% of it is more than the headroom floor
// leaves under floorGoal): the heap may grow to 1.4 times the live set
// between collections, not Go's 2. Most of a large live heap is the
// embedded index's pointer-free columns and bounded caches, which a
// collection marks quickly, so collecting more often costs little: at
// 1,000 chats × 1,000 turns 50 took peak RSS from 364 to 316–325 MB (80
// before), and 40 from 304–306 to 281–283 MB, at no measurable cost in
// contexts a second (docs/performance.md, "Ninth pass", "Thirty-second
// pass" and "Thirty-eighth pass").
const defaultGCPercent = 40

// minHeapHeadroom is the least the heap may grow between collections. A
// ratio alone makes a small live heap collect very often: at 200 chats
// (22 MB live) 80% let the heap grow 18 MB, and at `running_summary`'s
// 230 MB/s of garbage that was twenty collections a second, each with
// write barriers on for a fifth of the time and allocating goroutines
// parked at its start. With this floor a small server collects about
// four times a second and a large one paces as before (docs/performance.md,
// "Eleventh pass"); floorGoal bounds the floor between the two.
const minHeapHeadroom = 64 << 20

// maxGCPercent bounds gcPercent for a nearly empty heap; the soft memory
// limit bounds the heap in any case.
const maxGCPercent = 1000

// floorGoal bounds what the headroom floor may make the heap goal: a
// live heap of 64–128 MB (1,000 chats × 1,000 turns holds ~100 MB) grew
// by the whole 64 MB floor, 50–100% of itself, and the peak RSS with it
// (docs/performance.md, "Thirty-fifth pass"). A heap that reaches it
// collects four times as seldom as a 22 MB one at the floor did.
const floorGoal = 2 * minHeapHeadroom

// gcPercent is the GOGC that lets a live heap of live bytes grow by
// defaultGCPercent, or by minHeapHeadroom as long as that keeps the goal
// within floorGoal, whichever is more.
func gcPercent(live uint64) int {
	if live == 0 {
		return maxGCPercent
	}
	room := uint64(minHeapHeadroom)
	if live+room > floorGoal {
		room = floorGoal - min(live, floorGoal)
	}
	return min(maxGCPercent, max(defaultGCPercent, int((room*100+live-1)/live)))
}

// memoryLimitFloor is the limit for a live heap of live bytes: the default,
// or, when the live heap outgrows it, live + 25%, so a larger server never
// collects back to back (GC thrash) but still collects four times as often
// as GOGC=100 would let it.
func memoryLimitFloor(base, live uint64) uint64 {
	return max(base, live+live/4)
}

// gcPacer keeps the collector's settings in step with the live heap: the
// soft memory limit (memoryLimitFloor) unless GOMEMLIMIT is set, and GOGC
// (gcPercent) unless GOGC is set. The operator's setting, or "off", stands.
type gcPacer struct {
	limit, percent bool // ours to set
	base           uint64
	sample         []metrics.Sample
}

func newGCPacer(getenv func(string) string, base uint64) *gcPacer {
	return &gcPacer{
		limit: getenv("GOMEMLIMIT") == "", percent: getenv("GOGC") == "", base: base,
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}},
	}
}

// set applies the settings for the heap the last collection found live.
// Both take effect on the cycle under way, without stopping the world.
func (g *gcPacer) set() {
	metrics.Read(g.sample)
	var live uint64
	if g.sample[0].Value.Kind() == metrics.KindUint64 {
		live = g.sample[0].Value.Uint64()
	}
	if g.limit {
		debug.SetMemoryLimit(int64(memoryLimitFloor(g.base, live)))
	}
	if g.percent {
		debug.SetGCPercent(gcPercent(live))
	}
}

// keepGCPacing sets the collector's settings (gcPacer) now and after every
// collection until ctx ends. After each one, not on a timer: while the
// live heap grows fast (an import), a percent set for last second's
// smaller heap would let the next goal overshoot by its growth times that
// percent (measured: 13 MB more peak RSS at 1,000 chats × 200 turns).
func keepGCPacing(ctx context.Context, getenv func(string) string, base uint64, log *slog.Logger) {
	g := newGCPacer(getenv, base)
	if !g.limit && !g.percent {
		return
	}
	g.set()
	afterEachGC(ctx, g.set)
	var attrs []any
	if g.limit {
		attrs = append(attrs, "soft_limit_bytes", base)
	}
	if g.percent {
		attrs = append(attrs, "gc_percent", defaultGCPercent, "min_heap_headroom_bytes", minHeapHeadroom)
	}
	log.Info("gc pacing (GOMEMLIMIT, GOGC override)", attrs...)
}

// afterEachGC calls f, on the runtime's cleanup goroutine, after each
// collection until ctx ends: a cleanup on an unreachable sentinel runs
// once a collection has found it garbage, and arms the next sentinel.
func afterEachGC(ctx context.Context, f func()) {
	type sentinel struct{ _ *byte } // holds a pointer: never in the tiny allocator, whose blocks outlive their objects
	var arm func()
	arm = func() {
		runtime.AddCleanup(&sentinel{}, func(struct{}) {
			if ctx.Err() == nil {
				f()
				arm()
			}
		}, struct{}{})
	}
	arm()
}
