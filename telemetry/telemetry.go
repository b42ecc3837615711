// Package telemetry owns contextd's OpenTelemetry SDK: the tracer provider,
// its OTLP exporter (HTTP/protobuf or gRPC), parent-based ratio sampling and
// a bounded export queue whose losses are counted. It also holds the small
// decorators that turn calls to outside systems into client spans: the
// engine's store, the vector index, embedders and langchaingo models (GenAI
// semantic conventions). The core packages never import it: they take a
// trace.Tracer (internal/tracing).
package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ServiceName is the service.name of every span contextd exports.
const ServiceName = "contextd"

// InstrumentationName names contextd's tracer.
const InstrumentationName = "github.com/contextd/contextd"

// Protocols of the OTLP exporter.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// DefaultQueueSize is the batch span processor's queue when none is set
// (the SDK's default, OTEL_BSP_MAX_QUEUE_SIZE).
const DefaultQueueSize = sdktrace.DefaultMaxQueueSize

// Config selects the exporter. An empty Endpoint and TracesEndpoint mean
// tracing is off: no exporter, no goroutine, a no-op tracer.
type Config struct {
	// Endpoint is the collector's base URL (OTEL_EXPORTER_OTLP_ENDPOINT):
	// for HTTP, /v1/traces is appended; for gRPC it is host and port.
	Endpoint string
	// TracesEndpoint, when set, is the full traces URL
	// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), used as it is.
	TracesEndpoint string
	Protocol       string  // ProtocolHTTP (default) or ProtocolGRPC
	SampleRatio    float64 // of root traces, [0, 1]; a sampled caller's traces are always kept
	QueueSize      int     // spans held for export at most; 0: DefaultQueueSize
	ServiceVersion string
	Logger         *slog.Logger // export failures (rate-limited); nil: discarded
}

// Enabled reports whether c asks for an exporter.
func (c Config) Enabled() bool { return c.Endpoint != "" || c.TracesEndpoint != "" }

// Tracing is a running tracer provider (or the no-op one when off).
type Tracing struct {
	provider trace.TracerProvider
	sdk      *sdktrace.TracerProvider // nil when off
	queue    *boundedQueue            // nil when off
}

// Setup starts tracing as c says. Off (no endpoint) it returns a no-op
// provider whose Shutdown does nothing. Building the exporter does not
// contact the collector: a collector that is down costs dropped spans,
// never a failed start.
func Setup(ctx context.Context, c Config) (*Tracing, error) {
	if !c.Enabled() {
		return &Tracing{provider: noop.NewTracerProvider()}, nil
	}
	exp, err := newExporter(ctx, c)
	if err != nil {
		return nil, err
	}
	return WithExporter(exp, c), nil
}

// WithExporter starts tracing into exp (tests and benchmarks pass an
// in-memory one), with c's sampling, queue and service version.
func WithExporter(exp sdktrace.SpanExporter, c Config) *Tracing {
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	limit := c.QueueSize
	if limit <= 0 {
		limit = DefaultQueueSize
	}
	q := &boundedQueue{limit: int64(limit)}
	bsp := sdktrace.NewBatchSpanProcessor(&countingExporter{SpanExporter: exp, queue: q, log: log},
		sdktrace.WithMaxQueueSize(limit), sdktrace.WithMaxExportBatchSize(min(sdktrace.DefaultMaxExportBatchSize, limit)))
	q.SpanProcessor = bsp
	res := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(ServiceName), semconv.ServiceVersion(c.ServiceVersion))
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(c.SampleRatio))),
		sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(q),
	)
	return &Tracing{provider: tp, sdk: tp, queue: q}
}

// Tracer is contextd's tracer on this provider.
func (t *Tracing) Tracer() trace.Tracer { return t.provider.Tracer(InstrumentationName) }

// Provider is the tracer provider (no-op when off).
func (t *Tracing) Provider() trace.TracerProvider { return t.provider }

// Enabled reports whether spans are exported.
func (t *Tracing) Enabled() bool { return t.sdk != nil }

