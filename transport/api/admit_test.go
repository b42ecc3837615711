package api

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextd/contextd/engine/enginetest"
	"github.com/contextd/contextd/internal/admit"
	"github.com/labstack/echo/v4"
)

// TestAdmitReadsInArrivalOrder: with one slot, a second and a third
// request wait while the first works, then run one at a time in the order
// they came; one whose deadline passes while it waits gets the 503
// timeout, and its slot is never taken.
func TestAdmitReadsInArrivalOrder(t *testing.T) {
	e := newEcho()
	release := make(chan struct{})
	var (
		mu      sync.Mutex
		order   []string
		running int
		most    int
	)
	h := func(c echo.Context) error {
		mu.Lock()
		running++
		most = max(most, running)
		order = append(order, c.QueryParam("n"))
		mu.Unlock()
		if c.QueryParam("n") == "1" {
			<-release
		}
		mu.Lock()
		running--
		mu.Unlock()
		return c.String(http.StatusOK, "ok")
	}
	gate := admitReads(admit.New(1)) // one gate for both routes, as for /v1/context and /v1/search
	e.GET("/r", h, requestTimeout(2*time.Second), gate)
	e.GET("/short", h, requestTimeout(50*time.Millisecond), gate)
	srv := httptest.NewServer(e)
	defer srv.Close()

	get := func(path string) (int, string) {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	var wg sync.WaitGroup
	codes := make([]int, 4)
	start := func(i int, path string) {
		wg.Go(func() { codes[i], _ = get(path) })
		time.Sleep(100 * time.Millisecond) // queued in this order
	}
	start(0, "/r?n=1")
	start(1, "/r?n=2")
	start(2, "/r?n=3")
	status, body := get("/short?n=late") // waits past its deadline behind the others
	if status != http.StatusServiceUnavailable || !strings.Contains(body, `"timeout"`) {
		t.Errorf("a request that waited past its deadline: %d %s, want 503 timeout", status, body)
	}
	close(release)
	wg.Wait()
	for i, c := range codes[:3] {
		if c != http.StatusOK {
			t.Errorf("request %d: status %d", i+1, c)
		}
	}
	if strings.Join(order, ",") != "1,2,3" || most != 1 {
		t.Errorf("ran %v with at most %d at once, want 1,2,3 one at a time", order, most)
	}
}

// Clients that stall mid-body hold no place in the read gate (their
// bodies are read before it) and are cut off at the request's deadline:
// others' contexts are answered meanwhile.
func TestStalledBodiesDoNotBlockReads(t *testing.T) {
	h := newHarness(t, nil)
	h.srv.Close()
	h.srv = httptest.NewServer(NewHandler(Deps{Service: enginetest.New(h.store), Options: Options{RequestTimeout: 2 * time.Second},
		Reads: admit.New(2)}))
	t.Cleanup(h.srv.Close)
	if r := h.do("POST", "/v1/chats/trip/messages", `{"messages":[{"role":"user","content":"hello"}]}`); r.status != 201 {
		t.Fatalf("append: %d %s", r.status, r.raw)
	}
	addr := strings.TrimPrefix(h.srv.URL, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 8 { // more than any gate's places
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "POST /v1/context HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"chat_id\":")
	}
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	if r := h.do("POST", "/v1/context", `{"chat_id":"trip"}`); r.status != 200 || time.Since(start) > time.Second {
		t.Errorf("a context beside stalled bodies: %d after %s", r.status, time.Since(start))
	}
	// A stalled body is answered at the deadline, not held.
	conns[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(conns[0]).ReadString('\n')
	if err != nil || !strings.Contains(line, " 400 ") {
		t.Errorf("the stalled request: %q %v, want a 400 at its deadline", line, err)
	}
}

// A client that goes away while its request waits for a turn gets
// request_canceled (not logged as a failure), not the server's timeout.
func TestAdmitReadsClientGone(t *testing.T) {
	g := admit.New(1)
	if err := g.Enter(context.Background()); err != nil { // the one slot is taken
		t.Fatal(err)
	}
	defer g.Leave()
	e := newEcho()
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		code string
	}{
		{"client gone", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, "request_canceled"},
		{"deadline passed", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 10*time.Millisecond)
		}, "timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := tc.ctx()
			defer cancel()
			req := httptest.NewRequest(http.MethodPost, "/v1/context", nil).WithContext(ctx)
			err := admitReads(g)(func(echo.Context) error { t.Fatal("admitted with no slot free"); return nil })(e.NewContext(req, httptest.NewRecorder()))
			if ae := toAPIError(err); ae.Code != tc.code || ae.status != http.StatusServiceUnavailable {
				t.Fatalf("got %d %s, want 503 %s", ae.status, ae.Code, tc.code)
			}
		})
	}
}
