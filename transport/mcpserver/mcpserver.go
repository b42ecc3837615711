// Package mcpserver is contextd's Model Context Protocol face: the same
// engine use cases as the HTTP API, as MCP tools over streamable HTTP (the
// official go-sdk). Auth happens before it, in the API's middleware, which
// fixes the tenant of each request.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"

	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/internal/admit"
	"github.com/contextd/contextd/memory"
)

// tenantHeader bridges the tenant from the request's context.Context (where
// the API's auth put it) to the tool handlers: the SDK hands tools the
// request's headers, not its context. tenantHandlers always overwrites it,
// so a value a client sends never counts.
const tenantHeader = "X-Contextd-Tenant"

// Engine is what the tools call: the use cases the HTTP API serves.
type Engine interface {
	Context(ctx context.Context, tenant string, in engine.ContextInput) (*engine.ContextResult, error)
	Search(ctx context.Context, tenant string, in engine.SearchInput) (engine.SearchResult, error)
	Append(ctx context.Context, tenant, chatID string, in engine.AppendInput) (engine.AppendOutput, error)
	SummaryView(ctx context.Context, tenant, chatID string, chainLimit int) (engine.SummaryView, error)
	LatestEpisodes(ctx context.Context, tenant, chatID string, n int) ([]memory.Episode, error)
	UserProfile(ctx context.Context, tenant, userID string) (*memory.Profile, error)
	DeleteChat(ctx context.Context, tenant, chatID string) error
	DeleteMessage(ctx context.Context, tenant, chatID, messageID string) error
}

// DefaultSessionTimeout closes a session no request has used for this long
// (server.mcp.session_timeout's default; config refers to it).
// The SDK keeps a session, ~19 KB and a goroutine, until a client DELETEs
// it, which most never do: without a bound a server's memory grows with
// every session opened within the timeout. Ten minutes outlasts the
// pauses of an agent at work; a client whose session closed starts another
// with initialize.
const DefaultSessionTimeout = 10 * time.Minute

// DefaultMaxSessions and DefaultMaxSessionsPerClient bound the sessions
// open at once (server.mcp.max_sessions, max_sessions_per_client; config
// refers to these): a new one past a cap closes the oldest idle.
const (
	DefaultMaxSessions          = 1000
	DefaultMaxSessionsPerClient = 100
)

// ClientHeader carries the client's address from the API (its RealIP,
// which believes X-Forwarded-For only from trusted proxies) to the
// session caps; the API always overwrites it.
const ClientHeader = "X-Contextd-Client"

// Options configure the server.
type Options struct {
	Version string
	// AllowDelete registers the destructive delete_chat and delete_message
	// tools.
	AllowDelete bool
	// Reads admits get_context and search_memory, the gate /v1/context
	// and /v1/search pass (api.Deps.Reads); nil: no limit. ReadWait bounds
	// a call's wait for its turn (server.request_timeout; 0: the call's
	// own context alone).
	Reads    *admit.Gate
	ReadWait time.Duration
	// SessionTimeout closes a session no POST has used for this long (an
	// open GET stream does not count); 0: DefaultSessionTimeout. There is
	// no "never": that is the unbounded growth the timeout exists to stop.
	SessionTimeout time.Duration
	// MaxSessions bounds the sessions open at once, MaxSessionsPerClient
	// those of one client: a tenant with auth on, an address
	// (ClientHeader) with auth off, ClientByAddress. A new session past a
	// cap closes the oldest idle one; with none idle it is refused (503).
	// 0: the defaults.
	MaxSessions          int
	MaxSessionsPerClient int
	ClientByAddress      bool
}

// Handler serves MCP over streamable HTTP.
type Handler struct{ *tenantHandlers }

// Sessions is how many sessions are open.
func (h Handler) Sessions() int { return h.table.size() }

// NewHandler serves MCP over streamable HTTP. The caller authenticates the
// request and puts its tenant in the context (memory.NewContextWithTenant).
func NewHandler(e Engine, o Options) Handler {
	s := newServer(e, o)
	opts := transportOptions(o)
	t := newTenantHandlers(func() http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts)
	})
	t.table = newSessions(orDefault(o.MaxSessions, DefaultMaxSessions), orDefault(o.MaxSessionsPerClient, DefaultMaxSessionsPerClient), opts.SessionTimeout)
	t.byAddress = o.ClientByAddress
	return Handler{t}
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// tenantHandlers gives each tenant its own SDK handler, and so its own table
// of sessions: a session id is looked up only among the sessions of the
// tenant the request authenticated as. Another tenant's id is then "session
// not found", a 404 for POST, GET and DELETE alike, exactly as an id that
// never existed, so it neither works nor reveals that it is live. The SDK
// keeps each table (creation, expiry, DELETE); table, over all tenants,
// only counts what the SDK made, to cap it (sessions.go), and closes
// sessions through the SDK's DELETE. The map holds one entry per tenant
// that reached /mcp, and tenants come from server.auth.api_keys (or are the
// one default tenant), so it is bounded by the config.
type tenantHandlers struct {
	newHandler func() http.Handler
	mu         sync.Mutex
	byTenant   map[string]http.Handler
	table      *sessions // the caps over every tenant's sessions
	byAddress  bool      // a client is an address, not a tenant
}

