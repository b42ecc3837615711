package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestHistogramQuantiles(t *testing.T) {
	h := NewHistogram()
	r := rand.New(rand.NewPCG(1, 2))
	var samples []time.Duration
	for range 100_000 {
		// Log-uniform from 10µs to 1s, like latencies.
		d := time.Duration(float64(10*time.Microsecond) * math.Pow(1e5, r.Float64()))
		samples = append(samples, d)
		h.Record(d)
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	if h.Count() != uint64(len(samples)) {
		t.Fatalf("count %d, want %d", h.Count(), len(samples))
	}
	if h.Max() != samples[len(samples)-1] {
		t.Fatalf("max %s, want %s", h.Max(), samples[len(samples)-1])
	}
	for _, q := range []float64{0.01, 0.5, 0.9, 0.95, 0.99, 0.999, 1} {
		exact := samples[int(q*float64(len(samples))+0.999999)-1]
		got := h.Quantile(q)
		if got < exact || float64(got) > float64(exact)*1.01 {
			t.Errorf("q%.3f = %s, exact %s: want within [exact, exact+1%%]", q, got, exact)
		}
	}
}

func TestHistogramBuckets(t *testing.T) {
	if got := bucketOf(1 << 40); got+1 != histBuckets {
		t.Fatalf("histBuckets = %d, want bucketOf(1<<40)+1 = %d", histBuckets, got+1)
	}
	// Every value lies within its bucket, buckets are monotonic and tight.
	prev := -1
	for _, v := range []uint64{0, 1, 127, 128, 129, 255, 256, 257, 1000, 123456, 1 << 30, 1<<40 - 1} {
		i := bucketOf(v)
		if i < prev {
			t.Fatalf("bucketOf(%d) = %d below previous %d", v, i, prev)
		}
		prev = i
		up := upperOf(i)
		if up < v || float64(up-v) > float64(v)/128+1 {
			t.Errorf("value %d: bucket %d upper %d, want >= value and within 1/128", v, i, up)
		}
		if i > 0 && upperOf(i-1) >= v {
			t.Errorf("value %d also fits bucket %d (upper %d)", v, i-1, upperOf(i-1))
		}
	}
	h, o := NewHistogram(), NewHistogram()
	h.Record(time.Millisecond)
	o.Record(3 * time.Millisecond)
	o.Record(-time.Second) // clamped to 0
	h.Merge(o)
	if h.Count() != 3 || h.Max() != 3*time.Millisecond || h.Quantile(0.01) != 0 || h.Mean() != (4*time.Millisecond)/3 {
		t.Fatalf("merged: count %d max %s q0.01 %s mean %s", h.Count(), h.Max(), h.Quantile(0.01), h.Mean())
	}
	if NewHistogram().Quantile(0.99) != 0 {
		t.Fatal("empty histogram quantile should be 0")
	}
}

func TestCorpusLongTurns(t *testing.T) {
	long := Corpus{Seed: 7, Long: true}
	if long.Turn(3, 17) != (Corpus{Seed: 7, Long: true}).Turn(3, 17) {
		t.Fatal("long turns are not deterministic")
	}
	minLen, maxLen, total := 1<<30, 0, 0
	const n = 2000
	for i := range n {
		s := long.Turn(i%10, i)
		minLen, maxLen, total = min(minLen, len(s)), max(maxLen, len(s)), total+len(s)
		if len(s) < 100 || len(s) > 1500 {
			t.Fatalf("long turn %d has %d chars, want 100-1500: %q", i, len(s), s)
		}
		if e := s[len(s)-1]; e != '.' && e != '?' {
			t.Fatalf("long turn %d does not end a sentence: %q", i, s)
		}
	}
	// Spread over the range, not bunched at one end.
	if minLen > 150 || maxLen < 1400 || total/n < 650 || total/n > 950 {
		t.Fatalf("long turns: min %d max %d mean %d chars, want spread over 100-1500", minLen, maxLen, total/n)
	}
}

func TestCorpusDeterministicAndShaped(t *testing.T) {
	a, b, other := Corpus{Seed: 7}, Corpus{Seed: 7}, Corpus{Seed: 8}
	if a.Turn(3, 17) != b.Turn(3, 17) {
		t.Fatal("same seed, chat and turn gave different text")
	}
	if a.Turn(3, 17) == other.Turn(3, 17) || a.Turn(3, 17) == a.Turn(3, 18) || a.Turn(3, 17) == a.Turn(4, 17) {
		t.Fatal("different coordinates gave the same text")
	}
	if a.ChatID(1) == other.ChatID(1) {
		t.Fatal("chat ids should differ across seeds")
	}
	entity := 0
	for i := range 20 {
		for turn := range 50 {
			words := strings.Fields(a.Turn(i, turn))
			if len(words) < 10 || len(words) > 60 {
				t.Fatalf("turn %d/%d has %d words, want 10-60", i, turn, len(words))
			}
			for _, w := range words {
				for _, e := range entities {
					if strings.Trim(w, ".?") == e {
						entity++
					}
				}
			}
		}
	}
	if entity == 0 {
		t.Fatal("no named entity in 1000 turns")
	}
	r := rand.New(rand.NewPCG(1, 1))
	for range 50 {
		q := a.Query(r, 5, 30)
		n := len(strings.Fields(q))
		if n < 1 || n > 8 {
			t.Fatalf("query %q has %d words, want 1-8", q, n)
		}
		for _, w := range strings.Fields(q) {
			if isFunctionWord(strings.ToLower(w)) {
				t.Fatalf("query %q holds function word %q", q, w)
			}
		}
	}
}

func TestBaseURLLoopbackOnly(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"127.0.0.1:8080", "http://127.0.0.1:8080", true},
		{"http://localhost:9", "http://localhost:9", true},
		{"[::1]:80", "http://[::1]:80", true},
		{"10.0.0.1:8080", "", false},
		{"example.com:80", "", false},
		{"https://127.0.0.1:443", "", false},
		{"127.0.0.1", "", false},
	} {
		got, err := BaseURL(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("BaseURL(%q) = %q, %v; want %q ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestParseMetricsAndStatus(t *testing.T) {
	m := parseMetrics([]byte("# HELP x\ncontextd_backlog_unindexed_turns 42\nfoo{a=\"b\"} 3\nprocess_resident_memory_bytes 1.5e+08\n"),
		"contextd_backlog_unindexed_turns", "process_resident_memory_bytes", "foo")
	if m["contextd_backlog_unindexed_turns"] != 42 || m["process_resident_memory_bytes"] != 1.5e8 {
		t.Fatalf("parsed %v", m)
	}
	if _, ok := m["foo"]; ok {
		t.Fatal("labelled sample should not be taken as unlabelled")
	}
	st := []byte("Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t1024 kB\n")
	if parseStatus(st, "VmHWM") != 2048<<10 || parseStatus(st, "VmRSS") != 1024<<10 || parseStatus(st, "VmSwap") != -1 {
		t.Fatal("parseStatus")
	}
}

// fakeServer counts requests and fails the measured appends (no message
// id) of one chat, to check that
// errors are counted per route and the report has every row.
type fakeServer struct {
	contexts, appends, refreshes atomic.Int64
	turns                        atomic.Int64
	mu                           sync.Mutex
	unindexed                    int64
	stuck                        bool // the backlog never drains
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.URL.Path == "/metrics":
		f.mu.Lock()
		n := f.unindexed
		if f.unindexed > 0 && !f.stuck {
			f.unindexed = max(0, f.unindexed-50) // drains as it is polled
		}
		f.mu.Unlock()
		_, _ = io.WriteString(w, "contextd_backlog_unindexed_turns "+itoa(n)+"\ncontextd_backlog_unsummarised_turns 0\n")
	case r.URL.Path == "/v1/context":
		f.contexts.Add(1)
		var in contextBody
		if err := json.Unmarshal(body, &in); err != nil || in.Query == "" || in.BudgetTokens != 500 {
			http.Error(w, `{"error":{"code":"bad"}}`, http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, `{"sections":{"rag":[{}],"summary":null},"usage":{"budget_tokens":500,"total_tokens":100},"degraded":[]}`)
	case strings.HasSuffix(r.URL.Path, "/summary/refresh"):
		f.refreshes.Add(1)
		_, _ = io.WriteString(w, `{"summary":null}`)
	case strings.HasSuffix(r.URL.Path, "/messages"):
		f.appends.Add(1)
		var in appendBody
		_ = json.Unmarshal(body, &in)
		if strings.HasSuffix(r.URL.Path, "c00000/messages") && len(in.Messages) > 0 && in.Messages[0].ID == "" {
			http.Error(w, `{"error":{"code":"boom"}}`, http.StatusInternalServerError)
			return
		}
		f.turns.Add(int64(len(in.Messages)))
		f.mu.Lock()
		f.unindexed += int64(len(in.Messages))
		f.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{}`)
	default:
		http.NotFound(w, r)
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestRunAgainstFakeServer(t *testing.T) {
	f := &fakeServer{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	var progress bytes.Buffer
	rep, err := Run(context.Background(), srv.URL, Options{
		Chats: 2, Turns: 30, Batch: 7, Clients: 3, Duration: 300 * time.Millisecond,
		Mix: 0.5, Budget: 500, Seed: 3, Progress: &progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Preload.Turns != 60 || rep.Preload.Requests != 10 || rep.Preload.Errors != 0 {
		t.Fatalf("preload %+v, want 60 turns in 10 requests", rep.Preload)
	}
	if rep.Preload.Unindexed != 0 || rep.Preload.IndexNote != "" {
		t.Fatalf("index wait did not see the backlog drain: %+v", rep.Preload)
	}
	if rep.Settle.Chats != 2 || rep.Settle.Errors != 0 || f.refreshes.Load() != 2 {
		t.Fatalf("settle %+v, server saw %d refreshes; want 2", rep.Settle, f.refreshes.Load())
	}
	cd, noop, ok := rep.phases()
	if !ok {
		t.Fatalf("phases %+v", rep.Phases)
	}
	ctxRow, _ := cd.Row(routeNames[routeContext])
	appRow, _ := cd.Row(routeNames[routeAppend])
	all, _ := cd.Row("all")
	if ctxRow.Requests == 0 || appRow.Requests == 0 || all.Requests != ctxRow.Requests+appRow.Requests {
		t.Fatalf("rows %+v", cd.Rows)
	}
	if ctxRow.Requests != f.contexts.Load() {
		t.Fatalf("context row counts %d, server saw %d", ctxRow.Requests, f.contexts.Load())
	}
	if ctxRow.Errors != 0 || appRow.Errors == 0 || all.Errors != appRow.Errors {
		t.Fatalf("errors: context %d, append %d, all %d; want appends to chat 0 counted", ctxRow.Errors, appRow.Errors, all.Errors)
	}
	if !strings.Contains(cd.FirstError, "HTTP 500") {
		t.Fatalf("first error %q", cd.FirstError)
	}
	if cd.Sample.Answers == 0 || cd.Sample.WithRAG != cd.Sample.Answers || cd.Sample.OverBudget != 0 {
		t.Fatalf("sample %+v", cd.Sample)
	}
	if nr, _ := noop.Row("all"); nr.Requests == 0 || nr.Errors != 0 {
		t.Fatalf("no-op row %+v", nr)
	}
	if ctxRow.P50 > ctxRow.P95 || ctxRow.P95 > ctxRow.P99 || ctxRow.P99 > ctxRow.Max || ctxRow.Throughput <= 0 {
		t.Fatalf("latency figures out of order: %+v", ctxRow)
	}
	var out bytes.Buffer
	rep.Write(&out)
	for _, want := range []string{"contextd  POST /v1/context", "no-op  POST /v1/context", "ratio contextd/no-op", "targets (2 cores)", "load average"} {
		if !strings.Contains(strings.Join(strings.Fields(out.String()), "  "), strings.Join(strings.Fields(want), "  ")) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunOpenLoopPaces(t *testing.T) {
	f := &fakeServer{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	rep, err := Run(context.Background(), srv.URL, Options{
		Chats: 1, Turns: 10, Clients: 4, Duration: 500 * time.Millisecond, Rate: 40, Budget: 500, NoSettle: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	// 40 req/s for 0.5s is 20 requests per target; closed loop would be
	// thousands. Allow slack for scheduling.
	if f.refreshes.Load() != 0 || rep.Settle.Chats != 0 {
		t.Fatal("NoSettle still refreshed summaries")
	}
	for _, ph := range rep.Phases {
		all, _ := ph.Row("all")
		if all.Requests < 10 || all.Requests > 30 {
			t.Errorf("%s: %d requests at 40 req/s for 0.5s, want about 20", ph.Target, all.Requests)
		}
	}
}

func TestRunRejectsBadOptionsAndUnreachable(t *testing.T) {
	if _, err := Run(context.Background(), "127.0.0.1:1", Options{Mix: 2}); err == nil || !strings.Contains(err.Error(), "mix") {
		t.Fatalf("mix 2: %v", err)
	}
	if _, err := Run(context.Background(), "192.0.2.1:80", Options{}); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("non-loopback: %v", err)
	}
	// A closed port: every pre-load request fails, Run says so.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = Run(context.Background(), addr, Options{Chats: 1, Turns: 5, Clients: 1, Duration: 100 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "every request failed") {
		t.Fatalf("closed port: %v", err)
	}
}

func TestNoopHandler(t *testing.T) {
	h := NoopHandler()
	for _, path := range []string{"/v1/context", "/v1/chats/x/messages"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(`{"a":1}`)))
		if rec.Code != http.StatusOK || rec.Body.String() != `{"ok":true}` {
			t.Errorf("%s: %d %q", path, rec.Code, rec.Body.String())
		}
	}
}

func TestRunStopsWaitingForAStuckIndexer(t *testing.T) {
	f := &fakeServer{stuck: true}
	srv := httptest.NewServer(f)
	defer srv.Close()
	rep, err := Run(context.Background(), srv.URL, Options{
		Chats: 1, Turns: 5, Clients: 1, Duration: 100 * time.Millisecond, Budget: 500, NoSettle: true,
		IndexStall: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Preload.IndexNote, "stuck at 5 turns") || rep.Preload.Unindexed != 5 {
		t.Fatalf("preload %+v: want the wait ended on a stuck backlog of 5", rep.Preload)
	}
	if len(rep.Phases) != 2 {
		t.Fatalf("the run should go on to measure, got %d phases", len(rep.Phases))
	}
}

// With AppendInContext a context request is the AI SDK middleware's call:
// the new user turn, with an id, stored by the request, as its query.
func TestContextRequestAppendInContext(t *testing.T) {
	c := Corpus{Seed: 7}
	r := rand.New(rand.NewPCG(1, 2))
	plain := contextRequest(c, r, 3, Options{Turns: 50, Budget: 2000, Strategy: "rag_augmented"})
	if plain.Append != nil || plain.Include != nil || plain.Query == "" {
		t.Fatalf("plain request %+v", plain)
	}
	b := contextRequest(c, r, 3, Options{Turns: 50, Budget: 2000, Strategy: "rag_augmented", AppendInContext: true})
	if len(b.Append) != 1 || b.Append[0].ID == "" || b.Append[0].Role != "user" || b.Append[0].Content != b.Query ||
		len(b.Include) != 1 || b.Include[0] != "messages" {
		t.Fatalf("AI SDK request %+v", b)
	}
	if again := contextRequest(c, r, 3, Options{Turns: 50, AppendInContext: true}); again.Append[0].ID == b.Append[0].ID {
		t.Fatalf("two calls share the id %q: the second would be a duplicate", b.Append[0].ID)
	}
}
