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
		after, err := queryInt(c, "after_seq", 0)
		if err != nil {
			return err
		}
		limit, err := queryInt(c, "limit", 100)
		if err != nil {
			return err
		}
		eps, next, err := svc.Episodes(c.Request().Context(), tenantOf(c), c.Param("chat_id"), after, int(limit))
		if err != nil {
			return err
		}
		return encode(c, http.StatusOK, map[string]any{"episodes": eps, "next_after_seq": next})
	}
}
