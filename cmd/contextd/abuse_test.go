package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// keyedConfig is embeddedConfig with auth on: two tenants, one key each.
var keyedConfig = withServer(embeddedConfig, `  auth:
    api_keys:
      - {key: key-alpha-0123456789, tenant: alpha}
      - {key: key-bravo-0123456789, tenant: bravo}
`)

// withServer adds lines (indented under server:) to a config.
func withServer(cfg, lines string) string {
	return strings.Replace(cfg, "server:\n", "server:\n"+lines, 1)
}

// raw sends one request as it is (any method, any headers) and returns the
// status, the answer's headers and its body, following no redirect.
func (s *binServer) raw(method, path string, hdr http.Header, body []byte) (int, http.Header, []byte) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.base+path, bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if h := hdr.Get("Host"); h != "" {
		req.Host = h
	}
	noRedirects := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := (&http.Client{Timeout: 60 * time.Second, CheckRedirect: noRedirects}).Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// metricsText is a scrape of /metrics (key: with auth on).
func (s *binServer) metricsText(key string) string {
	s.t.Helper()
	h := http.Header{}
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	code, _, b := s.raw("GET", "/metrics", h, nil)
	if code != http.StatusOK {
		s.t.Fatalf("/metrics: %d %s", code, b)
	}
	return string(b)
}

// oddMethods sends n requests with made-up methods to paths that answer
// without work (health, an unknown path, a refused key).
func oddMethods(s *binServer, n int) {
	paths := []string{"/healthz", "/no/such/path", "/v1/chats/c/messages"}
	for i := range n {
		s.raw(fmt.Sprintf("M%dXYZ", i), paths[i%len(paths)], nil, nil)
	}
}

// A client's made-up methods do not become metrics labels: each would be a
// series for the life of the process, in every scrape.
func TestOddMethodsAreOneLabel(t *testing.T) {
	s := startBinary(t, keyedConfig)
	oddMethods(s, 300)
	m := s.metricsText("key-alpha-0123456789")
	if strings.Contains(m, "XYZ") {
		t.Fatalf("a made-up method is a label:\n%s", tail(m, 2000))
	}
	if !strings.Contains(m, `method="other"`) {
		t.Fatalf("no method=\"other\" series:\n%s", tail(m, 2000))
	}
	if n := strings.Count(m, "contextd_http_request_duration_seconds_count"); n > 20 {
		t.Fatalf("%d request-duration series after 300 odd methods", n)
	}
}

// uiSession logs in to the inspector with key and returns the session
// cookie's value (the CSRF cookie may be any 64 characters the form repeats).
func (s *binServer) uiSession(key string) string {
	s.t.Helper()
	csrf := strings.Repeat("c", 64)
	h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Cookie": {"contextd_ui_csrf=" + csrf}}
	code, hdr, b := s.raw("POST", "/ui/login", h, []byte("csrf="+csrf+"&key="+key))
	for _, c := range (&http.Response{Header: hdr}).Cookies() {
		if c.Name == "contextd_ui_session" && c.Value != "" {
			return c.Value
		}
	}
	s.t.Fatalf("login: %d %s: no session cookie", code, b)
	return ""
}

// uiIn reports whether the session is still logged in.
func (s *binServer) uiIn(session string) bool {
	s.t.Helper()
	code, _, _ := s.raw("GET", "/ui/", http.Header{"Cookie": {"contextd_ui_session=" + session}}, nil)
	return code == http.StatusOK
}

// One tenant's logins, however many, log out only that tenant's own
// oldest sessions, never another tenant's.
func TestUILoginsEvictOnlyTheirTenant(t *testing.T) {
	s := startBinary(t, withServer(keyedConfig, "  ui:\n    sessions_per_tenant: 3\n"))
	alpha := s.uiSession("key-alpha-0123456789")
	var bravo []string
	for range 12 {
		bravo = append(bravo, s.uiSession("key-bravo-0123456789"))
	}
	if !s.uiIn(alpha) {
		t.Fatal("tenant bravo's logins logged tenant alpha out")
	}
	for i, b := range bravo {
		if want := i >= len(bravo)-3; s.uiIn(b) != want {
			t.Errorf("bravo's login %d: logged in %v, want %v (the newest 3 stay)", i, !want, want)
		}
	}
}

