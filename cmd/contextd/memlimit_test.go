package main

import (
	"context"
	"io"
	"log/slog"
	"math"
	"runtime/debug"
	"testing"
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

// keepMemoryLimit sets the default limit, and leaves an operator's
// GOMEMLIMIT alone.
func TestKeepMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	keepMemoryLimit(ctx, func(k string) string {
		if k == "GOMEMLIMIT" {
			return "off"
		}
		return ""
	}, 64<<30, log)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set the limit became %d", got)
	}
	keepMemoryLimit(ctx, func(string) string { return "" }, 64<<30, log)
	if got := debug.SetMemoryLimit(-1); got != 64<<30 {
		t.Errorf("limit %d, want the default %d", got, int64(64<<30))
	}
}

// setGCPercent sets serve's default GOGC, and leaves an operator's GOGC
// alone.
func TestSetGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	setGCPercent(func(k string) string {
		if k == "GOGC" {
			return "200"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set the percent became %d", got)
	}
	setGCPercent(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("GC percent %d, want the default %d", got, defaultGCPercent)
	}
}
