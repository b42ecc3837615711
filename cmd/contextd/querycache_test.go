package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/contextd/contextd/config"
)

// With a remote embedder, a repeated query is embedded once: the second
// /v1/context answers from the query cache, and /metrics counts the hit.
func TestRepeatedQueryHitsTheEmbeddingCache(t *testing.T) {
	var mu sync.Mutex
	inputs := map[string]int{}
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		type item struct {
			Embedding []float32 `json:"embedding"`
			Index     int       `json:"index"`
		}
		out := struct {
			Data []item `json:"data"`
		}{}
		mu.Lock()
		for i, s := range req.Input {
			inputs[s]++
			v := make([]float32, 8)
			v[len(s)%8] = 1
			out.Data = append(out.Data, item{v, i})
		}
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(out)
	}))
	defer fake.Close()
	_, srv := newApp(t, func(c *config.Config) {
		c.Embedder = config.Embedder{Provider: "openai", Model: "test-embed", BaseURL: fake.URL + "/v1", Dimensions: 8, Timeout: 5e9, BatchSize: 16}
	})
	call(t, "POST", srv.URL+"/v1/chats/c/messages", "", `{"messages":[{"role":"user","content":"we booked Casa Amora"}]}`)
	q := `{"chat_id":"c","query":"which hotel did we book?","strategy":"rag_augmented"}`
	for range 3 {
		if code, body := call(t, "POST", srv.URL+"/v1/context", "", q); code != 200 {
			t.Fatalf("context: %d %s", code, body)
		}
	}
	mu.Lock()
	n := inputs["which hotel did we book?"]
	mu.Unlock()
	if n != 1 {
		t.Fatalf("the query was embedded %d times, want once", n)
	}
	_, metrics := call(t, "GET", srv.URL+"/metrics", "", "")
	if !strings.Contains(metrics, `contextd_query_embedding_cache_total{result="hit"} 2`) ||
		!strings.Contains(metrics, `contextd_query_embedding_cache_total{result="miss"} 1`) {
		t.Errorf("cache metrics missing or wrong:\n%s", grepLines(metrics, "query_embedding"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
