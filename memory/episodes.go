package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
)

// EpisodeStore keeps a chat's closed episodes (the summary tree's children):
// every episode role. Implementations: store/sqlite, store/postgres; both
// pass store/storetest. Episodes go with their chat: DeleteChat erases
// them. Consumers take the role they use: EpisodeCloser (the summariser),
// EpisodeReader (the engine, the inspector); the indexer reads them through
// IndexBacklog (IndexEpisodes).
type EpisodeStore interface {
	EpisodeCloser
}

// EpisodeReader reads a chat's closed episodes.
type EpisodeReader interface {
	// Episodes returns the chat's episodes q selects, in seq order: up
	// to q.Limit (<= 0: all) with from_seq > q.AfterSeq, the first ones
	// or, with q.Latest, the newest ones. ErrNotFound for an unknown chat.
	Episodes(ctx context.Context, key ChatKey, q EpisodeQuery) ([]Episode, error)
}

// EpisodeQuery selects a chat's closed episodes (EpisodeReader).
type EpisodeQuery struct {
	// AfterSeq keeps the episodes with from_seq > AfterSeq (keyset paging).
	AfterSeq int64
	// Limit bounds how many (<= 0: all).
	Limit int
	// Latest takes the newest Limit episodes rather than the first ones;
	// they are still returned in seq order.
	Latest bool
}

// LatestEpisodes is the query for the chat's newest n episodes.
func LatestEpisodes(n int) EpisodeQuery { return EpisodeQuery{Limit: n, Latest: true} }

// EpisodeCloser closes episodes (and reads the ones closed before).
type EpisodeCloser interface {
	EpisodeReader
	// CloseEpisodes stores eps in one transaction: all of them or none.
	// They must be in seq order, contiguous, and the first must start right
	// after the chat's last closed episode, which must end at expectTo (0:
	// the chat has none); otherwise ErrCursorMoved (another worker closed
	// episodes first) or ErrConflict (a gap, an overlap, a range past
	// last_seq). The store sets ID when empty, Turns and CreatedAt, and
	// returns the stored episodes. ErrNotFound for an unknown chat.
	CloseEpisodes(ctx context.Context, key ChatKey, expectTo int64, eps []Episode) ([]Episode, error)
}

// EpisodeSummarizer summarises one closed episode. Implementations:
// derive/extractive and derive/llmsum (one LLM call per episode).
type EpisodeSummarizer interface {
	SummarizeEpisode(ctx context.Context, req EpisodeRequest) (EpisodeResult, error)
}

// EpisodeRequest is one episode to summarise.
type EpisodeRequest struct {
	Chat Chat
	// Context are the previous episode's last turns (episode_overlap): the
	// summariser reads them to understand the start, but the episode does
	// not own them and its summary must not be about them.
	Context []Message
	// Turns are the episode's own turns, in seq order.
	Turns []Message
	// Prompt overrides the default episode prompt (must hold {transcript}).
	Prompt string
	// Model overrides the LLM's default model ("" = the default).
	Model string
}

// EpisodeResult is an episode's short and structured summary.
type EpisodeResult struct {
	Short   string
	Summary Summary
	// Facts are drawn from the episode's own turns (each cites some of
	// them); the worker stores them with the episode.
	Facts []Fact
	// Degraded names fallbacks taken (e.g. "llm_unavailable").
	Degraded      []string
	InputTokens   int
	OutputTokens  int
	Calls         int
	Model         string
	PromptVersion string
}

// EpisodePromptVersion is a short hash of an episode prompt.
func EpisodePromptVersion(prompt string) string {
	h := sha256.Sum256([]byte("episode\x00" + prompt))
	return "e-" + hex.EncodeToString(h[:])[:12]
}
