package main

import (
	"context"
	"log/slog"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/internal/metrics"
	"github.com/contextd/contextd/telemetry"
)

// tracingShutdownTimeout bounds the flush of queued spans at shutdown: a
// collector that is down must not hold SIGTERM up.
const tracingShutdownTimeout = 5 * time.Second

// startTracing starts OpenTelemetry tracing as the telemetry section says
// (a no-op provider when it names no endpoint).
func startTracing(ctx context.Context, c config.Telemetry, log *slog.Logger) (*telemetry.Tracing, error) {
	tr, err := telemetry.Setup(ctx, telemetry.Config{
		Endpoint: c.OTLPEndpoint, TracesEndpoint: c.OTLPTracesEndpoint, Protocol: c.OTLPProtocol,
		SampleRatio: c.SampleRatio, QueueSize: c.QueueSize, ServiceVersion: version,
		Logger: log.With("component", "tracing"),
	})
	if err != nil {
		return nil, err
	}
	if tr.Enabled() {
		log.Info("tracing on", "endpoint", redactURL(c.OTLPEndpoint+c.OTLPTracesEndpoint), "protocol", c.OTLPProtocol, "sample_ratio", c.SampleRatio)
	}
	return tr, nil
}

// redactURL hides credentials an endpoint URL may carry.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable)"
	}
	return u.Redacted()
}

// flushTracing is the closer that exports what is queued, bounded.
func flushTracing(tr *telemetry.Tracing) func() error {
	return func() error {
		ctx, cancel := context.WithTimeout(context.Background(), tracingShutdownTimeout)
		defer cancel()
		return tr.Shutdown(ctx)
	}
}

// countDropped exposes the spans tracing lost (queue full or a batch the
// collector did not take) as contextd_trace_spans_dropped_total; 0 while
// tracing is off.
func countDropped(m *metrics.Metrics, tr *telemetry.Tracing) {
	m.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "contextd_trace_spans_dropped_total",
		Help: "Sampled trace spans not exported: the export queue was full or the collector refused a batch.",
	}, func() float64 { return float64(tr.Dropped()) }))
}

// storeSystem is db.system.name for the storage driver.
func storeSystem(driver string) string {
	if driver == "postgres" {
		return "postgresql"
	}
	return driver
}

// gen names an embedder's or a model's endpoint for GenAI spans.
func gen(provider, model, baseURL string) telemetry.GenAI {
	return telemetry.GenAI{Provider: provider, Model: model, BaseURL: baseURL}
}
