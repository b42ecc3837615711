package embedded

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// The cache's byte bound holds for what it really keeps on the heap: a
// full cache of small payloads (where the entry's own structs dominate)
// and of large ones stays within its budget, measured by the runtime.
func TestPayloadCacheBoundIsRealHeap(t *testing.T) {
	const budget = 4 << 20
	for _, tc := range []struct {
		name    string
		content int
	}{
		{"tiny payloads", 8},
		{"turn-sized payloads", 200},
		{"large payloads", 4000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := heapInUse()
			c := newPayloadCache(budget)
			gen := c.getAll(func(int) payloadKey { return payloadKey{} }, nil, nil)
			tenant, chat := "tenant", "chat"
			for i := range 4 * budget / (tc.content + 1) {
				p := payload{role: internRole([]byte("assistant")), content: strings.Repeat("x", tc.content), ok: true}
				c.put(gen, payloadKey{tenant, chat, int64(i)}, p)
			}
			if c.bytes > budget {
				t.Fatalf("counted %d bytes, budget %d", c.bytes, budget)
			}
			used := heapInUse() - before
			// 25% for the map's growth steps, which the count averages.
			t.Logf("%d bytes of heap, %d entries (%d bytes an entry)", used, len(c.byKey), used/max(len(c.byKey), 1))
			if used > budget*5/4 {
				t.Errorf("cache holds %d bytes of heap (%d entries), budget %d", used, len(c.byKey), budget)
			}
			runtime.KeepAlive(c)
		})
	}
}

func heapInUse() int {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int(m.HeapAlloc)
}

// Common roles come back as one shared string, not one copy per payload.
func TestInternRole(t *testing.T) {
	for _, tc := range []struct {
		in     string
		shared bool
	}{
		{"user", true}, {"assistant", true}, {"system", true}, {"tool", true}, {"narrator", false}, {"", false},
	} {
		a, b := internRole([]byte(tc.in)), internRole([]byte(tc.in))
		if a != tc.in {
			t.Errorf("internRole(%q) = %q", tc.in, a)
		}
		if same := len(a) > 0 && unsafe.StringData(a) == unsafe.StringData(b); same != tc.shared {
			t.Errorf("internRole(%q) shared = %v, want %v", tc.in, same, tc.shared)
		}
	}
}
