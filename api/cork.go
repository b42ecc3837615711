package api

import (
	"context"
	"net"
)

// An answer larger than net/http's 4 KB connection buffer leaves in two
// write calls (the buffer with the header, then the rest), and on a
// loopback or LAN connection each write is sent at once as its own
// segment: the kernel's transmit and the peer's receive path twice per
// answer, 13% of a running_summary request's CPU under load. Corking the
// socket while an answer is written and flushed sends it as one.

type connKey struct{}

// ConnContext is http.Server's ConnContext: it keeps a TCP connection in
// its requests' context so that encode can cork it.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*net.TCPConn); ok {
		return context.WithValue(ctx, connKey{}, tc)
	}
	return ctx
}

// corkConn returns the request's TCP connection when ConnContext kept it.
func corkConn(ctx context.Context) *net.TCPConn {
	tc, _ := ctx.Value(connKey{}).(*net.TCPConn)
	return tc
}
