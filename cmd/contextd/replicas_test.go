//go:build unix

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/internal/pgtest"
)

// A second contextd on the same Postgres database with an embedded vector
// index refuses to start, and says why: its index would miss the turns the
// first one indexed (the marks are shared) and keep serving the vectors of
// turns the first one deleted. Once the first stops, it starts.
func TestSecondEmbeddedIndexOnOnePostgresRefused(t *testing.T) {
	cfg := `server:
  addr: "127.0.0.1:0"
` + postgresStorage(pgtest.DSN(t)) + `
vector:
  driver: embedded
  embedded_path: "%DATA%/vectors.db"
`
	a := startBinary(t, cfg)

	dir := t.TempDir()
	file := filepath.Join(dir, "agents.yaml")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(cfg, "%DATA%", dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, contextdBinary(t), "serve", "--config", file)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "CONTEXTD_ADDR=127.0.0.1:0")
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil || !strings.Contains(string(out), "keeps its own embedded vector index") ||
		!strings.Contains(string(out), "vector.driver: qdrant") {
		t.Fatalf("a second replica with its own embedded index: %v\n%s", err, tail(string(out), 2000))
	}

	a.stop()
	b := startBinary(t, cfg) // the lock went with the first process
	b.must(200, "GET", "/healthz", nil, nil)
}
