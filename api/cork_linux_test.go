package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/memory/sqlite"
)

// TestCorkedAnswers: answers larger than the connection buffer are written
// corked; over one keep-alive connection they arrive whole, with their
// Content-Length, and the socket is uncorked once each is sent (a cork
// left on would hold the next small answer back).
func TestCorkedAnswers(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var (
		mu    sync.Mutex
		conns []*net.TCPConn
	)
	srv := httptest.NewUnstartedServer(NewHandler(Deps{Service: &engine.Service{Store: st}}))
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		mu.Lock()
		conns = append(conns, c.(*net.TCPConn))
		mu.Unlock()
		return ConnContext(ctx, c)
	}
	srv.Start()
	t.Cleanup(srv.Close)

	var msgs []string
	for i := range 40 {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"turn %d %s"}`, i, strings.Repeat("lisbon hotel ", 20)))
	}
	post(t, srv.URL+"/v1/chats/c1/messages", `{"messages":[`+strings.Join(msgs, ",")+`]}`)
	for range 3 {
		body := post(t, srv.URL+"/v1/context", `{"chat_id":"c1","budget_tokens":4000}`)
		if len(body) <= corkMin {
			t.Fatalf("answer of %d bytes: not corked, the test proves nothing", len(body))
		}
		var a engine.ContextAnswer
		if err := json.Unmarshal(body, &a); err != nil || a.Context == nil || !strings.Contains(*a.Context, "turn 39") {
			t.Fatalf("answer damaged (%v): %.200s", err, body)
		}
		mu.Lock()
		if len(conns) != 1 {
			t.Fatalf("%d connections: keep-alive broken", len(conns))
		}
		if on := cork(t, conns[0]); on != 0 {
			t.Fatalf("TCP_CORK = %d after the answer", on)
		}
		mu.Unlock()
	}
}

func post(t *testing.T, url, body string) []byte {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode >= 300 {
		t.Fatalf("POST %s: %d %v %s", url, res.StatusCode, err, b)
	}
	if res.ContentLength != int64(len(b)) {
		t.Fatalf("Content-Length %d, body %d bytes", res.ContentLength, len(b))
	}
	return b
}

func cork(t *testing.T, c *net.TCPConn) int {
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var serr error
	if err := raw.Control(func(fd uintptr) { v, serr = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK) }); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	return v
}
