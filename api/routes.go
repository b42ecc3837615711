package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/contextd/contextd/memory"
)

// addRoutes lists every route contextd serves.
func addRoutes(e *echo.Echo, d Deps, keys memory.Keyring, v1 *echo.Group) {
	e.GET("/healthz", handleHealthz())
	e.GET("/readyz", handleReadyz(d))
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
	v1.POST("/context", handleContext(d.Service), reads)
	v1.POST("/search", handleSearch(d.Service), reads)

	if d.MCP != nil {
		h := echo.WrapHandler(d.MCP)
		for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			e.Add(m, "/mcp", h, mcpMiddleware(d, keys)...)
		}
	}

	// Alias kept by the contract for supervisors that call /context.
	e.POST("/context", handleContext(d.Service), append(v1Middleware(d, keys), reads)...)

	if d.UI != nil {
		e.GET("/ui", func(c echo.Context) error { return c.Redirect(http.StatusMovedPermanently, "/ui/") })
		d.UI(e.Group("/ui"))
	}

	e.RouteNotFound("/*", func(c echo.Context) error {
		return &apiError{status: http.StatusNotFound, Code: "route_not_found", Message: "no route " + c.Request().Method + " " + c.Request().URL.Path}
	})
}
