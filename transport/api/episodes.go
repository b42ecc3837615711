package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/contextd/contextd/engine"
)

// handleListEpisodes pages a chat's closed episodes:
// {"episodes":[Episode],"next_after_seq"}.
func handleListEpisodes(svc *engine.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		after, limit, err := page(c)
		if err != nil {
			return err
		}
		eps, next, err := svc.Episodes(c.Request().Context(), tenantOf(c), c.Param("chat_id"), after, limit)
		if err != nil {
			return err
		}
		return encode(c, http.StatusOK, map[string]any{"episodes": eps, "next_after_seq": next})
	}
}
