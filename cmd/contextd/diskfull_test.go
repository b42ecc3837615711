package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// diskFullConfig caps the SQLite file at pages (storage.sqlite_max_pages):
// past it every write fails with SQLITE_FULL, as on a full disk.
func diskFullConfig(pages int) string {
	return fmt.Sprintf(`server:
  addr: "127.0.0.1:0"
%s
  sqlite_max_pages: %d
vector:
  driver: none
`, sqliteStorage, pages)
}

// fullAnswer is the status, error code and Retry-After of an answer.
type fullAnswer struct {
	status     int
	code       string
	retryAfter string
}

// send is binServer.do keeping the Retry-After header and the error code.
func (s *binServer) send(method, path string, body any) fullAnswer {
	s.t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(string(b)))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return fullAnswer{resp.StatusCode, e.Error.Code, resp.Header.Get("Retry-After")}
}

// readyStorage is /readyz's status and its storage state.
func (s *binServer) readyStorage() (int, string) {
	s.t.Helper()
	var ready map[string]string
	st, raw := s.do("GET", "/readyz", nil, nil)
	_ = json.Unmarshal(raw, &ready)
	return st, ready["storage"]
}

// A full disk is a fault to retry, not a bug: every write past the cap
// answers 503 storage_full with Retry-After (appends, a context's append),
// /readyz says storage degraded (503) until a write succeeds, no
// acknowledged turn is lost (m1, deleted, stays as its tombstone), and
// with room again (a larger cap) appends work and /readyz is ready.
func TestDiskFullAnswersStorageFull(t *testing.T) {
	s := startBinary(t, diskFullConfig(256))
	if st, storage := s.readyStorage(); st != 200 || storage != "ok" {
		t.Fatalf("/readyz before: %d %s", st, storage)
	}
	body := strings.Repeat("a line to fill the disk with. ", 300)
	var acked []string
	var full fullAnswer
	for i := 0; ; i++ {
		id := fmt.Sprint("m", i)
		a := s.send("POST", "/v1/chats/c1/messages", map[string]any{"messages": []any{map[string]any{"id": id, "role": "user", "content": body}}})
		if a.status != 201 {
			full = a
			break
		}
		acked = append(acked, id)
		if i == 5000 {
			t.Fatal("the cap never filled")
		}
	}
	want := fullAnswer{503, "storage_full", "30"}
	if full != want {
		t.Fatalf("append past the cap after %d: %+v, want %+v", len(acked), full, want)
	}
	if st, storage := s.readyStorage(); st != 503 || storage != "degraded" {
		t.Errorf("/readyz while full: %d %s, want 503 degraded", st, storage)
	}
	for _, w := range []struct{ method, path string }{{"POST", "/v1/chats/c1/messages"}, {"POST", "/v1/context"}} {
		in := map[string]any{"messages": []any{map[string]any{"id": "late", "role": "user", "content": body}}}
		if w.path == "/v1/context" {
			in = map[string]any{"chat_id": "c1", "append": []any{map[string]any{"id": "late", "role": "user", "content": body}}}
		}
		if a := s.send(w.method, w.path, in); a != want {
			t.Errorf("%s %s while full: %+v, want %+v", w.method, w.path, a, want)
		}
	}
	if st, storage := s.readyStorage(); st != 503 || storage != "degraded" {
		t.Errorf("/readyz after more refused writes: %d %s, want 503 degraded", st, storage)
	}
	// A delete frees its turn's pages (secure_delete), so under the cap it
	// has room: the write succeeds, and storage is ready again.
	if a := s.send("DELETE", "/v1/chats/c1/messages/m1", nil); a.status != 204 {
		t.Errorf("delete while full: %+v, want 204", a)
	}
	if st, storage := s.readyStorage(); st != 200 || storage != "ok" {
		t.Errorf("/readyz after a write succeeded: %d %s, want 200 ok", st, storage)
	}
	s.stop()
	if err := os.WriteFile(filepath.Join(s.dir, "agents.yaml"),
		[]byte(strings.ReplaceAll(diskFullConfig(1<<20), "%DATA%", s.dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	s = s.restart()
	s.must(201, "POST", "/v1/chats/c1/messages", map[string]any{"messages": []any{map[string]any{"id": "after", "role": "user", "content": body}}}, nil)
	if st, storage := s.readyStorage(); st != 200 || storage != "ok" {
		t.Errorf("/readyz with room again: %d %s, want 200 ok", st, storage)
	}
	stored := map[string]bool{}
	for after := 0; ; {
		var page struct {
			Messages []struct{ ID string } `json:"messages"`
			Next     *int                  `json:"next_after_seq"`
		}
		s.must(200, "GET", fmt.Sprintf("/v1/chats/c1/messages?after_seq=%d&limit=1000", after), nil, &page)
		for _, m := range page.Messages {
			stored[m.ID] = true
		}
		if page.Next == nil || len(page.Messages) == 0 {
			break
		}
		after = *page.Next
	}
	for _, id := range append(acked, "after") {
		if !stored[id] {
			t.Errorf("acknowledged turn %s lost", id)
		}
	}
	if stored["late"] {
		t.Error("a turn refused as storage_full was stored")
	}
}

// A background write that finds the disk full marks storage degraded too:
// the summariser, started on a store filled to its cap, fails to store the
// summary, and /readyz says so though no request wrote anything.
func TestBackgroundDiskFullMarksStorageDegraded(t *testing.T) {
	// The fill is done with the summariser off (strategy none), so that
	// only the appends meet the cap.
	s := startBinary(t, diskFullConfig(256)+"supervisor:\n  memory:\n    strategy: none\n")
	// Big turns, then smaller ones into what is left: no room for a
	// summary. Turns of distinct sentences, so that the summary is long.
	for n, sentences := range []int{60, 6, 1} {
		for i := 0; ; i++ {
			a := s.send("POST", "/v1/chats/c1/messages", map[string]any{"messages": []any{map[string]any{"id": fmt.Sprint("m", n, "-", i), "role": "user", "content": fillText(n*10000+i, sentences)}}})
			if a.status != 201 {
				break
			}
			if i == 5000 {
				t.Fatal("the cap never filled")
			}
		}
	}
	s.stop()
	cfg := diskFullConfig(256) + "supervisor:\n  memory:\n    summary_cooldown: 0s\n"
	if err := os.WriteFile(filepath.Join(s.dir, "agents.yaml"), []byte(strings.ReplaceAll(cfg, "%DATA%", s.dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	s = s.restart()
	waitFor(t, 30*time.Second, "/readyz to say storage degraded", func() bool {
		st, storage := s.readyStorage()
		return st == 503 && storage == "degraded"
	})
}

// fillText is n distinct sentences naming people, places and projects.
func fillText(seed, n int) string {
	names := []string{"Alice", "Bruno", "Chiara", "Dmitri", "Esther", "Farid", "Greta", "Hiroshi", "Ines", "Jonas"}
	places := []string{"Lisbon", "Nairobi", "Oslo", "Quito", "Riga", "Seoul", "Tunis", "Utrecht", "Valencia", "Warsaw"}
	var b strings.Builder
	for k := 0; k < n; k++ {
		x := seed*61 + k*7
		fmt.Fprintf(&b, "%s decided to move the %s project review to %s on day %d because the budget changed. ",
			names[x%10], names[(x/10)%10]+"-"+fmt.Sprint(x%97), places[(x/3)%10], x%28+1)
	}
	return b.String()
}
