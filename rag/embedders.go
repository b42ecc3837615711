package rag

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/contextd/contextd/config"
	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
)

// Sentinels the engine maps to `degraded` reasons; match with errors.Is.
var (
	// ErrEmbedder: the embedder failed, timed out or answered malformed
	// (wrong count or dimension). Reported as embedder_unavailable.
	ErrEmbedder = errors.New("embedder unavailable")
	// ErrIndexUnavailable: the vector index failed. Reported as
	// vector_store_unavailable.
	ErrIndexUnavailable = errors.New("vector index unavailable")
)

// Dimensioner is implemented by embedders that know their vector size.
type Dimensioner interface {
	Dimensions() int
}

// RemoteOptions configure a remote embedder.
type RemoteOptions struct {
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
	DefaultEmbedBatchSize = 64
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

// Guarded wraps an embedder so a bad remote cannot corrupt the index: each
// call gets a deadline, texts go in batches of BatchSize, and an answer with
// the wrong number of vectors, a wrong dimension or non-finite values is an
// error wrapping ErrEmbedder (so the indexer leaves the turns in its
// backlog). Every error it returns wraps ErrEmbedder.
type Guarded struct {
	Inner Embedder
	// Dim is the expected dimension; 0 = not checked (NewEmbedder always
	// sets it). Not changed after construction, so Guarded is safe for
	// concurrent use.
	Dim       int
	Timeout   time.Duration // per call; 0 = none
	BatchSize int           // 0 = everything in one call
	// Name appears in errors ("openai", "ollama").
	Name string
}

// Dimensions returns the expected vector size (0 while unknown).
func (g *Guarded) Dimensions() int { return g.Dim }

// EmbedDocuments embeds texts in batches, checking every answer.
func (g *Guarded) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	bs := g.BatchSize
	if bs <= 0 {
		bs = len(texts)
	}
	for start := 0; start < len(texts); start += bs {
		end := min(start+bs, len(texts))
		// A copy: langchaingo rewrites newlines in the slice it is given.
		batch := append([]string(nil), texts[start:end]...)
		vecs, err := g.call(ctx, func(ctx context.Context) ([][]float32, error) {
			return g.Inner.EmbedDocuments(ctx, batch)
		})
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(batch) {
			return nil, fmt.Errorf("%w: %s returned %d vectors for %d texts", ErrEmbedder, g.name(), len(vecs), len(batch))
		}
		for i, v := range vecs {
			if err := g.check(v); err != nil {
				return nil, fmt.Errorf("%w (text %d)", err, start+i)
			}
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// EmbedQuery embeds one text, checking the answer.
func (g *Guarded) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vecs, err := g.call(ctx, func(ctx context.Context) ([][]float32, error) {
		v, err := g.Inner.EmbedQuery(ctx, text)
		return [][]float32{v}, err
	})
	if err != nil {
		return nil, err
	}
	if err := g.check(vecs[0]); err != nil {
		return nil, err
	}
	return vecs[0], nil
}

func (g *Guarded) name() string {
	if g.Name != "" {
		return g.Name
	}
	return "embedder"
}

// call runs f under the per-call deadline and turns panics (a client
// indexing an empty answer) and errors into ErrEmbedder.
func (g *Guarded) call(ctx context.Context, f func(context.Context) ([][]float32, error)) (vecs [][]float32, err error) {
	if g.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.Timeout)
		defer cancel()
	}
	defer func() {
		if r := recover(); r != nil {
			vecs, err = nil, fmt.Errorf("%w: %s: malformed answer (%v)", ErrEmbedder, g.name(), r)
		}
	}()
	vecs, err = f(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %s: %w (timeout %s)", ErrEmbedder, g.name(), ctx.Err(), g.Timeout)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrEmbedder, g.name(), err)
	}
	return vecs, nil
}

func (g *Guarded) check(v []float32) error {
	if len(v) == 0 {
		return fmt.Errorf("%w: %s returned an empty vector", ErrEmbedder, g.name())
	}
	if g.Dim > 0 && len(v) != g.Dim {
		return fmt.Errorf("%w: %s returned a %d-dimensional vector, expected %d (check embedder.dimensions and the model)",
			ErrEmbedder, g.name(), len(v), g.Dim)
	}
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%w: %s returned a non-finite value", ErrEmbedder, g.name())
		}
	}
	return nil
}

func (o RemoteOptions) withDefaults(model string) RemoteOptions {
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

// NewOpenAIEmbedder returns a guarded embedder for any OpenAI-compatible
// /v1/embeddings endpoint (OpenAI, Azure-style proxies, vLLM, LM Studio,
// LiteLLM, ...) through langchaingo's openai client. BaseURL includes the
// /v1 suffix (default https://api.openai.com/v1). An empty APIKey is fine for
// local servers. "dimensions" is sent to the server only for the
// text-embedding-3 models, which support shortening.
func NewOpenAIEmbedder(o RemoteOptions) (*Guarded, error) {
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
	return &Guarded{Inner: emb, Dim: o.Dimensions, Timeout: o.Timeout, BatchSize: o.BatchSize, Name: "openai"}, nil
}

// NewOllamaEmbedder returns a guarded embedder for an Ollama server
// (/api/embed) through langchaingo's ollama client. BaseURL defaults to
// http://127.0.0.1:11434 (or $OLLAMA_HOST).
func NewOllamaEmbedder(o RemoteOptions) (*Guarded, error) {
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
	return &Guarded{Inner: emb, Dim: o.Dimensions, Timeout: o.Timeout, BatchSize: o.BatchSize, Name: "ollama"}, nil
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

// NewEmbedder builds the configured embedder and returns it with its vector
// size (the index is opened with that size). Providers: "hashing" (the
// default; Dimensions default 384), "openai", "ollama". A remote model whose
// size is neither configured nor in KnownDimensions is asked once, within
// the timeout, with a probe text.
func NewEmbedder(c config.Embedder) (Embedder, int, error) {
	ro := RemoteOptions{Model: c.Model, BaseURL: c.BaseURL, APIKey: c.APIKey,
		Dimensions: c.Dimensions, Timeout: c.Timeout, BatchSize: c.BatchSize}
	var g *Guarded
	var err error
	switch strings.ToLower(c.Provider) {
	case "", "hashing":
		h := NewHashingEmbedder(c.Dimensions)
		return h, h.Dimensions(), nil
	case "openai":
		g, err = NewOpenAIEmbedder(ro)
	case "ollama":
		g, err = NewOllamaEmbedder(ro)
	default:
		return nil, 0, fmt.Errorf("embedder: unknown provider %q (want hashing, openai or ollama)", c.Provider)
	}
	if err != nil {
		return nil, 0, err
	}
	if g.Dim == 0 {
		v, err := g.EmbedQuery(context.Background(), "dimension probe")
		if err != nil {
			return nil, 0, fmt.Errorf("embedder: the size of model %q is unknown and asking it failed; set embedder.dimensions: %w", c.Model, err)
		}
		g.Dim = len(v)
	}
	return g, g.Dim, nil
}
