package api

import (
	"strings"
	"testing"
)

// Every decode error names its field in the API's words, never Go's.
func TestDecodeErrorsSpeakTheAPI(t *testing.T) {
	h := newHarness(t, nil)
	h.do("POST", "/v1/chats/c1/messages", `{"messages":[{"role":"user","content":"seed"}]}`)
	cases := []struct {
		name, path, body   string
		code, field, words string
	}{
		{"created_at not a time", "/v1/chats/c1/messages", `{"messages":[{"role":"user","content":"x","created_at":"tomorrow"}]}`,
			"invalid_time", "messages[0].created_at", "must be an RFC 3339 time, e.g. 2024-05-01T10:00:00Z"},
		{"created_at a number", "/v1/chats/c1/messages", `{"messages":[{"role":"user","content":"x"},{"role":"user","content":"y","created_at":17}]}`,
			"invalid_time", "messages[1].created_at", "must be an RFC 3339 time"},
		{"messages an object", "/v1/chats/c1/messages", `{"messages":{"role":"user","content":"x"}}`,
			"invalid_type", "messages", "messages: must be an array of messages"},
		{"a message a string", "/v1/chats/c1/messages", `{"messages":["hello"]}`,
			"invalid_type", "messages[0]", "must be a message"},
		{"metadata a string", "/v1/chats/c1/messages", `{"messages":[{"role":"user","content":"x","metadata":"tag"}]}`,
			"invalid_type", "messages[0].metadata", "must be an object"},
		{"nested unknown field", "/v1/chats/c1/messages", `{"messages":[{"role":"user","content":"x","author":"me"}]}`,
			"unknown_field", "messages[0].author", `unknown field "author"`},
		{"body an array", "/v1/chats/c1/messages", `[{"role":"user","content":"x"}]`,
			"invalid_type", "", "the request body must be a JSON object, got an array"},
		{"context body a string", "/v1/context", `"c1"`,
			"invalid_type", "", "the request body must be a JSON object, got a string"},
		{"since a number", "/v1/context", `{"chat_id":"c1","since":1714557600}`,
			"invalid_type", "since", "must be a string holding an RFC 3339 time"},
		{"since not a time", "/v1/context", `{"chat_id":"c1","since":"tomorrow"}`,
			"invalid_time", "since", "RFC 3339"},
		{"append an object", "/v1/context", `{"chat_id":"c1","append":{"role":"user"}}`,
			"invalid_type", "append", "must be an array of messages"},
		{"budget a fraction", "/v1/context", `{"chat_id":"c1","budget_tokens":1.5}`,
			"invalid_type", "budget_tokens", "must be an integer"},
		{"budget too big", "/v1/context", `{"chat_id":"c1","budget_tokens":1e30}`,
			"invalid_value", "budget_tokens", "is out of range"},
		{"wait a string", "/v1/context", `{"chat_id":"c1","wait_for_summary":"yes"}`,
			"invalid_type", "wait_for_summary", "must be true or false"},
		{"chat_id a number", "/v1/context", `{"chat_id":42}`,
			"invalid_type", "chat_id", "must be a string"},
		{"kinds a string", "/v1/search", `{"query":"x","kinds":"turn"}`,
			"invalid_type", "kinds", "must be an array of strings"},
		{"min_score a word", "/v1/search", `{"query":"x","min_score":"high"}`,
			"invalid_type", "min_score", "must be a number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.do("POST", c.path, c.body)
			e, _ := r.body["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if r.status != 400 || r.errCode() != c.code || r.errField() != c.field {
				t.Fatalf("got %d %q field %q, want 400 %q field %q: %s", r.status, r.errCode(), r.errField(), c.code, c.field, r.raw)
			}
			if !strings.Contains(c.field+": "+msg, c.words) {
				t.Errorf("message %q does not say %q", msg, c.words)
			}
			for _, goism := range []string{"2006-01-02", "interface", "engine.", "map[", "[]", "json:", "Go value"} {
				if strings.Contains(msg, goism) {
					t.Errorf("message leaks Go internals (%q): %s", goism, msg)
				}
			}
		})
	}
	if n := h.count("c1"); n != 1 {
		t.Errorf("c1 holds %d turns, want only the seed", n)
	}
}
