package main

import (
	"context"
	"testing"
	"time"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/rag"
)

func TestNewEmbedder(t *testing.T) {
	ctx := context.Background()
	e, dim, err := newEmbedder(ctx, config.Embedder{})
	if err != nil || dim != 384 {
		t.Fatalf("default: %d %v", dim, err)
	}
	if _, ok := e.(*rag.HashingEmbedder); !ok {
		t.Errorf("default provider is %T, want *HashingEmbedder", e)
	}
	if _, dim, _ := newEmbedder(ctx, config.Embedder{Provider: "hashing", Dimensions: 64}); dim != 64 {
		t.Errorf("hashing dim %d, want 64", dim)
	}
	if _, _, err := newEmbedder(ctx, config.Embedder{Provider: "word2vec"}); err == nil {
		t.Error("unknown provider accepted")
	}
	if _, dim, err := newEmbedder(ctx, config.Embedder{Provider: "ollama", Model: "nomic-embed-text"}); err != nil || dim != 768 {
		t.Errorf("known model: %d %v, want 768", dim, err)
	}
}

func TestQdrantConfig(t *testing.T) {
	got := qdrantConfig(config.Qdrant{Addr: "q:6334", APIKey: "k", TLS: true, Timeout: 3 * time.Second}, "__memory__", 384)
	if got.Addr != "q:6334" || got.APIKey != "k" || !got.TLS || got.Timeout != 3*time.Second || got.Collection != "__memory__" || got.Dim != 384 {
		t.Errorf("qdrantConfig = %+v", got)
	}
}
