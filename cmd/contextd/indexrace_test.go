package main

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/rag"
)

// hookEmbedder runs hook once, inside the first EmbedDocuments whose
// texts match: what a request does while the indexer is embedding what it
// read.
type hookEmbedder struct {
	rag.Embedder
	match func(texts []string) bool // nil: the first call
	once  sync.Once
	hook  func()
}

func (h *hookEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if h.match == nil || h.match(texts) {
		h.once.Do(h.hook)
	}
	return h.Embedder.EmbedDocuments(ctx, texts)
}

// factsOnly matches a batch of facts (dated "2006-01-02: …"), not turns.
func factsOnly(texts []string) bool {
	for _, t := range texts {
		if len(t) < 12 || t[4] != '-' || t[10] != ':' {
			return false
		}
	}
	return len(texts) > 0
}

// A turn deleted, or a chat erased and created again under its id, while
// the indexer embeds what it read, is never served afterwards; the new
// chat's turns are found.
func TestIndexerRacesWithForget(t *testing.T) {
	for _, tc := range []struct {
		name, during string
		gone, found  string
		match        func([]string) bool
	}{
		{"turn deleted", "DELETE /v1/chats/c/messages/secret", "card pin 4417", "gardening tomatoes", nil},
		{"chat erased and created again", "DELETE /v1/chats/c", "card pin 4417", "hello again zebra", nil},
		{"turn deleted while its facts embed", "DELETE /v1/chats/c/messages/secret", "card pin 4417", "gardening tomatoes", factsOnly},
		{"chat erased while its facts embed", "DELETE /v1/chats/c", "card pin 4417", "hello again zebra", factsOnly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app, srv := newApp(t, nil)
			must := func(method, path, body string, want ...int) {
				t.Helper()
				st, b := call(t, method, srv.URL+path, "", body)
				for _, w := range want {
					if st == w {
						return
					}
				}
				t.Fatalf("%s %s: %d %s", method, path, st, b)
			}
			must("POST", "/v1/chats/c/messages", `{"user_id":"u","messages":[{"role":"user","content":"gardening tomatoes in the spring"},`+
				`{"id":"secret","role":"user","content":"my card pin is 4417 and I live in Berlin near the Spree river"},{"role":"user","content":"gardening tomatoes need sun"}]}`, 201)
			fired := false
			app.Indexer.Embedder = &hookEmbedder{Embedder: app.Indexer.Embedder, match: tc.match, hook: func() {
				fired = true
				method, path, _ := strings.Cut(tc.during, " ")
				must(method, path, "", 204)
				// The rebuild finishes before the indexer writes: the chat is
				// clean again, and its hits are no longer checked.
				if _, err := app.Worker.Rebuild(context.Background()); err != nil {
					t.Error(err)
				}
				if strings.HasSuffix(path, "/chats/c") {
					must("POST", "/v1/chats/c/messages", `{"user_id":"u","messages":[{"role":"user","content":"hello again zebra"}]}`, 201)
				}
			}}
			ctx := context.Background()
			if _, err := app.Arrivals.DrainOnce(ctx); err != nil { // the facts the indexer embeds
				t.Fatal(err)
			}
			for range 3 { // the drains a busy indexer would run
				if _, err := app.Indexer.DrainOnce(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if !fired {
				t.Fatal("nothing was deleted while the indexer embedded: the test cannot fail")
			}
			search := func(q string) string {
				st, b := call(t, "POST", srv.URL+"/v1/search", "", `{"chat_id":"c","query":"`+q+`","k":20}`)
				if st != 200 {
					t.Fatalf("search: %d %s", st, b)
				}
				return b
			}
			if b := search(tc.gone); servesPIN(b) {
				t.Errorf("the forgotten turn is served: %s", b)
			}
			if b := search("Berlin Spree river"); strings.Contains(b, "Berlin") {
				t.Errorf("a fact of the forgotten turn is served: %s", b)
			}
			if b := search(tc.found); !strings.Contains(b, tc.found) {
				t.Errorf("a live turn of the chat is not found: %s", b)
			}
			if st, b := call(t, "POST", srv.URL+"/v1/context", "", `{"chat_id":"c","query":"card pin","strategy":"rag_augmented"}`); st != 200 || servesPIN(b) {
				t.Errorf("context: %d, forgotten text served: %v", st, servesPIN(b))
			}
		})
	}
}

// An episode rebuilt (a turn of it deleted) while the indexer embeds its
// old text is not served with that text afterwards.
func TestEpisodeIndexerRacesWithRebuild(t *testing.T) {
	app, srv := newApp(t, func(c *config.Config) {
		m := &c.Supervisor.Memory
		m.SummaryRecentTurns, m.SummaryTriggerTurns, m.EpisodeMinTurns, m.EpisodeMaxTurns = 2, 1, 3, 4
	})
	ctx := context.Background()
	msgs := []string{`{"role":"user","content":"we planned the garden beds today"}`, `{"role":"assistant","content":"noted the garden beds plan"}`,
		`{"id":"secret","role":"user","content":"my card pin is 4417, the garden shed code"}`, `{"role":"assistant","content":"noted the shed code"}`}
	for i := range 8 {
		msgs = append(msgs, `{"role":"user","content":"more about tomatoes `+strings.Repeat("x", i)+`"}`)
	}
	if st, b := call(t, "POST", srv.URL+"/v1/chats/c/messages", "", `{"user_id":"u","messages":[`+strings.Join(msgs, ",")+`]}`); st != 201 {
		t.Fatalf("append: %d %s", st, b)
	}
	if _, err := app.Indexer.DrainOnce(ctx); err != nil { // the turns and facts
		t.Fatal(err)
	}
	if err := app.Worker.Drain(ctx); err != nil { // episodes close
		t.Fatal(err)
	}
	fired := false
	app.Indexer.Embedder = &hookEmbedder{Embedder: app.Indexer.Embedder,
		match: func(texts []string) bool { return strings.Contains(strings.Join(texts, " "), "4417") },
		hook: func() {
			fired = true
			if st, b := call(t, "DELETE", srv.URL+"/v1/chats/c/messages/secret", "", ""); st != 204 {
				t.Errorf("delete: %d %s", st, b)
			}
			if _, err := app.Worker.Rebuild(ctx); err != nil {
				t.Error(err)
			}
		}}
	for range 3 {
		if _, err := app.Indexer.DrainOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !fired {
		t.Fatal("no episode text with the turn was embedded: the test cannot fail")
	}
	st, b := call(t, "POST", srv.URL+"/v1/search", "", `{"chat_id":"c","query":"card pin 4417 shed code","k":20}`)
	if st != 200 || servesPIN(b) {
		t.Errorf("search after the rebuild: %d, the deleted turn's text served: %s", st, b)
	}
}

// servesPIN: an answer's body holds the forgotten PIN, 4417, in its text.
// Its timestamps are left out first: "16:00:44.344171Z" holds "4417" too.
func servesPIN(body string) bool {
	return strings.Contains(timestamps.ReplaceAllString(body, ""), "4417")
}

var timestamps = regexp.MustCompile(`\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:\d\d)`)
