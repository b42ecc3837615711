package engine

import (
	"context"
	"slices"

	"github.com/contextd/contextd/memory"
)

// Lag: the background jobs derive a chat's retrievable memory after its
// turns are stored — the indexer indexes turns, episodes and facts, the
// facts job (Arrivals) draws facts from new turns — so a context or a
// search may come before them. Such an answer names it (index_behind)
// rather than answer as if nothing were missing. The check costs nothing
// while the jobs keep up: the chat's lag is read (one indexed store query)
// only when a job says it has work pending.

// backlogPending reports whether a background job that derives
// retrievable memory may have work pending.
func (s *Service) backlogPending() bool {
	return (s.jobs.indexer != nil && s.jobs.indexer.Pending()) || (s.jobs.arrivals != nil && s.jobs.arrivals.Pending())
}

// chatBehind reports whether the chat's retrievable memory derived from
// its turns before seq before is not all indexed and drawn yet: turns not
// indexed, turns whose facts are not drawn, facts and (when episodes are
// retrieved) episodes not indexed. It reads the store only when a job has
// work pending (backlogPending).
func (s *Service) chatBehind(ctx context.Context, key memory.ChatKey, before int64, k lagKinds) (bool, error) {
	if !s.backlogPending() {
		return false, nil
	}
	l, err := s.roles.lags.ChatLag(ctx, key, before)
	if err != nil {
		return false, storeErr("read backlog", err)
	}
	if k.facts && s.jobs.arrivals != nil && l.FactsCursor < l.LastSeq && l.FactsCursor+1 < before {
		return true, nil
	}
	if s.jobs.indexer == nil {
		return false, nil
	}
	return (k.turns && l.FirstUnindexed > 0 && l.FirstUnindexed < before) || (k.facts && l.UnindexedFacts) || (k.episodes && l.UnindexedEpisodes), nil
}

// lagKinds are the kinds of derived memory an answer retrieves: only
// their lag is its lag (a search for turns does not wait for facts).
type lagKinds struct{ turns, facts, episodes bool }

// kindsOf is lagKinds for a search's kinds (none: all), episodes only when
// the agents retrieve them.
func kindsOf(kinds []string, episodes bool) lagKinds {
	if len(kinds) == 0 {
		return lagKinds{turns: true, facts: true, episodes: episodes}
	}
	return lagKinds{turns: slices.Contains(kinds, memory.KindTurn), facts: slices.Contains(kinds, memory.KindFact),
		episodes: episodes && slices.Contains(kinds, memory.KindEpisode)}
}

// catchUp is chatBehind with read-your-writes: a chat found behind waits
// (waitIndexed, within searchIndexWait) for the jobs to take in what was
// stored before the request, then is read again. True: the chat is still
// behind, and the answer says index_behind.
func (s *Service) catchUp(ctx context.Context, key memory.ChatKey, before int64, k lagKinds) (bool, error) {
	behind, err := s.chatBehind(ctx, key, before, k)
	if err != nil || !behind {
		return behind, err
	}
	s.waitIndexed(ctx, k.facts)
	return s.chatBehind(ctx, key, before, k)
}

// episodesRetrieved: the agents' settings let episodes into retrieval, so
// an episode not indexed yet is missing from the answer (without
// rag_episodes they are never indexed, and never lag).
func (s *Service) episodesRetrieved(agents ...string) bool {
	for _, a := range agents {
		if !s.policy(a).RAGEpisodes {
			return false
		}
	}
	return true
}
