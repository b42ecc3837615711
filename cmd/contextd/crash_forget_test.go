package main

// Deletes in the crash test (issue 22): a client deletes acknowledged
// messages while the binary is killed; after the last restart every
// deleted turn is a tombstone, and its text is found in no summary, no
// episode, no search hit and no context once the rebuild is done.

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// forgetLedger records the deletes: those answered 204 (or 404 after one
// whose outcome was unknown) and those whose outcome is unknown.
type forgetLedger struct {
	deleted map[string]bool // id -> surely deleted
	maybe   map[string]bool // id -> a delete was sent, outcome unknown
	sent    int
}

// deletesPerRound caps the deletes of one round: the load is about crashes
// in the middle of them, not about emptying the chats.
const deletesPerRound = 4

// deleter deletes acknowledged messages, a few per round.
func deleter(s *crashServer, l *ledger, rng *rand.Rand) {
	for n := 0; n < deletesPerRound && !s.stopping.Load(); n++ {
		time.Sleep(time.Duration(20+rng.IntN(80)) * time.Millisecond)
		id, chat, ok := l.deletable(rng)
		if !ok {
			continue
		}
		status, raw, err := s.call(http.MethodDelete, "/v1/chats/"+chat+"/messages/"+url.PathEscape(id), nil, nil)
		l.mu.Lock()
		fl := &l.fg
		fl.sent++
		switch {
		case err != nil || status >= 500:
			fl.maybe[id] = true
		case status == http.StatusNoContent:
			fl.deleted[id] = true
		case status == http.StatusNotFound && fl.maybe[id]:
			fl.deleted[id] = true // the earlier delete had landed
		default:
			if len(l.errs) < 50 {
				l.errs = append(l.errs, fmt.Sprintf("delete %s of %s: %d %s", id, chat, status, raw))
			}
		}
		l.mu.Unlock()
	}
}

// deletable picks an acknowledged message not surely deleted yet.
func (l *ledger) deletable(rng *rand.Rand) (id, chat string, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fg.deleted == nil {
		l.fg.deleted, l.fg.maybe = map[string]bool{}, map[string]bool{}
	}
	var ids []string
	for id := range l.acked {
		if !l.fg.deleted[id] {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return "", "", false
	}
	id = ids[rng.IntN(len(ids))]
	return id, l.sent[id].chat, true
}

// mayBeDeleted: a delete of the id was sent (surely landed or unknown).
func (l *ledger) mayBeDeleted(id string) bool { return l.fg.deleted[id] || l.fg.maybe[id] }

// waitRebuilt waits until no chat waits for a rebuild: every summary is
// served again and no episode is marked.
func (l *ledger) waitRebuilt(t *testing.T, s *crashServer) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for c := range crashChats {
		chat := chatName(c)
		for !l.chatRebuilt(t, s, chat) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not rebuilt after the restart", chat)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func (l *ledger) chatRebuilt(t *testing.T, s *crashServer, chat string) bool {
	var cx struct {
		Degraded []string `json:"degraded"`
	}
	status, _, err := s.call(http.MethodPost, "/v1/context", map[string]any{"chat_id": chat, "strategy": "running_summary"}, &cx)
	if status == http.StatusNotFound {
		return true // no turn ever landed
	}
	if err != nil || status != http.StatusOK || slices.Contains(cx.Degraded, "summary_rebuilding") {
		return false
	}
	var eps struct {
		Episodes []struct {
			Rebuild bool `json:"rebuild"`
		} `json:"episodes"`
	}
	if status, _, err := s.call(http.MethodGet, "/v1/chats/"+chat+"/episodes?limit=1000", nil, &eps); err != nil || status != http.StatusOK {
		return false
	}
	for _, e := range eps.Episodes {
		if e.Rebuild {
			return false
		}
	}
	return true
}

// waitIndexed waits until the vector index holds every stored turn: a
// restart leaves the turns appended since the last indexer batch to be
// indexed again, and controlSearch must not race that backlog.
func waitIndexed(t *testing.T, s *crashServer) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		status, raw, err := s.call(http.MethodGet, "/metrics", nil, nil)
		if err == nil && status == http.StatusOK && strings.Contains(string(raw), "\ncontextd_backlog_unindexed_turns 0\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("turns still unindexed 90 s after the restart (status %d, %v)", status, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// verifyForgotten: the id of every surely deleted turn (its content holds
// the id) is in no summary, episode, search hit or context of its chat.
func (l *ledger) verifyForgotten(t *testing.T, s *crashServer) int {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	checked := 0
	for id := range l.fg.deleted {
		chat, content := l.sent[id].chat, l.sent[id].content
		token := id + " " // "Turn m12-c3 from client 3: ..."
		if !strings.Contains(content, token) {
			continue // routing noise: its id is followed by ")"
		}
		for _, q := range []struct {
			what, method, path string
			body               any
		}{
			{"summary", http.MethodGet, "/v1/chats/" + chat + "/summary", nil},
			{"episodes", http.MethodGet, "/v1/chats/" + chat + "/episodes?limit=1000", nil},
			{"search", http.MethodPost, "/v1/search", map[string]any{"query": content, "chat_id": chat, "k": 50}},
			{"context", http.MethodPost, "/v1/context", map[string]any{"chat_id": chat, "query": content, "strategy": "rag_augmented", "budget_tokens": 100_000}},
		} {
			status, raw, err := s.call(q.method, q.path, q.body, nil)
			if err != nil || status != http.StatusOK {
				t.Errorf("%s of %s: %d %v %s", q.what, chat, status, err, raw)
				continue
			}
			if strings.Contains(string(raw), token) {
				t.Errorf("the deleted turn %s of %s is still in its %s", id, chat, q.what)
			}
		}
		checked++
	}
	l.controlSearch(t, s)
	return checked
}

// controlSearch: a live turn's text is found by the same search, so the
// checks above can fail.
func (l *ledger) controlSearch(t *testing.T, s *crashServer) {
	t.Helper()
	for id := range l.acked {
		content := l.sent[id].content
		if l.mayBeDeleted(id) || !strings.Contains(content, id+" ") {
			continue
		}
		_, raw, _ := s.call(http.MethodPost, "/v1/search", map[string]any{"query": content, "chat_id": l.sent[id].chat, "k": 50}, nil)
		if !strings.Contains(string(raw), id+" ") {
			t.Errorf("control: the live turn %s is not found by a search for its text: %.300s", id, raw)
		}
		return
	}
}
