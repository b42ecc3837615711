package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// startServe runs `contextd serve` through run() and returns its base URL
// and a stop function that cancels (as SIGTERM does) and waits.
func startServe(t *testing.T, args []string, env map[string]string) (string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	getenv := func(k string) string { return env[k] }
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve"}, args...), getenv, pw)
		pw.Close()
	}()
	urlRe := regexp.MustCompile(`listening on (http://\S+)`)
	lines := bufio.NewScanner(pr)
	found := make(chan string, 1)
	go func() {
		for lines.Scan() {
			if m := urlRe.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case u := <-found:
		return u, func() error { cancel(); return <-done }
	case err := <-done:
		cancel()
		t.Fatalf("serve exited early: %v", err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("serve did not print its address")
	}
	return "", nil
}

func post(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func TestServeEmbeddedDefaultEndToEnd(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // no agents.yaml here: built-in defaults, data under ./data
	base, stop := startServe(t, nil, map[string]string{"CONTEXTD_ADDR": "127.0.0.1:0"})

	status, m := post(t, base+"/v1/chats/demo/messages", `{"user_id":"alice","messages":[
		{"id":"1","role":"user","content":"My project is called Bluebird and it ships on Friday."},
		{"id":"2","role":"assistant","content":"Noted: Bluebird ships Friday."}]}`)
	if status != 201 || m["appended"].(float64) != 2 {
		t.Fatalf("append: %d %v", status, m)
	}
	status, m = post(t, base+"/v1/context", `{"chat_id":"demo","query":"when does Bluebird ship?","strategy":"rag_augmented"}`)
	if status != 200 || !strings.Contains(m["context"].(string), "Bluebird") {
		t.Fatalf("context: %d %v", status, m)
	}
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var ready map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&ready)
	resp.Body.Close()
	if resp.StatusCode != 200 || ready["storage"] != "ok" || ready["vector"] != "ok" || ready["llm"] != "disabled" {
		t.Fatalf("readyz: %d %v", resp.StatusCode, ready)
	}
	if err := stop(); err != nil {
		t.Fatalf("graceful stop returned %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "contextd.db")); err != nil {
		t.Fatalf("embedded store not under ./data: %v", err)
	}

	// Restart on the same data: turns survive.
	base, stop = startServe(t, nil, map[string]string{"CONTEXTD_ADDR": "127.0.0.1:0"})
	defer stop()
	resp, err = http.Get(base + "/v1/chats/demo/messages")
	if err != nil {
		t.Fatal(err)
	}
	var list map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if msgs, _ := list["messages"].([]any); len(msgs) != 2 {
		t.Fatalf("after restart: %v", list)
	}
}

func TestBadConfigExitsWithOneLineReason(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("server:\n  addr: \":0\"\n  bogus: 1\nsupervisor:\n  memory:\n    rag_k: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"serve", "--config", bad}, func(string) string { return "" }, io.Discard)
	if err == nil {
		t.Fatal("serve accepted a bad config")
	}
	if msg := oneLine(err); strings.Contains(msg, "\n") || !strings.Contains(msg, "bad.yaml") {
		t.Errorf("exit message %q should be one line naming the file", msg)
	}
	var out strings.Builder
	if err := run(context.Background(), []string{"check-config", "--config", bad}, func(string) string { return "" }, &out); err == nil {
		t.Fatal("check-config accepted a bad config")
	}
	if !strings.Contains(out.String(), ":3:") || !strings.Contains(out.String(), "bogus") || !strings.Contains(out.String(), "rag_k") {
		t.Errorf("check-config should list every problem with its line:\n%s", out.String())
	}
}

func TestCheckConfigRepoExample(t *testing.T) {
	var out strings.Builder
	err := run(context.Background(), []string{"check-config", "--config", "../../agents.yaml"}, func(string) string { return "" }, &out)
	if err != nil || !strings.Contains(out.String(), "ok") {
		t.Fatalf("repo agents.yaml: %v\n%s", err, out.String())
	}
}

func TestUnknownCommand(t *testing.T) {
	err := run(context.Background(), []string{"frobnicate"}, func(string) string { return "" }, io.Discard)
	if err == nil || exitCode(err) != 2 {
		t.Fatalf("err = %v", err)
	}
}

// TestBadExtendEveryFailsAtStartup: summary_extend_every_episodes out of
// 1..1000 stops serve before it listens, naming the key.
func TestBadExtendEveryFailsAtStartup(t *testing.T) {
	for _, v := range []string{"0", "-2", "1001", "often"} {
		bad := filepath.Join(t.TempDir(), "bad.yaml")
		cfg := "server:\n  addr: \"127.0.0.1:0\"\nagents:\n  - name: crew\n    memory:\n      summary_extend_every_episodes: " + v + "\n"
		if err := os.WriteFile(bad, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		err := run(context.Background(), []string{"serve", "--config", bad}, func(string) string { return "" }, io.Discard)
		if err == nil || !strings.Contains(oneLine(err), "summary_extend_every_episodes") {
			t.Errorf("summary_extend_every_episodes: %s: serve returned %v", v, err)
		}
	}
}
