package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// SummaryEpisodes is how many of the newest episodes the summary endpoint
// shows; the episodes endpoint pages the rest.
const SummaryEpisodes = 5

// Episodes pages a chat's closed episodes in seq order: those starting
// after afterSeq, up to limit, and the after_seq of the next page.
func (s *Service) Episodes(ctx context.Context, tenant, chatID string, afterSeq int64, limit int) ([]memory.Episode, int64, error) {
	if err := ValidateID("chat_id", chatID, true); err != nil {
		return nil, 0, err
	}
	if afterSeq < 0 {
		return nil, 0, invalid("after_seq", "invalid_value", "must be ≥ 0")
	}
	if limit <= 0 || limit > 1000 {
		return nil, 0, invalid("limit", "invalid_value", "must be between 1 and 1000")
	}
	key := memory.ChatKey{Tenant: tenant, ChatID: chatID}
	es := s.roles.episodes
	if es == nil {
		if _, err := s.store.Chat(ctx, key); err != nil {
			return nil, 0, storeErr("read chat", err)
		}
		return []memory.Episode{}, afterSeq, nil
	}
	eps, err := es.Episodes(ctx, key, memory.EpisodeQuery{AfterSeq: afterSeq, Limit: limit})
	if err != nil {
		return nil, 0, storeErr("list episodes", err)
	}
	next := afterSeq
	if len(eps) > 0 {
		next = eps[len(eps)-1].ToSeq
	}
	return blankRebuilding(eps), next, nil
}

// LatestEpisodes returns a chat's newest closed episodes, in seq order.
func (s *Service) LatestEpisodes(ctx context.Context, tenant, chatID string, n int) ([]memory.Episode, error) {
	es := s.roles.episodes
	if es == nil {
		return []memory.Episode{}, nil
	}
	eps, err := es.Episodes(ctx, memory.ChatKey{Tenant: tenant, ChatID: chatID}, memory.LatestEpisodes(n))
	if err != nil {
		return nil, storeErr("list episodes", err)
	}
	return withoutRebuilding(eps), nil
}

// ragEpisode turns an episode hit into a RAG candidate: its short summary,
// shown under its dates and range.
func ragEpisode(t rag.Turn, chatID string) RAGTurn {
	e := t.Episode
	return RAGTurn{ChatID: chatIDIfOther(t.ChatID, chatID), Seq: e.FromSeq, Content: t.Content, Score: t.Score, CreatedAt: e.EndedAt,
		Episode: &EpisodeRef{ID: e.ID, FromSeq: e.FromSeq, ToSeq: e.ToSeq, StartedAt: e.StartedAt, EndedAt: e.EndedAt}}
}

// holds: r is a turn (not an episode or a fact) of e's chat inside
// episode e's range of turns.
func (e *RAGTurn) holds(r *RAGTurn) bool {
	return r.Episode == nil && r.Fact == nil && r.ChatID == e.ChatID && r.Seq >= e.Episode.FromSeq && r.Seq <= e.Episode.ToSeq
}

// belowOwnTurns ranks an extractive episode no higher than the short
// turns among the candidates that it quotes: its line is their first words,
// the turn says them whole, and once it is shown the line stands aside for
// it (packer.take). A turn it does not quote (a drilled "ur a star"), or a
// long turn's passage, leaves its rank alone: the line may say what they
// do not.
func belowOwnTurns(episodes, turns []RAGTurn) {
	for i := range episodes {
		e := &episodes[i]
		if e.Episode == nil {
			continue
		}
		qs := quoted.FindAllStringSubmatch(e.Content, -1)
		for i := range turns {
			r := &turns[i]
			if r.Neighbor || r.part || !r.whole || !e.holds(r) || !slices.ContainsFunc(qs, func(q []string) bool { return quotes(r.Content, q[1]) }) {
				continue
			}
			e.Score = min(e.Score, r.Score) // equal scores keep the turn first (a stable sort, turns before episodes)
		}
	}
}

// topEpisodesOnly keeps the episodes ranked among the first k candidates
// (rag_k): a gist is worth its room when it is among the best matches,
// while further down the ranking the turns themselves serve better.
func topEpisodesOnly(rs []RAGTurn, k int) []RAGTurn {
	out := rs[:0]
	rank := 0 // among the hits: a neighbour shares its hit's score, not a rank
	for _, r := range rs {
		if r.Episode == nil || rank < k {
			out = append(out, r)
		}
		if !r.Neighbor && !r.part && r.standsFor == 0 { // a stand-in is no hit
			rank++
		}
	}
	return out
}

// EpisodeHeader is the date range and seq range an episode's short summary
// is shown under in the RAG section, e.g. "[3–9 May 2023 · turns 120–141]".
func EpisodeHeader(started, ended time.Time, from, to int64) string {
	s, e := started.UTC(), ended.UTC()
	if e.Before(s) {
		e = s
	}
	var dates string
	switch {
	case s.IsZero():
		dates = ""
	case s.Year() == e.Year() && s.YearDay() == e.YearDay():
		dates = s.Format("2 Jan 2006")
	case s.Year() == e.Year() && s.Month() == e.Month():
		dates = fmt.Sprintf("%d–%s", s.Day(), e.Format("2 Jan 2006"))
	case s.Year() == e.Year():
		dates = s.Format("2 Jan") + " – " + e.Format("2 Jan 2006")
	default:
		dates = s.Format("2 Jan 2006") + " – " + e.Format("2 Jan 2006")
	}
	turns := fmt.Sprintf("turns %d–%d", from, to)
	if from == to {
		turns = fmt.Sprintf("turn %d", from)
	}
	if dates == "" {
		return "[" + turns + "]"
	}
	return "[" + dates + " · " + turns + "]"
}
