package telemetry

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// names collects the span names a test collector received.
type names struct {
	mu  sync.Mutex
	got []string
}

func (n *names) add(req *coltracepb.ExportTraceServiceRequest) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				n.got = append(n.got, s.GetName())
			}
		}
	}
}

func (n *names) list() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.got...)
}

type grpcCollector struct {
	coltracepb.UnimplementedTraceServiceServer
	n *names
}

func (c grpcCollector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	c.n.add(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// Both protocols deliver to a collector at the configured base endpoint
// (HTTP at /v1/traces, gRPC at host:port), and Shutdown flushes.
func TestExportProtocols(t *testing.T) {
	var httpGot, grpcGot names
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" {
			http.NotFound(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		httpGot.add(&req)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer hs.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(gs, grpcCollector{n: &grpcGot})
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()

	for _, tc := range []struct {
		c   Config
		got *names
	}{
		{Config{Endpoint: hs.URL, SampleRatio: 1}, &httpGot},
		{Config{Endpoint: "http://" + ln.Addr().String(), Protocol: ProtocolGRPC, SampleRatio: 1}, &grpcGot},
	} {
		tr, err := Setup(context.Background(), tc.c)
		if err != nil {
			t.Fatal(err)
		}
		_, s := tr.Tracer().Start(context.Background(), "hello "+tc.c.Protocol)
		s.End()
		if err := tr.Shutdown(context.Background()); err != nil {
			t.Fatalf("%s: shutdown: %v", tc.c.Protocol, err)
		}
		if got := tc.got.list(); len(got) != 1 || got[0] != "hello "+tc.c.Protocol || tr.Dropped() != 0 {
			t.Errorf("%q collector got %q, dropped %d", tc.c.Protocol, got, tr.Dropped())
		}
	}
}
