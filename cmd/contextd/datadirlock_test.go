package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A second `contextd serve` on the data directory a running one holds
// refuses to start: it exits non-zero naming the holder's pid, and the
// first keeps serving. Through the real binary.
func TestSecondServeOnTheDataDirRefuses(t *testing.T) {
	first := startBinary(t, embeddedConfig)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, contextdBinary(t), "serve", "--config", filepath.Join(first.dir, "agents.yaml"))
	cmd.Dir = first.dir
	cmd.Env = append(os.Environ(), "CONTEXTD_ADDR=127.0.0.1:0")
	out, err := cmd.CombinedOutput()
	if err == nil || cmd.ProcessState == nil || cmd.ProcessState.ExitCode() <= 0 {
		t.Fatalf("second serve: %v (exit %v), want a non-zero exit; output:\n%s", err, cmd.ProcessState, out)
	}
	want := "is in use by process " + strconv.Itoa(first.cmd.Process.Pid)
	if !strings.Contains(string(out), want) || strings.Contains(string(out), "listening on") {
		t.Errorf("second serve said:\n%s\nwant %q and no listening line", out, want)
	}
	first.must(200, "GET", "/readyz", nil, nil)
}
