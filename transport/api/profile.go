package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/contextd/contextd/engine"
)

// handleGetProfile answers {"user_id","profile"}.
func handleGetProfile(svc *engine.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		pr, err := svc.UserProfile(c.Request().Context(), tenantOf(c), c.Param("user_id"))
		if err != nil {
			return err
		}
		return encode(c, http.StatusOK, map[string]any{"user_id": c.Param("user_id"), "profile": pr})
	}
}

// handleForgetProfileItem forgets one item of a user's profile: 204.
func handleForgetProfileItem(svc *engine.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := svc.ForgetProfileItem(c.Request().Context(), tenantOf(c), c.Param("user_id"), c.Param("item_id")); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}
