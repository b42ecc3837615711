package engine

import (
	"github.com/contextd/contextd/filters"
	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/truncation"
)

// Strategy is how a context is built: recent turns only, with the running
// summary, or with retrieval too.
type Strategy string

// Strategies.
const (
	StrategyNone           Strategy = "none"
	StrategyRunningSummary Strategy = "running_summary"
	StrategyRAG            Strategy = "rag_augmented"
)

// ParseStrategy accepts the three strategy names.
func ParseStrategy(s string) (Strategy, bool) {
	switch st := Strategy(s); st {
	case StrategyNone, StrategyRunningSummary, StrategyRAG:
		return st, true
	}
	return "", false
}

// Policy is one agent's effective memory settings, resolved once at startup
// by the composition root (cmd/contextd) from agents.yaml: an operator's bad
// setting is a startup error there, never a per-request failure here.
type Policy struct {
	Strategy     Strategy
	BudgetTokens int
	// RecentTurns is the verbatim window (memory.summary_recent_turns).
	RecentTurns int
	// TriggerTurns: this many uncovered turns outside the window mean the
	// summary lags (memory.summary_trigger_turns).
	TriggerTurns int
	StoreTurns   bool

	RAGK         int
	RAGMaxHits   int
	RAGFill      bool
	RAGNeighbors int
	RAGThreshold float32
	RAGScope     string // chat | user
	// FloorTurns are the newest turns always shown when a query ranks the
	// budget (memory.recent_floor_turns).
	FloorTurns int
	// RAGEpisodes lets retrieved episodes into the RAG section
	// (memory.episodes and memory.rag_episodes).
	RAGEpisodes bool

	// UserProfile shows the user's cross-chat profile first in the
	// summary section (memory.user_profile).
	UserProfile bool
	// Tokenizer counts budgets and usage (memory.tokenizer; nil: cl100k).
	Tokenizer tokens.Counter

	// Filters and Truncation are pre-built; the request adds its query.
	Filters    filters.Options
	Truncation truncation.Options
}

// Policy defaults: memory.budget_tokens, rag_k, rag_max_hits,
// rag_neighbors, rag_similarity_threshold, rag_scope and
// truncation_max_chars (config refers to these; the summary's window is
// memory.DefaultRecentTurns and memory.DefaultTriggerTurns, the floor
// DefaultFloorTurns).
const (
	DefaultBudgetTokens       = 4000
	DefaultRAGK               = 5
	DefaultRAGMaxHits         = 400
	DefaultRAGNeighbors       = 1
	DefaultRAGThreshold       = 0.5
	DefaultRAGScope           = "chat"
	DefaultTruncationMaxChars = 1000
)

// DefaultPolicy is the policy of agents.yaml's built-in defaults (a test in
// cmd/contextd checks the two agree).
func DefaultPolicy() Policy {
	return Policy{
		Strategy: StrategyRunningSummary, BudgetTokens: DefaultBudgetTokens,
		RecentTurns: memory.DefaultRecentTurns, TriggerTurns: memory.DefaultTriggerTurns, StoreTurns: true,
		RAGK: DefaultRAGK, RAGMaxHits: DefaultRAGMaxHits, RAGNeighbors: DefaultRAGNeighbors, RAGFill: true,
		RAGThreshold: DefaultRAGThreshold, RAGScope: DefaultRAGScope, RAGEpisodes: true,
		Tokenizer: tokens.CL100K, UserProfile: true, FloorTurns: DefaultFloorTurns,
		Filters:    supervisorFilters(),
		Truncation: truncation.Options{Strategy: truncation.Middle, MaxChars: DefaultTruncationMaxChars},
	}
}

// Limits bound what one request may carry.
type Limits struct {
	MaxMessagesPerRequest int // default DefaultMaxMessagesPerRequest
	MaxMessageBytes       int // default DefaultMaxMessageBytes
}

// Limits defaults: server.max_messages_per_request and max_message_bytes.
const (
	DefaultMaxMessagesPerRequest = 1000
	DefaultMaxMessageBytes       = 256 << 10
)

func supervisorFilters() filters.Options {
	o := filters.Supervisor()
	o.ToolMessages = filters.ToolKeep
	return o
}
