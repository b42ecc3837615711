package engine

import (
	"cmp"
	"context"
	"errors"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/contextd/contextd/filters"
	"github.com/contextd/contextd/internal/bigsort"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// SearchInput is the body of POST /v1/search.
type SearchInput struct {
	Query  string `json:"query"`
	ChatID string `json:"chat_id"`
	UserID string `json:"user_id"`
	K      *int   `json:"k"` // 1..100; nil: 10 (a pointer, so that 0 is refused, not read as unset)
	// Since/Until (RFC 3339) and Kinds (turn, episode; default both) filter
	// inside the index query.
	Since string   `json:"since"`
	Until string   `json:"until"`
	Kinds []string `json:"kinds"`
	// MinScore overrides the agent's rag_similarity_threshold: dense hits
	// with a lower cosine similarity are left out.
	MinScore *float64 `json:"min_score"`
}

// SearchHit is one /v1/search hit: a turn, or an episode with its short
// summary as Content and its id, range and dates.
type SearchHit struct {
	Kind      string     `json:"kind"`
	ChatID    string     `json:"chat_id"`
	Seq       int64      `json:"seq"`
	Role      string     `json:"role"`
	Content   string     `json:"content"`
	Score     float32    `json:"score"`
	CreatedAt time.Time  `json:"created_at"`
	EpisodeID string     `json:"episode_id,omitempty"`
	FromSeq   int64      `json:"from_seq,omitempty"`
	ToSeq     int64      `json:"to_seq,omitempty"`
	StartedAt *time.Time `json:"started_at,omitempty"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	// A fact hit: its id, source turns and date.
	FactID  string     `json:"fact_id,omitempty"`
	Seqs    []int64    `json:"seqs,omitempty"`
	ValidAt *time.Time `json:"valid_at,omitempty"`
	// Passages are the offsets of a long turn's matching passages.
	Passages []PassageRef `json:"passages,omitempty"`
}

// SearchResult is a search's answer: its hits, best first, and the
// fallbacks taken (never nil).
type SearchResult struct {
	Hits     []SearchHit `json:"hits"`
	Degraded []string    `json:"degraded"`
}

// Search runs retrieval over a chat, a user's chats, or the tenant.
func (s *Service) Search(ctx context.Context, tenant string, in SearchInput) (SearchResult, error) {
	hits, caughtUp, err := s.search(ctx, tenant, in)
	if err != nil {
		return SearchResult{}, err
	}
	res := SearchResult{Hits: hits, Degraded: []string{}}
	if !caughtUp {
		res.Degraded = append(res.Degraded, DegradedIndexBehind)
	}
	return res, nil
}

// checkSearch validates a search's input; it returns k (10 when unset)
// and the time range.
func checkSearch(in SearchInput) (int, timeRange, error) {
	if !utf8.ValidString(in.Query) {
		return 0, timeRange{}, invalid("query", "invalid_utf8", "is not valid UTF-8")
	}
	if strings.TrimSpace(in.Query) == "" {
		return 0, timeRange{}, invalid("query", "missing_field", "is required")
	}
	if err := ValidateID("chat_id", in.ChatID, false); err != nil {
		return 0, timeRange{}, err
	}
	if err := ValidateID("user_id", in.UserID, false); err != nil {
		return 0, timeRange{}, err
	}
	k := 10
	if in.K != nil {
		if *in.K < 1 || *in.K > 100 {
			return 0, timeRange{}, invalid("k", "invalid_value", "must be between 1 and 100")
		}
		k = *in.K
	}
	times, err := parseTimeRange(in.Since, in.Until)
	if err != nil {
		return 0, timeRange{}, err
	}
	if err := parseKinds(in.Kinds); err != nil {
		return 0, timeRange{}, err
	}
	return k, times, validateMinScore(in.MinScore)
}

// search validates in and retrieves; caughtUp is false when the index had
// not taken in every turn appended before the search (waitIndexed).
func (s *Service) search(ctx context.Context, tenant string, in SearchInput) (hits []SearchHit, caughtUp bool, err error) {
	k, times, err := checkSearch(in)
	if err != nil {
		return nil, false, err
	}
	req := rag.Request{Tenant: tenant, UserID: in.UserID, Query: rag.TruncateQuery(in.Query), Scope: rag.ScopeTenant,
		Since: times.since, Until: times.until, Kinds: in.Kinds}
	agent, clean := memory.DefaultAgent, ""
	if in.ChatID != "" {
		key := memory.ChatKey{Tenant: tenant, ChatID: in.ChatID}
		chat, err := s.store.Chat(ctx, key)
		if err != nil {
			return nil, false, storeErr("read chat", err)
		}
		if err := checkUser(chat, in.UserID); err != nil { // as a context call: never a silent choice
			return nil, false, err
		}
		req.ChatID, req.Scope = chat.ID, rag.ScopeChat
		agent, clean = chat.Agent, cleanChat(chat)
	} else if in.UserID != "" {
		req.Scope = rag.ScopeUser
	}
	if s.vec.retriever == nil { // after the checks a retry could not mend
		return nil, false, unavailable("vector store", errors.New("vector.driver is none"))
	}
	// Over-fetch: the filters below may remove routing noise.
	req.K = k * 2
	req.Threshold = s.searchThreshold(agent, in.MinScore)
	kinds := kindsOf(in.Kinds, s.episodesRetrieved(agent))
	caughtUp = s.waitIndexed(ctx, kinds.facts)
	if req.ChatID != "" {
		// The chat's own lag decides, not another chat's backlog.
		behind, err := s.chatBehind(ctx, memory.ChatKey{Tenant: tenant, ChatID: req.ChatID}, math.MaxInt64, kinds)
		caughtUp = err == nil && !behind // a lag that cannot be read is not vouched for
	}
	turns, err := s.vec.retriever.Retrieve(ctx, req)
	if errors.Is(err, rag.ErrEmbedder) { // name the backend that is down
		return nil, false, unavailable("embedder", err)
	}
	if err != nil {
		return nil, false, unavailable("vector store", err)
	}
	turns, unchecked := s.dropForgotten(ctx, tenant, turns, clean)
	if unchecked != nil { // not an empty answer: the store could not say what matched
		return nil, false, storeErr("check hits", unchecked)
	}
	bigsort.Stable(turns, func(a, b *rag.Turn) int { return cmp.Compare(b.Score, a.Score) })
	// Hits pass the agent's filters, as context turns do (no query
	// exclusion, no turn cap).
	fopts := s.policy(agent).Filters
	hits = make([]SearchHit, 0, k)
	for _, t := range turns {
		if len(hits) == k {
			break
		}
		if h, ok := searchHit(t, fopts); ok {
			hits = append(hits, h)
		}
	}
	return hits, caughtUp, nil
}

// searchIndexWait bounds how long a search waits for the indexer to take
// in the turns appended before it: a pass of a few turns takes
// milliseconds; a large backlog (an import) is not waited out, and the
// search then says index_behind.
const searchIndexWait = 100 * time.Millisecond

// waitIndexed lets a search see the turns whose append returned before it,
// and the facts drawn from them (read-your-writes through this server),
// within one bound: the facts job and the indexer gather the kicks of
// a stream of appends for up to its MinInterval, and a search hurries it.
// An indexer that is failing or behind is not waited for past
// searchIndexWait: the search answers from what is indexed, and false
// says so.
func (s *Service) waitIndexed(ctx context.Context, facts bool) bool {
	ctx, cancel := context.WithTimeout(ctx, searchIndexWait)
	defer cancel()
	drawn := true
	if facts && s.jobs.arrivals != nil { // first the facts of those turns, which kicks the indexer
		drawn = s.jobs.arrivals.WaitDrawn(ctx)
	}
	if s.jobs.indexer == nil {
		return drawn
	}
	return s.jobs.indexer.WaitIndexed(ctx) && drawn
}

// searchHit is one retrieved item as a search hit; a turn the agent's
// filters drop (routing noise) is none.
func searchHit(t rag.Turn, fopts filters.Options) (SearchHit, bool) {
	switch t.Kind {
	case memory.KindEpisode:
		return episodeHit(t), true
	case memory.KindFact:
		v := t.Fact.ValidAt
		return SearchHit{Kind: memory.KindFact, ChatID: t.ChatID, Seq: t.Seq, Content: t.Content, Score: t.Score,
			CreatedAt: t.CreatedAt, FactID: t.Fact.ID, Seqs: t.Fact.Seqs, ValidAt: &v}, true
	}
	content, reason := fopts.Item(memory.Role(t.Role), t.Content)
	if reason != "" {
		return SearchHit{}, false
	}
	return SearchHit{Kind: memory.KindTurn, ChatID: t.ChatID, Seq: t.Seq, Role: t.Role, Content: content, Score: t.Score,
		CreatedAt: t.CreatedAt, Passages: passageRefs(t)}, true
}

func episodeHit(t rag.Turn) SearchHit {
	e := t.Episode
	start, end := e.StartedAt, e.EndedAt
	return SearchHit{Kind: memory.KindEpisode, ChatID: t.ChatID, Seq: e.FromSeq, Content: t.Content, Score: t.Score,
		CreatedAt: t.CreatedAt, EpisodeID: e.ID, FromSeq: e.FromSeq, ToSeq: e.ToSeq, StartedAt: &start, EndedAt: &end}
}
