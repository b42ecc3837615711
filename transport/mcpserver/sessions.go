package mcpserver

import (
	"net/http"
	"sync"
	"time"
)

// sessionIDHeader is the streamable-HTTP transport's session header.
const sessionIDHeader = "Mcp-Session-Id"

// sessions bounds the SDK's sessions, overall and per client, beside the
// SDK's own idle timeout. Why: the SDK keeps a session (a goroutine and
// ~19 KB, more with its pending state) from any POST without a session id
// until it is DELETEd or idle for the timeout, so a flood of initialize
// calls grows memory and GC work without bound within one timeout. A new
// session past a cap closes the oldest idle one (of the client when the
// client is at its cap, else of anyone); when none is idle it is refused.
// The table records only what the SDK made (the ids its answers carry),
// closes sessions through the SDK's own DELETE, and drops what the SDK has
// expired or answered 404 for.
type sessions struct {
	mu        sync.Mutex
	max       int
	perClient int
	timeout   time.Duration
	byID      map[string]*session
	pending   int            // admitted, not yet answered with an id
	count     map[string]int // sessions (and pending ones) per client
}

// session is one SDK session as the table knows it.
type session struct {
	id, tenant, client string
	protocol           string // negotiated at initialize
	lastUsed           time.Time
	inFlight           int // requests being served (an open GET stream counts)
}

func newSessions(max, perClient int, timeout time.Duration) *sessions {
	return &sessions{max: max, perClient: perClient, timeout: timeout, byID: map[string]*session{}, count: map[string]int{}}
}

// admit makes room for one new session of client: it returns the sessions
// to close first (expired ones and evicted idle ones, already out of the
// table), or ok false when the caps are reached with none idle. An ok
// admission must be followed by bind or release.
func (s *sessions) admit(client string, now time.Time) (closeFirst []*session, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, e := range s.byID { // what the SDK has expired (or is about to)
		if e.inFlight == 0 && now.Sub(e.lastUsed) >= s.timeout {
			s.remove(id)
			closeFirst = append(closeFirst, e)
		}
	}
	for s.count[client] >= s.perClient || len(s.byID)+s.pending >= s.max {
		only := ""
		if s.count[client] >= s.perClient {
			only = client
		}
		e := s.oldestIdle(only)
		if e == nil {
			return closeFirst, false
		}
		s.remove(e.id)
		closeFirst = append(closeFirst, e)
	}
	s.pending++
	s.count[client]++
	return closeFirst, true
}

// oldestIdle is the least recently used session with no request at work,
// of client when client is not "", else of anyone.
func (s *sessions) oldestIdle(client string) *session {
	var old *session
	for _, e := range s.byID {
		if e.inFlight == 0 && (client == "" || e.client == client) && (old == nil || e.lastUsed.Before(old.lastUsed)) {
			old = e
		}
	}
	return old
}

// bind records the session an admitted request opened.
func (s *sessions) bind(e *session, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending--
	e.lastUsed = now
	s.byID[e.id] = e
}

// release gives back an admission that opened no session.
func (s *sessions) release(client string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending--
	s.uncount(client)
}

// enter marks a request on session id at work; the session (nil when the
// table does not know it) is passed to leave.
func (s *sessions) enter(id string, now time.Time) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.byID[id]
	if e != nil {
		e.inFlight++
		e.lastUsed = now
	}
	return e
}

// leave ends a request enter began; a session the SDK no longer has (its
// DELETE went through, or it answered 404) leaves the table.
func (s *sessions) leave(e *session, gone bool, now time.Time) {
	if e == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e.inFlight--
	e.lastUsed = now
	if gone && s.byID[e.id] == e {
		s.remove(e.id)
	}
}

// protocol is the version session id negotiated ("" when unknown).
func (s *sessions) protocol(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.byID[id]; e != nil {
		return e.protocol
	}
	return ""
}

// size is how many sessions the table holds.
func (s *sessions) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}

func (s *sessions) remove(id string) {
	if e, ok := s.byID[id]; ok {
		delete(s.byID, id)
		s.uncount(e.client)
	}
}

func (s *sessions) uncount(client string) {
	if s.count[client]--; s.count[client] <= 0 {
		delete(s.count, client)
	}
}

// discard is a ResponseWriter for the DELETEs the table sends the SDK.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header {
	if d.h == nil {
		d.h = http.Header{}
	}
	return d.h
}
func (*discard) Write(b []byte) (int, error) { return len(b), nil }
func (*discard) WriteHeader(int)             {}