func newTenantHandlers(newHandler func() http.Handler) *tenantHandlers {
	return &tenantHandlers{newHandler: newHandler, byTenant: map[string]http.Handler{}}
}

func (t *tenantHandlers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tenant := memory.TenantFromContext(r.Context())
	r.Header.Set(tenantHeader, tenant)
	// The SDK runs a tool on the session's context, opened by initialize:
	// this request's span (the API's server span, itself joined to the
	// caller's traceparent) goes to the tool in the headers, as the tenant
	// does, and the tool's work is traced under it (toolContext).
	r.Header.Del("traceparent")
	r.Header.Del("tracestate")
	propagation.TraceContext{}.Inject(r.Context(), propagation.HeaderCarrier(r.Header))
	h, id := t.of(tenant), r.Header.Get(sessionIDHeader)
	if r.Method == http.MethodPost {
		body, ok := t.readPOST(w, r, id)
		if !ok {
			return
		}
		if id == "" { // the SDK opens a session for it
			t.serveNew(w, r, h, tenant, body)
			return
		}
	}
	e := t.table.enter(id, time.Now())
	sw := &statusWriter{ResponseWriter: w}
	h.ServeHTTP(sw, r)
	gone := sw.status == http.StatusNotFound || r.Method == http.MethodDelete && sw.status < 300
	t.table.leave(e, gone, time.Now())
}

// readPOST reads a POST's body (already bounded by server.body_limit) and
// puts it back for the SDK; a batch the session may not send is answered
// here with a JSON-RPC error, and ok is false.
func (t *tenantHandlers) readPOST(w http.ResponseWriter, r *http.Request, id string) (body []byte, ok bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		rpcError(w, http.StatusBadRequest, -32700, "could not read the request body: "+err.Error())
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	version := t.table.protocol(id)
	if version == "" {
		version = r.Header.Get("Mcp-Protocol-Version")
	}
	if why := batchRefusal(body, version); why != "" {
		rpcError(w, http.StatusBadRequest, -32600, why)
		return nil, false
	}
	return body, true
}

// serveNew serves a POST that opens a session, within the session caps.
func (t *tenantHandlers) serveNew(w http.ResponseWriter, r *http.Request, h http.Handler, tenant string, body []byte) {
	client := t.client(r, tenant)
	closeFirst, ok := t.table.admit(client, time.Now())
	t.close(closeFirst)
	if !ok {
		rpcError(w, http.StatusServiceUnavailable, -32000, "too many MCP sessions at work at once (server.mcp.max_sessions, "+
			"max_sessions_per_client); close one (DELETE) or retry shortly")
		return
	}
	h.ServeHTTP(w, r)
	id := w.Header().Get(sessionIDHeader)
	if id == "" {
		t.table.release(client)
		return
	}
	t.table.bind(&session{id: id, tenant: tenant, client: client, protocol: initProtocol(body)}, time.Now())
}

// client is who a session counts against: the tenant, or with auth off
// (one tenant for all) the address the request came from.
func (t *tenantHandlers) client(r *http.Request, tenant string) string {
	if !t.byAddress {
		return tenant
	}
	addr := r.Header.Get(ClientHeader)
	if addr == "" {
		addr, _, _ = net.SplitHostPort(r.RemoteAddr)
	}
	return tenant + "@" + addr
}

// close ends sessions through the SDK's own DELETE, so the SDK's table and
// goroutine go as when a client closes its session.
func (t *tenantHandlers) close(ss []*session) {
	for _, e := range ss {
		req, err := http.NewRequest(http.MethodDelete, "/mcp", nil)
		if err != nil {
			continue
		}
		req.Header.Set(sessionIDHeader, e.id)
		req.Header.Set(tenantHeader, e.tenant)
		t.of(e.tenant).ServeHTTP(&discard{}, req)
	}
}

