package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// buildVersioned builds the binary as the Makefile does, with a version
// and commit set by -ldflags.
func buildVersioned(t *testing.T, ver, commit string) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("needs the go command: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "contextd")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goCmd, "build", "-ldflags", "-X main.version="+ver+" -X main.commit="+commit, "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// GET /version and contextd_build_info name the build set by -ldflags.
func TestVersionAndBuildInfoThroughTheBinary(t *testing.T) {
	bin := buildVersioned(t, "v9.8.7-test", "0123abcd")
	dir := t.TempDir()
	cmd := exec.Command(bin, "serve")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CONTEXTD_ADDR=127.0.0.1:0")
	logf := filepath.Join(dir, "log")
	f, err := os.Create(logf)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	var base string
	waitFor(t, 60*time.Second, "the server's address", func() bool {
		b, _ := os.ReadFile(logf)
		if m := listenRe.FindSubmatch(b); m != nil {
			base = string(m[1])
		}
		return base != ""
	})

	resp, err := http.Get(base + "/version")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var v map[string]string
	if err := json.Unmarshal(raw, &v); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /version: %d %s", resp.StatusCode, raw)
	}
	want := map[string]string{"version": "v9.8.7-test", "commit": "0123abcd", "go": runtime.Version()}
	if len(v) != len(want) || v["version"] != want["version"] || v["commit"] != want["commit"] || v["go"] != want["go"] {
		t.Fatalf("GET /version = %v, want %v", v, want)
	}

	resp, err = http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	re := regexp.MustCompile(`(?m)^contextd_build_info\{([^}]*)\} 1$`)
	m := re.FindSubmatch(raw)
	if m == nil {
		t.Fatalf("no contextd_build_info ... 1 in /metrics")
	}
	for _, l := range []string{`version="v9.8.7-test"`, `commit="0123abcd"`, `goversion="` + runtime.Version() + `"`} {
		if !strings.Contains(string(m[1]), l) {
			t.Errorf("contextd_build_info{%s} lacks %s", m[1], l)
		}
	}

	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "contextd v9.8.7-test 0123abcd ") {
		t.Fatalf("contextd version: %q %v", out, err)
	}

	// healthcheck: ready, by base URL, by /readyz URL and by CONTEXTD_ADDR's port.
	for _, args := range [][]string{{"--url", base}, {"--url", base + "/readyz"}} {
		out, err := exec.Command(bin, append([]string{"healthcheck"}, args...)...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "ready") || !strings.Contains(string(out), "storage ok") {
			t.Fatalf("healthcheck %v: %v %q", args, err, out)
		}
	}
	hc := exec.Command(bin, "healthcheck")
	hc.Env = append(os.Environ(), "CONTEXTD_ADDR=:"+base[strings.LastIndex(base, ":")+1:])
	if out, err := hc.CombinedOutput(); err != nil {
		t.Fatalf("healthcheck by CONTEXTD_ADDR: %v %q", err, out)
	}
}

// healthcheck exits non-zero, saying why, when nothing answers, when
// /readyz is 503, and when what answers is not contextd.
func TestHealthcheckNotReady(t *testing.T) {
	bin := contextdBinary(t)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(503)
		_, _ = io.WriteString(w, `{"storage":"unavailable","vector":"ok","embedder":"ok","llm":"disabled"}`)
	}))
	defer down.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "<html>hello</html>")
	}))
	defer other.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	for _, tc := range []struct {
		name, url, want string
	}{
		{"503", down.URL, "503 Service Unavailable (embedder ok, llm disabled, storage unavailable, vector ok)"},
		{"not contextd", other.URL, "not contextd's readiness"},
		{"nothing listening", closedURL, "cannot reach " + closedURL + "/readyz"},
	} {
		out, err := exec.Command(bin, "healthcheck", "--url", tc.url, "--timeout", "3s").CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("%s: exit %v, want 1 (%q)", tc.name, err, out)
		}
		if !strings.Contains(string(out), "not ready") || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: message %q lacks %q", tc.name, out, tc.want)
		}
	}
	out, err := exec.Command(bin, "healthcheck", "--url", "ftp://x").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("a bad --url: %v %q, want exit 2", err, out)
	}
}
