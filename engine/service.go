// Package engine is contextd's use-case layer: it validates requests,
// appends turns, and assembles the token-budgeted context from the store,
// the summary and retrieval. The HTTP API and the eval harness both call it,
// so the eval measures exactly what the service serves.
package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"

	"github.com/contextd/contextd/filters"
	"github.com/contextd/contextd/internal/bigsort"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
	"github.com/contextd/contextd/truncation"
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

// Summaries extends chat summaries (jobs/worker.Worker).
type Summaries interface {
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
// the turns appended before it (rag.Indexer.WaitIndexed).
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

// Store is what the use cases read and write.
type Store interface {
	memory.Chats
	memory.ChatPager // a user's chats (memory.ChatsOfUser)
	SummaryHead(ctx context.Context, key memory.ChatKey) (*memory.SummaryRecord, error)
	SummaryChain(ctx context.Context, key memory.ChatKey) ([]memory.SummaryRecord, error)
}

// Service is the use-case layer. Retriever, Summaries and Indexer may be nil
// (no vector store; no background summarisation; no indexing).
type Service struct {
	// Policy resolves an agent's settings (nil: DefaultPolicy for all).
	Policy func(agent string) Policy
	Limits Limits
	Store  Store
	// Profiles are the users' cross-chat profiles (nil: none are kept).
	Profiles Profiles
	// ProfileDegraded, when set, names the fallbacks a user's last profile
	// merge took (reported in that user's contexts).
	ProfileDegraded func(tenant, userID string) []string
	// Episodes lists chats' closed episodes (nil: none are kept).
	EpisodeStore memory.EpisodeReader
	// FactStore lists chats' facts (nil: none are kept).
	FactStore memory.FactStore
	// Arrivals draws new turns' facts in the background (nil: none are
	// drawn on arrival, only by episodes).
	Arrivals FactsJob
	// Lags reads a chat's derived memory not yet indexed or drawn, for
	// index_behind (nil: a search says index_behind when its wait for the
	// indexer failed, a context never).
	Lags memory.ChatLags
	// Dumper exports chats and users in the dump format (nil: export is
	// not implemented).
	Dumper memory.Dumper
	// Forget deletes one message (nil: not implemented).
	Forget    Forgetter
	Index     rag.Index
	Retriever Retriever
	Summaries Summaries
	// Previews, when set, give a lagging summary's answers the extension
	// the worker is about to write (see preview.go).
	Previews Previewer
	// LLMEpisodes: an LLM writes the episodes' summaries (the summariser
	// declares it); packing then keeps a retrieved episode beside its turns.
	LLMEpisodes bool
	Indexer     Indexer
	// Scorer and Condenser back the semantic and llm truncation strategies.
	Scorer    truncation.Scorer
	Condenser truncation.Condenser
	Logger    *slog.Logger
	Now       func() time.Time
	// Observe, when set, is told about every assembled context (metrics).
	Observe func(agent string, a *ContextResult)
	// OnAppend, when set, is told how many turns each append stored.
	OnAppend func(tenant string, appended int)
	// Tracer opens a span per stage of /v1/context (nil: no-op).
	Tracer   trace.Tracer
	tokOnce  sync.Once
	tok      *tokenCache
	turnOnce sync.Once
	turnc    *turnCache
	profOnce sync.Once
	prof     *profileCache
	headOnce sync.Once
	headc    *headCache
	stand    standingCache
	updates  updateCache
	// full: the last write that succeeded or ran out of space ran out
	// (StorageFull, full.go).
	full atomic.Bool
	// MaxLoad caps the verbatim candidates read per request (default 400
	// pending turns with a summary, 1000 with strategy none); older turns
	// that fit nowhere are counted as dropped without being read.
	MaxLoad int

	// AgentDefined reports whether agents.yaml defines the agent; an
	// undefined one gets the supervisor's settings and contexts say
	// unknown_agent (nil: every agent is defined).
	AgentDefined func(agent string) bool
}

// Limits on identifiers and the query.
const (
	maxQueryBytes    = 8 << 10 // longer queries are cut, not rejected
	summaryWaitLimit = 30 * time.Second
	// summaryWaitReserve is what a wait for the summary leaves of the
	// request's deadline for the rest of the answer.
	summaryWaitReserve = 2 * time.Second
)

// tokens returns the service's cache of turn token counts.
func (s *Service) tokens() *tokenCache {
	s.tokOnce.Do(func() { s.tok = newTokenCache(1 << 18) })
	return s.tok
}

// standing returns the service's cache of chats' standing instructions.
func (s *Service) standing() *standingCache { return &s.stand }

// turns returns the service's cache of hot chats' turns.
func (s *Service) turns() *turnCache {
	s.turnOnce.Do(func() { s.turnc = newTurnCache(defaultTurnCacheBytes) })
	return s.turnc
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now().UTC()
}

func (s *Service) log() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.New(slog.DiscardHandler)
}

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

