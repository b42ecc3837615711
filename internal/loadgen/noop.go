package loadgen

import (
	"context"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// NoopHandler is a bare Echo router answering contextd's two measured
// routes with a tiny JSON after reading the body: the floor of HTTP, JSON
// framing and routing that contextd's own work comes on top of.
func NoopHandler() http.Handler {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	h := func(c echo.Context) error {
		_, _ = io.Copy(io.Discard, c.Request().Body)
		return c.JSONBlob(http.StatusOK, []byte(`{"ok":true}`))
	}
	e.POST("/v1/context", h)
	e.POST("/v1/chats/:chat_id/messages", h)
	return e
}

type noopServer struct {
	base  string
	srv   *http.Server
	done  chan struct{}
	close func()
}

// serveNoop serves NoopHandler on a fresh loopback port.
func serveNoop() (*noopServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	n := &noopServer{base: "http://" + ln.Addr().String(), srv: NewServer(NoopHandler()), done: make(chan struct{})}
	go func() {
		defer close(n.done)
		// A serve failure shows up as failed requests in the report.
		_ = n.srv.Serve(ln)
	}()
	n.close = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = n.srv.Shutdown(ctx)
		<-n.done
	}
	return n, nil
}
