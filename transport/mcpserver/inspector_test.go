package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The official MCP Inspector CLI (pinned in testdata/inspector, installed
// with npm ci) is a generic client: it fills each --tool-arg in from the
// tool's input schema, so it only works when the schemas use plain JSON
// types. It drives every tool of the real contextd binary (CONTEXTD_BIN, or
// built here), with typed arguments and a bearer key. Without Node it
// skips locally and fails in CI.
func TestInspectorCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the MCP Inspector CLI test")
	}
	dir := npmInstalled(t, "inspector", filepath.Join("@modelcontextprotocol", "inspector"))
	const key = "inspector-key-0123456789"
	url := startBinary(t, "server:\n  auth:\n    api_keys: [{key: "+key+", tenant: insp}]\n  mcp: {allow_delete: true}\n"+
		"supervisor:\n  memory: {summary_recent_turns: 2, summary_trigger_turns: 2, episode_min_turns: 2, episode_max_turns: 4}\n")
	insp := inspector{t: t, dir: dir, url: url + "/mcp", key: key}

	list := insp.run("--method", "tools/list")
	for _, want := range []string{"add_messages", "get_context", "search_memory", "get_summary", "get_user_profile", "delete_chat", "delete_message"} {
		if !strings.Contains(list, `"name": "`+want+`"`) {
			t.Fatalf("tools/list lacks %s:\n%s", want, list)
		}
	}
	turns := []string{"I am planning a trip to Lisbon in May.", "Lisbon in May is lovely: book early.",
		"I am vegetarian, by the way.", "Noted: vegetarian restaurants only.", "Which hotel did you book?",
		"Casa Amora, May 3 to 7."}
	var msgs []map[string]string
	for i, c := range turns {
		msgs = append(msgs, map[string]string{"id": fmt.Sprintf("m%d", i+1), "role": []string{"user", "assistant"}[i%2], "content": c})
	}
	b, _ := json.Marshal(msgs)
	add := insp.call("add_messages", "chat_id=trip", "user_id=alice", "messages="+string(b))
	if add.IsError || add.Structured["appended"] != float64(len(turns)) {
		t.Fatalf("add_messages: %+v", add)
	}
	ctx := insp.call("get_context", "chat_id=trip", "query=Which hotel?", "budget_tokens=500", "strategy=rag_augmented")
	usage, _ := ctx.Structured["usage"].(map[string]any)
	if ctx.IsError || !strings.Contains(ctx.Text, "Casa Amora") || usage["budget_tokens"] != float64(500) {
		t.Fatalf("get_context: %+v", ctx)
	}
	// Episodes close in the background: poll until one is searchable.
	var hits []any
	for deadline := time.Now().Add(30 * time.Second); len(hits) == 0 && time.Now().Before(deadline); {
		r := insp.call("search_memory", "query=Lisbon trip", "chat_id=trip", `kinds=["episode"]`, "k=5")
		if r.IsError {
			t.Fatalf("search_memory: %+v", r)
		}
		hits, _ = r.Structured["hits"].([]any)
		if d, ok := r.Structured["degraded"].([]any); !ok || len(d) != 0 {
			t.Fatalf("search_memory: degraded %#v, want [] (the Inspector's structured content)", r.Structured["degraded"])
		}
		for _, h := range hits {
			if h.(map[string]any)["kind"] != "episode" {
				t.Fatalf("kinds=[episode] returned %v", h)
			}
		}
	}
	if len(hits) == 0 {
		t.Fatal("no episode hit within 30s")
	}
	if r := insp.call("get_summary", "chat_id=trip"); r.IsError || r.Structured["episodes"] == nil {
		t.Fatalf("get_summary: %+v", r)
	}
	if r := insp.call("get_user_profile", "user_id=alice"); r.IsError || r.Structured["user_id"] != "alice" {
		t.Fatalf("get_user_profile: %+v", r)
	}
	var facts []any // facts are indexed in the background too
	for deadline := time.Now().Add(30 * time.Second); len(facts) == 0 && time.Now().Before(deadline); {
		r := insp.call("search_memory", "query=vegetarian", "chat_id=trip", `kinds=["fact"]`, "min_score=0.1")
		if r.IsError {
			t.Fatalf("search_memory for facts: %+v", r)
		}
		facts, _ = r.Structured["hits"].([]any)
	}
	if len(facts) == 0 || facts[0].(map[string]any)["kind"] != "fact" {
		t.Fatalf("no fact hit for vegetarian: %v", facts)
	}
	if r := insp.call("delete_message", "chat_id=trip", "message_id=m3"); r.IsError {
		t.Fatalf("delete_message: %+v", r)
	}
	insp.wantError(insp.call("delete_message", "chat_id=trip", "message_id=m3"), "not_found", "")
	insp.wantError(insp.call("get_context", "budget_tokens=500"), "missing_field", "chat_id")
	insp.wantError(insp.call("get_context", "chat_id=trip", "budget_tokens=0"), "invalid_value", "budget_tokens")
	insp.wantError(insp.call("add_messages", "chat_id=trip", `messages=[{"role":"robot","content":"x"}]`), "invalid_role", "messages[0].role")
	if r := insp.call("delete_chat", "chat_id=trip"); r.IsError {
		t.Fatalf("delete_chat: %+v", r)
	}
	insp.wantError(insp.call("get_context", "chat_id=trip"), "not_found", "")
}

