package main

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/contextd/contextd/rag"
)

// hookEmbedder runs hook once, inside the first EmbedDocuments: what a
// request does while the indexer is embedding turns it read.
type hookEmbedder struct {
	rag.Embedder
	once sync.Once
	hook func()
}

func (h *hookEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	h.once.Do(h.hook)
	return h.Embedder.EmbedDocuments(ctx, texts)
}

// A turn deleted, or a chat erased and created again under its id, while
// the indexer embeds what it read, is never served afterwards; the new
// chat's turns are found.
func TestIndexerRacesWithForget(t *testing.T) {
	for _, tc := range []struct {
		name, during string
		gone, found  string
	}{
		{"turn deleted", "DELETE /v1/chats/c/messages/secret", "card pin 4417", "gardening tomatoes"},
		{"chat erased and created again", "DELETE /v1/chats/c", "card pin 4417", "hello again zebra"},
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
				`{"id":"secret","role":"user","content":"my card pin is 4417"},{"role":"user","content":"gardening tomatoes need sun"}]}`, 201)
			app.Indexer.Embedder = &hookEmbedder{Embedder: app.Indexer.Embedder, hook: func() {
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
			for range 3 { // the drains a busy indexer would run
				if _, err := app.Indexer.DrainOnce(ctx); err != nil {
					t.Fatal(err)
				}
			}
			search := func(q string) string {
				st, b := call(t, "POST", srv.URL+"/v1/search", "", `{"chat_id":"c","query":"`+q+`","k":20}`)
				if st != 200 {
					t.Fatalf("search: %d %s", st, b)
				}
				return b
			}
			if b := search(tc.gone); strings.Contains(b, "4417") {
				t.Errorf("the forgotten turn is served: %s", b)
			}
			if b := search(tc.found); !strings.Contains(b, tc.found) {
				t.Errorf("a live turn of the chat is not found: %s", b)
			}
			if st, b := call(t, "POST", srv.URL+"/v1/context", "", `{"chat_id":"c","query":"card pin","strategy":"rag_augmented"}`); st != 200 || strings.Contains(b, "4417") {
				t.Errorf("context: %d, forgotten text served: %v", st, strings.Contains(b, "4417"))
			}
		})
	}
}
