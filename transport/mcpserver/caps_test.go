package mcpserver

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// The table's admissions: a client at its cap closes its own oldest idle
// session, a full table the oldest idle of anyone, expired sessions go
// first, and with nothing idle the new session is refused.
func TestSessionsAdmit(t *testing.T) {
	t0 := time.Unix(1000, 0)
	open := func(s *sessions, id, client string, at time.Time) {
		if _, ok := s.admit(client, at); !ok {
			t.Fatalf("admit %s refused", id)
		}
		s.bind(&session{id: id, client: client}, at)
	}
	ids := func(ss []*session) string {
		var out []string
		for _, e := range ss {
			out = append(out, e.id)
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		name     string
		max, per int
		busy     string // a session with a request at work
		client   string
		at       time.Duration
		closed   string
		admitted bool
	}{
		{"room left", 10, 5, "", "c", time.Second, "", true},
		{"client at its cap: its own oldest", 10, 3, "", "a", time.Second, "a1", true},
		{"client at its cap, oldest busy: the next", 10, 3, "a1", "a", time.Second, "a2", true},
		{"table full: anyone's oldest", 4, 5, "", "c", time.Second, "a1", true},
		{"expired go first", 10, 5, "", "c", time.Hour, "a1,a2,a3,b1", true},
		{"nothing idle", 4, 5, "a1", "c", time.Second, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSessions(c.max, c.per, time.Minute)
			open(s, "a1", "a", t0)
			open(s, "a2", "a", t0.Add(time.Millisecond))
			open(s, "a3", "a", t0.Add(2*time.Millisecond))
			open(s, "b1", "b", t0.Add(3*time.Millisecond))
			if c.busy != "" {
				s.enter(c.busy, t0)
				if c.name == "nothing idle" {
					for _, id := range []string{"a2", "a3", "b1"} {
						s.enter(id, t0)
					}
				}
			}
			closed, ok := s.admit(c.client, t0.Add(c.at))
			got := strings.Split(ids(closed), ",")
			slices.Sort(got)
			if strings.Join(got, ",") != c.closed || ok != c.admitted {
				t.Fatalf("admit: closed %q ok %v, want %q %v", strings.Join(got, ","), ok, c.closed, c.admitted)
			}
		})
	}
}

func TestBatchRefusal(t *testing.T) {
	batch := func(n int) []byte {
		return []byte(" [" + strings.TrimSuffix(strings.Repeat(`{"jsonrpc":"2.0","id":1,"method":"ping"},`, n), ",") + "]")
	}
	for _, c := range []struct {
		name    string
		body    []byte
		version string
		refused bool
	}{
		{"one message", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), "2025-06-18", false},
		{"batch, 2025-06-18", batch(1), "2025-06-18", true},
		{"batch, newer", batch(1), "2025-11-25", true},
		{"batch, version unknown", batch(1), "", true},
		{"small batch, 2025-03-26", batch(maxBatch), "2025-03-26", false},
		{"long batch, 2025-03-26", batch(maxBatch + 1), "2025-03-26", true},
	} {
		if got := batchRefusal(c.body, c.version) != ""; got != c.refused {
			t.Errorf("%s: refused %v, want %v", c.name, got, c.refused)
		}
	}
}
