package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/internal/pgtest"
	"github.com/contextd/contextd/memory"
)

// An import takes what the API takes: a bad line names its number and
// nothing of the dump is stored, on SQLite and Postgres.
func TestImportIsAsStrictAsTheAPI(t *testing.T) {
	const chat = `{"type":"chat","tenant":"default","chat_id":"c","user_id":"u","agent":"default","last_seq":2,"created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-01T00:00:00Z","summary_cursor":0,"summary_dirty":false}`
	msg := func(seq int, extra string) string {
		return fmt.Sprintf(`{"type":"message","tenant":"default","chat_id":"c","id":"m%d","seq":%d,"role":"user","name":"","created_at":"2024-01-01T00:00:00Z","metadata":{}%s}`, seq, seq, extra)
	}
	good := msg(1, `,"content":"hello"`)
	cases := []struct{ name, line, want string }{
		{"tombstone with content", msg(2, `,"content":"TOMBSECRET my pin","deleted":true`), "tombstone"},
		{"empty content", msg(2, `,"content":"  "`), "empty"},
		{"message too large", msg(2, `,"content":"`+strings.Repeat("a", 300<<10)+`"`), "max_message_bytes"},
		{"created_at in year 1", strings.Replace(msg(2, `,"content":"hi"`), "2024-01-01T00:00:00Z", "0001-01-01T00:00:00Z", 1), "created_at"},
		{"summary 5..2", `{"type":"summary_record","tenant":"default","chat_id":"c","id":"00000000-0000-4000-8000-000000000001","parent_id":null,"depth":0,"from_seq":5,"to_seq":2,"covered_from_seq":1,"covered_to_seq":2,"token_count":3,"narrative":"x","created_at":"2024-01-01T00:00:00Z"}`, "from_seq"},
		{"negative last_seq", `{"type":"chat","tenant":"default","chat_id":"d","user_id":"u","agent":"default","last_seq":-4}`, "last_seq"},
	}
	stores := map[string]func(t *testing.T, dir string) string{
		"sqlite": func(_ *testing.T, dir string) string {
			return fmt.Sprintf("storage:\n  driver: sqlite\n  sqlite_path: %s\nvector:\n  driver: none\n", filepath.Join(dir, "c.db"))
		},
		"postgres": func(t *testing.T, _ string) string {
			return fmt.Sprintf("storage:\n  driver: postgres\n  postgres_dsn: %q\nvector:\n  driver: none\n", pgtest.DSN(t))
		},
	}
	for name, storage := range stores {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "agents.yaml")
			if err := os.WriteFile(cfg, []byte(storage(t, dir)), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, c := range cases {
				dump := chat + "\n" + good + "\n" + c.line + "\n"
				err := cmdImport(context.Background(), []string{"--config", cfg}, os.Getenv, strings.NewReader(dump), &strings.Builder{})
				if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%s: %v, want an error naming line 3 and %q", c.name, err, c.want)
				}
			}
			if n := storedChats(t, cfg); n != 0 {
				t.Errorf("after the refused imports the store holds %d chats, want none", n)
			}
		})
	}
}

// storedChats counts the chats of the store cfg names.
func storedChats(t *testing.T, cfg string) int {
	t.Helper()
	_, store, err := configuredStore(context.Background(), cfg, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rows, err := store.ListChats(context.Background(), memory.ChatQuery{Tenant: memory.DefaultTenant, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

// An older dump imported after a delete does not bring the deleted turn
// back: not its facts, its profile items or a summary that holds it.
func TestReimportAfterDeleteThroughBinary(t *testing.T) {
	const secret = "REIMPSECRET77"
	s := startBinary(t, forgetConfig(sqliteStorage, ""))
	turns := projectTurns(12)
	turns[0]["content"] = "Remember this: my secret codeword is " + secret + "."
	s.must(201, "POST", "/v1/chats/f1/messages", map[string]any{"user_id": "ann", "messages": turns}, nil)
	settled(t, s, "f1", 12)
	var old string
	waitFor(t, 60*time.Second, "a fact and a profile in the export", func() bool {
		old = string(s.must(200, "GET", "/v1/users/ann/export", nil, nil))
		return strings.Contains(old, `"type":"fact"`) && strings.Contains(old, `"type":"profile"`)
	})
	old = withSecretDerived(t, old, secret)
	s.must(204, "DELETE", "/v1/chats/f1/messages/m001", nil, nil)
	waitFor(t, 60*time.Second, "the summary rebuilt", func() bool { return summaryServed(t, s) })
	s.stop()

	var out strings.Builder
	if err := cmdImport(context.Background(), []string{"--config", filepath.Join(s.dir, "agents.yaml")}, os.Getenv, strings.NewReader(old), &out); err != nil {
		t.Fatal(err)
	}
	t.Logf("import: %s", out.String())
	if !strings.Contains(out.String(), "dropped") || strings.Contains(out.String(), " 0 dropped") {
		t.Errorf("the import dropped nothing: %s", out.String())
	}
	s = s.restart()
	waitFor(t, 60*time.Second, "the summary rebuilt", func() bool { return summaryServed(t, s) })
	for what, req := range map[string][3]string{
		"context": {"POST", "/v1/context", `{"chat_id":"f1","query":"What is my secret codeword?","budget_tokens":4000}`},
		"export":  {"GET", "/v1/users/ann/export", ""},
		"profile": {"GET", "/v1/users/ann/profile", ""},
		"facts":   {"GET", "/v1/chats/f1/facts", ""},
	} {
		_, raw := call(t, req[0], s.base+req[1], "", req[2])
		if strings.Contains(raw, secret) {
			t.Errorf("after the import %s serves the deleted turn: %s", what, raw)
		}
	}
}

// withSecretDerived is the dump with what a model would have derived from
// turn 1 of f1, which says secret: a fact citing it and a profile item
// sourced from it.
func withSecretDerived(t *testing.T, dump, secret string) string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(dump), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		switch rec["type"] {
		case "fact":
			rec["id"], rec["text"], rec["seqs"], rec["superseded_by"] = "f-secret", "Ann's secret codeword is "+secret+".", []int{1}, nil
			b, _ := json.Marshal(rec)
			out = append(out, string(b))
		case "profile":
			prefs, _ := rec["user_preferences"].([]any)
			rec["user_preferences"] = append(prefs, map[string]any{"id": "p-secret", "text": "Ann's codeword is " + secret,
				"sources": []any{map[string]any{"chat_id": "f1", "from_seq": 1, "to_seq": 1}}, "confirmed": "2024-03-01T09:00:00Z"})
			b, _ := json.Marshal(rec)
			l = string(b)
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n"
}

// summaryServed: the chat's summary is served (not withheld for a rebuild).
func summaryServed(t *testing.T, s *binServer) bool {
	var sum summaryAnswer
	s.must(200, "GET", "/v1/chats/f1/summary", nil, &sum)
	return sum.Summary != nil
}
