package main

import (
	"context"
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// defaultMemoryLimit is serve's soft memory limit for the Go runtime when
// GOMEMLIMIT is not set. At 1,000 chats × 200 turns on the embedded default
// the live heap is ~190 MB, and Go's default (GOGC=100, no limit) let the
// heap reach twice that between collections (peak RSS ~620 MB); the limit
// makes the GC collect before the heap passes it, and return freed memory
// to the OS. It is where throughput stays (the GC collects about 1.5 times
// as often as GOGC=100 would there): 240 MiB holds RSS to 300 MB but
// collects four times as often and costs a third of the req/s (measured,
// docs/performance.md "Memory"). docs/operations.md, "Memory".
const defaultMemoryLimit = 320 << 20

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
