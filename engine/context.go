package engine

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/filters"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
	"github.com/contextd/contextd/truncation"
)

// ContextInput is the body of POST /v1/context.
type ContextInput struct {
	ChatID       string      `json:"chat_id"`
	UserID       string      `json:"user_id"`
	Agent        string      `json:"agent"`
	Query        string      `json:"query"`
	Append       []InMessage `json:"append"`
	BudgetTokens *int        `json:"budget_tokens"`
	Strategy     string      `json:"strategy"`
	// WaitForSummary waits (up to a deadline) for a fresh summary.
	WaitForSummary bool `json:"wait_for_summary"`
	// RAGScope overrides memory.rag_scope: "chat" or "user".
	RAGScope string `json:"rag_scope"`
}

// ContextResult is the answer of POST /v1/context.
type ContextResult struct {
	ChatID   string        `json:"chat_id"`
	Agent    string        `json:"agent"`
	Strategy string        `json:"strategy"`
	Context  string        `json:"context"`
	Messages []ChatMessage `json:"messages"`
	Sections Sections      `json:"sections"`
	Usage    Usage         `json:"usage"`
	Degraded []string      `json:"degraded"`
	// Timings are for the eval harness and metrics; not serialised.
	RetrievalTime time.Duration `json:"-"`
	AssemblyTime  time.Duration `json:"-"`
}

func validStrategy(s string) bool {
	return s == StrategyNone || s == StrategyRunningSummary || s == StrategyRAG
}

// Context appends the request's messages (if any) and assembles the chat's
// context for the query.
func (s *Service) Context(ctx context.Context, tenant string, in ContextInput) (*ContextResult, error) {
	if err := ValidateID("chat_id", in.ChatID, true); err != nil {
		return nil, err
	}
	if err := ValidateID("user_id", in.UserID, false); err != nil {
		return nil, err
	}
	if err := ValidateID("agent", in.Agent, false); err != nil {
		return nil, err
	}
	if !utf8.ValidString(in.Query) {
		return nil, invalid("query", "invalid_utf8", "is not valid UTF-8")
	}
	if in.Strategy != "" && !validStrategy(in.Strategy) {
		return nil, invalid("strategy", "invalid_value", "%q is not one of none, running_summary, rag_augmented", truncateForError(in.Strategy))
	}
	if in.BudgetTokens != nil && *in.BudgetTokens <= 0 {
		return nil, invalid("budget_tokens", "invalid_value", "must be a positive number of tokens")
	}
	if in.BudgetTokens != nil && *in.BudgetTokens > 1_000_000 {
		return nil, invalid("budget_tokens", "invalid_value", "must be at most 1000000")
	}
	if in.RAGScope != "" && in.RAGScope != "chat" && in.RAGScope != "user" {
		return nil, invalid("rag_scope", "invalid_value", "must be chat or user")
	}
	var toAppend []memory.Message
	if len(in.Append) > 0 {
		msgs, err := s.validateMessages("append", in.Append)
		if err != nil {
			return nil, err
		}
		toAppend = msgs
	}
	key := memory.ChatKey{Tenant: tenant, ChatID: in.ChatID}
	var chat memory.Chat
	if len(toAppend) > 0 {
		if _, err := s.appendValid(ctx, tenant, in.ChatID, in.UserID, in.Agent, toAppend); err != nil {
			return nil, err
		}
	}
	chat, err := s.Store.Chat(ctx, key)
	if err != nil {
		return nil, storeErr("read chat", err)
	}
	return s.assemble(ctx, chat, in)
}

