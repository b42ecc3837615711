package api

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// rawPost writes a whole request (headers and body) before reading
// anything, as urllib and many HTTP libraries do, and returns the answer.
// A server that answers early and closes would make the write fail with
// "connection reset" instead.
func rawPost(t *testing.T, base, path, contentType string, body []byte) (int, map[string]any) {
	t.Helper()
	u, _ := url.Parse(base)
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", path, u.Host, contentType, len(body))
	if _, err := conn.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(body); err != nil {
		t.Fatalf("writing the body: %v (the server closed before reading it)", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("answer is not JSON: %d %q", resp.StatusCode, raw)
	}
	return resp.StatusCode, m
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// A 12 MB body over the 4 MB default limit, written whole before reading:
// the client reads the 413 JSON error, and so for malformed JSON and a
// text/plain body (415) under the limit.
func TestLargeBodiesWrittenWholeGetTheJSONError(t *testing.T) {
	h := newHarness(t, nil)
	big := []byte(`{"chat_id":"c1","query":"` + strings.Repeat("x", 12<<20) + `"}`)
	if code, m := rawPost(t, h.srv.URL, "/v1/context", "application/json", big); code != 413 || errCode(m) != "body_too_large" {
		t.Fatalf("over the limit: %d %v", code, m)
	}
	malformed := []byte(`{"chat_id":"c1","query":` + strings.Repeat("x", 3<<20) + `}`)
	if code, m := rawPost(t, h.srv.URL, "/v1/context", "application/json", malformed); code != 400 || errCode(m) != "invalid_json" {
		t.Fatalf("malformed: %d %v", code, m)
	}
	if code, m := rawPost(t, h.srv.URL, "/v1/chats/c1/messages", "text/plain", malformed); code != 415 || errCode(m) != "unsupported_media_type" {
		t.Fatalf("text/plain: %d %v", code, m)
	}
	// Over the limit without the body being JSON at all, after a good request
	// on another connection: the server is still fine.
	if code, _ := rawPost(t, h.srv.URL, "/v1/chats/c1/messages", "application/octet-stream", make([]byte, 5<<20)); code != 413 {
		t.Fatalf("binary over the limit: %d", code)
	}
}

func TestLoneSurrogate(t *testing.T) {
	for _, tc := range []struct {
		body string
		lone bool
	}{
		{`{"id":"plain"}`, false},
		{`{"id":"caf\u00e9"}`, false},
		{`{"id":"\ud83d\ude00 smile"}`, false}, // a pair
		{`{"id":"s\udcff"}`, true},             // a low half alone
		{`{"id":"s\ud800"}`, true},             // a high half at the end of a string
		{`{"id":"s\ud800x"}`, true},            // a high half, then not an escape
		{`{"id":"s\ud800\u0041"}`, true},       // a high half, then not a low half
		{`{"id":"s\\udcff"}`, false},           // an escaped backslash, then text
		{`{"id":"s\\\udcff"}`, true},           // an escaped backslash, then a lone half
		{`{"id":"\uD83D\uDE00"}`, false},       // upper-case hex
		{`{"a":"\u12"}`, false},                // malformed: the decoder's to refuse
	} {
		if got := loneSurrogate([]byte(tc.body)); got != tc.lone {
			t.Errorf("loneSurrogate(%s) = %v, want %v", tc.body, got, tc.lone)
		}
	}
}

// Two ids that differ only in a lone surrogate are not stored as one: the
// body is refused, and nothing is stored.
func TestLoneSurrogateRefused(t *testing.T) {
	h := newHarness(t, nil)
	r := h.do("POST", "/v1/chats/surr/messages", `{"messages":[{"id":"s\udcff","role":"user","content":"caf\udcff name"}]}`)
	if e, _ := r.body["error"].(map[string]any); r.status != 400 || e["code"] != "invalid_utf8" {
		t.Errorf("lone surrogate: %d %s, want 400 invalid_utf8", r.status, r.raw)
	}
	if r := h.do("GET", "/v1/chats/surr/messages", ""); r.status != 404 {
		t.Errorf("something was stored: %d %s", r.status, r.raw)
	}
}
