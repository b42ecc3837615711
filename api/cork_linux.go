package api

import (
	"net"
	"syscall"
)

// setCork sets or clears TCP_CORK on c; an error leaves the socket as it
// was (the answer is then merely sent in two segments).
func setCork(c *net.TCPConn, on bool) {
	raw, err := c.SyscallConn()
	if err != nil {
		return
	}
	v := 0
	if on {
		v = 1
	}
	_ = raw.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_CORK, v)
	})
}
