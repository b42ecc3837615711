package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// What a delete or an erase removes leaves every file of the data
// directory — the WALs of the store and of the embedded index included —
// while the server runs (storage.wal_truncate_delay after the erase) and
// after a kill -9 and a restart (the WALs are truncated at start).
func TestForgottenTextLeavesTheFilesThroughBinary(t *testing.T) {
	cfg := func(delay string) string {
		return forgetConfig(sqliteStorage+"\n  wal_truncate_delay: "+delay, "")
	}
	s := startBinary(t, cfg("200ms"))

	// While the server runs: one turn deleted, one chat erased.
	turns := projectTurns(48)
	turns[secretSeq-1]["content"] = diagnosis
	s.must(201, "POST", "/v1/chats/f1/messages", map[string]any{"user_id": "ann", "messages": turns}, nil)
	eraseMe(t, s, "e1", "eve", "Quokka")
	settled(t, s, "f1", 48)
	s.must(204, "DELETE", "/v1/chats/f1/messages/m015", nil, nil)
	s.must(204, "DELETE", "/v1/chats/e1", nil, nil)
	waitFor(t, 60*time.Second, "the rebuild", func() bool { return rebuilt(t, s) })
	waitFor(t, 60*time.Second, "the deleted text to leave every file", func() bool {
		return len(filesHolding(t, s.dir, forgetSecret, "Quokka")) == 0
	})

	// A kill -9 before the WALs are truncated: the restart truncates them.
	writeConfig(t, s.dir, cfg("1h"))
	s.stop()
	s = s.restart()
	s.must(201, "POST", "/v1/chats/f1/messages", map[string]any{"messages": []map[string]any{
		{"id": "m049", "role": "user", "content": "My locker code is Axolotl-5521, remember it."}}}, nil)
	eraseMe(t, s, "e2", "nina", "Narwhal")
	settled(t, s, "f1", 49)
	s.must(204, "DELETE", "/v1/chats/f1/messages/m049", nil, nil)
	s.must(204, "DELETE", "/v1/users/nina", nil, nil)
	waitFor(t, 60*time.Second, "the rebuild", func() bool { return rebuilt(t, s) })
	// Not asserted: a WAL that wrapped may have overwritten the frames.
	t.Logf("before the kill, with the truncation an hour away, the text is in %v", filesHolding(t, s.dir, "Axolotl", "Narwhal"))
	s.kill()
	s = s.restart()
	if where := filesHolding(t, s.dir, "Axolotl", "Narwhal", forgetSecret, "Quokka"); len(where) != 0 {
		t.Errorf("after a kill -9 and a restart the deleted text is still in %v", where)
	}
	var ms struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	s.must(200, "GET", "/v1/chats/f1/messages?limit=1000", nil, &ms)
	if len(ms.Messages) != 49 || ms.Messages[0].Content != turns[0]["content"] {
		t.Errorf("after the restart the chat holds %d turns, the first %q", len(ms.Messages), ms.Messages[0].Content)
	}
}

// eraseMe stores a chat of user whose every turn names secret, and waits
// until a search finds it (the index holds it too).
func eraseMe(t *testing.T, s *binServer, chat, user, secret string) {
	t.Helper()
	var msgs []map[string]any
	for i := range 12 {
		msgs = append(msgs, map[string]any{"role": "user", "content": fmt.Sprintf("The %s vault code is %d, keep it safe.", secret, 7700+i)})
	}
	s.must(201, "POST", "/v1/chats/"+chat+"/messages", map[string]any{"user_id": user, "messages": msgs}, nil)
	waitFor(t, 60*time.Second, "the chat indexed", func() bool {
		_, raw := s.do("POST", "/v1/search", map[string]any{"query": secret + " vault code", "chat_id": chat, "k": 5}, nil)
		return strings.Contains(string(raw), secret)
	})
}

// filesHolding lists the files under dir (read as they are, while the
// server may be writing them) that hold any of the texts, in any case.
func filesHolding(t *testing.T, dir string, texts ...string) []string {
	t.Helper()
	var where []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			if os.IsNotExist(err) { // a WAL removed meanwhile
				return nil
			}
			return err
		}
		b = bytes.ToLower(b)
		for _, text := range texts {
			if bytes.Contains(b, []byte(strings.ToLower(text))) {
				where = append(where, fmt.Sprintf("%s (%s)", filepath.Base(path), text))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return where
}

// writeConfig replaces the config of the server's directory (read at its
// next start).
func writeConfig(t *testing.T, dir, cfgYAML string) {
	t.Helper()
	b := bytes.ReplaceAll([]byte(cfgYAML), []byte("%DATA%"), []byte(dir))
	if err := os.WriteFile(filepath.Join(dir, "agents.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
