package llmsum

import (
	"context"
	"fmt"
	"net/http"

	"github.com/tmc/langchaingo/httputil"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/googleai"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
)

// ModelOptions name an LLM endpoint (the llm section of agents.yaml).
type ModelOptions struct {
	Provider string // none | openai | ollama | anthropic | googleai
	Model    string
	BaseURL  string
	APIKey   string
}

// NewModel builds the langchaingo model for the configured provider.
// modelOverride ("" = c.Model) is memory.summary_model. Provider "none" (or
// empty) returns nil, nil: no LLM, the caller uses the extractive summarizer.
// Building a model does not contact the provider. The openai and ollama
// models ask for the summarizer's replies in their JSON schema (see
// schemaTransport); googleai gets JSON mode, anthropic JSON by prompt.
func NewModel(c ModelOptions, modelOverride string) (llms.Model, error) {
	model := c.Model
	if modelOverride != "" {
		model = modelOverride
	}
	switch c.Provider {
	case "", "none":
		return nil, nil
	case "openai":
		// Any OpenAI-compatible server (vLLM, LM Studio, llama.cpp, ...):
		// many need no key, but the client insists on one.
		token := c.APIKey
		if token == "" {
			token = "unused"
		}
		opts := []openai.Option{openai.WithToken(token),
			openai.WithHTTPClient(&http.Client{Transport: newSchemaTransport(httputil.DefaultTransport, openAISchema)})}
		if model != "" {
			opts = append(opts, openai.WithModel(model))
		}
		if c.BaseURL != "" {
			opts = append(opts, openai.WithBaseURL(c.BaseURL))
		}
		m, err := openai.New(opts...)
		if err != nil {
			return nil, fmt.Errorf("llm openai: %w", err)
		}
		return m, nil
	case "ollama":
		opts := []ollama.Option{
			ollama.WithHTTPClient(&http.Client{Transport: newSchemaTransport(httputil.DefaultTransport, ollamaSchema)})}
		if model != "" {
			opts = append(opts, ollama.WithModel(model))
		}
		if c.BaseURL != "" {
			opts = append(opts, ollama.WithServerURL(c.BaseURL))
		}
		m, err := ollama.New(opts...)
		if err != nil {
			return nil, fmt.Errorf("llm ollama: %w", err)
		}
		return m, nil
	case "anthropic":
		opts := []anthropic.Option{anthropic.WithToken(c.APIKey)}
		if model != "" {
			opts = append(opts, anthropic.WithModel(model))
		}
		if c.BaseURL != "" {
			opts = append(opts, anthropic.WithBaseURL(c.BaseURL))
		}
		m, err := anthropic.New(opts...)
		if err != nil {
			return nil, fmt.Errorf("llm anthropic: %w", err)
		}
		return m, nil
	case "googleai":
		var opts []googleai.Option
		if c.APIKey != "" {
			opts = append(opts, googleai.WithAPIKey(c.APIKey))
		}
		if model != "" {
			opts = append(opts, googleai.WithDefaultModel(model))
		}
		m, err := googleai.New(context.Background(), opts...)
		if err != nil {
			return nil, fmt.Errorf("llm googleai: %w", err)
		}
		return m, nil
	}
	return nil, fmt.Errorf("llm: unknown provider %q", c.Provider)
}