// statusWriter notes the status the SDK answered with; Unwrap keeps
// http.ResponseController (flushing a stream) working through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// toolContext is ctx under the span of the HTTP request that carried the
// tool call (see tenantHandlers.ServeHTTP); ctx as it is without one.
func toolContext(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if req == nil || req.Extra == nil || req.Extra.Header == nil {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(req.Extra.Header))
}

// of is tenant's handler, made on its first request.
func (t *tenantHandlers) of(tenant string) http.Handler {
	t.mu.Lock()
	defer t.mu.Unlock()
	h, ok := t.byTenant[tenant]
	if !ok {
		h = t.newHandler()
		t.byTenant[tenant] = h
	}
	return h
}

// transportOptions are the SDK's streamable-HTTP settings for o.
func transportOptions(o Options) *mcp.StreamableHTTPOptions {
	timeout := o.SessionTimeout
	if timeout <= 0 {
		timeout = DefaultSessionTimeout
	}
	// JSON answers rather than an SSE stream per call: the tools never stream.
	return &mcp.StreamableHTTPOptions{JSONResponse: true, SessionTimeout: timeout}
}

func newServer(e Engine, o Options) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "contextd", Title: "contextd memory", Version: o.Version},
		&mcp.ServerOptions{Instructions: "contextd keeps an agent's conversation memory. Call add_messages to store " +
			"each turn, and get_context before a model call for a token-budgeted context: relevant past turns and " +
			"episodes, the running summary, and the recent turns."})
	t := tools{e: e, reads: o.Reads, wait: o.ReadWait}
	addTool(s, &mcp.Tool{Name: "get_context", Description: "The assembled, token-budgeted context of a chat for a query, " +
		"exactly as POST /v1/context builds it: relevant past turns and episodes, the summary, then the recent turns. " +
		"The text content is the context; the structured content has messages, sections, usage and degraded.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, contextSchema, t.getContext)
	addTool(s, &mcp.Tool{Name: "search_memory", Description: "Hybrid (dense + lexical) search over stored turns and " +
		"episode summaries of a chat, a user's chats, or the whole tenant; best first.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, searchSchema, t.search)
	addTool(s, &mcp.Tool{Name: "add_messages", Description: "Store turns of a chat in order. A message id makes the " +
		"append idempotent: a message whose id the chat already holds is not stored twice.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true}}, addSchema, t.addMessages)
	addTool(s, &mcp.Tool{Name: "get_summary", Description: "A chat's running structured summary (topics, entities, " +
		"actions, decisions, open questions, preferences, narrative), its chain of records, and its newest episodes " +
		"(closed stretches of the chat with their own short and long summaries).",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, chatSchema, t.getSummary)
	addTool(s, &mcp.Tool{Name: "get_user_profile", Description: "What is known about a user across all of their chats: " +
		"preferences, people, places and things, recurring topics and open questions, each with the chats and turns it came from.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, userSchema, t.getUserProfile)
	if o.AllowDelete {
		destructive := true
		addTool(s, &mcp.Tool{Name: "delete_chat", Description: "Erase a chat from every store (turns, summaries, vectors). " +
			"Irreversible.", Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive}}, chatSchema, t.deleteChat)
		addTool(s, &mcp.Tool{Name: "delete_message", Description: "Forget one message of a chat: it stays as a " +
			"tombstone (seq and role), its content leaves every store, and what was derived from it (facts, its episode's " +
			"summary, the running summary, profile items) is rebuilt without it. Irreversible.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive}}, deleteMessageSchema, t.deleteMessage)
	}
	return s
}

// toolError is an engine error as the HTTP API shows it: its text is the
// same {"error":{"code","message","field"}} JSON, so a client reads the code
// and field from the tool result.
type toolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

func (e toolError) Error() string {
	b, _ := json.Marshal(map[string]toolError{"error": e})
	return string(b)
}

func asToolError(err error) toolError {
	var te toolError
	if errors.As(err, &te) {
		return te
	}
	if ee, ok := engine.AsError(err); ok {
		return toolError{Code: ee.Code, Message: ee.Message, Field: ee.Field}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return toolError{Code: "timeout", Message: "the request timed out"}
	}
	return toolError{Code: "internal", Message: "internal error"}
}

// tenantOf is the tenant the API's auth fixed for this request.
func tenantOf(req *mcp.CallToolRequest) string {
	if req != nil && req.Extra != nil && req.Extra.Header != nil {
		if t := req.Extra.Header.Get(tenantHeader); t != "" {
			return t
		}
	}
	return memory.DefaultTenant
}
