package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/contextd/contextd/config"
)

// cmdHealthcheck asks a running contextd's /readyz whether it is ready:
// exit 0 and one line when it answers 200 with storage ok, else an error
// (exit 1) that says why. A distroless image has no shell or curl, so a
// compose or Docker healthcheck runs the binary itself:
//
//	healthcheck: {test: ["CMD", "/app/contextd", "healthcheck"]}
//
// Without --url it asks 127.0.0.1 on CONTEXTD_ADDR's port (default 8080).
func cmdHealthcheck(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stdout)
	target := fs.String("url", "", "contextd's base URL or its /readyz URL (default http://127.0.0.1:<port of CONTEXTD_ADDR, else 8080>)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	u, err := readyzURL(*target, getenv(config.EnvAddr))
	if err != nil {
		return usageError("healthcheck: " + err.Error())
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return usageError("healthcheck: " + err.Error())
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("healthcheck: not ready: %s did not answer within %s", u, *timeout)
		}
		return fmt.Errorf("healthcheck: not ready: cannot reach %s: %v", u, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var states map[string]string
	jsonErr := json.Unmarshal(raw, &states)
	if resp.StatusCode == http.StatusOK && jsonErr == nil && states["storage"] == "ok" {
		fmt.Fprintf(stdout, "contextd healthcheck: ready (%s: %s)\n", u, describeStates(states))
		return nil
	}
	if jsonErr != nil || len(states) == 0 {
		return fmt.Errorf("healthcheck: not ready: %s answered %s, not contextd's readiness: %.200q", u, resp.Status, raw)
	}
	return fmt.Errorf("healthcheck: not ready: %s answered %s (%s)", u, resp.Status, describeStates(states))
}

// readyzURL is the URL to ask: --url as given when it has a path, else
// its /readyz; with no --url, 127.0.0.1 on addr's port.
func readyzURL(target, addr string) (string, error) {
	if target == "" {
		port := "8080"
		if addr != "" {
			_, p, err := net.SplitHostPort(addr)
			if err != nil || p == "" || p == "0" {
				return "", fmt.Errorf("cannot tell the port from CONTEXTD_ADDR=%q; pass --url", addr)
			}
			port = p
		}
		target = "http://" + net.JoinHostPort("127.0.0.1", port)
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--url %q is not an http(s) URL", target)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/readyz"
	}
	return u.String(), nil
}

// describeStates lists the backends' states in a stable order.
func describeStates(states map[string]string) string {
	keys := make([]string, 0, len(states))
	for k := range states {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + states[k]
	}
	return strings.Join(parts, ", ")
}
