// Package remote builds rag.Embedders for remote embedding services
// (OpenAI-compatible and Ollama) through langchaingo, each wrapped in a
// rag.Guarded so that a bad answer can never corrupt the index.
package remote

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/contextd/contextd/rag"
)

// Options configure a remote embedder.
type Options struct {
	Model   string
	BaseURL string
	APIKey  string
	// Dimensions is the expected vector size; 0 = the model's known size
	// (see KnownDimensions), else learned from the first answer.
	Dimensions int
	// Timeout bounds each call (one batch); default 10s.
	Timeout time.Duration
	// BatchSize caps the texts sent in one call; default 64.
	BatchSize int
}

// Defaults for remote embedders.
const (
	DefaultEmbedTimeout   = 10 * time.Second
	DefaultEmbedBatchSize = rag.DefaultEmbedBatch
	DefaultOpenAIModel    = "text-embedding-3-small"
	DefaultOllamaModel    = "nomic-embed-text"
)

// KnownDimensions lists the vector sizes of common embedding models, so the
// index can be opened without asking the model first.
var KnownDimensions = map[string]int{
	"text-embedding-3-small": 1536,
	"text-embedding-3-large": 3072,
	"text-embedding-ada-002": 1536,
	"nomic-embed-text":       768,
	"mxbai-embed-large":      1024,
	"all-minilm":             384,
	"bge-m3":                 1024,
	"snowflake-arctic-embed": 1024,
}

func (o Options) withDefaults(model string) Options {
	if o.Model == "" {
		o.Model = model
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultEmbedTimeout
	}
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultEmbedBatchSize
	}
	if o.Dimensions <= 0 {
		o.Dimensions = KnownDimensions[o.Model]
	}
	return o
}

// NewOpenAI returns a guarded embedder for any OpenAI-compatible
// /v1/embeddings endpoint (OpenAI, Azure-style proxies, vLLM, LM Studio,
// LiteLLM, ...) through langchaingo's openai client. BaseURL includes the
// /v1 suffix (default https://api.openai.com/v1). An empty APIKey is fine for
// local servers. "dimensions" is sent to the server only for the
// text-embedding-3 models, which support shortening.
func NewOpenAI(o Options) (*rag.Guarded, error) {
	o = o.withDefaults(DefaultOpenAIModel)
	key := o.APIKey
	if key == "" {
		key = "unused" // langchaingo insists on a token; local servers ignore it
	}
	opts := []openai.Option{
		openai.WithToken(key),
		openai.WithEmbeddingModel(o.Model),
		openai.WithModel(o.Model),
		openai.WithHTTPClient(&http.Client{Timeout: o.Timeout + time.Second}),
	}
	if o.BaseURL != "" {
		if _, err := parseHTTPURL(o.BaseURL); err != nil {
			return nil, fmt.Errorf("openai embedder: %w", err)
		}
		opts = append(opts, openai.WithBaseURL(o.BaseURL))
	}
	if o.Dimensions > 0 && strings.HasPrefix(o.Model, "text-embedding-3") {
		opts = append(opts, openai.WithEmbeddingDimensions(o.Dimensions))
	}
	llm, err := openai.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("openai embedder: %w", err)
	}
	// Batching is ours (Guarded); keep newlines, they carry structure.
	emb, err := embeddings.NewEmbedder(llm, embeddings.WithBatchSize(o.BatchSize), embeddings.WithStripNewLines(false))
	if err != nil {
		return nil, fmt.Errorf("openai embedder: %w", err)
	}
	return &rag.Guarded{Inner: emb, Dim: o.Dimensions, Timeout: o.Timeout, BatchSize: o.BatchSize, Name: "openai"}, nil
}

// NewOllama returns a guarded embedder for an Ollama server
// (/api/embed) through langchaingo's ollama client. BaseURL defaults to
// http://127.0.0.1:11434 (or $OLLAMA_HOST).
func NewOllama(o Options) (*rag.Guarded, error) {
	o = o.withDefaults(DefaultOllamaModel)
	opts := []ollama.Option{
		ollama.WithModel(o.Model),
		ollama.WithHTTPClient(&http.Client{Timeout: o.Timeout + time.Second}),
	}
	if o.BaseURL != "" {
		// ollama.WithServerURL calls log.Fatal on a bad URL: check first.
		if _, err := parseHTTPURL(o.BaseURL); err != nil {
			return nil, fmt.Errorf("ollama embedder: %w", err)
		}
		opts = append(opts, ollama.WithServerURL(o.BaseURL))
	}
	llm, err := ollama.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("ollama embedder: %w", err)
	}
	emb, err := embeddings.NewEmbedder(llm, embeddings.WithBatchSize(o.BatchSize), embeddings.WithStripNewLines(false))
	if err != nil {
		return nil, fmt.Errorf("ollama embedder: %w", err)
	}
	return &rag.Guarded{Inner: emb, Dim: o.Dimensions, Timeout: o.Timeout, BatchSize: o.BatchSize, Name: "ollama"}, nil
}

func parseHTTPURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("bad base_url %q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("bad base_url %q: want http(s)://host[:port][/path]", raw)
	}
	return u, nil
}

// New builds the remote embedder of provider "openai" or "ollama" and
// returns it with its vector size (the index is opened with that size). A
// model whose size is neither configured nor in KnownDimensions is asked
// once, within the timeout, with a probe text.
func New(ctx context.Context, provider string, o Options) (*rag.Guarded, int, error) {
	var g *rag.Guarded
	var err error
	switch strings.ToLower(provider) {
	case "openai":
		g, err = NewOpenAI(o)
	case "ollama":
		g, err = NewOllama(o)
	default:
		return nil, 0, fmt.Errorf("embedder: unknown remote provider %q (want openai or ollama)", provider)
	}
	if err != nil {
		return nil, 0, err
	}
	if g.Dim == 0 {
		v, err := g.EmbedQuery(ctx, "dimension probe")
		if err != nil {
			return nil, 0, fmt.Errorf("embedder: the size of model %q is unknown and asking it failed; set embedder.dimensions: %w", o.Model, err)
		}
		g.Dim = len(v)
	}
	return g, g.Dim, nil
}