func (s *Service) assemble(ctx context.Context, chat memory.Chat, in ContextInput) (*ContextResult, error) {
	agentName := in.Agent
	if agentName == "" {
		agentName = chat.Agent
	}
	agent := s.Config.Agent(agentName)
	mem := agent.Memory
	strategy := in.Strategy
	if strategy == "" {
		strategy = mem.Strategy
	}
	budget := mem.BudgetTokens
	if in.BudgetTokens != nil {
		budget = *in.BudgetTokens
	}
	res := &ContextResult{ChatID: chat.ID, Agent: agentName, Strategy: strategy, Degraded: []string{}}
	degrade := func(reasons ...string) {
		for _, r := range reasons {
			if r == "" {
				continue
			}
			dup := false
			for _, d := range res.Degraded {
				dup = dup || d == r
			}
			if !dup {
				res.Degraded = append(res.Degraded, r)
			}
		}
	}
	key := chat.Key()
	query := cutQuery(in.Query)

	// Summary state.
	var head *memory.SummaryRecord
	if strategy != StrategyNone {
		if in.WaitForSummary && s.Summaries != nil {
			wctx, cancel := context.WithTimeout(ctx, summaryWaitLimit)
			_, reasons, err := s.Summaries.Extend(wctx, key, true)
			cancel()
			degrade(reasons...)
			if err != nil {
				s.log().Warn("wait for summary", "chat", chat.ID, "err", err)
				degrade(DegradedSummaryWait)
			}
		}
		h, err := s.Store.SummaryHead(ctx, key)
		if err != nil {
			return nil, storeErr("read summary", err)
		}
		head = h
	}
	var cursor int64
	if head != nil {
		cursor = head.CoveredToSeq
	}

	// Which turns are candidates for verbatim display: the recent window,
	// plus (when a summary is kept) the turns it does not cover yet.
	last := chat.LastSeq
	window := int64(mem.SummaryRecentTurns)
	if window < 1 {
		window = 1
	}
	windowStart := last - window + 1
	if windowStart < 1 {
		windowStart = 1
	}
	var loadFrom int64 // first seq loaded
	switch strategy {
	case StrategyNone:
		loadFrom = max(1, last-int64(s.maxLoad(1000))+1)
	default:
		loadFrom = min(cursor+1, windowStart)
		if pending := int64(s.maxLoad(400)); windowStart-loadFrom > pending {
			loadFrom = windowStart - pending
		}
	}
	var loaded []memory.Message
	if last >= loadFrom {
		msgs, err := s.Store.Messages(s.storeCtx(ctx), key, loadFrom-1, int(last-loadFrom+1))
		if err != nil {
			return nil, storeErr("read messages", err)
		}
		loaded = msgs
	}
	// Turns older than what was loaded, not covered by a summary, are
	// dropped (counted, never silent).
	var neverLoaded int64
	if strategy == StrategyNone {
		neverLoaded = loadFrom - 1
	} else if loadFrom-1 > cursor {
		neverLoaded = loadFrom - 1 - cursor
	}

	// Filters.
	fopts, err := filterOptions(agent, query)
	if err != nil {
		return nil, &Error{Kind: KindInvalid, Code: "invalid_config", Message: err.Error()}
	}
	fres := filters.Apply(loaded, fopts)
	var capped []int64
	for _, r := range fres.Removed {
		if r.Reason == "max_turns" {
			capped = append(capped, r.Seq)
		} else {
			res.Usage.FilteredTurns++
		}
	}

	// Truncation of each verbatim candidate.
	topts := s.truncOptions(mem, query)
	verbatim := make([]Turn, 0, len(fres.Kept))
	for _, m := range fres.Kept {
		content, info := s.truncate(ctx, m.Content, topts)
		if info.Fallback != "" {
			degrade("truncation_" + info.Fallback)
		}
		t := Turn{Seq: m.Seq, Role: string(m.Role), Name: m.Name, Content: content, CreatedAt: m.CreatedAt, Truncated: info.Truncated}
		t.Tokens = s.tokens().cost(turnKey{chat.Tenant, chat.ID, m.Seq, len(content) + len(m.Name)}, renderTurn(t))
		verbatim = append(verbatim, t)
	}
	if strategy != StrategyNone && s.lagging(chat, cursor) {
		// The summary lags: its uncovered turns are shown verbatim instead,
		// ahead of RAG hits.
		degrade(DegradedSummaryStale)
		if s.Summaries != nil {
			s.Summaries.Kick()
		}
	}

	// Retrieval.
	var ragTurns []RAGTurn
	if strategy == StrategyRAG {
		start := time.Now()
		// Pending turns (older than the window, not yet summarised) may come
		// back as hits; the assembler shows each turn once.
		ragTurns, err = s.retrieve(ctx, chat, mem, in, query, budget, windowStart, fopts, topts, degrade)
		res.RetrievalTime = time.Since(start)
		if err != nil {
			return nil, err
		}
	}

	// Assembly.
	start := time.Now()
	var summary *memory.Summary
	if head != nil && strategy != StrategyNone {
		if dr, ok := s.Summaries.(degradedReporter); ok {
			// Fallbacks the background summariser took for this summary.
			degrade(dr.LastDegraded(chat.Key())...)
		}
		sum := head.Summary
		sum.Normalize()
		sum.Stale = s.isStale(chat, head)
		summary = &sum
	}
	mustKeep := windowStart
	if strategy == StrategyNone {
		mustKeep = 0
	}
	lags := strategy != StrategyNone && s.lagging(chat, cursor)
	a := Assemble(AssemblyInput{Budget: budget, Strategy: strategy, RAG: ragTurns, Summary: summary, Verbatim: verbatim, MustKeepFrom: mustKeep, SummaryLags: lags})
	res.AssemblyTime = time.Since(start)

	res.Context = a.Context
	res.Messages = a.Messages
	if res.Messages == nil {
		res.Messages = []ChatMessage{}
	}
	res.Sections = a.Sections
	usage := a.Usage
	usage.FilteredTurns = res.Usage.FilteredTurns
	if summary != nil && a.Sections.Summary != nil {
		usage.SummarizedTurns = summary.CoveredToSeq
	}
	dropped := append(append([]int64(nil), capped...), a.DroppedSeqs...)
	usage.DroppedTurns = neverLoaded + int64(len(dropped))
	if summary != nil && a.Sections.Summary == nil {
		// The summary did not fit: the turns it covers are dropped too.
		usage.DroppedTurns += summary.CoveredToSeq
	}
	if usage.DroppedTurns > 0 && usage.DroppedTurns <= 100 && neverLoaded == 0 && (summary == nil || a.Sections.Summary != nil) {
		usage.DroppedSeqs = sortedSeqs(dropped)
	}
	res.Usage = usage
	if usage.DroppedTurns > 0 && strategy != StrategyNone && s.Summaries != nil {
		// Emergency path: the context does not hold everything; summarise
		// sooner so the next answer does.
		s.Summaries.Kick()
	}
	if s.Observe != nil {
		s.Observe(agentName, res)
	}
	return res, nil
}