// Dropped is how many sampled spans were lost: refused because the export
// queue was full, or in a batch the collector did not take.
func (t *Tracing) Dropped() int64 {
	if t.queue == nil {
		return 0
	}
	return t.queue.dropped.Load()
}

// ForceFlush exports what is queued now, waiting up to ctx.
func (t *Tracing) ForceFlush(ctx context.Context) error {
	if t.sdk == nil {
		return nil
	}
	if err := t.sdk.ForceFlush(ctx); err != nil {
		return fmt.Errorf("telemetry: flush: %w", err)
	}
	return nil
}

// Shutdown exports what is queued, waiting up to ctx, and stops the
// exporter. A collector that is down costs the wait, bounded by ctx.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t.sdk == nil {
		return nil
	}
	if err := t.sdk.Shutdown(ctx); err != nil {
		return fmt.Errorf("telemetry: shutdown: %w", err)
	}
	return nil
}

// newExporter builds the OTLP exporter. Options given here win over the
// OTEL_EXPORTER_OTLP_* variables the exporter reads itself (headers,
// timeout, certificates, compression still come from there).
func newExporter(ctx context.Context, c Config) (sdktrace.SpanExporter, error) {
	target, err := tracesURL(c)
	if err != nil {
		return nil, err
	}
	switch c.Protocol {
	case "", ProtocolHTTP:
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(target))
		if err != nil {
			return nil, fmt.Errorf("telemetry: otlp http exporter: %w", err)
		}
		return exp, nil
	case ProtocolGRPC:
		exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(target))
		if err != nil {
			return nil, fmt.Errorf("telemetry: otlp grpc exporter: %w", err)
		}
		return exp, nil
	}
	return nil, fmt.Errorf("telemetry: otlp protocol %q is not one of %s, %s", c.Protocol, ProtocolHTTP, ProtocolGRPC)
}

// tracesURL is where spans go: TracesEndpoint as it is, else Endpoint with
// /v1/traces appended for HTTP (the OTLP exporter specification's rule for
// OTEL_EXPORTER_OTLP_ENDPOINT).
func tracesURL(c Config) (string, error) {
	raw, signal := c.Endpoint, false
	if c.TracesEndpoint != "" {
		raw, signal = c.TracesEndpoint, true
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("telemetry: otlp endpoint %q is not an http(s)://host:port URL", raw)
	}
	if !signal && c.Protocol != ProtocolGRPC {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	}
	return u.String(), nil
}

var (
	_ sdktrace.SpanProcessor = (*boundedQueue)(nil)
	_ sdktrace.SpanExporter  = (*countingExporter)(nil)
)

// boundedQueue is the batch span processor with its queue bound made
// visible: it admits an ended span only while fewer than limit are held
// (queued, batched or being exported) and counts the rest as dropped. The
// processor's own queue is as large as the limit, so it never drops
// silently, and ending a span never blocks a request.
type boundedQueue struct {
	sdktrace.SpanProcessor
	limit   int64
	held    atomic.Int64
	dropped atomic.Int64
}

func (q *boundedQueue) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	if q.held.Add(1) > q.limit {
		q.held.Add(-1)
		q.dropped.Add(1)
		return
	}
	q.SpanProcessor.OnEnd(s)
}

// countingExporter releases exported spans from the queue's bound and
// counts a failed batch as dropped, logging at most once a minute. It
// reports success to the processor: the loss is counted and logged here,
// so the SDK's process-wide error handler stays out of it.
type countingExporter struct {
	sdktrace.SpanExporter
	queue    *boundedQueue
	log      *slog.Logger
	lastWarn atomic.Int64 // unix nanoseconds
}

func (e *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	e.queue.held.Add(-int64(len(spans)))
	if err == nil {
		return nil
	}
	e.queue.dropped.Add(int64(len(spans)))
	now := time.Now().UnixNano()
	if last := e.lastWarn.Load(); now-last >= int64(time.Minute) && e.lastWarn.CompareAndSwap(last, now) {
		e.log.Warn("trace export failed; spans dropped (requests are unaffected)", "spans", len(spans),
			"dropped_total", e.queue.dropped.Load(), "err", err)
	}
	return nil
}
