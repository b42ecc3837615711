package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// memProbe reads the server's memory: from /proc/self and the Go runtime
// when contextd runs in this process (then the figures include the load
// generator), else from the target's /metrics.
type memProbe struct {
	inProcess bool
	client    *http.Client
	base      string
}

func newMemProbe(inProcess bool, client *http.Client, base string) memProbe {
	return memProbe{inProcess: inProcess, client: client, base: base}
}

// peakRSS is VmHWM in bytes in-process; -1 when unknown (remote target).
func (m memProbe) peakRSS() int64 {
	if !m.inProcess {
		return -1
	}
	return procStatus("VmHWM")
}

// resetPeak resets VmHWM (Linux: "5" into /proc/self/clear_refs), so the
// measured phase's peak is told apart from the pre-load's.
func (m memProbe) resetPeak() bool {
	if !m.inProcess {
		return false
	}
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

func (m memProbe) heapNow() int64 {
	if m.inProcess {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapInuse)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	v, err := scrape(ctx, m.client, m.base, "go_memstats_heap_inuse_bytes")
	if err != nil {
		return -1
	}
	if h, ok := v["go_memstats_heap_inuse_bytes"]; ok {
		return int64(h)
	}
	return -1
}

type memSample struct{ rss, heap int64 }

// sample reads RSS and heap in use once a second for at most d plus a
// margin; the returned stop ends it and gives the maxima (-1: unknown).
func (m memProbe) sample(d time.Duration) (stop func() memSample) {
	ctx, cancel := context.WithTimeout(context.Background(), d+time.Minute)
	out := make(chan memSample, 1)
	go func() {
		best := memSample{rss: -1, heap: -1}
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			s := m.read(ctx)
			best.rss, best.heap = max(best.rss, s.rss), max(best.heap, s.heap)
			select {
			case <-ctx.Done():
				out <- best
				return
			case <-t.C:
			}
		}
	}()
	return func() memSample { cancel(); return <-out }
}

func (m memProbe) read(ctx context.Context) memSample {
	if m.inProcess {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return memSample{rss: procStatus("VmRSS"), heap: int64(ms.HeapInuse)}
	}
	v, err := scrape(ctx, m.client, m.base, "process_resident_memory_bytes", "go_memstats_heap_inuse_bytes")
	if err != nil {
		return memSample{rss: -1, heap: -1}
	}
	s := memSample{rss: -1, heap: -1}
	if r, ok := v["process_resident_memory_bytes"]; ok {
		s.rss = int64(r)
	}
	if h, ok := v["go_memstats_heap_inuse_bytes"]; ok {
		s.heap = int64(h)
	}
	return s
}

// procStatus reads a "kB" field of /proc/self/status in bytes; -1 when
// absent (not Linux).
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	return parseStatus(b, field)
}

func parseStatus(b []byte, field string) int64 {
	for line := range strings.SplitSeq(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, field+":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return -1
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return -1
		}
		return n << 10
	}
	return -1
}

// scrape reads unlabelled samples of the named metrics from /metrics.
func scrape(ctx context.Context, client *http.Client, base string, names ...string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: HTTP %d", resp.StatusCode)
	}
	var body bytes.Buffer
	if _, err := body.ReadFrom(resp.Body); err != nil {
		return nil, err
	}
	return parseMetrics(body.Bytes(), names...), nil
}

// parseMetrics picks "name value" lines of the Prometheus text format.
func parseMetrics(b []byte, names ...string) map[string]float64 {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || !want[f[0]] {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			out[f[0]] = v
		}
	}
	return out
}

// loadAvg is the first three fields of /proc/loadavg ("" when absent).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// cpuTime is the server process's CPU time (user + system) so far: this
// process's rusage in-process (then including the load generator), else
// process_cpu_seconds_total from /metrics; -1 when unknown.
func (m memProbe) cpuTime(ctx context.Context) time.Duration {
	if m.inProcess {
		return selfCPUTime()
	}
	v, err := scrape(ctx, m.client, m.base, "process_cpu_seconds_total")
	if err != nil {
		return -1
	}
	s, ok := v["process_cpu_seconds_total"]
	if !ok {
		return -1
	}
	return time.Duration(s * float64(time.Second))
}
