package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"golang.org/x/time/rate"

	"github.com/contextd/contextd/internal/admit"
	"github.com/contextd/contextd/internal/metrics"
	"github.com/contextd/contextd/memory"
)

// requestID sets X-Request-Id: the caller's when it is short and plain
// (so a supervisor can correlate), else a fresh random one.
func requestID() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			id := c.Request().Header.Get(echo.HeaderXRequestID)
			if !plainID(id) {
				id = newRequestID()
			}
			c.Response().Header().Set(echo.HeaderXRequestID, id)
			return next(c)
		}
	}
}

// plainID accepts 1-64 characters of [A-Za-z0-9._:-].
func plainID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._:-", r)
		if !ok {
			return false
		}
	}
	return true
}

// newRequestID returns 24 random hex digits.
func newRequestID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	return hex.EncodeToString(b[:])
}

// unescapeParams makes every path parameter the decoded id. Ids may hold
// "/" (sent as %2F), so when a request has an escaped path (URL.RawPath,
// which Go sets only when the path is not in its default encoding) Echo
// routes on it, keeping %2F inside its segment, and hands the parameters
// over still escaped; otherwise it routes on the decoded URL.Path and they
// are decoded already: unescaping those again would turn the id "100%41"
// into "100A". So only the first kind is unescaped, here, once for every
// route (API, inspector).
func unescapeParams() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if c.Request().URL.RawPath == "" || len(c.ParamNames()) == 0 {
				return next(c)
			}
			names, values := c.ParamNames(), c.ParamValues()
			decoded := make([]string, len(values))
			for i, v := range values {
				d, err := url.PathUnescape(v)
				if err != nil {
					return badRequest("invalid_id", names[i], fmt.Sprintf("the path's %s is not a valid escaped id: %v", names[i], err))
				}
				decoded[i] = d
			}
			c.SetParamValues(decoded...)
			return next(c)
		}
	}
}

// recoverPanics turns a handler panic into a 500 in the one error shape and
// logs the stack, keeping the process up.
func recoverPanics(log *slog.Logger) echo.MiddlewareFunc {
	return middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisablePrintStack: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			log.Error("panic in handler", "request_id", c.Response().Header().Get(echo.HeaderXRequestID), "path", c.Path(), "err", err, "stack", string(stack))
			return &apiError{status: http.StatusInternalServerError, Code: "internal", Message: "internal error"}
		},
	})
}

// accessLog logs one line per request (no bodies, no message content) and
// records the latency histogram by route pattern.
func accessLog(log *slog.Logger, m *metrics.Metrics) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start, before := time.Now(), c.Request().Context()
			err := next(c)
			if err != nil {
				c.Error(err)
			}
			status := c.Response().Status
			route := c.Path()
			if route == "" {
				route = "unmatched"
			}
			d := time.Since(start)
			m.RequestDuration.WithLabelValues(route, methodLabel(c.Request().Method), strconv.Itoa(status)).Observe(d.Seconds())
			level := slog.LevelDebug
			if status >= 500 {
				level = slog.LevelWarn
			} else if route != "/healthz" && route != "/readyz" && route != "/metrics" {
				level = slog.LevelInfo
			}
			// Only an authenticated request replaced its context: a refused
			// key or an open route is logged without a tenant.
			tenant := ""
			if c.Request().Context() != before {
				tenant = tenantOf(c)
			}
			if !log.Enabled(c.Request().Context(), level) {
				return nil
			}
			log.LogAttrs(c.Request().Context(), level, "request", // attrs, not key-value pairs: no boxing per request
				slog.String("request_id", c.Response().Header().Get(echo.HeaderXRequestID)),
				slog.String("method", methodLabel(c.Request().Method)), slog.String("route", route), slog.Int("status", status),
				slog.Float64("duration_ms", float64(d.Microseconds())/1000), slog.String("tenant", tenant),
				slog.String("client_ip", c.RealIP())) // X-Forwarded-For only from server.trusted_proxies
			return nil
		}
	}
}

// methodLabel is the method as a metrics label, from a closed set: a
// client may send any token as its method, and each distinct label value
// is a series kept for the life of the process (and printed by every
// scrape). The route label is a registered pattern (unknown paths are the
// catch-all's) and the status one the server's own answer, so both are
// closed already.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}

// authenticate fixes the tenant from the bearer key and puts it in the
// request's context.Context, the one place every handler (API, MCP, UI)
// reads it from. With no keys configured auth is off and the tenant is
// memory.DefaultTenant.
func authenticate(keys memory.Keyring) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			tenant := memory.DefaultTenant
			if keys.Enabled() {
				t, err := bearerTenant(c, keys)
				if err != nil {
					return err
				}
				tenant = t
			}
			c.SetRequest(c.Request().WithContext(memory.NewContextWithTenant(c.Request().Context(), tenant)))
			return next(c)
		}
	}
}

