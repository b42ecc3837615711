package mcpserver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/transport/api"
)

// The official TypeScript MCP SDK (pinned in testdata/tsclient, installed
// with npm ci) connects over streamable HTTP with a bearer key, lists the
// tools, calls each and checks an error case. Without Node it skips
// locally and fails in CI.
func TestTypeScriptSDKClient(t *testing.T) {
	node, err := exec.LookPath("node")
	npm, err2 := exec.LookPath("npm")
	if err != nil || err2 != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node and npm are required in CI for the TypeScript MCP SDK test")
		}
		t.Skip("node/npm not installed: skipping the TypeScript MCP SDK test")
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", "tsclient"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci: %v\n%s", err, out)
		}
	}
	url := newServer(t, []api.APIKey{{Key: "ts-key-0123456789", Tenant: "ts"}}, true)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs", url, "ts-key-0123456789")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ALL OK") {
		t.Fatalf("TypeScript SDK client: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
