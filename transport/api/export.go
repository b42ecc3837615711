package api

import (
	"encoding/json"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/memory"
)

// handleExportChat streams a chat's dump: 200 application/x-ndjson.
func handleExportChat(svc *engine.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		return streamDump(c, func(emit func(memory.DumpRecord) error) error {
			return svc.ExportChat(c.Request().Context(), tenantOf(c), c.Param("chat_id"), emit)
		})
	}
}

// handleExportUser streams the dump of a user's chats and profile.
func handleExportUser(svc *engine.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		return streamDump(c, func(emit func(memory.DumpRecord) error) error {
			return svc.ExportUser(c.Request().Context(), tenantOf(c), c.Param("user_id"), emit)
		})
	}
}

// streamDump writes one JSON line per record. The status is sent with the
// first line, so that an unknown chat or user is still a 404 in the one
// error shape; a failure after that cuts the connection, so that the client
// sees a broken stream rather than a dump that looks complete.
func streamDump(c echo.Context, run func(emit func(memory.DumpRecord) error) error) error {
	w := c.Response()
	start := func() {
		if !w.Committed {
			w.Header().Set(echo.HeaderContentType, "application/x-ndjson")
			w.WriteHeader(http.StatusOK)
		}
	}
	err := run(func(r memory.DumpRecord) error {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		start()
		_, err = w.Write(append(line, '\n'))
		return err
	})
	if err != nil && w.Committed {
		panic(http.ErrAbortHandler)
	}
	if err == nil {
		start()
	}
	return err
}
