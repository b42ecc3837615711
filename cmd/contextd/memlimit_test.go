package main

import (
	"context"
	"io"
	"log/slog"
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestMemoryLimitFloor(t *testing.T) {
	const base = 240 << 20
	for _, tc := range []struct {
		name       string
		live, want uint64
	}{
		{"empty server", 0, base},
		{"live set well under the limit", 100 << 20, base},
		{"live + 25% just under", 190 << 20, base},
		{"live + 25% over: raised", 240 << 20, 300 << 20},
		{"ten times the default", 2400 << 20, 3000 << 20},
	} {
		if got := memoryLimitFloor(base, tc.live); got != tc.want {
			t.Errorf("%s: memoryLimitFloor(%d, %d) = %d, want %d", tc.name, base, tc.live, got, tc.want)
		}
	}
}

func TestGCPercent(t *testing.T) {
	for _, tc := range []struct {
		name string
		live uint64
		want int
	}{
		{"empty heap: the cap", 0, maxGCPercent},
		{"a few MB: the cap", 4 << 20, maxGCPercent},
		{"small heap: the headroom binds", 32 << 20, 200},
		{"rounded up", 48 << 20, 134},
		{"the floor binds up to a 128 MB goal", 80 << 20, 60},
		{"over it, the default", 100 << 20, defaultGCPercent},
		{"half of live is the headroom", 128 << 20, defaultGCPercent},
		{"large heap: the default", 400 << 20, defaultGCPercent},
	} {
		if got := gcPercent(tc.live); got != tc.want {
			t.Errorf("%s: gcPercent(%d) = %d, want %d", tc.name, tc.live, got, tc.want)
		}
		if tc.live > 0 {
			if room := tc.live * uint64(gcPercent(tc.live)) / 100; gcPercent(tc.live) < maxGCPercent && room < min(minHeapHeadroom, floorGoal-min(tc.live, floorGoal), tc.live*defaultGCPercent/100) {
				t.Errorf("%s: the heap may grow %d bytes, under the floor", tc.name, room)
			}
		}
	}
}

// keepGCPacing sets the default limit and GOGC for the live heap, and
// leaves an operator's GOMEMLIMIT and GOGC alone, each on its own.
func TestKeepGCPacing(t *testing.T) {
	prevLimit := debug.SetMemoryLimit(math.MaxInt64)
	prevPercent := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetMemoryLimit(prevLimit); debug.SetGCPercent(prevPercent) })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := func(vars ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(vars); i += 2 {
				if vars[i] == k {
					return vars[i+1]
				}
			}
			return ""
		}
	}

	keepGCPacing(ctx, env("GOMEMLIMIT", "off", "GOGC", "100"), 64<<30, log)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set the limit became %d", got)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set the percent became %d", got)
	}

	keepGCPacing(ctx, env("GOGC", "100"), 64<<30, log)
	if got := debug.SetMemoryLimit(-1); got != 64<<30 {
		t.Errorf("limit %d, want the default %d", got, int64(64<<30))
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set the percent became %d", got)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	keepGCPacing(ctx, env("GOMEMLIMIT", "off"), 64<<30, log)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set the limit became %d", got)
	}
	// The test binary's live heap is small: the headroom sets GOGC.
	if got := debug.SetGCPercent(100); got <= defaultGCPercent {
		t.Errorf("GC percent %d with a small live heap, want over %d", got, defaultGCPercent)
	}
}

// afterEachGC calls f after every collection, and stops once ctx ends.
func TestAfterEachGC(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := make(chan struct{}, 16)
	afterEachGC(ctx, func() { calls <- struct{}{} })
	for i := range 3 {
		runtime.GC()
		select {
		case <-calls:
		case <-time.After(5 * time.Second):
			t.Fatalf("no call after collection %d", i+1)
		}
	}
	cancel()
	runtime.GC() // runs the armed sentinel's cleanup, which sees ctx done
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	for len(calls) > 0 {
		<-calls // at most the cleanup racing the cancel
	}
	runtime.GC()
	runtime.GC()
	select {
	case <-calls:
		t.Error("called after ctx ended")
	case <-time.After(100 * time.Millisecond):
	}
}
