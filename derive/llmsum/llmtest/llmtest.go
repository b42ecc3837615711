// Package llmtest holds scripted LLM servers for tests, an OpenAI-compatible
// /chat/completions one (New) and an Ollama /api/chat one (NewOllama): they
// record what they receive and answer with what a Script says, so code
// under test can use the real langchaingo clients.
package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms/openai"
)

// Request is what the server received on one call.
type Request struct {
	Model    string `json:"model"`
	Messages []Msg  `json:"messages"`
	// ResponseFormat is OpenAI's response_format.
	ResponseFormat *ResponseFormat `json:"response_format"`
	// Format is Ollama's format: "json" (a JSON string) or a schema object.
	Format json.RawMessage `json:"format"`
}

// ResponseFormat is OpenAI's response_format, json_object or json_schema.
type ResponseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   string          `json:"name"`
		Strict bool            `json:"strict"`
		Schema json.RawMessage `json:"schema"`
	} `json:"json_schema"`
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

// JSONMode reports whether the call asked for any JSON object reply, with
// no schema (OpenAI json_object, Ollama format "json").
func (r Request) JSONMode() bool {
	return (r.ResponseFormat != nil && r.ResponseFormat.Type == "json_object") ||
		strings.TrimSpace(string(r.Format)) == `"json"`
}

// Structured reports whether the call asked for JSON, with a schema or not.
func (r Request) Structured() bool {
	_, schema := r.Schema()
	return r.JSONMode() || schema != nil
}

// Schema returns the JSON schema the call asked its reply in, and its name
// (OpenAI's json_schema.name; "" for Ollama); nil when it asked for none.
func (r Request) Schema() (name string, schema json.RawMessage) {
	if f := r.ResponseFormat; f != nil && f.Type == "json_schema" && f.JSONSchema != nil {
		return f.JSONSchema.Name, f.JSONSchema.Schema
	}
	if f := strings.TrimSpace(string(r.Format)); strings.HasPrefix(f, "{") {
		return "", r.Format
	}
	return "", nil
}

// Reply is the scripted answer to one call.
type Reply struct {
	Content string
	Status  int           // HTTP status; 0 = 200
	Error   string        // the error message of a failing status
	Delay   time.Duration // wait before answering (the client may time out)
	// RetryAfter, when set, is sent as the Retry-After header (seconds).
	RetryAfter int
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

// New starts an OpenAI-compatible server; it is closed when the test ends.
func New(t testing.TB, script Script) *Server {
	s := &Server{script: script}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handleOpenAI))
	t.Cleanup(s.Close)
	return s
}

// NewOllama starts an Ollama server; it is closed when the test ends.
func NewOllama(t testing.TB, script Script) *Server {
	s := &Server{script: script}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handleOllama))
	t.Cleanup(s.Close)
	return s
}

// Model returns a real langchaingo OpenAI client pointed at the server
// (one New started).
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

// receive records a request on path and returns the script's reply, once
// its delay is over; false when the request was answered already.
func (s *Server) receive(w http.ResponseWriter, r *http.Request, path string) (Request, Reply, bool) {
	if !strings.HasSuffix(r.URL.Path, path) {
		http.NotFound(w, r)
		return Request{}, Reply{}, false
	}
	body, _ := io.ReadAll(r.Body)
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return Request{}, Reply{}, false
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
			return Request{}, Reply{}, false
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(rep.RetryAfter))
	}
	return req, rep, true
}

func (s *Server) handleOpenAI(w http.ResponseWriter, r *http.Request) {
	req, rep, ok := s.receive(w, r, "/chat/completions")
	if !ok {
		return
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		w.WriteHeader(rep.Status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": rep.errorText(), "type": "invalid_request_error"}})
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

// handleOllama answers as Ollama does when not told stream: false (the
// langchaingo client never says it): newline-delimited JSON, here one line
// that is also the last.
func (s *Server) handleOllama(w http.ResponseWriter, r *http.Request) {
	req, rep, ok := s.receive(w, r, "/api/chat")
	if !ok {
		return
	}
	if rep.Status != 0 && rep.Status != http.StatusOK {
		w.WriteHeader(rep.Status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": rep.errorText()})
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"model": req.Model, "created_at": "2025-01-01T00:00:00Z", "done": true, "done_reason": "stop",
		"message":           map[string]any{"role": "assistant", "content": rep.Content},
		"prompt_eval_count": rep.PromptTokens, "eval_count": rep.CompletionTokens,
	})
}

func (r Reply) errorText() string {
	if r.Error != "" {
		return r.Error
	}
	return "scripted failure"
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