func (s *Service) policy(agent string) Policy {
	if s.Policy == nil {
		return DefaultPolicy()
	}
	return s.Policy(agent)
}

func (s *Service) maxMessages() int {
	if n := s.Limits.MaxMessagesPerRequest; n > 0 {
		return n
	}
	return 1000
}

func (s *Service) maxMessageBytes() int {
	if n := s.Limits.MaxMessageBytes; n > 0 {
		return n
	}
	return 256 << 10
}

// validateMessages turns client messages into store messages, rejecting the
// whole batch on the first bad one so nothing is half-stored.
func (s *Service) validateMessages(field string, in []InMessage) ([]memory.Message, error) {
	if len(in) > s.maxMessages() {
		return nil, tooLarge(field, "holds %d messages; at most %d per request", len(in), s.maxMessages())
	}
	out := make([]memory.Message, 0, len(in))
	byID := map[string]int{}
	for i, m := range in {
		f := fmt.Sprintf("%s[%d]", field, i)
		role := memory.Role(m.Role)
		if m.Role == "" {
			return nil, invalid(f+".role", "missing_field", "is required (user, assistant, system or tool)")
		}
		if !role.Valid() {
			return nil, invalid(f+".role", "invalid_role", "%q is not one of user, assistant, system, tool", truncateForError(m.Role))
		}
		if !utf8.ValidString(m.Content) {
			return nil, invalid(f+".content", "invalid_utf8", "is not valid UTF-8")
		}
		if strings.TrimSpace(m.Content) == "" {
			return nil, invalid(f+".content", "empty_content", "is empty")
		}
		if strings.ContainsRune(m.Content, 0) {
			// No SQL text type stores NUL; refuse it rather than alter it.
			return nil, invalid(f+".content", "invalid_content", "contains a NUL character")
		}
		if len(m.Content) > s.maxMessageBytes() {
			return nil, tooLarge(f+".content", "is %d bytes; at most %d per message (server.max_message_bytes)", len(m.Content), s.maxMessageBytes())
		}
		if m.ID != "" {
			if err := ValidateID(f+".id", m.ID, false); err != nil {
				return nil, err
			}
			// A retry repeats a message whole; the same id on another
			// message is the caller's bug, which no retry mends.
			if j, ok := byID[m.ID]; ok && (in[j].Role != m.Role || in[j].Name != m.Name || in[j].Content != m.Content) {
				return nil, invalid(f+".id", "invalid_value", "%q is also the id of %s[%d], with another role, name or content", truncateForError(m.ID), field, j)
			}
			byID[m.ID] = i
		}
		if err := ValidateID(f+".name", m.Name, false); err != nil {
			return nil, err
		}
		if hasNUL(m.Metadata) { // as in content: no SQL text type stores it
			return nil, invalid(f+".metadata", "invalid_content", "contains a NUL character")
		}
		msg := memory.Message{ID: m.ID, Role: role, Name: m.Name, Content: m.Content, Metadata: m.Metadata}
		if m.CreatedAt != nil {
			if m.CreatedAt.Before(time.Unix(0, 0)) { // the zero time would read as unset: now
				return nil, invalid(f+".created_at", "invalid_time", "%s is before 1970-01-01; leave it out for the time of the append", m.CreatedAt.UTC().Format(time.RFC3339))
			}
			msg.CreatedAt = m.CreatedAt.UTC()
		}
		out = append(out, msg)
	}
	return out, nil
}

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
	msgs, err := s.validateMessages("messages", in.Messages)
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
	now := s.now().UTC().Truncate(time.Microsecond)
	for i := range msgs {
		if msgs[i].CreatedAt.IsZero() {
			msgs[i].CreatedAt = now
		}
	}
	// The store refuses another user than the chat's in the append's own
	// transaction (memory.AppendRequest.UserID): nothing is stored.
	res, err := s.Store.Append(ctx, memory.AppendRequest{
		Chat: memory.ChatKey{Tenant: tenant, ChatID: chatID}, UserID: userID, Agent: agent, Messages: msgs,
	})
	if uc := (*memory.UserConflictError)(nil); errors.As(err, &uc) {
		return AppendOutput{}, checkUser(memory.Chat{ID: chatID, UserID: uc.Owner}, userID)
	}
	if err := s.wrote("append", err); err != nil {
		return AppendOutput{}, err
	}
	if s.OnAppend != nil {
		s.OnAppend(tenant, res.Appended)
	}
	if res.Appended > 0 {
		if s.Arrivals != nil { // facts are drawn in the background, never here
			s.Arrivals.Kick()
		}
		if s.Indexer != nil && s.policy(res.Chat.Agent).StoreTurns {
			s.Indexer.Kick()
		}
		if s.Summaries != nil {
			s.Summaries.Kick()
		}
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
	msgs, err := s.Store.Messages(ctx, memory.ChatKey{Tenant: tenant, ChatID: chatID}, afterSeq, limit)
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
	chat, err := s.Store.Chat(ctx, key)
	if err != nil {
		return SummaryView{}, chat, storeErr("read chat", err)
	}
	chain, err := s.Store.SummaryChain(ctx, key)
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
	return s.Summaries != nil && s.Summaries.Stale(agent, rec)
}

