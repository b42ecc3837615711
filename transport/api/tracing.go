package api

import (
	"github.com/contextd/contextd/memory"
	"net/http"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/contextd/contextd/internal/tracing"
)

// traceRequests opens a server span per request, named by method and route
// pattern ("POST /v1/context"), joined to the caller's trace when the
// request carries a W3C traceparent. The span carries the route, the
// status, the tenant and (from the path) the chat id: no bodies, no query
// strings, no message content. It runs outside the access log, so the
// status it records is the one the client got.
func traceRequests(t trace.Tracer) echo.MiddlewareFunc {
	prop := propagation.TraceContext{}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			req := c.Request()
			ctx := prop.Extract(req.Context(), propagation.HeaderCarrier(req.Header))
			route := c.Path()
			ctx, span := t.Start(ctx, req.Method+" "+route, trace.WithSpanKind(trace.SpanKindServer))
			defer span.End()
			c.SetRequest(req.WithContext(ctx))
			if err := next(c); err != nil {
				c.Error(err) // commit the error response now, so its status is recorded
			}
			if !span.IsRecording() {
				return nil
			}
			status := c.Response().Status
			span.SetAttributes(semconv.HTTPRequestMethodKey.String(req.Method), semconv.HTTPRoute(route),
				semconv.HTTPResponseStatusCode(status))
			// Only an authenticated request has a tenant: one refused (a 401,
			// the inspector's login page) is not "default", a real tenant.
			if tenant, ok := memory.TenantInContext(c.Request().Context()); ok {
				span.SetAttributes(tracing.TenantKey.String(tenant))
			}
			if chat := c.Param("chat_id"); chat != "" {
				span.SetAttributes(tracing.ChatKey.String(chat))
			}
			if status >= http.StatusInternalServerError {
				span.SetStatus(codes.Error, http.StatusText(status))
			}
			return nil
		}
	}
}
