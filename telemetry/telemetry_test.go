package telemetry

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// blockingExporter holds every export until released, then fails or
// records it.
type blockingExporter struct {
	release chan struct{}
	fail    error
	mu      sync.Mutex
	got     int
}

func (e *blockingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.release != nil {
		select {
		case <-e.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if e.fail != nil {
		return e.fail
	}
	e.mu.Lock()
	e.got += len(spans)
	e.mu.Unlock()
	return nil
}

func (e *blockingExporter) Shutdown(context.Context) error { return nil }

func (e *blockingExporter) exported() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.got
}

func endSpans(tr *Tracing, n int) {
	for range n {
		_, s := tr.Tracer().Start(context.Background(), "s")
		s.End()
	}
}

// A collector that does not answer: the queue holds QueueSize spans, the
// rest are dropped and counted, and ending a span never waits.
func TestQueueFullDropsAndCounts(t *testing.T) {
	exp := &blockingExporter{release: make(chan struct{})}
	tr := WithExporter(exp, Config{SampleRatio: 1, QueueSize: 4})
	done := make(chan struct{})
	go func() { endSpans(tr, 10); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("ending spans blocked on a stuck exporter")
	}
	if got := tr.Dropped(); got != 6 {
		t.Errorf("dropped = %d, want 6 (10 spans, room for 4)", got)
	}
	close(exp.release)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := exp.exported(); got != 4 {
		t.Errorf("exported = %d, want the 4 queued", got)
	}
}

// A batch the collector refuses is counted as dropped, and the queue's
// room comes back for the next spans.
func TestFailedExportCounted(t *testing.T) {
	exp := &blockingExporter{fail: errors.New("connection refused")}
	tr := WithExporter(exp, Config{SampleRatio: 1, QueueSize: 4})
	for range 3 {
		endSpans(tr, 4)
		if err := tr.ForceFlush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if got := tr.Dropped(); got != 12 {
		t.Errorf("dropped = %d, want all 12 (each flush's batch failed; none refused at the queue)", got)
	}
}

// Parent-based ratio sampling: ratio 0 keeps no new trace, but a caller's
// sampled trace is always followed, and a caller's unsampled one never.
func TestParentBasedSampling(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr := WithExporter(exp, Config{SampleRatio: 0})
	_, root := tr.Tracer().Start(context.Background(), "root")
	if root.SpanContext().IsSampled() {
		t.Error("ratio 0 sampled a new root")
	}
	root.End()
	for _, sampled := range []bool{true, false} {
		parent := trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, Remote: true,
			TraceFlags: map[bool]trace.TraceFlags{true: trace.FlagsSampled, false: 0}[sampled],
		})
		_, s := tr.Tracer().Start(trace.ContextWithRemoteSpanContext(context.Background(), parent), "child")
		if s.SpanContext().IsSampled() != sampled {
			t.Errorf("caller sampled=%v: child sampled=%v", sampled, s.SpanContext().IsSampled())
		}
		s.End()
	}
	if err := tr.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "child" || spans[0].Resource.String() == "" {
		t.Fatalf("exported %d spans, want only the sampled caller's child", len(spans))
	}
	if v, ok := spans[0].Resource.Set().Value("service.name"); !ok || v.AsString() != ServiceName {
		t.Errorf("service.name = %v", v)
	}
}

func TestSetupOff(t *testing.T) {
	tr, err := Setup(context.Background(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, s := tr.Tracer().Start(context.Background(), "x")
	if tr.Enabled() || s.IsRecording() || tr.Dropped() != 0 {
		t.Errorf("off: enabled %v, recording %v", tr.Enabled(), s.IsRecording())
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestSetupErrors(t *testing.T) {
	for _, c := range []Config{
		{Endpoint: "collector:4318"},
		{Endpoint: "http://collector:4318", Protocol: "http/json"},
	} {
		if _, err := Setup(context.Background(), c); err == nil {
			t.Errorf("Setup(%+v): want an error", c)
		}
	}
}

func TestTracesURL(t *testing.T) {
	tests := []struct {
		c    Config
		want string
	}{
		{Config{Endpoint: "http://c:4318"}, "http://c:4318/v1/traces"},
		{Config{Endpoint: "http://c:4318/"}, "http://c:4318/v1/traces"},
		{Config{Endpoint: "https://c/otlp", Protocol: ProtocolHTTP}, "https://c/otlp/v1/traces"},
		{Config{Endpoint: "http://c:4317", Protocol: ProtocolGRPC}, "http://c:4317"},
		{Config{Endpoint: "http://ignored", TracesEndpoint: "http://c:4318/custom"}, "http://c:4318/custom"},
	}
	for _, tc := range tests {
		got, err := tracesURL(tc.c)
		if err != nil || got != tc.want {
			t.Errorf("tracesURL(%+v) = %q, %v; want %q", tc.c, got, err, tc.want)
		}
	}
}
