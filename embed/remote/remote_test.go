package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contextd/contextd/embed/remote"
	"github.com/contextd/contextd/rag"
)

// fakeOpenAI is an OpenAI-compatible /v1/embeddings server.
type fakeOpenAI struct {
	dim   int
	mode  atomic.Value // "ok" | "count" | "dim" | "500" | "slow"
	calls atomic.Int32
	sizes chan int
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bearer sk-test" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "test-embed" {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	if f.sizes != nil {
		f.sizes <- len(req.Input)
	}
	mode, _ := f.mode.Load().(string)
	switch mode {
	case "500":
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":{"message":"boom"}}`))
		return
	case "slow":
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second): // far beyond the 300 ms timeout
		}
		return
	}
	n, dim := len(req.Input), f.dim
	if mode == "count" {
		n--
	}
	if mode == "dim" {
		dim++
	}
	type item struct {
		Object    string    `json:"object"`
		Embedding []float32 `json:"embedding"`
		Index     int       `json:"index"`
	}
	resp := struct {
		Object string `json:"object"`
		Data   []item `json:"data"`
		Model  string `json:"model"`
	}{Object: "list", Model: req.Model}
	h := rag.NewHashingEmbedder(dim)
	for i := 0; i < n; i++ {
		resp.Data = append(resp.Data, item{Object: "embedding", Embedding: h.Embed(req.Input[i]), Index: i})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func TestOpenAIEmbedderThroughLangchaingo(t *testing.T) {
	fake := &fakeOpenAI{dim: 16}
	fake.mode.Store("ok")
	srv := httptest.NewServer(fake)
	defer srv.Close()
	emb, err := remote.NewOpenAI(remote.Options{Model: "test-embed", BaseURL: srv.URL + "/v1", APIKey: "sk-test",
		Dimensions: 16, Timeout: 300 * time.Millisecond, BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	texts := []string{"alpha\nbeta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	fake.sizes = make(chan int, 10)
	vecs, err := emb.EmbedDocuments(ctx, texts)
	if err != nil {
		t.Fatalf("good reply: %v", err)
	}
	close(fake.sizes)
	var sizes []int
	for s := range fake.sizes {
		sizes = append(sizes, s)
	}
	fake.sizes = nil
	if len(vecs) != len(texts) || len(sizes) != 3 || sizes[0] != 3 || sizes[2] != 1 {
		t.Fatalf("got %d vectors in batches %v, want 7 in [3 3 1]", len(vecs), sizes)
	}
	if texts[0] != "alpha\nbeta" {
		t.Error("caller's slice was modified")
	}
	want := rag.NewHashingEmbedder(16).Embed("gamma")
	if rag.Cosine(vecs[1], want) < 0.9999 {
		t.Error("vectors out of order or altered")
	}
	q, err := emb.EmbedQuery(ctx, "gamma")
	if err != nil || len(q) != 16 {
		t.Fatalf("EmbedQuery: %d %v", len(q), err)
	}

	for _, mode := range []string{"count", "dim", "500", "slow"} {
		t.Run(mode, func(t *testing.T) {
			fake.mode.Store(mode)
			start := time.Now()
			_, err := emb.EmbedDocuments(ctx, []string{"a", "b"})
			if !errors.Is(err, rag.ErrEmbedder) {
				t.Errorf("EmbedDocuments: %v, want ErrEmbedder", err)
			}
			if mode != "count" { // one text cannot come back as "one less"
				if _, err := emb.EmbedQuery(ctx, "a"); !errors.Is(err, rag.ErrEmbedder) {
					t.Errorf("EmbedQuery: %v, want ErrEmbedder", err)
				}
			}
			// Two calls of a 300 ms timeout; without it the first alone
			// takes 10 s. The margin is for a loaded machine.
			if mode == "slow" && time.Since(start) > 8*time.Second {
				t.Errorf("timeout not applied: %v", time.Since(start))
			}
		})
	}
	fake.mode.Store("ok")
	if _, err := emb.EmbedDocuments(ctx, []string{"recovered"}); err != nil {
		t.Errorf("after recovery: %v", err)
	}
}

func TestNew(t *testing.T) {
	if _, _, err := remote.New(context.Background(), "word2vec", remote.Options{}); err == nil {
		t.Error("unknown provider accepted")
	}
	if _, _, err := remote.New(context.Background(), "ollama", remote.Options{BaseURL: "::not a url"}); err == nil {
		t.Error("bad ollama URL accepted")
	}
	if _, dim, err := remote.New(context.Background(), "ollama", remote.Options{Model: "nomic-embed-text"}); err != nil || dim != 768 {
		t.Errorf("known model: %d %v, want 768", dim, err)
	}
	// Unknown model size: probed once.
	fake := &fakeOpenAI{dim: 24}
	fake.mode.Store("ok")
	srv := httptest.NewServer(fake)
	defer srv.Close()
	e, dim, err := remote.New(context.Background(), "openai", remote.Options{Model: "test-embed", BaseURL: srv.URL + "/v1",
		APIKey: "sk-test", Timeout: time.Second})
	if err != nil || dim != 24 || fake.calls.Load() != 1 {
		t.Fatalf("probe: dim %d calls %d err %v", dim, fake.calls.Load(), err)
	}
	if d := e.Dimensions(); d != 24 {
		t.Errorf("Dimensions() = %d", d)
	}
	// A configured dimension the server does not honour is caught.
	e, _, err = remote.New(context.Background(), "openai", remote.Options{Model: "test-embed", BaseURL: srv.URL + "/v1",
		APIKey: "sk-test", Dimensions: 32, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.EmbedQuery(context.Background(), "x"); !errors.Is(err, rag.ErrEmbedder) {
		t.Errorf("dimension mismatch not caught: %v", err)
	}
}