// degradedReporter is implemented by summarisers that remember which
// fallbacks a chat's current summary was written with.
type degradedReporter interface {
	LastDegraded(key memory.ChatKey) []string
}

func (s *Service) maxLoad(def int) int {
	if s.MaxLoad > 0 {
		return s.MaxLoad
	}
	return def
}

// storeCtx is the context for store reads (a seam for per-call deadlines).
func (s *Service) storeCtx(ctx context.Context) context.Context { return ctx }

func (s *Service) retrieve(ctx context.Context, chat memory.Chat, mem config.Memory, in ContextInput, query string, budget int, excludeFrom int64, fopts filters.Options, topts truncation.Options, degrade func(...string)) ([]RAGTurn, error) {
	if s.Retriever == nil {
		degrade(DegradedVectorStore)
		return nil, nil
	}
	if strings.TrimSpace(query) == "" {
		// Nothing to search for: the answer falls back to recency.
		degrade(DegradedEmptyQuery)
		return nil, nil
	}
	scope := mem.RAGScope
	if in.RAGScope != "" {
		scope = in.RAGScope
	}
	k := mem.RAGK
	if mem.RAGFill {
		// Enough candidates to fill the budget's room with short (~20
		// token) turns; the assembler stops when the room is used.
		k = max(k, min(mem.RAGMaxHits, budget/20))
	}
	turns, err := s.Retriever.Retrieve(ctx, rag.Request{
		Tenant: chat.Tenant, ChatID: chat.ID, UserID: chat.UserID, Agent: chat.Agent,
		Query: query, K: k, Threshold: float32(mem.RAGSimilarityThreshold),
		Scope: scope, Neighbors: mem.RAGNeighbors, ExcludeFromSeq: excludeFrom,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, storeErr("retrieve", ctx.Err())
		}
		if errors.Is(err, rag.ErrEmbedder) {
			degrade(DegradedEmbedder)
		} else {
			degrade(DegradedVectorStore)
		}
		s.log().Warn("retrieval failed; answering without RAG", "chat", chat.ID, "err", err)
		return nil, nil
	}
	// The retriever answers chronologically; the assembler packs best first.
	sort.SliceStable(turns, func(i, j int) bool { return turns[i].Score > turns[j].Score })
	// Hits pass the same filters as verbatim turns (routing noise skipped,
	// agent labels stripped, the current query excluded), but no turn cap.
	fopts.MaxTurns = 0
	asMsgs := make([]memory.Message, 0, len(turns))
	for i, t := range turns {
		if t.ChatID == chat.ID && t.Seq >= excludeFrom {
			continue // belt and braces: never repeat the recent window
		}
		asMsgs = append(asMsgs, memory.Message{Seq: int64(i), Role: memory.Role(t.Role), Content: t.Content})
	}
	kept := filters.Apply(asMsgs, fopts).Kept
	out := make([]RAGTurn, 0, len(kept))
	for _, m := range kept {
		t := turns[m.Seq]
		content, _ := s.truncate(ctx, m.Content, topts)
		rt := RAGTurn{ChatID: chatIDIfOther(t.ChatID, chat.ID), Seq: t.Seq, Role: t.Role, Content: content, Score: t.Score, CreatedAt: t.CreatedAt, Neighbor: t.Neighbor}
		rt.Tokens = s.tokens().cost(turnKey{chat.Tenant, t.ChatID, t.Seq, len(content)}, renderTurn(Turn{Role: rt.Role, Content: content}))
		out = append(out, rt)
	}
	return out, nil
}

// chatIDIfOther names the chat only for hits from another chat, keeping
// in-chat headers short.
func chatIDIfOther(hit, current string) string {
	if hit == current {
		return ""
	}
	return hit
}

func filterOptions(agent config.Agent, query string) (filters.Options, error) {
	o, err := filters.FromConfig(agent.Filters, agent.Memory.MaxTurns)
	if err != nil {
		return filters.Options{}, err
	}
	o.ExcludeQuery = query
	return o, nil
}

func (s *Service) truncOptions(mem config.Memory, query string) truncation.Options {
	st, err := truncation.ParseStrategy(mem.TruncationStrategy)
	if err != nil {
		st = truncation.Strategy("middle")
	}
	return truncation.Options{Strategy: st, MaxChars: mem.TruncationMaxChars, Query: query, Scorer: s.Scorer, Condenser: s.Condenser}
}

func (s *Service) truncate(ctx context.Context, text string, o truncation.Options) (string, truncation.Info) {
	if o.MaxChars <= 0 || utf8.RuneCountInString(text) <= o.MaxChars {
		return text, truncation.Info{}
	}
	return truncation.Truncate(ctx, text, o)
}

func sortedSeqs(s []int64) []int64 {
	out := append([]int64(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
