package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// rawPost sends body with the Content-Type ct (none when empty) and
// returns the status, the error code of an error answer and the raw body.
func rawPost(t *testing.T, target, ct, body string, header ...string) (int, string, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest("POST", target, r)
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	return resp.StatusCode, e.Error.Code, raw
}

// A body declared as anything but JSON (what a web page may send to
// another origin without asking first) is a 415 on the JSON API, and
// stores nothing; JSON with a charset, and requests without a body, are
// served as before; MCP and the inspector's forms are not the JSON API.
func TestNonJSONBodyIs415(t *testing.T) {
	s := startBinary(t, sqliteStorage+"\n")
	appendBody := `{"user_id":"ann","messages":[{"id":"1","role":"user","content":"I keep bees on the roof."}]}`
	for _, tc := range []struct{ path, ct, body string }{
		{"/v1/chats/c1/messages", "text/plain", appendBody},
		{"/v1/chats/c1/messages", "text/plain;charset=UTF-8", appendBody},
		{"/v1/chats/c1/messages", "application/x-www-form-urlencoded", appendBody},
		{"/v1/chats/c1/messages", "multipart/form-data; boundary=x", appendBody},
		{"/v1/context", "text/plain", `{"chat_id":"c1","query":"bees"}`},
		{"/context", "text/plain", `{"chat_id":"c1","query":"bees"}`},
		{"/v1/search", "text/plain", `{"query":"bees"}`},
		{"/v1/chats/c1/summary/refresh", "text/plain", `{}`},
	} {
		st, code, raw := rawPost(t, s.base+tc.path, tc.ct, tc.body)
		if st != http.StatusUnsupportedMediaType || code != "unsupported_media_type" || !strings.Contains(string(raw), `"message"`) {
			t.Errorf("POST %s as %s: %d %s, want 415 unsupported_media_type", tc.path, tc.ct, st, raw)
		}
	}
	if st, _ := s.do("GET", "/v1/chats/c1/messages", nil, nil); st != http.StatusNotFound {
		t.Fatalf("a refused append stored the chat: GET messages %d", st)
	}

	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8", ""} {
		if st, _, raw := rawPost(t, s.base+"/v1/chats/c1/messages", ct, appendBody); st != http.StatusCreated {
			t.Fatalf("append as %q: %d %s, want 201", ct, st, raw)
		}
	}
	if st, _, raw := rawPost(t, s.base+"/v1/context", "application/json;charset=utf-8", `{"chat_id":"c1","query":"bees"}`); st != 200 {
		t.Fatalf("context as JSON with a charset: %d %s", st, raw)
	}
	// No body: the Content-Type does not matter (summary refresh takes none).
	if st, code, raw := rawPost(t, s.base+"/v1/chats/c1/summary/refresh", "text/plain", ""); st == http.StatusUnsupportedMediaType || code == "unsupported_media_type" {
		t.Fatalf("refresh without a body: %d %s", st, raw)
	}

	// MCP still takes its JSON-RPC.
	st, _, raw := rawPost(t, s.base+"/mcp", "application/json",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		"Accept", "application/json, text/event-stream")
	if st != 200 {
		t.Fatalf("MCP initialize: %d %s", st, raw)
	}
	// The inspector's login form is a form post, not the JSON API: it is
	// answered by the inspector (a redirect or its page), never a 415.
	st, code, raw := rawPost(t, s.base+"/ui/login", "application/x-www-form-urlencoded", url.Values{"key": {"x"}}.Encode())
	if st == http.StatusUnsupportedMediaType || code == "unsupported_media_type" || st >= 500 {
		t.Fatalf("inspector login form: %d %s", st, raw)
	}
}
