package api

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/contextd/contextd/internal/openapicheck"
)

// docs/openapi.yaml documents every route addRoutes registers (with MCP and
// the inspector on), and nothing else: the inspector's own pages under
// /ui/ are its package's, not the API's.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	spec, err := openapicheck.Load("../../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := NewHandler(Deps{MCP: http.NotFoundHandler(), UI: func(g *echo.Group) {
		g.GET("/", func(c echo.Context) error { return nil }) // stands for the inspector's pages
	}})
	param := regexp.MustCompile(`:([a-z_]+)`)
	var routes []string
	for _, r := range h.(*echo.Echo).Routes() {
		if r.Method == echo.RouteNotFound || strings.HasPrefix(r.Path, "/ui/") {
			continue
		}
		op := r.Method + " " + param.ReplaceAllString(r.Path, "{$1}")
		if !slices.Contains(routes, op) {
			routes = append(routes, op)
		}
	}
	slices.Sort(routes)
	documented := spec.Operations()
	for _, r := range routes {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is not in docs/openapi.yaml", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(routes, d) {
			t.Errorf("docs/openapi.yaml documents %s, which no route serves", d)
		}
	}
	if len(routes) < 20 {
		t.Fatalf("only %d routes found: %v", len(routes), routes)
	}
}
