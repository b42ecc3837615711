package api

import (
	"log/slog"

	"github.com/labstack/echo/v4"
)

type echoContext = echo.Context

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func newEcho() *echo.Echo {
	e := echo.New()
	e.HTTPErrorHandler = errorHandler(discardLogger())
	return e
}
