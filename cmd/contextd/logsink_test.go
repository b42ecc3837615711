package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe to read while the sink's timer writes.
type lockedBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	return l.b.Write(p)
}

func (l *lockedBuffer) lines() ([]string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := strings.TrimSuffix(l.b.String(), "\n")
	if s == "" {
		return nil, l.writes
	}
	return strings.Split(s, "\n"), l.writes
}

func TestLogSinkBatchesInfoAndWritesWarningsAtOnce(t *testing.T) {
	out := &lockedBuffer{}
	log, sink := newBufferedLogger(out, "info")
	sink.delay = time.Hour // only size, a warning or Flush write here
	for i := range 10 {
		log.Info("request", "i", i)
	}
	if got, _ := out.lines(); len(got) != 0 {
		t.Fatalf("info lines written before any flush: %v", got)
	}
	log.Warn("something failed")
	got, writes := out.lines()
	if len(got) != 11 || writes != 1 || !strings.Contains(got[10], "something failed") {
		t.Fatalf("after a warning: %d lines in %d writes, want 11 in 1 (the warning last): %v", len(got), writes, got)
	}
	// Enough lines to pass the size bound are written without a flush.
	long := strings.Repeat("x", 1000)
	for range logSinkBytes / 1000 {
		log.Info("request", "pad", long)
	}
	if got, _ := out.lines(); len(got) < 11+logSinkBytes/1100 {
		t.Fatalf("%d lines written after %d bytes of info lines, want them written at the size bound", len(got), logSinkBytes)
	}
	log.Debug("not at this level")
	if err := sink.Flush(); err != nil {
		t.Fatal(err)
	}
	got, _ = out.lines()
	if len(got) != 11+logSinkBytes/1000 {
		t.Fatalf("%d lines after Flush, want %d", len(got), 11+logSinkBytes/1000)
	}
}

func TestLogSinkWritesWaitingLinesAfterItsDelay(t *testing.T) {
	out := &lockedBuffer{}
	log, sink := newBufferedLogger(out, "info")
	sink.delay = 20 * time.Millisecond
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				log.Info("request", "g", g, "i", i)
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, writes := out.lines()
		if len(got) == 1600 {
			for _, l := range got { // whole lines: never interleaved
				var rec map[string]any
				if err := json.Unmarshal([]byte(l), &rec); err != nil {
					t.Fatalf("a broken line %q: %v", l, err)
				}
			}
			if writes >= 1600 {
				t.Fatalf("1600 lines in %d writes: not batched", writes)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 1600 lines written %s after the last, without a flush", len(got), 5*time.Second)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestServeLinesKeepTheirPlaceInTheLog(t *testing.T) {
	out := &lockedBuffer{}
	log, sink := newBufferedLogger(out, "info")
	sink.delay = time.Hour
	log.Info("before")
	fmt.Fprintf(flushing{sink}, "contextd listening\n")
	got, _ := out.lines()
	if len(got) != 2 || !strings.Contains(got[0], "before") || got[1] != "contextd listening" {
		t.Fatalf("got %q, want the log line, then serve's own", got)
	}
}
