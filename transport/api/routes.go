package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/transport/mcpserver"
)

// addRoutes lists every route contextd serves.
func addRoutes(e *echo.Echo, d Deps, keys memory.Keyring, v1 *echo.Group) {
	e.GET("/healthz", handleHealthz())
	e.GET("/readyz", handleReadyz(d))
	e.GET("/version", handleVersion(d.Build))
	// With API keys configured /metrics needs one too (any tenant's).
	e.GET("/metrics", handleMetrics(d), authenticate(keys))

	v1.POST("/chats/:chat_id/messages", handleAppend(d.Service))
	v1.GET("/chats/:chat_id/messages", handleListMessages(d.Service))
	v1.DELETE("/chats/:chat_id/messages/:message_id", handleDeleteMessage(d.Service))
	v1.GET("/chats/:chat_id/summary", handleGetSummary(d.Service))
	v1.GET("/chats/:chat_id/episodes", handleListEpisodes(d.Service))
	v1.GET("/chats/:chat_id/facts", handleListFacts(d.Service))
	v1.POST("/chats/:chat_id/summary/refresh", handleRefreshSummary(d.Service))
	v1.DELETE("/chats/:chat_id", handleDeleteChat(d.Service))
	v1.DELETE("/users/:user_id", handleDeleteUser(d.Service))
	v1.GET("/users/:user_id/profile", handleGetProfile(d.Service))
	v1.DELETE("/users/:user_id/profile/items/:item_id", handleForgetProfileItem(d.Service))
	v1.GET("/chats/:chat_id/export", handleExportChat(d.Service))
	v1.GET("/users/:user_id/export", handleExportUser(d.Service))
	reads := admitReads(d.Reads)
	v1.POST("/context", handleContext(d.Service), bufferBody, reads)
	v1.POST("/search", handleSearch(d.Service), bufferBody, reads)

	if d.MCP != nil {
		h := func(c echo.Context) error {
			// The session caps count per address with auth off: the
			// address as the API believes it (trusted proxies only).
			c.Request().Header.Set(mcpserver.ClientHeader, c.RealIP())
			d.MCP.ServeHTTP(c.Response(), c.Request())
			return nil
		}
		for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			e.Add(m, "/mcp", h, mcpMiddleware(d, keys)...)
		}
	}

	// Alias kept by the contract for supervisors that call /context.
	e.POST("/context", handleContext(d.Service), append(v1Middleware(d, keys), bufferBody, reads)...)

	if d.UI != nil {
		e.GET("/ui", func(c echo.Context) error { return c.Redirect(http.StatusMovedPermanently, "/ui/") })
		d.UI(e.Group("/ui"))
	}

	// The /v1 group's own catch-all (which Echo adds for its middleware)
	// answered a bare not_found, the code of a missing chat; these replace
	// it, behind the same middleware.
	unmatched := routeNotFound(e)
	v1.RouteNotFound("", unmatched)
	v1.RouteNotFound("/*", unmatched)
	e.RouteNotFound("/*", unmatched)
}

// routeNotFound answers a request no route took: 405 method_not_allowed,
// with Allow, when the path has routes for other methods, else 404
// route_not_found. Echo's own 405 never comes: a catch-all 404 route
// matches every path before the router falls back to it.
func routeNotFound(e *echo.Echo) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if allow := allowedMethods(e, r); len(allow) > 0 {
			c.Response().Header().Set(echo.HeaderAllow, strings.Join(allow, ", "))
			return &apiError{status: http.StatusMethodNotAllowed, Code: "method_not_allowed",
				Message: r.Method + " " + r.URL.Path + " is not allowed; this path takes " + strings.Join(allow, ", ")}
		}
		return &apiError{status: http.StatusNotFound, Code: "route_not_found", Message: "no route " + r.Method + " " + r.URL.Path}
	}
}

// allowedMethods lists, sorted, the methods with a route for r's path: the
// router is asked as it would route each (escaped path and all), and a
// match counts only when it is a registered route, not a catch-all 404.
// Only wrong requests pay for it.
func allowedMethods(e *echo.Echo, r *http.Request) []string {
	routes := map[string]bool{} // "METHOD pattern"
	var methods []string
	for _, rt := range e.Routes() {
		if rt.Method == echo.RouteNotFound {
			continue
		}
		if !slices.Contains(methods, rt.Method) {
			methods = append(methods, rt.Method)
		}
		routes[rt.Method+" "+rt.Path] = true
	}
	slices.Sort(methods)
	var allow []string
	for _, m := range methods {
		c := e.NewContext(r, nil)
		e.Router().Find(m, echo.GetPath(r), c)
		if routes[m+" "+c.Path()] {
			allow = append(allow, m)
		}
	}
	return allow
}
