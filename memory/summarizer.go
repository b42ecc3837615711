package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
)

// Summarizer extends a chat's running summary with new turns. It never
// re-reads history: it gets the previous summary and only the turns after
// its cursor. Implementations: derive/extractive (no LLM, deterministic) and
// derive/llmsum (langchaingo).
//
// The contract is declared, never found by type assertion: every
// summarizer summarises episodes too, names the prompt version it records,
// and says whether it writes with an LLM. derive/summarizertest checks the
// coverage contract (both implementations pass it).
type Summarizer interface {
	EpisodeSummarizer
	Summarize(ctx context.Context, req SummarizeRequest) (SummarizeResult, error)
	// PromptVersion is the PromptVersion the summarizer records for a
	// summary written with these prompts (a summarizer that reads no prompt
	// returns a constant).
	PromptVersion(p Prompts) string
	// Name is the model name recorded in Summary.Model ("extractive" for the
	// extractive summarizer).
	Name() string
	// UsesLLM declares that the summarizer writes with an LLM: its calls
	// cost tokens (the daily budget applies) and time (never inline), and
	// the running summary is worth rewriting from episodes' summaries.
	// False is the deterministic flag: the same turns give the same
	// summary, so the summarizer can serve as the worker's fallback, and
	// what it wrote (its Name in Summary.Model) is what the model redoes.
	UsesLLM() bool
}

// Degraded reasons every summarizer reports the same way.
const (
	// DegradedLLMUnavailable: the model failed or timed out after retries;
	// the fallback did the work (or the previous summary stands).
	DegradedLLMUnavailable = "llm_unavailable"
	// DegradedNarrativeOnly: the model's reply was not a valid JSON
	// summary.
	DegradedNarrativeOnly = "summary_narrative_only"
	// DegradedSummaryRebuilding: a message the running summary may hold was
	// deleted; the summary is rebuilt without it and not served until then.
	DegradedSummaryRebuilding = "summary_rebuilding"
)

// SummarizeRequest carries one extension.
type SummarizeRequest struct {
	Chat Chat
	// Prev is the summary so far; nil for a chat's first summary.
	Prev *Summary
	// Episodes are closed episodes the running summary takes in (episodes
	// on): the summarizer reads their summaries, never their turns again.
	// In seq order, before Turns.
	Episodes []Episode
	// Turns are the new turns, in seq order, all after Prev.CoveredToSeq
	// (with Episodes: the open tail's turns no episode covers).
	Turns []Message
	// Prompts are the chat's agent's effective prompts (LLM summarizer only).
	Prompts Prompts
	// Model overrides the LLM's default model ("" = the default).
	Model string
	// Structured asks for the structured JSON summary; false asks for the
	// narrative only.
	Structured bool
	// MaxTokens caps the summary's size in cl100k tokens (0 = no cap).
	MaxTokens int
}

// SummarizeResult is the extended summary and what it cost.
type SummarizeResult struct {
	// Summary covers Prev's turns plus the new ones; the summarizer sets
	// CoveredFromSeq, CoveredToSeq, Model and PromptVersion.
	Summary Summary
	// Degraded names fallbacks taken (e.g. "summary_narrative_only").
	Degraded     []string
	InputTokens  int
	OutputTokens int
	Calls        int
}

// Prompts are the summarizer's prompt texts. Placeholders:
// Compression needs {transcript}; Extension needs {existing_summary} and
// {new_messages}.
type Prompts struct {
	System      string `json:"system"`
	Compression string `json:"compression"`
	Extension   string `json:"extension"`
}

// Version is a short hash of the prompt texts, stored with every summary
// record so that a changed prompt can be told from the one that wrote it.
func (p Prompts) Version() string {
	h := sha256.New()
	for _, s := range []string{p.System, p.Compression, p.Extension} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return "p-" + hex.EncodeToString(h.Sum(nil))[:12]
}

// TokenBudget is the tenants' daily LLM token budget (llm.daily_token_budget),
// which every use of the model spends from: summaries and episodes, profile
// merges, condensing a message. Once a tenant has spent it, each use falls
// back as it would with the model down, and says so.
type TokenBudget interface {
	// Exhausted reports whether the tenant has spent today's budget.
	Exhausted(tenant string) bool
	// Spend counts what a call of the model cost for the tenant.
	Spend(tenant string, in, out int)
}
