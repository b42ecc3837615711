package main

import (
	"bufio"
	"compress/gzip"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP collector for tests: it decodes what arrives
// on /v1/traces with the official protobuf types.
type otlpReceiver struct {
	*httptest.Server
	mu       sync.Mutex
	resource []map[string]string // per received span, its resource attributes
	spans    []*tracepb.Span
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(r.handle))
	t.Cleanup(r.Close)
	return r
}

func (r *otlpReceiver) handle(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want protobuf on /v1/traces", http.StatusNotFound)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		gz, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = gz
	}
	raw, err := io.ReadAll(body)
	var msg coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(raw, &msg)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	for _, rs := range msg.GetResourceSpans() {
		res := map[string]string{}
		for _, kv := range rs.GetResource().GetAttributes() {
			res[kv.GetKey()] = kv.GetValue().GetStringValue()
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, s)
				r.resource = append(r.resource, res)
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (r *otlpReceiver) received() ([]*tracepb.Span, []map[string]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...), append([]map[string]string(nil), r.resource...)
}

func postTraced(t *testing.T, url, body, traceparent string) int {
	t.Helper()
	status, _ := postHeaders(t, url, body, "traceparent", traceparent)
	return status
}

// postHeaders POSTs a JSON body with the headers given as name, value
// pairs (an empty value is not sent) and answers the status and headers.
func postHeaders(t *testing.T, url, body string, hdr ...string) (int, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] != "" {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// The real binary's serve path, pointed at a collector by the standard
// variable: a /v1/context trace arrives as OTLP protobuf with its stage
// spans, joined to the caller's traceparent, flushed by the SIGTERM drain.
func TestTracingEndToEndOTLP(t *testing.T) {
	rcv := newOTLPReceiver(t)
	t.Chdir(t.TempDir())
	base, stop := startServe(t, nil, map[string]string{"CONTEXTD_ADDR": "127.0.0.1:0", "OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL})
	if st, _ := post(t, base+"/v1/chats/demo/messages", `{"messages":[{"role":"user","content":"Bluebird ships on Friday."}]}`); st != 201 {
		t.Fatalf("append: %d", st)
	}
	if st := postTraced(t, base+"/v1/context", `{"chat_id":"demo","query":"when does Bluebird ship?","strategy":"rag_augmented"}`,
		"00-"+testTraceID+"-"+testSpanID+"-01"); st != 200 {
		t.Fatalf("context: %d", st)
	}
	if err := stop(); err != nil { // SIGTERM: drain, then flush the spans
		t.Fatal(err)
	}
	spans, resources := rcv.received()
	var server *tracepb.Span
	for i, s := range spans {
		if s.GetName() == "POST /v1/context" {
			server = s
			if resources[i]["service.name"] != "contextd" {
				t.Errorf("service.name = %q", resources[i]["service.name"])
			}
		}
	}
	if server == nil {
		t.Fatalf("no POST /v1/context span among %d received", len(spans))
	}
	if hex.EncodeToString(server.GetTraceId()) != testTraceID || hex.EncodeToString(server.GetParentSpanId()) != testSpanID {
		t.Errorf("server span trace %x parent %x, want the caller's %s / %s", server.GetTraceId(), server.GetParentSpanId(), testTraceID, testSpanID)
	}
	if server.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("server span kind %v", server.GetKind())
	}
	stages := map[string]bool{}
	for _, s := range spans {
		if string(s.GetParentSpanId()) == string(server.GetSpanId()) && string(s.GetTraceId()) == string(server.GetTraceId()) {
			stages[s.GetName()] = true
		}
	}
	for _, want := range []string{"contextd.plan", "contextd.summary", "contextd.load", "contextd.retrieve", "contextd.pack"} {
		if !stages[want] {
			t.Errorf("no %s span under the server span; got %v", want, stages)
		}
	}
}

// A collector that is down: every request still succeeds, the spans that do
// not fit the bounded queue are counted in /metrics, and shutdown is not
// held up.
func TestTracingCollectorDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now
	t.Chdir(t.TempDir())
	base, stop := startServe(t, nil, map[string]string{"CONTEXTD_ADDR": "127.0.0.1:0",
		"OTEL_EXPORTER_OTLP_ENDPOINT": dead, "OTEL_BSP_MAX_QUEUE_SIZE": "8"})
	for i := range 10 {
		body := `{"chat_id":"c","query":"status?","append":[{"role":"user","content":"turn ` + strconv.Itoa(i) + `"}]}`
		if st := postTraced(t, base+"/v1/context", body, ""); st != 200 {
			t.Fatalf("request %d with the collector down: %d", i, st)
		}
	}
	if got := metricValue(t, base, "contextd_trace_spans_dropped_total"); got <= 0 {
		t.Errorf("contextd_trace_spans_dropped_total = %v, want > 0 with a queue of 8 and the collector down", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func metricValue(t *testing.T, base, name string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("%s not in /metrics", name)
	return 0
}