// stalledBody opens a request whose body of n bytes never finishes
// arriving: the server holds its share of the body budget meanwhile.
func (s *binServer) stalledBody(path string, n int) net.Conn {
	s.t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"chat_id\":", path, n)
	return conn
}

// Bodies in memory at once are bounded over all requests: past the budget
// a request is refused at once (503, Retry-After), before its body is read.
func TestBodyBudget(t *testing.T) {
	s := startBinary(t, withServer(embeddedConfig, "  body_limit: 1MB\n  body_budget: 2MB\n"))
	big := []byte(`{"chat_id":"c","query":"` + strings.Repeat("x", 900_000) + `"}`)
	// Two stalled bodies fill the budget, when both were admitted before
	// the probe came; otherwise the round is tried again.
	waitFor(t, 20*time.Second, "a refusal while two bodies hold the budget", func() bool {
		a, b := s.stalledBody("/v1/context", len(big)), s.stalledBody("/v1/search", len(big))
		defer a.Close()
		defer b.Close()
		code, hdr, body := s.raw("POST", "/v1/context", http.Header{"Content-Type": {"application/json"}}, big)
		if code == http.StatusServiceUnavailable && !strings.Contains(string(body), "server_busy") {
			t.Fatalf("503 without server_busy: %s", body)
		}
		return code == http.StatusServiceUnavailable && hdr.Get("Retry-After") != ""
	})
	waitFor(t, 20*time.Second, "the budget back once the stalled bodies are gone", func() bool {
		code, _, _ := s.raw("POST", "/v1/context", http.Header{"Content-Type": {"application/json"}}, big)
		return code != http.StatusServiceUnavailable
	})
}

// With auth off, a page whose own name resolves to the server (DNS
// rebinding: Host and Origin both evil.example) reads nothing: the Host
// must be an IP, localhost, the listen host or server.allowed_hosts.
func TestRebindingRefusedWithAuthOff(t *testing.T) {
	s := startBinary(t, withServer(embeddedConfig, "  allowed_hosts: [contextd, .internal]\n"))
	s.must(http.StatusCreated, "POST", "/v1/chats/victim/messages", map[string]any{
		"messages": []map[string]string{{"role": "user", "content": "a secret"}}}, nil)
	for _, c := range []struct {
		host, path string
		want       int
	}{
		{"evil.example:8080", "/v1/chats/victim/export", http.StatusForbidden},
		{"evil.example:8080", "/ui/", http.StatusForbidden},
		{"evil.example", "/metrics", http.StatusForbidden},
		{"localhost.evil.example", "/v1/chats/victim/export", http.StatusForbidden},
		{"localhost:8080", "/v1/chats/victim/export", http.StatusOK},
		{"127.0.0.1:8080", "/v1/chats/victim/export", http.StatusOK},
		{"[::1]:8080", "/v1/chats/victim/export", http.StatusOK},
		{"contextd:8080", "/v1/chats/victim/export", http.StatusOK},
		{"db.internal", "/v1/chats/victim/export", http.StatusOK},
	} {
		h := http.Header{"Host": {c.host}, "Origin": {"http://" + c.host}}
		code, _, body := s.raw("GET", c.path, h, nil)
		if code != c.want || c.want == http.StatusForbidden && (!strings.Contains(string(body), "forbidden_host") || strings.Contains(string(body), "secret")) {
			t.Errorf("Host %s %s: %d %s, want %d", c.host, c.path, code, tail(string(body), 300), c.want)
		}
	}
}

