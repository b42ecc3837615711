// Package engine is contextd's use-case layer: it validates requests,
// appends turns, and assembles the token-budgeted context from the store,
// the summary and retrieval. The HTTP API and the eval harness both call it,
// so the eval measures exactly what the service serves.
package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// Degraded reasons reported in answers.
const (
	DegradedVectorStore  = "vector_store_unavailable"
	DegradedEmbedder     = "embedder_unavailable"
	DegradedEmptyQuery   = "empty_query"
	DegradedSummaryStale = "summary_stale"
	DegradedSummaryWait  = "summary_wait_timeout"
	DegradedStorage      = "storage_unavailable"
	// DegradedIndexBehind: the chat a context or search answers for has
	// memory the background jobs have not taken in yet — turns not
	// indexed or whose facts are not drawn, episodes or facts not indexed
	// — after a bounded wait for them (the jobs failing, or behind a
	// backlog): see lag.go.
	DegradedIndexBehind = "index_behind"
)

// Retriever finds past turns relevant to a query (rag.Retriever).
type Retriever interface {
	Retrieve(ctx context.Context, req rag.Request) ([]rag.Turn, error)
}

// SummaryJobs extends chat summaries (jobs/worker.Worker).
type SummaryJobs interface {
	// Extend brings the chat's summary up to date now (force: even below
	// the trigger) and returns the new head and the fallbacks taken.
	Extend(ctx context.Context, key memory.ChatKey, force bool) (*memory.SummaryRecord, []string, error)
	// Kick wakes the background summariser.
	Kick()
	// InlineFor reports whether an extension for the agent is cheap enough
	// to run on the request path (the summariser declares it: no LLM).
	InlineFor(agent string) bool
	// LastDegraded names the fallbacks the chat's current summary was
	// written with.
	LastDegraded(key memory.ChatKey) []string
	// Stale reports whether head was written with other prompts than the
	// agent's current ones.
	Stale(agent string, head *memory.SummaryRecord) bool
}

// Indexer is the background indexer as the service uses it: kicked after
// an append, waited on (briefly) before a search, so that a search sees
// the turns appended before it (index.Indexer.WaitIndexed).
type Indexer interface {
	Kick()
	WaitIndexed(ctx context.Context) bool
	// Pending: the index may lack something stored (lag.go).
	Pending() bool
}

// FactsJob draws the facts of appended turns in the background
// (Arrivals): kicked after an append, waited on (briefly) before a search.
type FactsJob interface {
	Kick()
	WaitDrawn(ctx context.Context) bool
	// Pending: some turn may not be drawn yet (lag.go).
	Pending() bool
}

// ChatStore is what the use cases read and write.
type ChatStore interface {
	memory.Chats
	memory.ChatPager // a user's chats (memory.ChatsOfUser)
	SummaryHead(ctx context.Context, key memory.ChatKey) (*memory.SummaryRecord, error)
	SummaryChain(ctx context.Context, key memory.ChatKey) ([]memory.SummaryRecord, error)
}

// Service is the use-case layer: the transports' one facade over the
// engine's use cases. New builds it from Deps, resolved once.
type Service struct {
	store ChatStore
	roles storeRoles
	jobs  jobs
	vec   vectors
	trunc truncators
	conf  settings
	obs   observers
	cache caches
	// full: the last write that succeeded or ran out of space ran out
	// (StorageFull, full.go).
	full *DiskFull
	// transfer exports and imports (dump.go).
	transfer *Transfer
}

// Limits on identifiers and the query.
const (
	maxQueryBytes    = 8 << 10 // longer queries are cut, not rejected
	summaryWaitLimit = 30 * time.Second
	// summaryWaitReserve is what a wait for the summary leaves of the
	// request's deadline for the rest of the answer.
	summaryWaitReserve = 2 * time.Second
)

// InMessage is a message as a client sends it.
type InMessage struct {
	ID        string         `json:"id"`
	Role      string         `json:"role"`
	Name      string         `json:"name"`
	Content   string         `json:"content"`
	CreatedAt *time.Time     `json:"created_at"`
	Metadata  map[string]any `json:"metadata"`
}

// AppendInput is the body of POST /v1/chats/{id}/messages.
type AppendInput struct {
	UserID   string      `json:"user_id"`
	Agent    string      `json:"agent"`
	Messages []InMessage `json:"messages"`
}

// AppendOutput is the answer to an append.
type AppendOutput struct {
	ChatID     string              `json:"chat_id"`
	Appended   int                 `json:"appended"`
	Duplicates int                 `json:"duplicates"`
	LastSeq    int64               `json:"last_seq"`
	Messages   []memory.MessageRef `json:"messages"`
}

