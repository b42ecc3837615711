package ui

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/contextd/contextd/memory"
)

// Cookie names. The session cookie carries a random id that maps to a
// tenant in memory, never the API key itself.
const (
	sessionCookie = "contextd_ui_session"
	csrfCookie    = "contextd_ui_csrf"
	ctxCSRF       = "ui.csrf"
	// ctxAuthed marks a request that passed auth, so pages outside it
	// (login, not found) name no tenant; the tenant itself is in the
	// request's context.Context.
	ctxAuthed = "ui.authed"
)

// sessions maps session ids to tenants, bounded per tenant and expiring.
// The bound is per tenant so that one tenant's logins, however many, only
// ever log out that tenant's own oldest sessions, never another's; the
// whole table is then at most tenants × perTenant, and tenants come from
// server.auth.api_keys.
type sessions struct {
	mu        sync.Mutex
	m         map[string]session
	byTenant  map[string][]string // session ids, oldest first (some gone from m)
	perTenant int
	ttl       time.Duration
}

type session struct {
	tenant  string
	expires time.Time
}

func newSessions(perTenant int, ttl time.Duration) *sessions {
	return &sessions{m: map[string]session{}, byTenant: map[string][]string{}, perTenant: max(perTenant, 1), ttl: ttl}
}

// add opens a session for tenant, logging out the tenant's oldest when it
// has perTenant already.
func (s *sessions) add(tenant string) string {
	id := randomToken()
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	live := s.byTenant[tenant][:0:0]
	for _, old := range s.byTenant[tenant] { // drop ended ones
		if v, ok := s.m[old]; ok && !now.After(v.expires) {
			live = append(live, old)
		} else {
			delete(s.m, old)
		}
	}
	for len(live) >= s.perTenant {
		delete(s.m, live[0])
		live = live[1:]
	}
	s.m[id] = session{tenant: tenant, expires: now.Add(s.ttl)}
	s.byTenant[tenant] = append(live, id)
	return id
}

func (s *sessions) tenant(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[id]
	if !ok || time.Now().After(v.expires) {
		delete(s.m, id)
		return "", false
	}
	return v.tenant, true
}

func (s *sessions) drop(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand never fails on supported platforms
	return hex.EncodeToString(b)
}

func setCookie(c echo.Context, name, value string, maxAge int) {
	c.SetCookie(&http.Cookie{Name: name, Value: value, Path: "/ui/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: c.IsTLS()})
}

// auth fixes the request's tenant in its context.Context, as the API's
// auth does: memory.DefaultTenant with auth off, else the session's tenant;
// without a session the login form is shown.
func (h *handler) auth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ensureCSRF(c)
		if !h.keys.Enabled() {
			return next(withTenant(c, memory.DefaultTenant))
		}
		if ck, err := c.Cookie(sessionCookie); err == nil {
			if t, ok := h.sessions.tenant(ck.Value); ok {
				return next(withTenant(c, t))
			}
		}
		if c.Request().Method != http.MethodGet {
			return h.render(c, http.StatusUnauthorized, "login", "Log in", "Your session has ended; log in again.")
		}
		return c.Redirect(http.StatusSeeOther, "/ui/login")
	}
}

func withTenant(c echo.Context, tenant string) echo.Context {
	c.Set(ctxAuthed, true)
	c.SetRequest(c.Request().WithContext(memory.NewContextWithTenant(c.Request().Context(), tenant)))
	return c
}

func (h *handler) loginForm(c echo.Context) error {
	if !h.keys.Enabled() { // auth off: nothing to log in to
		return c.Redirect(http.StatusSeeOther, "/ui/")
	}
	ensureCSRF(c)
	return h.render(c, http.StatusOK, "login", "Log in", "")
}

// login checks the posted key in constant time against every key.
func (h *handler) login(c echo.Context) error {
	ensureCSRF(c)
	if !csrfOK(c) {
		return h.render(c, http.StatusForbidden, "error", "Forbidden", "The form has expired; reload the page and try again.")
	}
	tenant, ok := h.keys.Tenant(c.FormValue("key"))
	if !ok {
		return h.render(c, http.StatusUnauthorized, "login", "Log in", "That key is not valid.")
	}
	setCookie(c, sessionCookie, h.sessions.add(tenant), 12*3600)
	return c.Redirect(http.StatusSeeOther, "/ui/")
}

func (h *handler) logout(c echo.Context) error {
	if ck, err := c.Cookie(sessionCookie); err == nil {
		h.sessions.drop(ck.Value)
	}
	setCookie(c, sessionCookie, "", -1)
	return c.Redirect(http.StatusSeeOther, "/ui/login")
}

// ensureCSRF gives the browser a CSRF token cookie (HttpOnly); forms carry
// the same token in a hidden field, which a cross-site page cannot read.
func ensureCSRF(c echo.Context) {
	if ck, err := c.Cookie(csrfCookie); err == nil && len(ck.Value) == 64 {
		c.Set(ctxCSRF, ck.Value)
		return
	}
	t := randomToken()
	setCookie(c, csrfCookie, t, 0)
	c.Set(ctxCSRF, t)
}

func csrfToken(c echo.Context) string {
	t, _ := c.Get(ctxCSRF).(string)
	return t
}

func csrfOK(c echo.Context) bool {
	ck, err := c.Cookie(csrfCookie)
	form := c.FormValue("csrf")
	return err == nil && form != "" && subtle.ConstantTimeCompare([]byte(ck.Value), []byte(form)) == 1
}

// csrf rejects a state-changing request whose form token does not match
// its cookie.
func (h *handler) csrf(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !csrfOK(c) {
			return h.render(c, http.StatusForbidden, "error", "Forbidden", "The form has expired; reload the page and try again.")
		}
		return next(c)
	}
}

// tenantOf is the tenant auth put in the request's context.
func tenantOf(c echo.Context) string {
	return memory.TenantFromContext(c.Request().Context())
}

// shownTenant is the tenant a page names: none outside auth.
func shownTenant(c echo.Context) string {
	if authed, _ := c.Get(ctxAuthed).(bool); !authed {
		return ""
	}
	return tenantOf(c)
}
