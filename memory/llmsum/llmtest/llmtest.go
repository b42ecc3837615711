// Package llmtest is a scripted OpenAI-compatible /chat/completions server
// for tests: it records what it receives and answers with what a Script
// says, so code under test can use the real langchaingo OpenAI client.
package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms/openai"
)

// Request is what the server received on one call.
type Request struct {
	Model          string `json:"model"`
	Messages       []Msg  `json:"messages"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

// Msg is one chat message of a request.
type Msg struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// System returns the request's system message, User its last user message.
func (r Request) System() string { return r.role("system") }
func (r Request) User() string   { return r.role("user") }

func (r Request) role(role string) string {
	out := ""
	for _, m := range r.Messages {
		if m.Role == role {
			out = m.Content
		}
	}
	return out
}

// JSONMode reports whether the call asked for a JSON object reply.
func (r Request) JSONMode() bool {
	return r.ResponseFormat != nil && r.ResponseFormat.Type == "json_object"
}

// Reply is the scripted answer to one call.
type Reply struct {
	Content string
	Status  int           // HTTP status; 0 = 200
	Delay   time.Duration // wait before answering (the client may time out)
	// PromptTokens/CompletionTokens are reported in usage when > 0.
	PromptTokens, CompletionTokens int
}

// Script decides the reply to the n-th call (0-based).
type Script func(n int, req Request) Reply

// Server is a running scripted server.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []Request
	script   Script
}

// New starts a server; it is closed when the test ends.
func New(t testing.TB, script Script) *Server {
	s := &Server{script: script}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Close)
	return s
}

// Model returns a real langchaingo OpenAI client pointed at the server.
func (s *Server) Model(t testing.TB, model string) *openai.LLM {
	m, err := openai.New(openai.WithBaseURL(s.URL), openai.WithToken("test"), openai.WithModel(model))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Requests returns a copy of what was received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	rep := s.script(n, req)
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.Status != 0 && rep.Status != http.StatusOK {
		w.WriteHeader(rep.Status)
		_, _ = w.Write([]byte(`{"error":{"message":"scripted failure","type":"server_error"}}`))
		return
	}
	resp := map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 1, "model": req.Model,
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": rep.Content}}},
		"usage": map[string]any{"prompt_tokens": rep.PromptTokens, "completion_tokens": rep.CompletionTokens,
			"total_tokens": rep.PromptTokens + rep.CompletionTokens},
	}
	_ = json.NewEncoder(w).Encode(resp)
}

// Always answers every call with the same reply.
func Always(r Reply) Script { return func(int, Request) Reply { return r } }

// Sequence answers the n-th call with replies[n], repeating the last one.
func Sequence(replies ...Reply) Script {
	return func(n int, _ Request) Reply {
		if n >= len(replies) {
			return replies[len(replies)-1]
		}
		return replies[n]
	}
}
