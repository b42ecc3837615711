package loadgen

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestChurnAppendsAtTheRate(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		wantErrors bool
	}{{"ok", http.StatusCreated, false}, {"server fails", http.StatusInternalServerError, true}} {
		t.Run(tc.name, func(t *testing.T) {
			var n, bad atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var body appendBody
				if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v1/chats/x-") ||
					json.NewDecoder(r.Body).Decode(&body) != nil || len(body.Messages) != 1 || !strings.HasPrefix(body.UserID, "user-") {
					bad.Add(1)
				}
				n.Add(1)
				w.WriteHeader(tc.status)
			}))
			defer srv.Close()
			rep, err := Churn(context.Background(), srv.URL, ChurnOptions{Rate: 100, Chats: 5, ChatPrefix: "x-", Clients: 2, Duration: 500 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			// 100/s for 0.5 s: the schedule allows at most 51 sends (how
			// many go out on a busy machine is not asserted: no timing).
			// A request the end of the run cut (one per client at most)
			// may have reached the server without being counted.
			if rep.Sent < 1 || rep.Sent > 51 || n.Load() < rep.Sent || n.Load() > rep.Sent+2 || bad.Load() != 0 {
				t.Fatalf("sent %d (server saw %d, %d malformed); want 1..51, seen by the server (up to 2 more cut)", rep.Sent, n.Load(), bad.Load())
			}
			if (rep.Errors > 0) != tc.wantErrors || (tc.wantErrors && rep.Errors != rep.Sent) {
				t.Fatalf("errors = %d of %d (first %q)", rep.Errors, rep.Sent, rep.FirstError)
			}
			if rep.Latency.Count() != uint64(rep.Sent) {
				t.Fatalf("latency samples %d, sends %d", rep.Latency.Count(), rep.Sent)
			}
		})
	}
}

func TestChurnRefusesBadOptions(t *testing.T) {
	for _, o := range []ChurnOptions{{Rate: -1}, {Chats: -2}, {Clients: 5000}, {Duration: -time.Second}} {
		if _, err := Churn(context.Background(), "127.0.0.1:1", o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	if _, err := Churn(context.Background(), "10.0.0.1:80", ChurnOptions{Duration: time.Millisecond}); err == nil {
		t.Error("a non-loopback address was accepted")
	}
}