// bearerTenant is the tenant of the request's bearer key, or a 401.
func bearerTenant(c echo.Context, keys memory.Keyring) (string, error) {
	h := c.Request().Header.Get(echo.HeaderAuthorization)
	// The scheme is case-insensitive (RFC 9110 §11.1): "bearer" is Bearer.
	scheme, token, ok := strings.Cut(h, " ")
	ok = ok && strings.EqualFold(scheme, "Bearer")
	token = strings.TrimSpace(token)
	if !ok || token == "" {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="contextd"`)
		return "", &apiError{status: http.StatusUnauthorized, Code: "unauthorized", Message: "missing bearer API key (Authorization: Bearer <key>)"}
	}
	tenant, ok := keys.Tenant(strings.TrimSpace(token))
	if !ok {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="contextd", error="invalid_token"`)
		return "", &apiError{status: http.StatusUnauthorized, Code: "unauthorized", Message: "invalid API key"}
	}
	return tenant, nil
}

// tenantOf is the tenant the auth middleware put in the request's context.
func tenantOf(c echo.Context) string {
	return memory.TenantFromContext(c.Request().Context())
}

// rateLimit is a token bucket per tenant; 0 requests/s turns it off.
func rateLimit(rl RateLimit, m *metrics.Metrics) echo.MiddlewareFunc {
	if rl.RequestsPerSecond <= 0 {
		return func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	}
	burst := rl.Burst
	if burst <= 0 {
		burst = int(math.Ceil(rl.RequestsPerSecond))
	}
	var mu sync.Mutex
	limiters := map[string]*rate.Limiter{}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			tenant := tenantOf(c)
			mu.Lock()
			l, ok := limiters[tenant]
			if !ok {
				l = rate.NewLimiter(rate.Limit(rl.RequestsPerSecond), burst)
				limiters[tenant] = l
			}
			r := l.Reserve()
			delay := r.Delay()
			if delay > 0 {
				r.Cancel()
			}
			mu.Unlock()
			if delay > 0 {
				m.CountRateLimited(tenant)
				return &apiError{status: http.StatusTooManyRequests, Code: "rate_limited",
					Message:    fmt.Sprintf("rate limit of %g requests/s for this tenant exceeded", rl.RequestsPerSecond),
					retryAfter: int(math.Ceil(delay.Seconds()))}
			}
			return next(c)
		}
	}
}

// drainLimit bounds how much of a refused body is read and discarded before
// the error is sent. A client that writes its whole body before reading
// (urllib, many HTTP libraries) would otherwise see "connection reset"
// instead of the JSON error; past this bound the connection is closed.
const drainLimit = 64 << 20

// bodyLimit refuses bodies over the limit with 413 and caps the reader. A
// refused or partly read body is read and discarded (up to drainLimit)
// before the answer, so every client gets to read it. Before any of it is
// read, the body takes its size from the budget of bodies in memory at
// once (server.body_budget; an unknown length takes the limit), held until
// the answer: past it, 503 server_busy with Retry-After. Handlers buffer
// whole bodies (bufferBody, decode, the MCP SDK), so without this their
// sum, not each one, is what a burst of large bodies grows memory by.
// DefaultBodyLimit is server.body_limit's default: the largest request
// body read.
const DefaultBodyLimit = 4 << 20

func bodyLimit(limit int64, budget *admit.Bytes) echo.MiddlewareFunc {
	if limit <= 0 {
		limit = DefaultBodyLimit
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			body := req.Body
			if req.ContentLength > limit {
				drain(c, body)
				return &apiError{status: http.StatusRequestEntityTooLarge, Code: "body_too_large", Message: fmt.Sprintf("request body of %d bytes exceeds %d bytes (server.body_limit)", req.ContentLength, limit)}
			}
			size := req.ContentLength
			if size < 0 {
				size = limit
			}
			if !budget.TryTake(size) {
				drain(c, body)
				return &apiError{status: http.StatusServiceUnavailable, Code: "server_busy", retryAfter: 1,
					Message: "too many request bodies in memory at once (server.body_budget); retry shortly"}
			}
			defer budget.Give(size)
			req.Body = http.MaxBytesReader(c.Response(), body, limit)
			err := next(c)
			if err != nil {
				drain(c, body)
			}
			return err
		}
	}
}

// drain discards what is left of a request body, up to drainLimit; a body
// larger than that is not read, and the connection closes after the answer.
func drain(c echo.Context, body io.ReadCloser) {
	if body == nil || body == http.NoBody {
		return
	}
	if c.Request().ContentLength > drainLimit {
		c.Response().Header().Set("Connection", "close")
		return
	}
	n, _ := io.Copy(io.Discard, io.LimitReader(body, drainLimit+1))
	if n > drainLimit {
		c.Response().Header().Set("Connection", "close")
	}
}

