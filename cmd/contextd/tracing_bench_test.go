package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/contextd/contextd/api"
	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/rag"
	"github.com/contextd/contextd/telemetry"
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
			body := `{"chat_id":"bench","user_id":"u","query":"what did we decide about the launch?","strategy":"rag_augmented"}`
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/v1/context", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("context: %d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

func benchTracingHandler(b *testing.B, mode string) http.Handler {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	cfg := config.Default()
	cfg.Storage.SQLitePath = filepath.Join(dir, "contextd.db")
	cfg.Vector.EmbeddedPath = filepath.Join(dir, "vectors.db")
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
	svc := a.Service
	svc.Tracer, svc.Store, svc.Scorer = nil, a.Store, &rag.SentenceScorer{Embedder: raw}
	r := svc.Retriever.(*rag.Retriever)
	r.Index, r.Store, r.Embedder = a.Index, a.Store, raw
	return api.NewHandler(api.Deps{Service: svc, Options: apiOptions(cfg.Server), Logger: log, Metrics: a.Metrics, Ready: a.ready})
}
