// Package config loads agents.yaml: yaml.v3 nodes (so every problem carries
// its line number), defaults, ${VAR} expansion, validation, Orchid's legacy
// supervisor toggles, and per-agent resolution of effective settings.
package config

import (
	"time"

	"github.com/contextd/contextd/memory"
)

// Config is a loaded, validated agents.yaml with defaults applied.
type Config struct {
	Server     Server
	Storage    Storage
	Vector     Vector
	Embedder   Embedder
	LLM        LLM
	Supervisor Supervisor
	Agents     []Agent
	Telemetry  Telemetry
	// Warnings are non-fatal remarks (e.g. a legacy key shadowed by memory:).
	Warnings []string
}

type Server struct {
	// Addr is the listen address; default "127.0.0.1:8080" (DefaultAddr):
	// loopback, since auth is off by default. Beyond loopback without
	// API keys it needs AllowRemoteWithoutAuth.
	Addr      string
	BodyLimit int64 // bytes; yaml accepts "4MB", "512KB" or a number; default 4 MiB
	// AllowRemoteWithoutAuth lets Addr be beyond loopback with auth off
	// (no Auth.APIKeys): anyone who reaches the port is tenant "default".
	// Default false, so that is never an accident; set, it logs a warning.
	AllowRemoteWithoutAuth bool
	// AllowedHosts are host names (without port; ".example.com" also
	// matches its subdomains) accepted in a request's Host header besides
	// IP addresses, localhost and Addr's host. The Host check runs with
	// auth off, or with auth on when this is set: it stops DNS rebinding,
	// a web page whose own name resolves to this server. Default none.
	AllowedHosts []string
	// BodyBudget bounds the request bodies held in memory at once, over
	// every request; past it a request is refused with 503 and
	// Retry-After. Default 64 MiB (DefaultBodyBudget), at least BodyLimit.
	BodyBudget     int64
	RequestTimeout time.Duration // yaml "30s"; default 30s
	Auth           Auth
	RateLimit      RateLimit
	TrustedProxies []string // CIDRs whose X-Forwarded-For is believed; default none
	LogLevel       string   // debug|info|warn|error; default info
	// MaxMessagesPerRequest caps one append's batch; default 1000.
	MaxMessagesPerRequest int
	// MaxMessageBytes caps one message's content; default 256 KiB.
	MaxMessageBytes int
	// ReadConcurrency bounds the context and search requests at work at
	// once; the others wait their turn in arrival order. 0, the default:
	// auto (two per CPU when every backend runs in-process, else none).
	ReadConcurrency int
	// MCP is the Model Context Protocol endpoint at /mcp.
	MCP     MCP
	UI      UI
	Metrics Metrics
}

// Metrics configures /metrics.
type Metrics struct {
	// TenantLabels adds the tenant as a label where a metric is per tenant
	// (LLM tokens, rate-limited requests); default false, so one tenant's
	// scrape access does not reveal the others' names.
	TenantLabels bool
}

// MCP configures the /mcp endpoint.
type MCP struct {
	Enabled bool // default true
	// AllowDelete exposes the destructive delete_chat tool; default false.
	AllowDelete bool
	// SessionTimeout closes an MCP session no request has used for this
	// long; default 10m (DefaultMCPSessionTimeout), always > 0.
	SessionTimeout time.Duration
	// MaxSessions bounds the MCP sessions open at once (default 1000),
	// MaxSessionsPerClient those of one client, a tenant with auth on or
	// an address with auth off (default 100): a new session past a cap
	// closes the oldest idle one, or is refused with 503 when none is.
	MaxSessions          int
	MaxSessionsPerClient int
}

// UI is the inspector at /ui/ (default on).
type UI struct {
	Enabled bool
	// SessionsPerTenant bounds each tenant's logged-in inspector sessions;
	// a login past it logs out that tenant's oldest, never another
	// tenant's. Default 100 (DefaultUISessionsPerTenant), at least 1.
	SessionsPerTenant int
}

type Auth struct{ APIKeys []APIKey }

// APIKey is one server.auth.api_keys entry: an alias of the one
// definition, memory.APIKey, which the API and the inspector use too.
type APIKey = memory.APIKey

// RateLimit is per tenant; RequestsPerSecond 0 (the default) turns it off.
type RateLimit struct {
	RequestsPerSecond float64
	Burst             int
}

type Storage struct {
	Driver      string // sqlite (default) | postgres
	SQLitePath  string // default ./data/contextd.db
	PostgresDSN string
	// WALTruncateDelay: how long after a delete or an erase the SQLite
	// store's and the embedded index's WALs are checkpointed and truncated
	// (what was erased leaves the log too); default 5s.
	WALTruncateDelay time.Duration
	// SQLiteMaxPages caps the SQLite file at this many pages (PRAGMA
	// max_page_count; 0, the default, is no cap): a safety cap, past which
	// writes answer storage_full as on a full disk. Rendered only when set.
	SQLiteMaxPages int
}