// ValidateID checks a chat, user or agent id.
func ValidateID(field, v string, required bool) error {
	if v == "" {
		if required {
			return invalid(field, "missing_field", "is required")
		}
		return nil
	}
	switch err := memory.CheckID(v); {
	case err == nil:
		return nil
	case errors.Is(err, memory.ErrIDNotUTF8):
		return invalid(field, "invalid_utf8", "%s", err)
	default:
		return invalid(field, "invalid_id", "%s", err)
	}
}

func (s *Service) policy(agent string) Policy { return s.conf.policy(agent) }

// hasNUL reports whether a JSON value holds a NUL in a key or a string.
func hasNUL(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.ContainsRune(x, 0)
	case map[string]any:
		for k, e := range x {
			if strings.ContainsRune(k, 0) || hasNUL(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNUL(e) {
				return true
			}
		}
	}
	return false
}

func truncateForError(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// Append validates and stores messages of one chat.
func (s *Service) Append(ctx context.Context, tenant, chatID string, in AppendInput) (AppendOutput, error) {
	if err := ValidateID("chat_id", chatID, true); err != nil {
		return AppendOutput{}, err
	}
	if err := ValidateID("user_id", in.UserID, false); err != nil {
		return AppendOutput{}, err
	}
	if err := ValidateID("agent", in.Agent, false); err != nil {
		return AppendOutput{}, err
	}
	if len(in.Messages) == 0 {
		return AppendOutput{}, invalid("messages", "missing_field", "must hold at least one message")
	}
	msgs, err := s.conf.limits.validateMessages("messages", in.Messages)
	if err != nil {
		return AppendOutput{}, err
	}
	return s.appendValid(ctx, tenant, chatID, in.UserID, in.Agent, msgs)
}

func (s *Service) appendValid(ctx context.Context, tenant, chatID, userID, agent string, msgs []memory.Message) (AppendOutput, error) {
	if agent == "" {
		agent = memory.DefaultAgent
	}
	// One time for the turns without one, as both stores keep it (to the
	// microsecond): a fact drawn from them later is valid at exactly it.
	now := s.obs.now().UTC().Truncate(time.Microsecond)
	for i := range msgs {
		if msgs[i].CreatedAt.IsZero() {
			msgs[i].CreatedAt = now
		}
	}
	// The store refuses another user than the chat's in the append's own
	// transaction (memory.AppendRequest.UserID): nothing is stored.
	res, err := s.store.Append(ctx, memory.AppendRequest{
		Chat: memory.ChatKey{Tenant: tenant, ChatID: chatID}, UserID: userID, Agent: agent, Messages: msgs,
	})
	if uc := (*memory.UserConflictError)(nil); errors.As(err, &uc) {
		return AppendOutput{}, checkUser(memory.Chat{ID: chatID, UserID: uc.Owner}, userID)
	}
	if err := s.full.wrote("append", err); err != nil {
		return AppendOutput{}, err
	}
	s.obs.onAppend(tenant, res.Appended)
	if res.Appended > 0 {
		if s.jobs.arrivals != nil { // facts are drawn in the background, never here
			s.jobs.arrivals.Kick()
		}
		if s.jobs.indexer != nil && s.policy(res.Chat.Agent).StoreTurns {
			s.jobs.indexer.Kick()
		}
		s.jobs.summaries.Kick()
	}
	refs := res.Messages
	if refs == nil {
		refs = []memory.MessageRef{}
	}
	return AppendOutput{ChatID: chatID, Appended: res.Appended, Duplicates: res.Duplicates, LastSeq: res.LastSeq, Messages: refs}, nil
}

// storeErr maps store errors to client errors.
func storeErr(op string, err error) error {
	switch {
	case storageFull(err): // before the context's errors: a full disk is why it failed
		return &Error{Kind: KindFull, Code: "storage_full",
			Message: "storage is full: " + op + " was not stored; retry once space is freed", Err: err}
	case errors.Is(err, memory.ErrNotFound):
		return notFound("chat")
	case errors.Is(err, memory.ErrConflict):
		return &Error{Kind: KindConflict, Code: "conflict", Message: err.Error(), Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Kind: KindUnavailable, Code: "timeout", Message: op + " timed out", Err: err}
	case errors.Is(err, context.Canceled):
		// The client went away; nothing failed on our side.
		return &Error{Kind: KindUnavailable, Code: "request_canceled", Message: op + " canceled by the client", Err: err}
	case errors.Is(err, memory.ErrUnavailable):
		return unavailable("storage", err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// Messages lists a chat's messages after a seq.
func (s *Service) Messages(ctx context.Context, tenant, chatID string, afterSeq int64, limit int) ([]memory.Message, int64, error) {
	if err := ValidateID("chat_id", chatID, true); err != nil {
		return nil, 0, err
	}
	if afterSeq < 0 {
		return nil, 0, invalid("after_seq", "invalid_value", "must be ≥ 0")
	}
	if limit <= 0 || limit > 1000 {
		return nil, 0, invalid("limit", "invalid_value", "must be between 1 and 1000")
	}
	msgs, err := s.store.Messages(ctx, memory.ChatKey{Tenant: tenant, ChatID: chatID}, afterSeq, limit)
	if err != nil {
		return nil, 0, storeErr("list messages", err)
	}
	next := afterSeq
	if len(msgs) > 0 {
		next = msgs[len(msgs)-1].Seq
	}
	return msgs, next, nil
}

// SummaryOf returns a chat's head summary and the newest chainLimit
// records of its chain, head first (chainLimit <= 0: all): a chat extended
// every few turns for months has thousands, megabytes that no caller of
// the summary needs at once.
func (s *Service) SummaryOf(ctx context.Context, tenant, chatID string, chainLimit int) (*memory.Summary, []memory.SummaryRecord, error) {
	v, _, err := s.storedSummary(ctx, tenant, chatID, chainLimit)
	return v.Summary, v.Chain, err
}

// storedSummary is SummaryOf's answer, with the chat it read.
func (s *Service) storedSummary(ctx context.Context, tenant, chatID string, chainLimit int) (SummaryView, memory.Chat, error) {
	if err := ValidateID("chat_id", chatID, true); err != nil {
		return SummaryView{}, memory.Chat{}, err
	}
	key := memory.ChatKey{Tenant: tenant, ChatID: chatID}
	chat, err := s.store.Chat(ctx, key)
	if err != nil {
		return SummaryView{}, chat, storeErr("read chat", err)
	}
	chain, err := s.store.SummaryChain(ctx, key)
	if err != nil {
		return SummaryView{}, chat, storeErr("read summary", err)
	}
	if chain == nil || chat.SummaryDirty {
		// A dirty chain may hold a deleted message: none until rebuilt.
		chain = []memory.SummaryRecord{}
	}
	if chainLimit > 0 && len(chain) > chainLimit {
		chain = chain[:chainLimit]
	}
	for i := range chain {
		chain[i].Summary.Normalize()
	}
	if len(chain) == 0 {
		return SummaryView{Chain: chain}, chat, nil
	}
	head := chain[0].Summary
	head.Stale = s.isStale(chat, &chain[0])
	return SummaryView{Summary: &head, Chain: chain}, chat, nil
}

// lagging reports whether the summary is behind what the agent's settings
// promise: as many turns outside the recent window await it as trigger a
// summary. Fewer uncovered turns are normal between two extensions (they
// are shown verbatim), not a fallback.
func (s *Service) lagging(chat memory.Chat, cursor int64) bool {
	pol := s.policy(chat.Agent)
	uncovered := chat.LastSeq - int64(pol.RecentTurns) - cursor
	return uncovered >= int64(max(1, pol.TriggerTurns))
}

// isStale: the summary lags (see lagging), or it was written with prompts
// other than the agent's current ones.
func (s *Service) isStale(chat memory.Chat, rec *memory.SummaryRecord) bool {
	return s.lagging(chat, rec.CoveredToSeq) || rec.Stale || s.promptsChanged(chat.Agent, rec)
}

// promptsChanged: the record was written with other prompts than the
// agent's current ones.
func (s *Service) promptsChanged(agent string, rec *memory.SummaryRecord) bool {
	return s.jobs.summaries.Stale(agent, rec)
}

// RefreshSummary forces a summary extension now.
func (s *Service) RefreshSummary(ctx context.Context, tenant, chatID string) (*memory.Summary, []string, error) {
	if err := ValidateID("chat_id", chatID, true); err != nil {
		return nil, nil, err
	}
	key := memory.ChatKey{Tenant: tenant, ChatID: chatID}
	if _, err := s.store.Chat(ctx, key); err != nil {
		return nil, nil, storeErr("read chat", err)
	}
	rec, degraded, err := s.jobs.summaries.Extend(ctx, key, true)
	if err != nil {
		return nil, degraded, storeErr("refresh summary", err)
	}
	if slices.Contains(degraded, DegradedSummaryRebuilding) {
		return nil, degraded, nil // the stored summary may hold a deleted message
	}
	if rec == nil {
		head, err := s.store.SummaryHead(ctx, key)
		if err != nil {
			return nil, degraded, storeErr("read summary", err)
		}
		if head == nil {
			return nil, degraded, nil
		}
		rec = head
	}
	sum := rec.Summary
	sum.Normalize()
	return &sum, degraded, nil
}
