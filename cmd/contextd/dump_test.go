package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/internal/pgtest"
	"github.com/contextd/contextd/memory"
)

// smallChats makes the worker close episodes and summaries after few turns.
func smallChats(c *config.Config) {
	c.Supervisor.Memory.SummaryRecentTurns = 2
	c.Supervisor.Memory.SummaryTriggerTurns = 1
	c.Supervisor.Memory.EpisodeMinTurns = 1
	c.Supervisor.Memory.EpisodeMaxTurns = 3
}

func getRaw(t *testing.T, url string) (int, string, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// fillAnn gives user ann two chats on app: "trip", summarised by the
// worker (episodes, a summary chain, her profile), and "notes", with facts
// and a deleted turn.
func fillAnn(t *testing.T, app *App, url string) {
	t.Helper()
	ctx := context.Background()
	trip := []string{"I am planning a trip to Lisbon in May.", "We booked the Casa Amora hotel in Alfama.",
		"I prefer window seats on flights.", "My sister Ana joins us on the 12th.", "We want a day trip to Sintra.",
		"Dinner at a vegetarian place near the hotel.", "The flight lands at 9am.", "Remind me to buy tram tickets."}
	for i, line := range trip {
		body := fmt.Sprintf(`{"user_id":"ann","messages":[{"id":"t-%d","role":"user","content":%q,"created_at":"2024-04-0%dT10:00:00Z","metadata":{"i":%d}},{"id":"a-%d","role":"assistant","content":"Noted: %s"}]}`,
			i, line, 1+i%9, i, i, strings.ToLower(line[:20]))
		if code, b := call(t, "POST", url+"/v1/chats/trip/messages", "", body); code != 201 {
			t.Fatalf("append: %d %s", code, b)
		}
	}
	if err := app.Worker.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Profiler.Pass(ctx, true); err != nil {
		t.Fatal(err)
	}
	if code, b := call(t, "POST", url+"/v1/chats/notes/messages", "", `{"user_id":"ann","messages":[
		{"id":"n-1","role":"user","content":"My passport expires in June."},
		{"id":"n-2","role":"user","content":"My card PIN is 4321."},
		{"id":"n-3","role":"user","content":"I switched to green tea."}]}`); code != 201 {
		t.Fatalf("append notes: %d %s", code, b)
	}
	key := memory.ChatKey{Tenant: memory.DefaultTenant, ChatID: "notes"}
	if _, err := app.Store.(memory.MessageDeleter).DeleteMessage(ctx, key, "n-2"); err != nil {
		t.Fatal(err)
	}
	ep := memory.Episode{FromSeq: 1, ToSeq: 3, StartedAt: time.Unix(100, 0), EndedAt: time.Unix(200, 0), Short: "Ann's notes.",
		Facts: []memory.Fact{{Text: "Ann's passport expires in June", Seqs: []int64{1}, Kind: memory.FactEvent, Source: memory.FactSourceExtractive},
			{Text: "Ann drinks green tea", Seqs: []int64{3}, Kind: memory.FactPreference, Source: memory.FactSourceExtractive}}}
	if _, err := app.Store.(memory.EpisodeStore).CloseEpisodes(ctx, key, 0, []memory.Episode{ep}); err != nil {
		t.Fatal(err)
	}
	// The episode was closed over a deleted turn: it is rebuilt without it
	// before anything of it may leave in a dump.
	if err := app.Worker.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ { // turns, then episodes
		if _, err := app.Indexer.DrainOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// storeJSON is everything the store holds of a chat, as the API shows it.
func storeJSON(t *testing.T, s memory.Core, chatID string) string {
	t.Helper()
	ctx, k := context.Background(), memory.ChatKey{Tenant: memory.DefaultTenant, ChatID: chatID}
	msgs, err1 := s.Messages(ctx, k, 0, 0)
	chain, err2 := s.SummaryChain(ctx, k)
	eps, err3 := s.(memory.EpisodeStore).Episodes(ctx, k, memory.EpisodeQuery{})
	facts, err4 := s.(memory.FactStore).Facts(ctx, k, memory.FactQuery{IncludeSuperseded: true})
	prof, _, err5 := s.(memory.ProfileStore).Profile(ctx, memory.DefaultTenant, "ann")
	for _, err := range []error{err1, err2, err3, err4, err5} {
		if err != nil {
			t.Fatal(err)
		}
	}
	b, _ := json.Marshal(map[string]any{"messages": msgs, "chain": chain, "episodes": eps, "facts": facts, "profile": prof})
	return string(b)
}

// A user's chats exported from the embedded store over HTTP and imported
// into PostgreSQL hold the same messages, summaries, episodes, facts and
// profile, and give the same /v1/context answer once the index is rebuilt
// from the store; importing again adds nothing.
func TestExportSQLiteImportPostgres(t *testing.T) {
	ctx := context.Background()
	src, srcURL := newApp(t, smallChats)
	fillAnn(t, src, srcURL.URL)

	code, ctype, dump := getRaw(t, srcURL.URL+"/v1/users/ann/export")
	if code != 200 || ctype != "application/x-ndjson" {
		t.Fatalf("export: %d %s %s", code, ctype, dump)
	}
	for _, want := range []string{`"type":"chat"`, `"type":"summary_record"`, `"type":"episode"`, `"type":"fact"`, `"type":"profile"`, `"deleted":true`} {
		if !strings.Contains(dump, want) {
			t.Errorf("the dump has no %s", want)
		}
	}
	if strings.Contains(dump, "PIN is 4321") { // the digits alone turn up in ids and times
		t.Error("the dump holds a deleted turn's text")
	}
	for _, path := range []string{"/v1/chats/nope/export", "/v1/users/nobody/export"} {
		if code, _, body := getRaw(t, srcURL.URL+path); code != 404 || !strings.Contains(body, `"not_found"`) {
			t.Errorf("GET %s: %d %s, want 404 in the error shape", path, code, body)
		}
	}
	code, _, chatDump := getRaw(t, srcURL.URL+"/v1/chats/trip/export")
	if code != 200 || strings.Contains(chatDump, `"chat_id":"notes"`) || strings.Contains(chatDump, `"type":"profile"`) {
		t.Errorf("chat export: %d, holds another chat or the profile", code)
	}

	dst, dstURL := newApp(t, func(c *config.Config) {
		smallChats(c)
		c.Storage.Driver, c.Storage.PostgresDSN = "postgres", pgtest.DSN(t)
	})
	res, err := dst.Service.Import(ctx, strings.NewReader(dump))
	if err != nil || res.Added != strings.Count(dump, "\n") || res.Present != 0 || res.Dropped != 0 {
		t.Fatalf("import: %+v, %v; the dump has %d lines", res, err, strings.Count(dump, "\n"))
	}
	for i := 0; i < 3; i++ {
		if _, err := dst.Indexer.DrainOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, chat := range []string{"trip", "notes"} {
		if got, want := storeJSON(t, dst.Store, chat), storeJSON(t, src.Store, chat); got != want {
			t.Errorf("chat %s in postgres:\n%s\nin sqlite:\n%s", chat, got, want)
		}
	}
	query := `{"chat_id":"trip","user_id":"ann","strategy":"rag_augmented","query":"Which hotel did we book in Lisbon?","budget_tokens":400}`
	_, want := call(t, "POST", srcURL.URL+"/v1/context", "", query)
	code, got := call(t, "POST", dstURL.URL+"/v1/context", "", query)
	if code != 200 || got != want {
		t.Errorf("context from postgres (%d):\n%s\nfrom sqlite:\n%s", code, got, want)
	}
	if !strings.Contains(want, "Casa Amora") {
		t.Errorf("the context does not retrieve the hotel: %s", want)
	}
	res, err = dst.Service.Import(ctx, strings.NewReader(dump))
	if err != nil || res.Added != 0 || res.Present != strings.Count(dump, "\n") {
		t.Errorf("second import: %+v, %v", res, err)
	}
}

// The commands: export of one chat to a file, import into another store,
// a malformed line stops the import with its number and leaves that line
// out, a second import adds nothing.
func TestExportImportCommands(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfgFile := func(name string) string {
		p := filepath.Join(dir, name+".yaml")
		body := fmt.Sprintf("storage:\n  driver: sqlite\n  sqlite_path: %s\nvector:\n  driver: none\n", filepath.Join(dir, name+".db"))
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	srcCfg, dstCfg := cfgFile("src"), cfgFile("dst")
	src, srv := newApp(t, func(c *config.Config) { c.Storage.SQLitePath = filepath.Join(dir, "src.db") })
	if code, b := call(t, "POST", srv.URL+"/v1/chats/c1/messages", "", `{"user_id":"u","messages":[{"id":"m1","role":"user","content":"one"},{"id":"m2","role":"user","content":"two"}]}`); code != 201 {
		t.Fatalf("append: %d %s", code, b)
	}
	src.Close()
	var out bytes.Buffer
	if err := run(ctx, []string{"export", "--config", srcCfg, "--chat", "c1"}, os.Getenv, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("export of c1: %d lines, want the chat and 2 messages:\n%s", len(lines), out.String())
	}
	if err := run(ctx, []string{"export", "--config", srcCfg, "--chat", "nope"}, os.Getenv, io.Discard); err == nil || !strings.Contains(err.Error(), "no such chat") {
		t.Errorf("export of an unknown chat: %v", err)
	}
	if err := run(ctx, []string{"export", "--chat", "a", "--user", "b"}, os.Getenv, io.Discard); exitCode(err) != 2 {
		t.Errorf("--chat with --user: %v, want a usage error", err)
	}

	bad := lines[0] + "\n" + lines[1] + "\n" + strings.Replace(lines[2], `"seq":2`, `"seq":"two"`, 1) + "\n"
	file := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	err := cmdImport(ctx, []string{"--config", dstCfg, "--file", file}, os.Getenv, nil, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "seq") {
		t.Fatalf("import of a malformed line 3: %v", err)
	}
	if got := sqlCount(t, filepath.Join(dir, "dst.db"), "messages", "1=1"); got != 0 {
		t.Errorf("after the failed import the store holds %d messages, want none: a bad line refuses the whole import", got)
	}
	var msg bytes.Buffer
	if err := cmdImport(ctx, []string{"--config", dstCfg}, os.Getenv, strings.NewReader(out.String()), &msg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg.String(), "imported 3 records (0 already present") {
		t.Errorf("import after the fix: %q", msg.String())
	}
	msg.Reset()
	if err := cmdImport(ctx, []string{"--config", dstCfg}, os.Getenv, strings.NewReader(out.String()), &msg); err != nil || !strings.Contains(msg.String(), "imported 0 records (3 already present") {
		t.Errorf("second import: %q %v", msg.String(), err)
	}
}

// The export command leaves out what waits for a rebuild, as the API's
// export does: a summary that may hold a just-deleted turn is not
// written to a dump. And it refuses to export nothing as if all were well:
// a missing database file (not created) or an empty tenant is an error.
func TestExportCommandAsTheAPI(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "src.db")
	cfg := filepath.Join(dir, "src.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("storage:\n  driver: sqlite\n  sqlite_path: %s\nvector:\n  driver: none\n", db)), 0o600); err != nil {
		t.Fatal(err)
	}
	app, srv := newApp(t, func(c *config.Config) { c.Storage.SQLitePath = db })
	var msgs []string
	for i := range 12 {
		msgs = append(msgs, fmt.Sprintf(`{"id":"m%d","role":"user","content":"turn %d about the Zanzibar trip"}`, i, i))
	}
	if code, b := call(t, "POST", srv.URL+"/v1/chats/c1/messages", "", `{"messages":[`+strings.Join(msgs, ",")+`]}`); code != 201 {
		t.Fatalf("append: %d %s", code, b)
	}
	if code, b := call(t, "POST", srv.URL+"/v1/chats/c1/summary/refresh", "", ""); code != 200 {
		t.Fatalf("refresh: %d %s", code, b)
	}
	export := func() (string, error) {
		var out bytes.Buffer
		err := run(ctx, []string{"export", "--config", cfg, "--chat", "c1"}, os.Getenv, &out)
		return out.String(), err
	}
	if out, err := export(); err != nil || !strings.Contains(out, `"type":"summary_record"`) {
		t.Fatalf("before the delete the dump has no summary record (the test cannot fail): %v\n%s", err, out)
	}
	if code, b := call(t, "DELETE", srv.URL+"/v1/chats/c1/messages/m3", "", ""); code != 200 && code != 204 {
		t.Fatalf("delete: %d %s", code, b)
	}
	app.Close() // no worker rebuilt the summary
	if out, err := export(); err != nil || strings.Contains(out, `"type":"summary_record"`) {
		t.Errorf("the dump of a chat waiting for its rebuild holds its summary (%v):\n%s", err, out)
	}

	missing := filepath.Join(dir, "elsewhere", "none.db")
	mcfg := filepath.Join(dir, "missing.yaml")
	if err := os.WriteFile(mcfg, []byte("storage:\n  sqlite_path: "+missing+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"export", "--config", mcfg}, os.Getenv, io.Discard); err == nil || !strings.Contains(err.Error(), "no database") {
		t.Errorf("export from a missing database file: %v", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("the export created the missing database file")
	}
	if err := run(ctx, []string{"export", "--config", cfg, "--tenant", "nosuch"}, os.Getenv, io.Discard); err == nil || !strings.Contains(err.Error(), "holds nothing") {
		t.Errorf("export of an empty tenant: %v", err)
	}
}
