package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/contextd/contextd/memory"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"starting up", &pgconn.PgError{Code: "57P03"}, true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"syntax", &pgconn.PgError{Code: "42601"}, false},
		{"refused", fmt.Errorf("dial: %w", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), true},
		{"eof", fmt.Errorf("receive: %w", io.ErrUnexpectedEOF), true},
		{"conn closed", pgconn.ErrConnClosed, true},
		{"not found", fmt.Errorf("chat: %w", memory.ErrNotFound), false},
		{"cursor moved", memory.ErrCursorMoved, false},
		{"canceled", context.Canceled, false},
		{"plain", errors.New("boom"), false},
	} {
		if got := unavailable(tc.err); got != tc.want {
			t.Errorf("%s: unavailable = %v, want %v", tc.name, got, tc.want)
		}
		if got := errors.Is(wrap("op", tc.err), memory.ErrUnavailable); got != tc.want {
			t.Errorf("%s: wrap is ErrUnavailable = %v, want %v", tc.name, got, tc.want)
		}
	}
	if w := wrap("op", fmt.Errorf("x: %w", memory.ErrNotFound)); !errors.Is(w, memory.ErrNotFound) {
		t.Errorf("wrap lost ErrNotFound: %v", w)
	}
}
