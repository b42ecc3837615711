// Package deps pins the modules the project builds on while packages are
// being written in parallel. Removed once every import is real.
package deps

import (
	_ "github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/labstack/echo/v4"
	_ "github.com/labstack/echo/v4/middleware"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/qdrant/go-client/qdrant"
	_ "github.com/tiktoken-go/tokenizer"
	_ "github.com/tmc/langchaingo/embeddings"
	_ "github.com/tmc/langchaingo/llms"
	_ "github.com/tmc/langchaingo/llms/anthropic"
	_ "github.com/tmc/langchaingo/llms/googleai"
	_ "github.com/tmc/langchaingo/llms/ollama"
	_ "github.com/tmc/langchaingo/llms/openai"
	_ "golang.org/x/time/rate"
	_ "google.golang.org/grpc"
	_ "google.golang.org/grpc/test/bufconn"
	_ "gopkg.in/yaml.v3"
	_ "modernc.org/sqlite"
)
