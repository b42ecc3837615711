package main

import (
	"context"
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"time"
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

// defaultGCPercent is serve's GOGC when GOGC is not set: the heap may grow
// to 1.8 times the live set between collections, not Go's 2. At 1,000
// chats × 200 turns that took peak RSS from 292–304 MB to 269–271 MB at
// the same CPU per request (2.38–2.60 ms against 2.31–2.86 ms): with a live
// heap of ~100 MB the collector's extra cycles are a small share of the
// CPU (docs/performance.md, "Ninth pass").
const defaultGCPercent = 80

// setGCPercent sets the default GOGC unless the operator set GOGC.
func setGCPercent(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}

// memoryLimitFloor is the limit for a live heap of live bytes: the default,
// or, when the live heap outgrows it, live + 25%, so a larger server never
// collects back to back (GC thrash) but still collects four times as often
// as GOGC=100 would let it.
func memoryLimitFloor(base, live uint64) uint64 {
	return max(base, live+live/4)
}

// keepMemoryLimit sets the soft memory limit and, until ctx ends, raises
// or lowers it each second with the live heap (memoryLimitFloor). It does
// nothing when GOMEMLIMIT is set: the operator's limit (or "off") stands.
func keepMemoryLimit(ctx context.Context, getenv func(string) string, base uint64, log *slog.Logger) {
	if getenv("GOMEMLIMIT") != "" {
		return
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	set := func() {
		metrics.Read(sample)
		var live uint64
		if sample[0].Value.Kind() == metrics.KindUint64 {
			live = sample[0].Value.Uint64()
		}
		debug.SetMemoryLimit(int64(memoryLimitFloor(base, live)))
	}
	set()
	log.Info("memory limit", "soft_limit_bytes", base, "override", "GOMEMLIMIT")
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				set()
			}
		}
	}()
}
