// Package api is contextd's HTTP transport (Echo). routes.go lists every
// route; each handler is built by a small function taking its dependencies;
// encode.go holds the shared decode/validate/encode helpers and the single
// error shape {"error":{"code","message","field"}}.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/trace"

	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/internal/admit"
	"github.com/contextd/contextd/internal/metrics"
	"github.com/contextd/contextd/memory"
)

// Options are the HTTP layer's settings (server.* in agents.yaml, resolved
// by the composition root). Zero values take the documented defaults.
type Options struct {
	TrustedProxies []string      // CIDRs whose X-Forwarded-For is believed
	RequestTimeout time.Duration // default 30s
	BodyLimit      int64         // bytes; default 4 MiB
	// APIKeys turn auth on; each key fixes its tenant. None: auth is off
	// and the tenant is "default".
	APIKeys   []APIKey
	RateLimit RateLimit
	// AllowedHosts are names accepted in the Host header besides IPs,
	// localhost and ListenHost (server.allowed_hosts); the check runs with
	// auth off, or when these are set (checkHost).
	AllowedHosts []string
	// ListenHost is the listen address's host (server.addr), accepted in
	// the Host header.
	ListenHost string
}

// APIKey is one bearer key and the tenant it fixes: an alias of the one
// definition, memory.APIKey, kept so callers can still write api.APIKey.
type APIKey = memory.APIKey

// RateLimit is per tenant; RequestsPerSecond 0 turns it off.
type RateLimit struct {
	RequestsPerSecond float64
	Burst             int
}

// Deps are what the handlers need.
type Deps struct {
	Service *engine.Service
	Options Options
	Logger  *slog.Logger
	Metrics *metrics.Metrics
	// Ready reports each backend's state ("ok", "unavailable", "disabled",
	// ...) under the keys storage, vector, embedder, llm.
	Ready func(ctx context.Context) map[string]string
	// MCP, when set, serves the Model Context Protocol at /mcp, behind the
	// same auth as /v1 (transport/mcpserver).
	MCP http.Handler
	// Reads admits the context and search requests (admitReads), shared
	// with MCP's tools; nil: no limit.
	Reads *admit.Gate
	// Bodies is the budget of request bodies in memory at once, over /v1
	// and /mcp (bodyLimit); nil: no limit.
	Bodies *admit.Bytes
	// UI, when set, registers the inspector's routes under /ui.
	UI func(g *echo.Group)
	// Tracer, when set, opens a server span per request (transport/api/tracing.go).
	Tracer trace.Tracer
	// Build names the running build at GET /version.
	Build BuildInfo
}

// BuildInfo is GET /version's answer.
type BuildInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	Go      string `json:"go"`
}

// NewHandler builds the HTTP handler with every route and middleware.
func NewHandler(d Deps) http.Handler {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Metrics == nil {
		d.Metrics = metrics.New()
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = errorHandler(d.Logger)
	e.IPExtractor = ipExtractor(d.Options.TrustedProxies)
	e.Use(requestID())
	if d.Tracer != nil {
		e.Use(traceRequests(d.Tracer))
	}
	keys := memory.NewKeyring(d.Options.APIKeys)
	e.Use(recoverPanics(d.Logger), accessLog(d.Logger, d.Metrics), checkHost(d.Options, keys), unescapeParams())
	v1 := e.Group("/v1", v1Middleware(d, keys)...)
	addRoutes(e, d, keys, v1)
	return e
}

// v1Middleware guards the API routes: auth → tenant, rate limit, body limit,
// request timeout.
func v1Middleware(d Deps, keys memory.Keyring) []echo.MiddlewareFunc {
	timeout := d.Options.RequestTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return []echo.MiddlewareFunc{
		sameOrigin,
		authenticate(keys),
		rateLimit(d.Options.RateLimit, d.Metrics),
		bodyLimit(d.Options.BodyLimit, d.Bodies),
		requestTimeout(timeout),
	}
}

// mcpMiddleware guards /mcp as /v1 is guarded (auth → tenant in the
// request's context, rate limit, body limit). No request timeout: a
// streamable-HTTP GET is a long-lived stream.
func mcpMiddleware(d Deps, keys memory.Keyring) []echo.MiddlewareFunc {
	return []echo.MiddlewareFunc{
		sameOrigin,
		authenticate(keys),
		rateLimit(d.Options.RateLimit, d.Metrics),
		bodyLimit(d.Options.BodyLimit, d.Bodies),
	}
}
