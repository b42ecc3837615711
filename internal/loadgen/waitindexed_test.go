package loadgen

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// A failed /metrics scrape is a round without news: the wait goes on to
// the drained backlog. A scrape that answers without the metric ends it
// (no indexer to wait for).
func TestWaitIndexedOutlivesAFailedScrape(t *testing.T) {
	for _, c := range []struct {
		name      string
		answers   []string // "" = HTTP 503
		wantNote  bool
		wantCalls int32
	}{
		{"a failed scrape, then the backlog drains", []string{"", "contextd_backlog_unindexed_turns 5\n", "contextd_backlog_unindexed_turns 0\n"}, false, 3},
		{"no metric", []string{"other_metric 1\n"}, true, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := int(calls.Add(1)) - 1
				a := c.answers[min(n, len(c.answers)-1)]
				if a == "" {
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				fmt.Fprint(w, a)
			}))
			defer srv.Close()
			var p Preload
			if err := waitIndexed(context.Background(), srv.Client(), srv.URL, 30*time.Second, 20*time.Second, &p, io.Discard); err != nil {
				t.Fatal(err)
			}
			if (p.IndexNote != "") != c.wantNote || calls.Load() != c.wantCalls {
				t.Errorf("note %q after %d scrapes; want a note %v after %d", p.IndexNote, calls.Load(), c.wantNote, c.wantCalls)
			}
		})
	}
}
