package mcpserver_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/transport/api"
	"github.com/contextd/contextd/transport/mcpserver"
)

// rawClient speaks streamable HTTP by hand, so a test can send any
// Mcp-Session-Id under any key, which the SDK's client never does.
type rawClient struct{ url, key string }

const (
	initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
		`"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	initializedBody = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	pingBody        = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	setLevelBody    = `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"info"}}`
)

// send makes one request and answers its status and Mcp-Session-Id. A GET
// is an event stream that never ends, so its body is left unread: the
// status alone says whether the stream was opened.
func (c rawClient) send(t *testing.T, method, session, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.url+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s /mcp: %v", method, err)
	}
	defer res.Body.Close()
	if method != http.MethodGet {
		io.Copy(io.Discard, res.Body)
	}
	return res.StatusCode, res.Header.Get("Mcp-Session-Id")
}

// initialize opens a session and answers its id.
func (c rawClient) initialize(t *testing.T) string {
	t.Helper()
	status, id := c.send(t, http.MethodPost, "", initializeBody)
	if status != http.StatusOK || id == "" {
		t.Fatalf("initialize: status %d, session %q", status, id)
	}
	if status, _ := c.send(t, http.MethodPost, id, initializedBody); status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: status %d", status)
	}
	return id
}

func (c rawClient) ping(t *testing.T, session string) int {
	t.Helper()
	status, _ := c.send(t, http.MethodPost, session, pingBody)
	return status
}

// TestIdleSessionExpires: a session nobody uses for the session timeout is
// closed, so its id is unknown to POST, GET and DELETE alike; the server
// still opens new sessions. It probes less often than the timeout (a probe
// is itself a use) and waits for the closing, not for a fixed time.
func TestIdleSessionExpires(t *testing.T) {
	const timeout = 50 * time.Millisecond
	c := rawClient{url: serve(t, nil, mcpserver.Options{Version: "test", SessionTimeout: timeout})}
	id := c.initialize(t)
	for deadline := time.Now().Add(10 * time.Second); ; {
		time.Sleep(2 * timeout)
		status := c.ping(t, id)
		if status == http.StatusNotFound {
			break
		}
		if status != http.StatusOK {
			t.Fatalf("ping on an idle session: status %d", status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session still answers after 10 s idle with a %s timeout", timeout)
		}
	}
	for _, tc := range []struct{ method, body string }{
		{http.MethodPost, setLevelBody},
		{http.MethodGet, ""},
		{http.MethodDelete, ""},
	} {
		if status, _ := c.send(t, tc.method, id, tc.body); status != http.StatusNotFound {
			t.Errorf("%s on an expired session: status %d, want 404", tc.method, status)
		}
	}
	if fresh := c.initialize(t); c.ping(t, fresh) != http.StatusOK {
		t.Error("a new session after one expired does not answer ping")
	}
}

// TestDefaultSessionTimeout: sessions expire by default, and the API's
// default is the config's, which cannot import this package to share it.
func TestDefaultSessionTimeout(t *testing.T) {
	if mcpserver.DefaultSessionTimeout <= 0 {
		t.Fatal("the default session timeout must close idle sessions")
	}
	if got := config.Default().Server.MCP.SessionTimeout; got != mcpserver.DefaultSessionTimeout {
		t.Fatalf("config's server.mcp.session_timeout default %s, mcpserver.DefaultSessionTimeout %s", got, mcpserver.DefaultSessionTimeout)
	}
	m := config.Default().Server.MCP
	if m.MaxSessions != mcpserver.DefaultMaxSessions || m.MaxSessionsPerClient != mcpserver.DefaultMaxSessionsPerClient {
		t.Fatalf("config's server.mcp.max_sessions, max_sessions_per_client defaults %d, %d; mcpserver's %d, %d",
			m.MaxSessions, m.MaxSessionsPerClient, mcpserver.DefaultMaxSessions, mcpserver.DefaultMaxSessionsPerClient)
	}
}

// TestSessionBoundToTenant: a session id works only under the tenant that
// opened it. Under another tenant's key, POST, GET and DELETE with it are
// 404, as for an id that never existed, and leave the session working for
// its own tenant, who can still use, stream and end it.
func TestSessionBoundToTenant(t *testing.T) {
	url := serve(t, []api.APIKey{{Key: "keyAAAAAAAAAAAAAAAA1", Tenant: "ta"}, {Key: "keyBBBBBBBBBBBBBBBB2", Tenant: "tb"}},
		mcpserver.Options{Version: "test"})
	ta, tb := rawClient{url, "keyAAAAAAAAAAAAAAAA1"}, rawClient{url, "keyBBBBBBBBBBBBBBBB2"}
	s := ta.initialize(t)
	for _, tc := range []struct{ name, method, body string }{
		{"logging/setLevel", http.MethodPost, setLevelBody},
		{"ping", http.MethodPost, pingBody},
		{"event stream", http.MethodGet, ""},
		{"end session", http.MethodDelete, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if status, _ := tb.send(t, tc.method, s, tc.body); status != http.StatusNotFound {
				t.Errorf("%s by another tenant: status %d, want 404", tc.method, status)
			}
			if status := ta.ping(t, s); status != http.StatusOK {
				t.Errorf("after another tenant's %s, ping by the owner: status %d, want 200", tc.method, status)
			}
		})
	}

	own := tb.initialize(t)
	if status := tb.ping(t, own); status != http.StatusOK {
		t.Errorf("tb's own session: ping status %d", status)
	}
	for _, tc := range []struct {
		method, body string
		want         int
	}{
		{http.MethodPost, setLevelBody, http.StatusOK},
		{http.MethodGet, "", http.StatusOK},
		{http.MethodDelete, "", http.StatusNoContent},
		{http.MethodPost, pingBody, http.StatusNotFound}, // ended by its owner
	} {
		if status, _ := ta.send(t, tc.method, s, tc.body); status != tc.want {
			t.Errorf("%s by the owner: status %d, want %d", tc.method, status, tc.want)
		}
	}
}
