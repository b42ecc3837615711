package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/contextd/contextd/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The real binary, built once per test process for the scenario tests
// that must pass "through the binary over HTTP", not only in-process.
var built struct {
	once sync.Once
	dir  string
	bin  string
}

// contextdBinary builds the command once and returns its path.
func contextdBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "contextd-bin-")
		if err != nil {
			t.Fatal(err)
		}
		built.dir, built.bin = dir, buildContextd(t, dir)
	})
	if built.bin == "" {
		t.Fatal("contextd binary was not built")
	}
	return built.bin
}

// binServer is a running `contextd serve` with its own config and data.
type binServer struct {
	t    *testing.T
	base string
	log  string
	dir  string // the data directory (%DATA%)
	cmd  *exec.Cmd
	env  []string // added to the binary's environment (kept by restart)
	done chan struct{}
}

// startBinary writes cfgYAML (with %DATA% replaced by a fresh directory)
// and starts the binary on it; the server is stopped when t ends.
func startBinary(t *testing.T, cfgYAML string) *binServer {
	t.Helper()
	return startBinaryEnv(t, cfgYAML)
}

// startBinaryEnv is startBinary with env ("K=V") added to the binary's
// environment, after (so over) the default CONTEXTD_ADDR=127.0.0.1:0.
func startBinaryEnv(t *testing.T, cfgYAML string, env ...string) *binServer {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agents.yaml")
	if err := os.WriteFile(cfg, bytes.ReplaceAll([]byte(cfgYAML), []byte("%DATA%"), []byte(dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	return launchBinary(t, dir, env...)
}

// restart starts the binary again on s's directory and config (s must
// have ended: stop or kill); its log goes on in the same file.
func (s *binServer) restart() *binServer {
	s.t.Helper()
	return launchBinary(s.t, s.dir, s.env...)
}

// kill ends the server with SIGKILL: no drain, no checkpoint, no close.
func (s *binServer) kill() {
	s.t.Helper()
	_ = s.cmd.Process.Kill()
	<-s.done
}

// launchBinary starts `contextd serve` on dir/agents.yaml and waits for it
// to listen.
func launchBinary(t *testing.T, dir string, env ...string) *binServer {
	t.Helper()
	bin := contextdBinary(t)
	s := &binServer{t: t, log: filepath.Join(dir, "server.log"), dir: dir, env: env, done: make(chan struct{})}
	f, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	start, _ := f.Seek(0, io.SeekEnd)
	s.cmd = exec.Command(bin, "serve", "--config", filepath.Join(dir, "agents.yaml"))
	s.cmd.Dir = dir
	s.cmd.Env = append(append(os.Environ(), "CONTEXTD_ADDR=127.0.0.1:0"), env...)
	s.cmd.Stdout, s.cmd.Stderr = f, f
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.done:
		case <-time.After(15 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		if t.Failed() {
			b, _ := os.ReadFile(s.log)
			t.Logf("server log (tail):\n%s", tail(string(b), 4000))
		}
	})
	s.waitListening(start)
	return s
}

// waitListening reads the address the server prints in its log (past
// offset start: an earlier run's lines are not this one's).
func (s *binServer) waitListening(start int64) {
	t := s.t
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for s.base == "" {
		if b, _ := os.ReadFile(s.log); int64(len(b)) > start {
			if m := listenRe.FindSubmatch(b[start:]); m != nil {
				s.base = string(m[1])
				break
			}
		}
		select {
		case <-s.done:
			b, _ := os.ReadFile(s.log)
			t.Fatalf("contextd exited before listening:\n%s", b)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("contextd did not print its address")
		}
	}
}

// stop ends the server (SIGINT: it drains and exits), so its files can be
// read as they are.
func (s *binServer) stop() {
	s.t.Helper()
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		s.t.Fatal("contextd did not stop")
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// do sends a JSON request and decodes a JSON answer into out (when not
// nil); it returns the status and the raw body.
func (s *binServer) do(method, path string, body, out any) (int, []byte) {
	s.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			s.t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode, raw
}

// must is do that fails the test unless the status is want.
func (s *binServer) must(want int, method, path string, body, out any) []byte {
	s.t.Helper()
	st, raw := s.do(method, path, body, out)
	if st != want {
		s.t.Fatalf("%s %s: %d %s (want %d)", method, path, st, raw, want)
	}
	return raw
}

// waitFor polls cond every 50ms until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