// RefreshSummary forces a summary extension now.
func (s *Service) RefreshSummary(ctx context.Context, tenant, chatID string) (*memory.Summary, []string, error) {
	if err := ValidateID("chat_id", chatID, true); err != nil {
		return nil, nil, err
	}
	key := memory.ChatKey{Tenant: tenant, ChatID: chatID}
	if _, err := s.Store.Chat(ctx, key); err != nil {
		return nil, nil, storeErr("read chat", err)
	}
	if s.Summaries == nil {
		return nil, nil, &Error{Kind: KindNotImplemented, Code: "summaries_disabled", Message: "background summarisation is not running"}
	}
	rec, degraded, err := s.Summaries.Extend(ctx, key, true)
	if err != nil {
		return nil, degraded, storeErr("refresh summary", err)
	}
	if slices.Contains(degraded, DegradedSummaryRebuilding) {
		return nil, degraded, nil // the stored summary may hold a deleted message
	}
	if rec == nil {
		head, err := s.Store.SummaryHead(ctx, key)
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

// DeleteChat erases a chat from every store: vectors first, so that a
// failing index leaves the chat intact and the delete can be retried. An
// unknown chat is a 404, after a sweep of the index all the same: a retry
// of an erase whose last sweep failed (after the rows were gone) must not
// leave its vectors behind.
func (s *Service) DeleteChat(ctx context.Context, tenant, chatID string) error {
	if err := ValidateID("chat_id", chatID, true); err != nil {
		return err
	}
	key := memory.ChatKey{Tenant: tenant, ChatID: chatID}
	chat, err := s.Store.Chat(ctx, key)
	if errors.Is(err, memory.ErrNotFound) && s.Index != nil {
		if err := s.Index.Delete(ctx, rag.Filter{Tenant: tenant, ChatIDs: []string{chatID}}); err != nil {
			return s.indexErr("erase", err)
		}
	}
	if err != nil {
		return storeErr("read chat", err)
	}
	if s.Index != nil {
		if err := s.Index.Delete(ctx, rag.Filter{Tenant: tenant, ChatIDs: []string{chatID}}); err != nil {
			return s.indexErr("erase", err)
		}
	}
	if err := s.wrote("delete chat", s.Store.DeleteChat(ctx, key)); err != nil {
		return err
	}
	if err := s.forgetChatInProfile(ctx, chat); err != nil {
		return err
	}
	// A turn indexed between the two deletes would survive: sweep again.
	if s.Index != nil {
		if err := s.Index.Delete(ctx, rag.Filter{Tenant: tenant, ChatIDs: []string{chatID}}); err != nil {
			return s.indexErr("erase", err)
		}
	}
	return nil
}

// DeleteUser erases every chat of a user; it returns how many.
func (s *Service) DeleteUser(ctx context.Context, tenant, userID string) (int, error) {
	if err := ValidateID("user_id", userID, true); err != nil {
		return 0, err
	}
	ids, err := memory.ChatsOfUser(ctx, s.Store, tenant, userID)
	if err != nil {
		return 0, storeErr("list chats", err)
	}
	if len(ids) == 0 {
		// A retry of an erase that failed after the chats were gone: the
		// rest is swept all the same, and the answer is a 404.
		if err := s.eraseUserRest(ctx, tenant, userID); err != nil {
			return 0, err
		}
		return 0, notFound("user")
	}
	if s.Index != nil {
		if err := s.Index.Delete(ctx, rag.Filter{Tenant: tenant, UserID: userID}); err != nil {
			return 0, s.indexErr("erase", err)
		}
	}
	n := 0
	for _, id := range ids {
		err := s.Store.DeleteChat(ctx, memory.ChatKey{Tenant: tenant, ChatID: id})
		if err != nil && !errors.Is(err, memory.ErrNotFound) {
			return n, s.wrote("delete chat", err)
		}
		n++
	}
	return n, s.eraseUserRest(ctx, tenant, userID)
}

// eraseUserRest sweeps the index of a user's points and erases their
// profile: what is left once their chats are gone.
func (s *Service) eraseUserRest(ctx context.Context, tenant, userID string) error {
	if s.Index != nil {
		if err := s.Index.Delete(ctx, rag.Filter{Tenant: tenant, UserID: userID}); err != nil {
			return s.indexErr("erase", err)
		}
	}
	if s.Profiles != nil {
		if err := s.wrote("delete profile", s.Profiles.DeleteProfile(ctx, tenant, userID)); err != nil {
			return err
		}
	}
	return nil
}

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
		chat, err := s.Store.Chat(ctx, key)
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
	if s.Retriever == nil { // after the checks a retry could not mend
		return nil, false, unavailable("vector store", errors.New("vector.driver is none"))
	}
	// Over-fetch: the filters below may remove routing noise.
	req.K = k * 2
	req.Threshold = s.searchThreshold(agent, in.MinScore)
	kinds := kindsOf(in.Kinds, s.episodesRetrieved(agent))
	caughtUp = s.waitIndexed(ctx, kinds.facts)
	if req.ChatID != "" && s.Lags != nil {
		// The chat's own lag decides, not another chat's backlog.
		behind, err := s.chatBehind(ctx, memory.ChatKey{Tenant: tenant, ChatID: req.ChatID}, math.MaxInt64, kinds)
		caughtUp = err == nil && !behind // a lag that cannot be read is not vouched for
	}
	turns, err := s.Retriever.Retrieve(ctx, req)
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
	if facts && s.Arrivals != nil { // first the facts of those turns, which kicks the indexer
		drawn = s.Arrivals.WaitDrawn(ctx)
	}
	if s.Indexer == nil {
		return drawn
	}
	return s.Indexer.WaitIndexed(ctx) && drawn
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
