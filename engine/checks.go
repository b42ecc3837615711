package engine

// The places where the service used to choose silently and now says so:
// a request naming another user than the chat's, an agent agents.yaml does
// not define, a search below the similarity threshold, a refresh with
// nothing to summarise.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/contextd/contextd/memory"
)

// DegradedUnknownAgent: the request (or the chat) names an agent that
// agents.yaml does not define; it got the supervisor's settings.
const DegradedUnknownAgent = "unknown_agent"

// checkUser refuses a request naming another user than the chat's. A
// chat's user is fixed by its first append; a chat created without one
// stays without one, so a later user_id is a conflict too (adopting it
// would silently move the chat's turns into that user's profile and
// user-scoped retrieval). A request that names no user never conflicts.
func checkUser(chat memory.Chat, userID string) error {
	if userID == "" || userID == chat.UserID {
		return nil
	}
	owner := fmt.Sprintf("belongs to user %q", truncateForError(chat.UserID))
	if chat.UserID == "" {
		owner = "was created without a user_id"
	}
	return &Error{Kind: KindConflict, Code: "chat_user_conflict", Field: "user_id",
		Message: fmt.Sprintf("chat %q %s, but this request names %q; a chat's user is fixed by its first append",
			truncateForError(chat.ID), owner, truncateForError(userID))}
}

// agentDefined: the default agent always is (it is the supervisor's
// settings); others must be listed in agents.yaml when AgentDefined is set.
func (s *Service) agentDefined(agent string) bool {
	return agent == "" || agent == memory.DefaultAgent || s.conf.agentDefined(agent)
}

// searchThreshold is the cosine similarity below which dense search hits
// are left out: the request's min_score, else the agent's
// rag_similarity_threshold, as /v1/context applies it.
func (s *Service) searchThreshold(agent string, minScore *float64) float32 {
	if minScore != nil {
		return float32(*minScore)
	}
	return s.policy(agent).RAGThreshold
}

func validateMinScore(minScore *float64) error {
	if minScore != nil && (*minScore < -1 || *minScore > 1) {
		return invalid("min_score", "invalid_value", "must be a cosine similarity between -1 and 1")
	}
	return nil
}

// RefreshResult is the answer of a summary refresh. Reason says, when
// Summary is nil, why there is nothing to summarise.
type RefreshResult struct {
	Summary  *memory.Summary `json:"summary"`
	Degraded []string        `json:"degraded"`
	Reason   string          `json:"reason,omitempty"`
}

// Refresh forces a summary extension now and, when the chat still has no
// summary, says why.
func (s *Service) Refresh(ctx context.Context, tenant, chatID string) (RefreshResult, error) {
	sum, degraded, err := s.RefreshSummary(ctx, tenant, chatID)
	if degraded == nil {
		degraded = []string{}
	}
	res := RefreshResult{Summary: sum, Degraded: degraded}
	if err != nil || sum != nil {
		return res, err
	}
	chat, err := s.Chat(ctx, tenant, chatID)
	if err != nil {
		return res, err
	}
	res.Reason = s.noSummaryReason(chat)
	if slices.Contains(degraded, DegradedSummaryRebuilding) {
		res.Reason = "a deleted message's summary is being rebuilt without it; refresh again shortly"
	}
	return res, nil
}

// noSummaryReason explains a chat without a summary in the agent's terms.
func (s *Service) noSummaryReason(chat memory.Chat) string {
	pol := s.policy(chat.Agent)
	switch {
	case pol.Strategy == StrategyNone:
		return fmt.Sprintf("agent %q has strategy none: no summary is kept", chat.Agent)
	case chat.LastSeq <= int64(pol.RecentTurns):
		return fmt.Sprintf("all %d turns are within the recent window (summary_recent_turns: %d)", chat.LastSeq, pol.RecentTurns)
	}
	return fmt.Sprintf("none of the %d turns before the recent window (summary_recent_turns: %d) is left to summarise after the agent's filters",
		chat.LastSeq-int64(pol.RecentTurns), pol.RecentTurns)
}

func isNotFound(err error) bool { return errors.Is(err, memory.ErrNotFound) }
