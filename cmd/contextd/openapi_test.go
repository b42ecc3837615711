package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/internal/openapicheck"
)

// The binary's answers fit docs/openapi.yaml: every main endpoint, its
// success and its usual errors, each checked against the documented
// status, content type and schema (which forbid undocumented fields).
func TestAnswersFitOpenAPI(t *testing.T) {
	spec, err := openapicheck.Load("../../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := startBinary(t, sqliteStorage+"\n")
	checked := map[string]bool{}
	// call sends a request to path (op is its documented template) and
	// checks the answer; it returns the status and body.
	call := func(method, op, path, ct, body string, want int) []byte {
		t.Helper()
		if body != "" && ct == "application/json" && want < 300 {
			if err := spec.CheckRequest(method, op, []byte(body)); err != nil {
				t.Errorf("the request itself does not fit: %v", err)
			}
		}
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, s.base+path, r)
		if err != nil {
			t.Fatal(err)
		}
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := (&http.Client{Timeout: 60 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, raw, want)
		}
		if resp.Header.Get("X-Request-Id") == "" {
			t.Errorf("%s %s: no X-Request-Id", method, path)
		}
		if err := spec.CheckResponse(method, op, resp.StatusCode, resp.Header.Get("Content-Type"), raw); err != nil {
			t.Errorf("%v\n%.600s", err, raw)
		}
		checked[method+" "+op] = true
		return raw
	}
	const js = "application/json"

	call("GET", "/healthz", "/healthz", "", "", 200)
	call("GET", "/readyz", "/readyz", "", "", 200)
	call("GET", "/version", "/version", "", "", 200)
	call("GET", "/metrics", "/metrics", "", "", 200)
	call("GET", "/ui", "/ui", "", "", 301)

	msgs := "/v1/chats/{chat_id}/messages"
	turns, _ := json.Marshal(map[string]any{"user_id": "ann", "messages": projectTurns(40)})
	call("POST", msgs, "/v1/chats/o1/messages", js, string(turns), 201)
	call("POST", msgs, "/v1/chats/o1/messages", js, `{"messages":[{"id":"x1","role":"user","content":"I prefer window seats.","metadata":{"n":1},"created_at":"2026-05-04T18:30:00Z"},{"role":"user","content":"My dog is called Rex."}]}`, 201)
	call("POST", msgs, "/v1/chats/o1/messages", js, `{"messages":[{"role":"robot","content":"hi"}]}`, 400)
	call("POST", msgs, "/v1/chats/o1/messages", "text/plain", `{"messages":[]}`, 415)
	call("POST", msgs, "/v1/chats/o1/messages", js, `{"user_id":"bob","messages":[{"role":"user","content":"hi"}]}`, 409)
	call("DELETE", "/v1/chats/{chat_id}/messages/{message_id}", "/v1/chats/o1/messages/x1", "", "", 204)
	call("DELETE", "/v1/chats/{chat_id}/messages/{message_id}", "/v1/chats/o1/messages/nope", "", "", 404)
	call("GET", msgs, "/v1/chats/o1/messages?after_seq=35", "", "", 200) // holds the tombstone
	call("GET", msgs, "/v1/chats/nope/messages", "", "", 404)

	refresh := call("POST", "/v1/chats/{chat_id}/summary/refresh", "/v1/chats/o1/summary/refresh", "", "", 200)
	if !strings.Contains(string(refresh), `"covered_to_seq"`) {
		t.Errorf("the refresh made no summary to check: %s", refresh)
	}
	call("POST", "/v1/chats/{chat_id}/summary/refresh", "/v1/chats/o1/summary/refresh", "text/plain", "{}", 415)
	summary := call("GET", "/v1/chats/{chat_id}/summary", "/v1/chats/o1/summary", "", "", 200)
	if !strings.Contains(string(summary), `"parent_id"`) {
		t.Errorf("no summary chain to check: %.300s", summary)
	}
	call("GET", "/v1/chats/{chat_id}/summary", "/v1/chats/nope/summary", "", "", 404)
	call("GET", "/v1/chats/{chat_id}/episodes", "/v1/chats/o1/episodes", "", "", 200)
	call("GET", "/v1/chats/{chat_id}/episodes", "/v1/chats/o1/episodes?limit=0", "", "", 400)
	// Facts are drawn in the background, within about a second.
	var facts []byte
	waitFor(t, 20*time.Second, "the chat's facts", func() bool {
		facts = call("GET", "/v1/chats/{chat_id}/facts", "/v1/chats/o1/facts?include_superseded=true", "", "", 200)
		return strings.Contains(string(facts), `"kind"`)
	})

	for _, op := range []string{"/v1/context", "/context"} {
		ctx := call("POST", op, op, js, `{"chat_id":"o1","query":"what did we decide about the greenhouse?","budget_tokens":600,"strategy":"rag_augmented"}`, 200)
		if !strings.Contains(string(ctx), `"sections"`) || !strings.Contains(string(ctx), `"summary":{`) {
			t.Errorf("%s: the answer has no sections or summary to check: %.300s", op, ctx)
		}
		call("POST", op, op, js, `{"chat_id":"o1","include":["context"]}`, 200)
		call("POST", op, op, js, `{"chat_id":"nope"}`, 404)
		call("POST", op, op, js, `{"chat_id":"o1","bogus":1}`, 400)
		call("POST", op, op, "text/plain", `{"chat_id":"o1"}`, 415)
	}
	hits := call("POST", "/v1/search", "/v1/search", js, `{"query":"greenhouse tomatoes","user_id":"ann","k":5}`, 200)
	if !strings.Contains(string(hits), `"kind"`) {
		t.Errorf("no hits to check: %s", hits)
	}
	call("POST", "/v1/search", "/v1/search", js, `{"query":"x","k":0}`, 400)

	var profile []byte
	waitFor(t, 30*time.Second, "a profile item", func() bool {
		profile = call("GET", "/v1/users/{user_id}/profile", "/v1/users/ann/profile", "", "", 200)
		return strings.Contains(string(profile), `"sources"`)
	})
	call("GET", "/v1/users/{user_id}/profile", "/v1/users/nobody/profile", "", "", 404)
	var pa struct {
		Profile map[string][]struct {
			ID string `json:"id"`
		} `json:"profile"`
	}
	_ = json.Unmarshal(profile, &pa)
	item := ""
	for _, k := range []string{"user_preferences", "entities", "topics", "open_questions"} {
		if len(pa.Profile[k]) > 0 {
			item = pa.Profile[k][0].ID
			break
		}
	}
	if item == "" {
		t.Errorf("no profile item to forget: %.300s", profile)
	} else {
		call("DELETE", "/v1/users/{user_id}/profile/items/{item_id}", "/v1/users/ann/profile/items/"+item, "", "", 204)
	}
	call("GET", "/v1/chats/{chat_id}/export", "/v1/chats/o1/export", "", "", 200)
	call("GET", "/v1/users/{user_id}/export", "/v1/users/ann/export", "", "", 200)
	call("GET", "/v1/chats/{chat_id}/export", "/v1/chats/nope/export", "", "", 404)

	mcp := bytes.NewBufferString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	req, _ := http.NewRequest("POST", s.base+"/mcp", mcp)
	req.Header.Set("Content-Type", js)
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := spec.CheckResponse("POST", "/mcp", resp.StatusCode, resp.Header.Get("Content-Type"), raw); err != nil {
		t.Errorf("MCP initialize: %v", err)
	}
	checked["POST /mcp"] = true

	call("DELETE", "/v1/chats/{chat_id}", "/v1/chats/o1", "", "", 204)
	call("DELETE", "/v1/chats/{chat_id}", "/v1/chats/o1", "", "", 404)
	call("POST", msgs, "/v1/chats/o2/messages", js, `{"user_id":"cy","messages":[{"role":"user","content":"hello"}]}`, 201)
	call("DELETE", "/v1/users/{user_id}", "/v1/users/cy", "", "", 204)
	call("DELETE", "/v1/users/{user_id}", "/v1/users/cy", "", "", 404)

	// Every documented operation but MCP's stream and session end was
	// exercised.
	for _, op := range spec.Operations() {
		if !checked[op] && !slices.Contains([]string{"GET /mcp", "DELETE /mcp"}, op) {
			t.Errorf("%s is documented but not checked against the binary", op)
		}
	}
}