// Listening beyond loopback with auth off takes an explicit setting (a
// container's environment), and then logs a warning.
func TestAllInterfacesWithoutAuthIsExplicit(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agents.yaml")
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(embeddedConfig, "%DATA%", dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(contextdBinary(t), "serve", "--config", cfg)
	cmd.Env = append(os.Environ(), "CONTEXTD_ADDR=:0")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "allow_remote_without_auth") {
		t.Fatalf("serve on :0 with auth off: %v\n%s", err, out)
	}
	s := startBinaryEnv(t, embeddedConfig, "CONTEXTD_ADDR=:0", "CONTEXTD_ALLOW_REMOTE_WITHOUT_AUTH=true")
	s.must(http.StatusOK, "GET", "/healthz", nil, nil)
	b, _ := os.ReadFile(s.log)
	if !strings.Contains(string(b), "listens beyond loopback with auth off") {
		t.Fatalf("no warning in the log:\n%s", tail(string(b), 2000))
	}
}

// mcpInit opens an MCP session at protocol version and returns its id ("" when
// refused; code is the status).
func (s *binServer) mcpInit(key, version string) (id string, code int) {
	s.t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`
	code, hdr, b := s.raw("POST", "/mcp", mcpHeaders(key, ""), []byte(body))
	if code != http.StatusOK && code != http.StatusServiceUnavailable {
		s.t.Fatalf("initialize: %d %s", code, b)
	}
	return hdr.Get("Mcp-Session-Id"), code
}

// mcpHeaders are a streamable-HTTP POST's headers.
func mcpHeaders(key, session string) http.Header {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	if session != "" {
		h.Set("Mcp-Session-Id", session)
	}
	return h
}

// mcpPing reports the status of a ping on session.
func (s *binServer) mcpPing(key, session string) int {
	s.t.Helper()
	code, _, _ := s.raw("POST", "/mcp", mcpHeaders(key, session), []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`))
	return code
}

// gauge reads one unlabelled metric from a scrape.
func gauge(t *testing.T, scrape, name string) float64 {
	t.Helper()
	for _, l := range strings.Split(scrape, "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			var f float64
			fmt.Sscan(v, &f)
			return f
		}
	}
	t.Fatalf("no %s in the scrape", name)
	return 0
}

// An initialize flood keeps the sessions at the per-client cap: each new
// one past it closes the client's oldest idle session, and another
// tenant's sessions stay.
func TestMCPSessionCaps(t *testing.T) {
	s := startBinary(t, withServer(keyedConfig, "  mcp:\n    max_sessions: 50\n    max_sessions_per_client: 20\n"))
	bravo, _ := s.mcpInit("key-bravo-0123456789", "2025-06-18")
	first, _ := s.mcpInit("key-alpha-0123456789", "2025-06-18")
	var last string
	for range 200 {
		last, _ = s.mcpInit("key-alpha-0123456789", "2025-06-18")
	}
	if n := gauge(t, s.metricsText("key-alpha-0123456789"), "contextd_mcp_sessions"); n > 21 {
		t.Fatalf("%g sessions open after 201 initialize calls, want ≤ 20 of alpha's + 1 of bravo's", n)
	}
	for _, c := range []struct {
		name, key, id string
		want          int
	}{
		{"alpha's first (evicted)", "key-alpha-0123456789", first, http.StatusNotFound},
		{"alpha's newest", "key-alpha-0123456789", last, http.StatusOK},
		{"bravo's", "key-bravo-0123456789", bravo, http.StatusOK},
	} {
		if got := s.mcpPing(c.key, c.id); got != c.want {
			t.Errorf("ping on %s session: %d, want %d", c.name, got, c.want)
		}
	}
}

// A JSON-RPC batch is refused under a protocol without batches (2025-06-18
// on), whatever the request's version header says; under 2025-03-26 a
// small one is served and a long one refused.
func TestMCPBatches(t *testing.T) {
	s := startBinary(t, embeddedConfig)
	call := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_context","arguments":{"chat_id":"c"}}}`
	batch := func(n int) []byte {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(call, i+10)
		}
		return []byte("[" + strings.Join(parts, ",") + "]")
	}
	for _, c := range []struct {
		version string
		n, want int
	}{
		{"2025-06-18", 2000, http.StatusBadRequest},
		{"2025-06-18", 2, http.StatusBadRequest},
		{"2025-03-26", 2000, http.StatusBadRequest},
		{"2025-03-26", 2, http.StatusOK},
	} {
		id, _ := s.mcpInit("", c.version)
		s.raw("POST", "/mcp", mcpHeaders("", id), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		code, _, body := s.raw("POST", "/mcp", mcpHeaders("", id), batch(c.n))
		if code != c.want || code == http.StatusBadRequest && !strings.Contains(string(body), `"code":-32600`) {
			t.Errorf("%s batch of %d: %d %s, want %d", c.version, c.n, code, tail(string(body), 300), c.want)
		}
	}
}

