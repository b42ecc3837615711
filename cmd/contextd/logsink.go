package main

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// logSink buffers the log stream. Every request writes an access-log line,
// and writing each one to stdout on its own cost a write(2) per request
// (5% of the CPU of a running_summary context under load). Lines are
// collected and written together: when logSinkBytes have gathered, else
// logSinkDelay after the first line that waits. A record at Warn or above
// is written at once with everything before it (flushOnWarn), and serve
// flushes before it prints to stdout itself and when it stops. A kill -9
// loses at most logSinkDelay of info lines, never a stored turn.
type logSink struct {
	mu    sync.Mutex
	w     io.Writer
	buf   []byte
	timer *time.Timer // armed while lines wait
	delay time.Duration
}

const (
	logSinkDelay = 100 * time.Millisecond
	logSinkBytes = 32 << 10
)

func newLogSink(w io.Writer, delay time.Duration) *logSink {
	return &logSink{w: w, delay: delay}
}

// Write takes one record (slog writes each record in one call, so lines
// never interleave).
func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	if len(s.buf) >= logSinkBytes {
		return len(p), s.flushLocked()
	}
	if s.timer == nil {
		s.timer = time.AfterFunc(s.delay, func() { _ = s.Flush() })
	}
	return len(p), nil
}

// Flush writes what waits.
func (s *logSink) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flushLocked()
}

func (s *logSink) flushLocked() error {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	if len(s.buf) == 0 {
		return nil
	}
	_, err := s.w.Write(s.buf)
	if cap(s.buf) > 4*logSinkBytes {
		s.buf = nil // a burst of long lines: do not keep its buffer
	} else {
		s.buf = s.buf[:0]
	}
	return err
}

// flushOnWarn writes a Warn or Error record, and the lines before it, as
// soon as it is logged.
type flushOnWarn struct {
	slog.Handler
	sink *logSink
}

func (h flushOnWarn) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		if ferr := h.sink.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (h flushOnWarn) WithAttrs(as []slog.Attr) slog.Handler {
	return flushOnWarn{h.Handler.WithAttrs(as), h.sink}
}

func (h flushOnWarn) WithGroup(name string) slog.Handler {
	return flushOnWarn{h.Handler.WithGroup(name), h.sink}
}
