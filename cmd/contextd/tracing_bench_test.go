//go:build unix

package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/rag"
	"github.com/contextd/contextd/telemetry"
	"github.com/contextd/contextd/transport/api"
)

// BenchmarkContextTracing is POST /v1/context (rag_augmented, a summary, 40
// stored turns) through the whole handler in three wirings, from one run:
//
//   - baseline: no tracing at all: no server-span middleware, no store,
//     index or embedder decorators, the engine's Tracer nil;
//   - off: the default wiring with tracing off: every layer in place on the
//     no-op tracer (what `contextd serve` runs without an endpoint);
//   - on: every span sampled and exported by the batch processor (into a
//     discarding exporter, so the collector's cost is not measured).
//
// Report off/baseline (the cost of tracing off) and on/off.
func BenchmarkContextTracing(b *testing.B) {
	for _, mode := range []string{"baseline", "off", "on"} {
		b.Run(mode, func(b *testing.B) {
			h := benchTracingHandler(b, mode)
			b.ReportAllocs()
			for b.Loop() {
				serveContext(b, h)
			}
		})
	}
}

// BenchmarkContextTracingInterleaved runs the three wirings of
// BenchmarkContextTracing in alternation (one round = 50 requests of each,
// the order rotating), so a loaded machine slows them alike, and reports the
// ratios of process CPU time per request (CPU time, unlike wall time, does
// not count waiting for a core; it does count the exporter's goroutine and
// the GC). One b.N is one round.
func BenchmarkContextTracingInterleaved(b *testing.B) {
	modes := []string{"baseline", "off", "on"}
	hs := map[string]http.Handler{}
	for _, m := range modes {
		hs[m] = benchTracingHandler(b, m)
	}
	const chunk = 50
	cpu := map[string]time.Duration{}
	wall := map[string]time.Duration{}
	reqs := 0
	for round := 0; b.Loop(); round++ {
		for k := range modes {
			m := modes[(round+k)%len(modes)]
			c0, w0 := processCPU(b), time.Now()
			for range chunk {
				serveContext(b, hs[m])
			}
			cpu[m] += processCPU(b) - c0
			wall[m] += time.Since(w0)
		}
		reqs += chunk
	}
	for _, m := range modes {
		b.ReportMetric(float64(cpu[m].Microseconds())/float64(reqs), m+"-cpu-µs/req")
	}
	b.ReportMetric(float64(cpu["off"])/float64(cpu["baseline"]), "off/baseline-cpu")
	b.ReportMetric(float64(cpu["on"])/float64(cpu["off"]), "on/off-cpu")
	b.ReportMetric(float64(wall["off"])/float64(wall["baseline"]), "off/baseline-wall")
	b.ReportMetric(float64(wall["on"])/float64(wall["off"]), "on/off-wall")
}

const benchContextBody = `{"chat_id":"bench","user_id":"u","query":"what did we decide about the launch?","strategy":"rag_augmented"}`

func serveContext(b *testing.B, h http.Handler) {
	req := httptest.NewRequest(http.MethodPost, "/v1/context", strings.NewReader(benchContextBody))
	req.Host = "localhost" // httptest's example.com is not a name of this server (checkHost)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("context: %d %s", rec.Code, rec.Body)
	}
}

// processCPU is the process's user+system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchTracingHandler(b *testing.B, mode string) http.Handler {
	b.Helper()
	ctx := context.Background()
	cfg := tempConfig(b)
	log := slog.New(slog.DiscardHandler)
	tr, _ := telemetry.Setup(ctx, telemetry.Config{}) // off
	if mode == "on" {
		tr = telemetry.WithExporter(tracetest.NewNoopExporter(), telemetry.Config{SampleRatio: 1})
	}
	a, err := buildTraced(ctx, cfg, log, tr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(a.Close)
	in := engine.AppendInput{UserID: "u"}
	for i := range 40 {
		in.Messages = append(in.Messages, engine.InMessage{Role: "user",
			Content: "point " + strconv.Itoa(i) + ": we decided the launch moves to week " + strconv.Itoa(i%7)})
	}
	if _, err := a.Service.Append(ctx, "default", "bench", in); err != nil {
		b.Fatal(err)
	}
	if _, err := a.Indexer.DrainOnce(ctx); err != nil {
		b.Fatal(err)
	}
	if err := a.Worker.Drain(ctx); err != nil {
		b.Fatal(err)
	}
	if mode != "baseline" {
		return a.Handler
	}
	// Strip every tracing layer: the engine on the raw store, index and
	// embedder, the handler without the server-span middleware.
	raw := rag.NewHashingEmbedder(cfg.Embedder.Dimensions)
	d := a.deps
	d.Tracer, d.Store, d.Scorer = nil, a.Store, &rag.SentenceScorer{Embedder: raw}
	r := a.Retriever
	r.Index, r.Store, r.Embedder = a.Index, a.Store, raw
	svc := engine.New(d)
	return api.NewHandler(api.Deps{Service: svc, Options: apiOptions(cfg), Logger: log, Metrics: a.Metrics, Ready: a.ready})
}