type Vector struct {
	Driver string // embedded (default) | qdrant | none
	// EmbeddedPath is the embedded index's file; default ./data/vectors.db.
	EmbeddedPath string
	Qdrant       Qdrant
}

type Qdrant struct {
	Addr    string // host:port of the gRPC API; default localhost:6334
	APIKey  string
	TLS     bool
	Timeout time.Duration // per call; default 5s
}

type Embedder struct {
	Provider   string // hashing (default) | openai | ollama
	Model      string
	BaseURL    string
	APIKey     string
	Dimensions int           // default 384 for hashing
	Timeout    time.Duration // default 10s
	BatchSize  int           // default 64
}

type LLM struct {
	Provider string // none (default) | openai | ollama | anthropic | googleai
	Model    string
	BaseURL  string
	APIKey   string
	Timeout  time.Duration // default 60s
	// DailyTokenBudget caps LLM tokens per tenant per UTC day; 0 = no cap.
	DailyTokenBudget int64
}

type Supervisor struct {
	Memory  Memory
	Filters Filters
	Prompts PromptSections
}

// Memory holds the per-agent memory settings (supervisor.memory, overridden
// key by key by agents[].memory).
type Memory struct {
	Strategy           string // none | running_summary | rag_augmented; default running_summary
	SummaryRecentTurns int    // default 10
	// RecentFloorTurns are the newest turns always shown with a query
	// (rag_augmented); the rest of the window competes (default 4).
	RecentFloorTurns       int
	SummaryModel           string // "" = the llm's default model
	StructuredOutput       bool   // default true
	PersistSummary         bool   // default true
	SummaryPrompt          string // extra instructions appended to the system prompt
	RAGNamespace           string // default "__memory__"
	RAGK                   int    // default 5
	RAGSimilarityThreshold float64
	RAGScope               string // chat (default) | user
	RAGNeighbors           int    // turns on each side of a hit; default 0
	// RAGFill: after the top RAGK hits, further hits in rank order fill
	// what the budget leaves (up to RAGMaxHits); default true.
	RAGFill            bool
	RAGMaxHits         int    // default 400
	StoreTurns         bool   // default true
	TruncationStrategy string // hard | middle (default) | llm | semantic
	TruncationMaxChars int    // default 1000; 0 = no truncation
	BudgetTokens       int    // default 4000
	Tokenizer          string // cl100k (default) | o200k: what budget_tokens is counted in
	UserProfile        bool   // the user's cross-chat profile in the context; default true
	MaxTurns           int    // filter cap on turns considered; 0 = no cap (legacy history_max_turns)
	// Summary triggers: summarise when the turns outside the recent window
	// that the summary does not cover pass either threshold.
	SummaryTriggerTurns  int           // default 10
	SummaryTriggerTokens int           // default 2000
	SummaryCooldown      time.Duration // default 30s
	SummaryMaxTokens     int           // cap on one summary record; default 800
	// Episodes: the summariser closes episodes (topic shift, a silence of
	// EpisodeGap, EpisodeMaxTurns) with their own summaries; default true.
	Episodes        bool
	EpisodeMinTurns int           // default 6 (a silence may cut shorter)
	EpisodeMaxTurns int           // default 40
	EpisodeGap      time.Duration // default 2h
	EpisodeOverlap  int           // turns of the previous episode given as context; default 2
	// SummaryExtendEveryEpisodes: with an LLM, the running summary is
	// extended (the extension prompt) once this many episodes closed since
	// its last extension, cost permitting; default 1.
	SummaryExtendEveryEpisodes int
	RAGEpisodes                bool // episodes take part in retrieval; default true
}

// Filters configure the message filter pipeline.
type Filters struct {
	Preset        string // "" | supervisor | agent
	SkipPrefixes  []string
	StripPrefixes []string
	ToolMessages  string // keep (default) | drop
}

// PromptSections override the summarizer's prompts.
type PromptSections struct {
	SummaryCompressionSystemPrompt string
	SummaryCompressionUserPrompt   string // must contain {transcript}
	SummaryExtensionUserPrompt     string // must contain {existing_summary} and {new_messages}
	EpisodeSummaryPrompt           string // must contain {transcript}
	UserProfilePrompt              string // must contain {existing_profile} and {chat_summary}
}

// Agent is one agents[] entry, already merged over supervisor: its Memory,
// Filters and Prompts are the effective ones.
type Agent struct {
	Name    string
	Memory  Memory
	Filters Filters
	Prompts PromptSections
}

// Defines reports whether agents[] lists the named agent; the default
// agent (the supervisor's settings) is not listed there.
func (c *Config) Defines(name string) bool {
	for _, a := range c.Agents {
		if a.Name == name {
			return true
		}
	}
	return false
}

// Agent returns the effective settings of the named agent; an agent not in
// agents[] gets the supervisor's settings under its own name.
func (c *Config) Agent(name string) Agent {
	for _, a := range c.Agents {
		if a.Name == name {
			return a
		}
	}
	return Agent{Name: name, Memory: c.Supervisor.Memory, Filters: c.Supervisor.Filters, Prompts: c.Supervisor.Prompts}
}
