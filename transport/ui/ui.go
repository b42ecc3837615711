// Package ui is contextd's inspector: server-rendered pages at /ui/ over
// the same engine use cases as the API (never a second copy of their
// logic). Templates and static assets are embedded; no script runs inline.
package ui

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/memory"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Deps are what the inspector reads.
type Deps struct {
	Service *engine.Service
	Lister  memory.ChatLister
	// Keys turn the login form on; none: every page is tenant "default".
	Keys []memory.APIKey
	// Ready reports each backend's state, as /readyz does.
	Ready func(ctx context.Context) map[string]string
	// Backlog counts unindexed and unsummarised turns.
	Backlog func(ctx context.Context) (memory.Backlog, error)
	// Activity describes the background workers' recent runs.
	Activity func() map[string]string
	// Episodes lists a chat's episodes that hold turns from..to, in seq
	// order (nil: the chat page shows none). A page shows the episodes of
	// its own turns, never the whole chat's.
	Episodes func(ctx context.Context, key memory.ChatKey, from, to int64) ([]memory.Episode, error)
	// Config is the effective configuration, every secret redacted.
	Config string
	// Agents are the per-agent effective memory settings, rendered.
	Agents map[string]string
	Logger *slog.Logger
	// SessionsPerTenant bounds each tenant's logged-in sessions
	// (server.ui.sessions_per_tenant); a login past it logs out the
	// tenant's own oldest. 0: one.
	SessionsPerTenant int
}

// CSP forbids inline script and any foreign origin.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// Register adds the inspector's routes to g (the router's /ui group).
func Register(g *echo.Group, d Deps) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	h := &handler{d: d, keys: memory.NewKeyring(d.Keys), pages: parsePages(), sessions: newSessions(d.SessionsPerTenant, 12*time.Hour)}
	g.Use(securityHeaders)
	static, _ := fs.Sub(staticFS, "static")
	g.GET("/static/*", echo.WrapHandler(http.StripPrefix("/ui/static/", http.FileServer(http.FS(static)))))
	g.GET("/login", h.loginForm)
	g.POST("/login", h.login)
	g.POST("/logout", h.logout, h.auth, h.csrf)
	g.GET("/", h.chats, h.auth)
	g.GET("/chats/:chat_id", h.chat, h.auth)
	g.GET("/chats/:chat_id/playground", h.playground, h.auth)
	g.GET("/chats/:chat_id/confirm", h.confirm, h.auth)
	g.POST("/chats/:chat_id/summarise", h.summarize, h.auth, h.csrf)
	g.POST("/chats/:chat_id/delete", h.deleteChat, h.auth, h.csrf)
	g.GET("/status", h.status, h.auth)
	g.RouteNotFound("/*", func(c echo.Context) error { return h.notFound(c, "no such page") })
}

func securityHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		hd := c.Response().Header()
		hd.Set("Content-Security-Policy", CSP)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		if !strings.HasPrefix(c.Request().URL.Path, "/ui/static/") {
			hd.Set("Cache-Control", "no-store")
		}
		return next(c)
	}
}

type handler struct {
	d        Deps
	keys     memory.Keyring
	pages    map[string]*template.Template
	sessions *sessions
}

// page is what every template gets.
type page struct {
	Title  string
	Tenant string
	Auth   bool
	CSRF   string
	Data   any
}

func (h *handler) render(c echo.Context, status int, name, title string, data any) error {
	p := page{Title: title, Tenant: shownTenant(c), Auth: h.keys.Enabled(), CSRF: csrfToken(c), Data: data}
	var b strings.Builder
	if err := h.pages[name].ExecuteTemplate(&b, "layout", p); err != nil {
		h.d.Logger.Error("ui render", "page", name, "err", err)
		return c.String(http.StatusInternalServerError, "render failed")
	}
	return c.HTML(status, b.String())
}

func (h *handler) notFound(c echo.Context, msg string) error {
	return h.render(c, http.StatusNotFound, "error", "Not found", msg)
}

func (h *handler) fail(c echo.Context, err error) error {
	if e, ok := engine.AsError(err); errors.Is(err, memory.ErrNotFound) || ok && e.Kind == engine.KindNotFound {
		return h.notFound(c, "no such chat")
	}
	h.d.Logger.Warn("ui", "path", c.Path(), "err", err)
	return h.render(c, http.StatusBadRequest, "error", "Error", err.Error())
}
