package config

import (
	"time"

	"github.com/contextd/contextd/derive/llmsum"
	"github.com/contextd/contextd/embed/remote"
	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/filters"
	"github.com/contextd/contextd/index/qdrant"
	"github.com/contextd/contextd/internal/walscrub"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
	"github.com/contextd/contextd/telemetry"
	"github.com/contextd/contextd/transport/api"
	"github.com/contextd/contextd/transport/mcpserver"
)

// Default values, as documented on the types in config.go. A setting that a
// component reads has its one home in that component (its exported
// Default*, as pebble's EnsureDefaults or Prometheus's DefaultOptions keep
// theirs); config refers to it. The settings no component defaults itself
// (where to listen, where the files go) live here. A test in cmd/contextd
// holds every field of Default() to its home.
const (
	DefaultAddr                    = "127.0.0.1:8080"
	DefaultBodyLimit               = api.DefaultBodyLimit
	DefaultBodyBudget              = 64 << 20
	DefaultRequestTimeout          = 30 * time.Second
	DefaultLogLevel                = "info"
	DefaultMaxMessagesPerRequest   = engine.DefaultMaxMessagesPerRequest
	DefaultMaxMessageBytes         = engine.DefaultMaxMessageBytes
	DefaultSQLitePath              = "./data/contextd.db"
	DefaultWALTruncateDelay        = walscrub.DefaultDelay
	DefaultVectorPath              = "./data/vectors.db"
	DefaultQdrantAddr              = qdrant.DefaultAddr
	DefaultQdrantTimeout           = qdrant.DefaultTimeout
	DefaultHashingDimensions       = rag.DefaultHashingDimensions
	DefaultEmbedderTimeout         = remote.DefaultEmbedTimeout
	DefaultEmbedderBatchSize       = remote.DefaultEmbedBatchSize
	DefaultLLMTimeout              = llmsum.DefaultTimeout
	DefaultOTLPProtocol            = telemetry.ProtocolHTTP
	DefaultSampleRatio             = 1.0
	DefaultMCPSessionTimeout       = mcpserver.DefaultSessionTimeout
	DefaultMCPMaxSessions          = mcpserver.DefaultMaxSessions
	DefaultMCPMaxSessionsPerClient = mcpserver.DefaultMaxSessionsPerClient
	// DefaultUISessionsPerTenant bounds a tenant's inspector logins.
	DefaultUISessionsPerTenant = 100
	// DefaultTenant is the tenant of an API key that names none, and of
	// every request when auth is off.
	DefaultTenant = memory.DefaultTenant
)

// Default returns the built-in configuration: SQLite under ./data/, the
// embedded vector index, the offline hashing embedder, no LLM (extractive
// summaries), auth off. It is what `contextd serve` runs on without a file.
func Default() *Config {
	return &Config{
		Server: Server{
			Addr:                  DefaultAddr,
			BodyLimit:             DefaultBodyLimit,
			BodyBudget:            DefaultBodyBudget,
			RequestTimeout:        DefaultRequestTimeout,
			LogLevel:              DefaultLogLevel,
			MaxMessagesPerRequest: DefaultMaxMessagesPerRequest,
			MaxMessageBytes:       DefaultMaxMessageBytes,
			MCP: MCP{Enabled: true, SessionTimeout: DefaultMCPSessionTimeout,
				MaxSessions: DefaultMCPMaxSessions, MaxSessionsPerClient: DefaultMCPMaxSessionsPerClient},
			UI: UI{Enabled: true, SessionsPerTenant: DefaultUISessionsPerTenant},
		},
		Storage: Storage{Driver: "sqlite", SQLitePath: DefaultSQLitePath, WALTruncateDelay: DefaultWALTruncateDelay},
		Vector: Vector{
			Driver:       "embedded",
			EmbeddedPath: DefaultVectorPath,
			Qdrant:       Qdrant{Addr: DefaultQdrantAddr, Timeout: DefaultQdrantTimeout},
		},
		Embedder: Embedder{
			Provider:   "hashing",
			Dimensions: DefaultHashingDimensions,
			Timeout:    DefaultEmbedderTimeout,
			BatchSize:  DefaultEmbedderBatchSize,
		},
		LLM:       LLM{Provider: "none", Timeout: DefaultLLMTimeout},
		Telemetry: Telemetry{OTLPProtocol: DefaultOTLPProtocol, SampleRatio: DefaultSampleRatio},
		Supervisor: Supervisor{
			Memory:  DefaultMemory(),
			Filters: Filters{Preset: "supervisor", ToolMessages: filters.ToolKeep},
		},
	}
}

// DefaultMemory is supervisor.memory when nothing is set: each value is
// the named default of the component that reads it (memorySettings).
func DefaultMemory() Memory {
	var m Memory
	for _, s := range memorySettings {
		s.setDefault(&m)
	}
	return m
}
