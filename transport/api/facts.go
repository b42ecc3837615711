package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/contextd/contextd/engine"
)

// handleListFacts pages a chat's facts: {"facts":[Fact],"next_after_seq"}.
func handleListFacts(svc *engine.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		after, limit, err := page(c)
		if err != nil {
			return err
		}
		superseded, err := queryBool(c, "include_superseded")
		if err != nil {
			return err
		}
		fs, next, err := svc.Facts(c.Request().Context(), tenantOf(c), c.Param("chat_id"), after, limit, superseded)
		if err != nil {
			return err
		}
		return encode(c, http.StatusOK, map[string]any{"facts": fs, "next_after_seq": next})
	}
}
