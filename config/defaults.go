package config

import (
	"time"

	"github.com/contextd/contextd/memory"
)

// Default values, as documented on the types in config.go.
const (
	DefaultAddr                  = "127.0.0.1:8080"
	DefaultBodyLimit             = 4 << 20
	DefaultBodyBudget            = 64 << 20
	DefaultRequestTimeout        = 30 * time.Second
	DefaultLogLevel              = "info"
	DefaultMaxMessagesPerRequest = 1000
	DefaultMaxMessageBytes       = 256 << 10
	DefaultSQLitePath            = "./data/contextd.db"
	DefaultWALTruncateDelay      = 5 * time.Second
	DefaultVectorPath            = "./data/vectors.db"
	DefaultQdrantAddr            = "localhost:6334"
	DefaultQdrantTimeout         = 5 * time.Second
	DefaultHashingDimensions     = 384
	DefaultEmbedderTimeout       = 10 * time.Second
	DefaultEmbedderBatchSize     = 64
	DefaultLLMTimeout            = 60 * time.Second
	DefaultOTLPProtocol          = "http/protobuf"
	DefaultSampleRatio           = 1.0
	// DefaultMCPSessionTimeout is mcpserver.DefaultSessionTimeout (a test
	// in transport/mcpserver keeps the two equal; config does not import the API).
	DefaultMCPSessionTimeout = 10 * time.Minute
	// DefaultMCPMaxSessions and DefaultMCPMaxSessionsPerClient are
	// mcpserver's DefaultMaxSessions and DefaultMaxSessionsPerClient (the
	// same test keeps them equal).
	DefaultMCPMaxSessions          = 1000
	DefaultMCPMaxSessionsPerClient = 100
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
			Filters: Filters{Preset: "supervisor", ToolMessages: "keep"},
		},
	}
}

// DefaultMemory is supervisor.memory when nothing is set.
func DefaultMemory() Memory {
	return Memory{
		Strategy:                   "running_summary",
		SummaryRecentTurns:         10,
		RecentFloorTurns:           4,
		StructuredOutput:           true,
		RAGFill:                    true,
		RAGMaxHits:                 400,
		PersistSummary:             true,
		RAGNamespace:               "__memory__",
		RAGK:                       5,
		RAGNeighbors:               1,
		RAGSimilarityThreshold:     0.5,
		RAGScope:                   "chat",
		StoreTurns:                 true,
		TruncationStrategy:         "middle",
		TruncationMaxChars:         1000,
		BudgetTokens:               4000,
		Tokenizer:                  "cl100k",
		UserProfile:                true,
		SummaryTriggerTurns:        10,
		SummaryTriggerTokens:       2000,
		SummaryCooldown:            30 * time.Second,
		SummaryMaxTokens:           800,
		Episodes:                   true,
		EpisodeMinTurns:            6,
		EpisodeMaxTurns:            40,
		EpisodeGap:                 2 * time.Hour,
		EpisodeOverlap:             2,
		SummaryExtendEveryEpisodes: 1,
		RAGEpisodes:                true,
	}
}