type inspector struct {
	t             *testing.T
	dir, url, key string
}

type toolResult struct {
	Text       string
	IsError    bool
	Structured map[string]any
}

// run calls the CLI with a private catalog file (it keeps one in the home
// directory otherwise) and returns what it printed.
func (in inspector) run(args ...string) string {
	in.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args = append([]string{filepath.Join("node_modules", ".bin", "mcp-inspector"), "--cli", in.url, "--transport", "http",
		"--header", "Authorization: Bearer " + in.key}, args...)
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = in.dir
	cmd.Env = append(os.Environ(), "MCP_CATALOG_PATH="+filepath.Join(in.t.TempDir(), "mcp.json"), "BROWSER=none")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// A tool error is printed as a result and exits non-zero.
	if err != nil && !strings.Contains(string(out), `"isError": true`) {
		in.t.Fatalf("inspector %v: %v\n%s%s", args, err, out, stderr.String())
	}
	return string(out)
}

func (in inspector) call(tool string, args ...string) toolResult {
	in.t.Helper()
	cli := []string{"--method", "tools/call", "--tool-name", tool}
	for _, a := range args {
		cli = append(cli, "--tool-arg", a)
	}
	out := in.run(cli...)
	var r struct {
		Content []struct {
			Type, Text string
		} `json:"content"`
		IsError           bool           `json:"isError"`
		StructuredContent map[string]any `json:"structuredContent"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		in.t.Fatalf("inspector %s: not JSON: %v\n%s", tool, err, out)
	}
	res := toolResult{IsError: r.IsError, Structured: r.StructuredContent}
	for _, c := range r.Content {
		res.Text += c.Text
	}
	return res
}

func (in inspector) wantError(r toolResult, code, field string) {
	in.t.Helper()
	var e struct {
		Error struct{ Code, Field, Message string } `json:"error"`
	}
	if !r.IsError || json.Unmarshal([]byte(r.Text), &e) != nil || e.Error.Code != code || e.Error.Field != field || e.Error.Message == "" {
		in.t.Errorf("want tool error %s/%s, got %+v", code, field, r)
	}
}

// npmInstalled returns testdata/<name> with its pinned packages installed
// (npm ci, scripts off) when <pkg> is missing from node_modules.
func npmInstalled(t *testing.T, name, pkg string) string {
	t.Helper()
	_, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node and npm are required in CI")
		}
		t.Skip("node/npm not installed")
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", name))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg)); err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}
	return dir
}

// startBinary runs the real contextd (CONTEXTD_BIN, or built from
// ./cmd/contextd) on a free port with the given agents.yaml, in a
// temporary directory, and returns its base URL.
func startBinary(t *testing.T, config string) string {
	t.Helper()
	bin := os.Getenv("CONTEXTD_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "contextd")
		build := exec.Command("go", "build", "-o", bin, "./cmd/contextd")
		build.Dir = filepath.Join("..", "..")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	work := t.TempDir()
	cfg := filepath.Join(work, "agents.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "serve", "--config", cfg)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "CONTEXTD_ADDR="+addr)
	logf, _ := os.Create(filepath.Join(work, "contextd.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); logf.Close() })
	url := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if r, err := http.Get(url + "/healthz"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return url
			}
		}
	}
	log, _ := os.ReadFile(filepath.Join(work, "contextd.log"))
	t.Fatalf("contextd did not start:\n%s", log)
	return ""
}
