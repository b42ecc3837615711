package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/contextd/contextd/engine"
)

func handleHealthz() echo.HandlerFunc {
	return func(c echo.Context) error {
		return encode(c, http.StatusOK, map[string]string{"status": "ok"})
	}
}

// handleVersion names the build: {"version","commit","go"}.
func handleVersion(b BuildInfo) echo.HandlerFunc {
	return func(c echo.Context) error {
		return encode(c, http.StatusOK, b)
	}
}

// handleReadyz: 503 only when storage is down or full; a missing vector store or LLM
// makes answers poorer, not wrong, so the instance stays in rotation.
func handleReadyz(d Deps) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
		defer cancel()
		states := map[string]string{"storage": "ok", "vector": "disabled", "embedder": "ok", "llm": "disabled"}
		if d.Ready != nil {
			for k, v := range d.Ready(ctx) {
				states[k] = v
			}
		}
		status := http.StatusOK
		if states["storage"] != "ok" {
			status = http.StatusServiceUnavailable
		}
		return encode(c, status, states)
	}
}

// handleMetrics refreshes the backend gauges (through Ready) before each
// scrape, so they are current without a background poller.
func handleMetrics(d Deps) echo.HandlerFunc {
	h := d.Metrics.Handler()
	return func(c echo.Context) error {
		if d.Ready != nil {
			ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
			d.Ready(ctx)
			cancel()
		}
		h.ServeHTTP(c.Response(), c.Request())
		return nil
	}
}

func handleAppend(svc *engine.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		var in engine.AppendInput
		if err := decode(c, &in); err != nil {
			return err
		}
		out, err := svc.Append(c.Request().Context(), tenantOf(c), c.Param("chat_id"), in)
		if err != nil {
			return err
		}
		return encode(c, http.StatusCreated, out)
	}
}

type messageOut struct {
	ID        string         `json:"id"`
	Seq       int64          `json:"seq"`
	Role      string         `json:"role"`
	Name      string         `json:"name"`
	Content   string         `json:"content"`
	CreatedAt time.Time      `json:"created_at"`
	Metadata  map[string]any `json:"metadata"`
}

// tombstoneOut is a message deleted on its own: it keeps its id, seq, role
// and time (seqs stay gap-free), and shows no content, name or metadata,
// not even empty ones.
type tombstoneOut struct {
	ID        string    `json:"id"`
	Seq       int64     `json:"seq"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at"`
	Deleted   bool      `json:"deleted"`
}

func handleListMessages(svc *engine.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		after, limit, err := page(c)
		if err != nil {
			return err
		}
		msgs, next, err := svc.Messages(c.Request().Context(), tenantOf(c), c.Param("chat_id"), after, limit)
		if err != nil {
			return err
		}
		out := make([]any, 0, len(msgs))
		for _, m := range msgs {
			if m.Deleted {
				out = append(out, tombstoneOut{ID: m.ID, Seq: m.Seq, Role: string(m.Role), CreatedAt: m.CreatedAt, Deleted: true})
				continue
			}
			md := m.Metadata
			if md == nil {
				md = map[string]any{}
			}
			out = append(out, messageOut{ID: m.ID, Seq: m.Seq, Role: string(m.Role), Name: m.Name, Content: m.Content, CreatedAt: m.CreatedAt, Metadata: md})
		}
		return encode(c, http.StatusOK, map[string]any{"messages": out, "next_after_seq": next})
	}
}

func queryInt(c echo.Context, name string, def int64) (int64, error) {
	v := c.QueryParam(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, badRequest("invalid_value", name, "must be an integer")
	}
	return n, nil
}

// page reads a listing's after_seq (default 0) and limit (default 100).
func page(c echo.Context) (after int64, limit int, err error) {
	if after, err = queryInt(c, "after_seq", 0); err != nil {
		return 0, 0, err
	}
	n, err := queryInt(c, "limit", 100)
	return after, int(n), err
}

// queryBool reads a true/false query parameter (absent: false).
func queryBool(c echo.Context, name string) (bool, error) {
	switch c.QueryParam(name) {
	case "", "false", "0":
		return false, nil
	case "true", "1":
		return true, nil
	}
	return false, badRequest("invalid_value", name, "must be true or false")
}

// defaultChainLimit is how many records of the summary chain GET …/summary
// answers by default, newest first.
const defaultChainLimit = 50

func handleGetSummary(svc *engine.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		n, err := queryInt(c, "chain_limit", defaultChainLimit)
		if err != nil {
			return err
		}
		if n < 1 || n > 1000 {
			return badRequest("invalid_value", "chain_limit", "must be between 1 and 1000")
		}
		v, err := svc.SummaryView(c.Request().Context(), tenantOf(c), c.Param("chat_id"), int(n))
		if err != nil {
			return err
		}
		eps, err := svc.LatestEpisodes(c.Request().Context(), tenantOf(c), c.Param("chat_id"), engine.SummaryEpisodes)
		if err != nil {
			return err
		}
		return encode(c, http.StatusOK, map[string]any{"summary": v.Summary, "chain": v.Chain, "episodes": eps, "preview": v.Preview})
	}
}

// handleRefreshSummary summarises synchronously within the request's
// deadline and answers 200 with the new summary, or with a null summary
// and the reason there is nothing to summarise yet.
func handleRefreshSummary(svc *engine.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := decodeNone(c); err != nil {
			return err
		}
		res, err := svc.Refresh(c.Request().Context(), tenantOf(c), c.Param("chat_id"))
		if err != nil {
			return err
		}
		return encode(c, http.StatusOK, res)
	}
}

func handleDeleteChat(svc *engine.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := svc.DeleteChat(c.Request().Context(), tenantOf(c), c.Param("chat_id")); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}

// handleDeleteMessage forgets one message: 204, or 404 for an unknown (or
// already deleted) message.
func handleDeleteMessage(svc *engine.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := svc.DeleteMessage(c.Request().Context(), tenantOf(c), c.Param("chat_id"), c.Param("message_id")); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}

func handleDeleteUser(svc *engine.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		if _, err := svc.DeleteUser(c.Request().Context(), tenantOf(c), c.Param("user_id")); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
}

func handleContext(svc *engine.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		var in engine.ContextInput
		if err := decode(c, &in); err != nil {
			return err
		}
		res, err := svc.Context(c.Request().Context(), tenantOf(c), in)
		if err != nil {
			return err
		}
		return encodeAnswer(c, res.Answer(in.Include))
	}
}

func handleSearch(svc *engine.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		var in engine.SearchInput
		if err := decode(c, &in); err != nil {
			return err
		}
		res, err := svc.Search(c.Request().Context(), tenantOf(c), in)
		if err != nil {
			return err
		}
		return encode(c, http.StatusOK, res)
	}
}