// requestTimeout bounds every /v1 request; handlers and backends honour the
// context's deadline.
func requestTimeout(d time.Duration) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ctx, cancel := context.WithTimeout(c.Request().Context(), d)
			defer cancel()
			c.SetRequest(c.Request().WithContext(ctx))
			err := next(c)
			if err != nil && ctx.Err() == context.DeadlineExceeded {
				if _, ok := err.(*apiError); !ok {
					return &apiError{status: http.StatusServiceUnavailable, Code: "timeout", Message: fmt.Sprintf("request exceeded %s (server.request_timeout)", d), retryAfter: 1}
				}
			}
			return err
		}
	}
}

// admitReads runs context and search requests through the gate (nil: no
// limit), which lets few work at once; the others wait their turn in
// arrival order.
//
// Why: on the in-process stack those requests are CPU (a few hundred µs),
// and with many more of them running than there are cores the scheduler
// interleaves them all: each takes as long as all of them together, and a
// goroutine preempted while holding a lock (SQLite's page cache has one
// for the whole process) stalls the others. Admitted in order, a request
// waits for those ahead of it and then runs among few: about the same
// throughput, a much shorter tail (main sizes the gate: readConcurrency,
// and MCP's get_context and search_memory share it). The wait counts
// against server.request_timeout.
func admitReads(g *admit.Gate) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if err := g.Enter(c.Request().Context()); err != nil {
				return waitError(err)
			}
			defer g.Leave()
			return next(c)
		}
	}
}

// waitError is the answer to a request whose wait for its turn ended: the
// client went away (request_canceled, not logged as a failure), or
// server.request_timeout passed (timeout).
func waitError(err error) *apiError {
	if errors.Is(err, context.Canceled) {
		return &apiError{status: http.StatusServiceUnavailable, Code: "request_canceled", Message: "the client went away while the request waited for its turn"}
	}
	return &apiError{status: http.StatusServiceUnavailable, Code: "timeout", Message: "request timed out waiting for its turn (server.request_timeout)", retryAfter: 1}
}

// ipExtractor takes the client IP from the connection unless the peer is a
// configured trusted proxy, in which case X-Forwarded-For is believed.
func ipExtractor(trusted []string) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	var opts []echo.TrustOption
	opts = append(opts, echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false))
	for _, cidr := range trusted {
		if _, n, err := net.ParseCIDR(cidr); err == nil {
			opts = append(opts, echo.TrustIPRange(n))
		}
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// sameOrigin refuses a request a browser sent from another origin (its
// Origin header names another host than the request's). A web page may
// send a "simple" cross-site POST without asking first; with auth off (the
// default) it could plant turns in an agent's memory, or, over MCP, act
// as a tool caller (the MCP spec asks servers to check Origin). Clients
// that are not browsers send no Origin, and a browser app on another
// origin could not read contextd's answers anyway (there is no CORS). The
// Host it compares with is itself checked (checkHost) with auth off: a
// page on a name rebound to this server is same-origin by this test alone.
func sameOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		origin := c.Request().Header.Get("Origin")
		if origin == "" {
			return next(c)
		}
		if u, err := url.Parse(origin); err == nil && u.Host != "" && strings.EqualFold(u.Host, c.Request().Host) {
			return next(c)
		}
		return &apiError{status: http.StatusForbidden, Code: "forbidden_origin",
			Message: fmt.Sprintf("a browser request from origin %q to %s: contextd answers its own origin only", origin, c.Request().Host)}
	}
}

// checkHost refuses a request whose Host header names a host this server
// was not told it goes by: an IP address, localhost (and *.localhost), the
// listen address's host and server.allowed_hosts are accepted, any other
// name is 403 forbidden_host. Why: with auth off, a web page on
// evil.example whose name its DNS later resolves to this server (DNS
// rebinding) is, to the browser, same-origin with it, Origin and Host
// alike, so sameOrigin lets it read every chat; only the name tells the
// two apart. An IP address cannot be rebound, so it always passes. With
// auth on a page holds no key and the check runs only when allowed_hosts
// is set.
func checkHost(o Options, keys memory.Keyring) echo.MiddlewareFunc {
	if keys.Enabled() && len(o.AllowedHosts) == 0 {
		return func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	}
	allowed := append([]string{o.ListenHost}, o.AllowedHosts...)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			host := c.Request().Host
			if knownHost(host, allowed) {
				return next(c)
			}
			return &apiError{status: http.StatusForbidden, Code: "forbidden_host",
				Message: fmt.Sprintf("Host %q is not a name of this server: add it to server.allowed_hosts", host)}
		}
	}
}

// knownHost reports whether a Host header (host[:port]) passes checkHost.
func knownHost(hostport string, allowed []string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" || host == "localhost" || strings.HasSuffix(host, ".localhost") || net.ParseIP(host) != nil {
		return true // no Host (HTTP/1.0; browsers always send one), or not a name that can be rebound
	}
	for _, a := range allowed {
		a = strings.ToLower(a)
		if a != "" && (host == a || strings.HasPrefix(a, ".") && (strings.HasSuffix(host, a) || host == a[1:])) {
			return true
		}
	}
	return false
}
