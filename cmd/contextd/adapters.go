package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/llms"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/derive/llmsum"
	"github.com/contextd/contextd/embed/remote"
	"github.com/contextd/contextd/index/qdrant"
	"github.com/contextd/contextd/rag"
)

// The adapters from agents.yaml sections to each backend's own options:
// only the composition root reads the config.

// newEmbedder builds the configured embedder and returns it with its vector
// size. Providers: "hashing" (the default; 384 dimensions unless set),
// "openai", "ollama".
func newEmbedder(ctx context.Context, c config.Embedder) (rag.Embedder, int, error) {
	switch strings.ToLower(c.Provider) {
	case "", "hashing":
		h := rag.NewHashingEmbedder(c.Dimensions)
		return h, h.Dimensions(), nil
	case "openai", "ollama":
		g, dim, err := remote.New(ctx, c.Provider, remote.Options{Model: c.Model, BaseURL: c.BaseURL, APIKey: c.APIKey,
			Dimensions: c.Dimensions, Timeout: c.Timeout, BatchSize: c.BatchSize})
		if err != nil {
			return nil, 0, err
		}
		return g, dim, nil
	}
	return nil, 0, fmt.Errorf("embedder: unknown provider %q (want hashing, openai or ollama)", c.Provider)
}

// qdrantConfig maps the vector.qdrant section of agents.yaml.
func qdrantConfig(c config.Qdrant, collection string, dim int) qdrant.Config {
	return qdrant.Config{Addr: c.Addr, APIKey: c.APIKey, TLS: c.TLS, Timeout: c.Timeout, Collection: collection, Dim: dim}
}

// newLLM builds the configured model; nil, nil when no LLM is configured.
func newLLM(c config.LLM, modelOverride string) (llms.Model, error) {
	return llmsum.NewModel(llmsum.ModelOptions{Provider: c.Provider, Model: c.Model, BaseURL: c.BaseURL, APIKey: c.APIKey}, modelOverride)
}
