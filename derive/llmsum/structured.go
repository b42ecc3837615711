package llmsum

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// replyKey carries one call's ReplyFormat through langchaingo, which has no
// per-call option for a JSON schema (OpenAI's response format is a client
// option, Ollama's format a string), to the transport NewModel installs.
// A model built otherwise ignores it and the call stays in JSON mode.
type replyKey struct{}

func withReply(ctx context.Context, f ReplyFormat) context.Context {
	return context.WithValue(ctx, replyKey{}, f)
}

func replyOf(ctx context.Context) (ReplyFormat, bool) {
	f, ok := ctx.Value(replyKey{}).(ReplyFormat)
	return f, ok
}

// dialect rewrites a request body that asks for JSON mode so that it asks
// for f's schema instead; false when the body is not in JSON mode.
type dialect func(body map[string]json.RawMessage, f ReplyFormat) bool

// openAISchema: response_format {"type":"json_object"} becomes
// {"type":"json_schema","json_schema":{"name","strict","schema"}}.
func openAISchema(body map[string]json.RawMessage, f ReplyFormat) bool {
	var rf struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(body["response_format"], &rf) != nil || rf.Type != "json_object" {
		return false
	}
	out, err := json.Marshal(map[string]any{"type": "json_schema",
		"json_schema": map[string]any{"name": f.Name, "strict": true, "schema": f.Schema}})
	if err != nil {
		return false
	}
	body["response_format"] = out
	return true
}

// ollamaSchema: format "json" becomes the schema object (Ollama >= 0.5).
func ollamaSchema(body map[string]json.RawMessage, f ReplyFormat) bool {
	var format string
	if json.Unmarshal(body["format"], &format) != nil || format != "json" {
		return false
	}
	out, err := json.Marshal(f.Schema)
	if err != nil {
		return false
	}
	body["format"] = out
	return true
}

// schemaTransport asks for a call's reply in its JSON schema when the call
// carries a ReplyFormat and asks for JSON mode. When the server refuses the
// schema (a 400 or 422 naming the format or schema) the call is sent again
// as it was, in JSON mode; if that succeeds the model is remembered and its
// later calls go straight to JSON mode.
type schemaTransport struct {
	base    http.RoundTripper
	dialect dialect

	mu      sync.Mutex
	refused map[string]bool // by the request's "model"
}

func newSchemaTransport(base http.RoundTripper, d dialect) *schemaTransport {
	return &schemaTransport{base: base, dialect: d, refused: map[string]bool{}}
}

// RoundTrip implements http.RoundTripper. The answer's status is told to
// the call (callStatus), which decides whether and when to retry.
func (t *schemaTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.roundTrip(req)
	if st, ok := req.Context().Value(callStatusKey{}).(*callStatus); ok && resp != nil {
		st.record(resp)
	}
	return resp, err
}

func (t *schemaTransport) roundTrip(req *http.Request) (*http.Response, error) {
	f, ok := replyOf(req.Context())
	if !ok || req.Body == nil {
		return t.base.RoundTrip(req)
	}
	orig, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("llmsum: read request: %w", err)
	}
	var body map[string]json.RawMessage
	if json.Unmarshal(orig, &body) != nil {
		return t.base.RoundTrip(withBody(req, orig))
	}
	var model string
	_ = json.Unmarshal(body["model"], &model)
	if t.isRefused(model) || !t.dialect(body, f) {
		return t.base.RoundTrip(withBody(req, orig))
	}
	upgraded, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("llmsum: schema request: %w", err)
	}
	resp, err := t.base.RoundTrip(withBody(req, upgraded))
	if err != nil {
		return nil, err
	}
	if !refusesSchema(resp) {
		return resp, nil
	}
	resp, err = t.base.RoundTrip(withBody(req, orig))
	if err == nil && resp.StatusCode < http.StatusMultipleChoices {
		t.mu.Lock()
		t.refused[model] = true
		t.mu.Unlock()
	}
	return resp, err
}

func (t *schemaTransport) isRefused(model string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refused[model]
}

// refusesSchema reports whether resp is a client error about the reply
// format. It reads the body of an error response and puts it back, so a
// response that is not a refusal reaches the client intact.
func refusesSchema(resp *http.Response) bool {
	if resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	msg, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(msg))
	if err != nil {
		return false
	}
	low := strings.ToLower(string(msg))
	return strings.Contains(low, "format") || strings.Contains(low, "schema")
}

// withBody is req with body b (a RoundTripper must not change its request).
func withBody(req *http.Request, b []byte) *http.Request {
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return r
}

// callStatus is what the server answered a call's last attempt, for its
// retries: a client error other than 408 and 429 (a bad key, a bad
// request) is not retried; a Retry-After is waited.
type callStatus struct {
	mu         sync.Mutex
	code       int
	retryAfter time.Duration
}

type callStatusKey struct{}

func (c *callStatus) record(resp *http.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.code, c.retryAfter = resp.StatusCode, 0
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		if secs, err := strconv.Atoi(strings.TrimSpace(ra)); err == nil && secs > 0 {
			c.retryAfter = time.Duration(secs) * time.Second
		} else if at, err := http.ParseTime(ra); err == nil {
			c.retryAfter = time.Until(at)
		}
	}
}

// next says how long to wait at least before the next attempt, and
// whether there should be one.
func (c *callStatus) next() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.code == http.StatusRequestTimeout || c.code == http.StatusTooManyRequests:
	case c.code >= 400 && c.code < 500:
		return 0, false
	}
	return max(c.retryAfter, 0), true
}
