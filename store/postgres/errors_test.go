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

func TestDiskFull(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"disk full", &pgconn.PgError{Code: "53100"}, true},
		{"disk full wrapped", fmt.Errorf("insert: %w", &pgconn.PgError{Code: "53100"}), true},
		{"out of memory", &pgconn.PgError{Code: "53200"}, false},
		{"too many connections", &pgconn.PgError{Code: "53300"}, false},
		{"plain", errors.New("boom"), false},
	} {
		if got := errors.Is(wrap("op", tc.err), memory.ErrFull); got != tc.want {
			t.Errorf("%s: wrap is ErrFull = %v, want %v", tc.name, got, tc.want)
		}
		if errors.Is(wrap("op", tc.err), memory.ErrUnavailable) && tc.want {
			t.Errorf("%s: a full disk is not a server down", tc.name)
		}
	}
}