// TestSoakAbuse replays the adversarial trial at a scale `make test` can
// afford, on the default settings, and asserts the bounds, not timings:
// odd methods leave /metrics small and the heap near where it was, an
// initialize flood leaves at most the per-client cap of sessions, 80
// bodies of 3.9 MB at once stay within the body budget, a 2,000-call batch and a
// rebinding request are refused. The full-size figures are in
// docs/operations.md ("Abuse bounds").
func TestSoakAbuse(t *testing.T) {
	s := startBinary(t, embeddedConfig)
	m0 := s.metricsText("")
	heap0, rss0 := gauge(t, m0, "go_memstats_heap_inuse_bytes"), gauge(t, m0, "process_resident_memory_bytes")

	oddMethods(s, 5000)
	if m := s.metricsText(""); len(m) > 64<<10 || strings.Contains(m, "XYZ") {
		t.Errorf("/metrics is %d bytes after 5,000 odd methods (made-up method as a label: %v)", len(m), strings.Contains(m, "XYZ"))
	}
	for range 2000 {
		s.mcpInit("", "2025-06-18")
	}
	id, _ := s.mcpInit("", "2025-06-18")
	parts := make([]string, 2000)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_context","arguments":{"chat_id":"c"}}}`, i)
	}
	if code, _, b := s.raw("POST", "/mcp", mcpHeaders("", id), []byte("["+strings.Join(parts, ",")+"]")); code != http.StatusBadRequest {
		t.Errorf("a 2,000-call batch: %d %s", code, tail(string(b), 300))
	}
	if code, _, _ := s.raw("GET", "/v1/chats/victim/export", http.Header{"Host": {"evil.example"}, "Origin": {"http://evil.example"}}, nil); code != http.StatusForbidden {
		t.Errorf("a rebinding request (Host: evil.example): %d, want 403", code)
	}
	busy := bigBodies(s, 80, 3_900_000)

	m := s.metricsText("")
	if n := gauge(t, m, "contextd_mcp_sessions"); n > 100 {
		t.Errorf("%g MCP sessions after 2,001 initialize calls, want ≤ 100 (max_sessions_per_client)", n)
	}
	heap, rss := gauge(t, m, "go_memstats_heap_inuse_bytes"), gauge(t, m, "process_resident_memory_bytes")
	t.Logf("heap in use %.0f → %.0f MB, RSS %.0f → %.0f MB; %d of 80 large bodies refused busy",
		heap0/1e6, heap/1e6, rss0/1e6, rss/1e6, busy)
	// At most 64 MB of bodies at once (server.body_budget), about three
	// times that at work, under the 320 MiB soft memory limit the GC keeps
	// (with what is not heap beside it). All 80 bodies at once would be
	// about 1 GB.
	if rss > 512e6 {
		t.Errorf("RSS %.0f MB after 80 bodies of 3.9 MB at once", rss/1e6)
	}
}

// bigBodies sends n bodies of size bytes to /v1/context at once and counts
// those refused with 503 server_busy; any other 5xx fails the test.
func bigBodies(s *binServer, n, size int) (busy int) {
	body := []byte(`{"chat_id":"c","query":"` + strings.Repeat("x", size) + `"}`)
	codes := make(chan int, n)
	for range n {
		go func() {
			req, _ := http.NewRequest("POST", s.base+"/v1/context", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
			if err != nil {
				codes <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	for range n {
		switch c := <-codes; {
		case c == http.StatusServiceUnavailable:
			busy++
		case c == 0 || c >= 500:
			s.t.Errorf("a large body: status %d", c)
		}
	}
	return busy
}
