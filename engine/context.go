package engine

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/contextd/contextd/filters"
	"github.com/contextd/contextd/internal/bigsort"
	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/internal/tracing"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
	"github.com/contextd/contextd/truncation"
)

// Context appends the request's messages (if any) and assembles the chat's
// context for the query.
func (s *Service) Context(ctx context.Context, tenant string, in ContextInput) (*ContextResult, error) {
	if err := validateContextInput(in); err != nil {
		return nil, err
	}
	var toAppend []memory.Message
	if len(in.Append) > 0 {
		msgs, err := s.conf.limits.validateMessages("append", in.Append)
		if err != nil {
			return nil, err
		}
		toAppend = msgs
	}
	if len(toAppend) > 0 {
		actx, span := tracing.Start(ctx, s.obs.tracer, spanAppend, tenant, in.ChatID)
		_, err := s.appendValid(actx, tenant, in.ChatID, in.UserID, in.Agent, toAppend)
		if tracing.End(span, err); err != nil {
			return nil, err
		}
	}
	pctx, span := s.planSpan(ctx, tenant, in.ChatID)
	chat, err := s.store.Chat(pctx, memory.ChatKey{Tenant: tenant, ChatID: in.ChatID})
	if tracing.End(span, err); err != nil {
		return nil, storeErr("read chat", err)
	}
	if err := checkUser(chat, in.UserID); err != nil {
		return nil, err
	}
	return s.assemble(ctx, s.newPlan(chat, in))
}

func validateContextInput(in ContextInput) error {
	for _, id := range []struct {
		field, v string
		required bool
	}{{"chat_id", in.ChatID, true}, {"user_id", in.UserID, false}, {"agent", in.Agent, false}} {
		if err := ValidateID(id.field, id.v, id.required); err != nil {
			return err
		}
	}
	if !utf8.ValidString(in.Query) {
		return invalid("query", "invalid_utf8", "is not valid UTF-8")
	}
	if _, ok := ParseStrategy(in.Strategy); in.Strategy != "" && !ok {
		return invalid("strategy", "invalid_value", "%q is not one of none, running_summary, rag_augmented", truncateForError(in.Strategy))
	}
	if in.BudgetTokens != nil && *in.BudgetTokens <= 0 {
		return invalid("budget_tokens", "invalid_value", "must be a positive number of tokens")
	}
	if in.BudgetTokens != nil && *in.BudgetTokens > 1_000_000 {
		return invalid("budget_tokens", "invalid_value", "must be at most 1000000")
	}
	if in.RAGScope != "" && in.RAGScope != rag.ScopeChat && in.RAGScope != rag.ScopeUser {
		return invalid("rag_scope", "invalid_value", "must be chat or user")
	}
	if _, err := parseTimeRange(in.Since, in.Until); err != nil {
		return err
	}
	for _, part := range in.Include {
		if part != IncludeContext && part != IncludeMessages && part != IncludeSections {
			return invalid("include", "invalid_value", "%q is not one of context, messages, sections", truncateForError(part))
		}
	}
	return nil
}

// plan is everything one request resolves once, before any stage runs:
// the agent's policy, the strategy, the budget, the query, the filter and
// truncation options, and (after loadSummary) the cursor and the window.
type plan struct {
	chat     memory.Chat
	agent    string
	policy   Policy
	strategy Strategy
	budget   int
	query    string
	scope    string
	tok      tokens.Counter // the agent's tokenizer
	times    timeRange      // since/until for retrieval
	wait     bool
	filters  filters.Options    // the agent's, with the current query
	trunc    truncation.Options // the agent's, with the current query
	ranked   bool               // one ranked budget (a query, rag_augmented)
	// verbTrunc truncates the turns offered verbatim (with a ranked
	// budget, shorter: see rankedTurnChars).
	verbTrunc truncation.Options

	head        *memory.SummaryRecord
	cursor      int64 // covered_to_seq of the head (0: none)
	windowStart int64 // first seq of the recent window
	// retrieveFrom: turns from it on are never retrieved (they are shown
	// whatever the query): the window, or with a ranked budget the floor.
	retrieveFrom int64
	lags         bool             // the summary lags its trigger (summary_stale)
	names        map[int64]string // speakers' names by seq (nil: the chat names none)
	standing     map[int64]bool   // the standing turns offered beside the hits (standing.go)
	rebuilding   bool             // the summary is dirty: only its clean start served (summary_rebuilding)
	indexBehind  bool             // the chat's memory before the window lags (lag.go)
}

func (s *Service) newPlan(chat memory.Chat, in ContextInput) *plan {
	p := &plan{chat: chat, agent: in.Agent, query: rag.TruncateQuery(in.Query), wait: in.WaitForSummary}
	if p.agent == "" {
		p.agent = chat.Agent
	}
	p.policy = s.policy(p.agent)
	p.strategy = p.policy.Strategy
	if st, ok := ParseStrategy(in.Strategy); ok {
		p.strategy = st
	}
	p.tok = p.policy.Tokenizer
	if p.tok == nil {
		p.tok = tokens.CL100K
	}
	p.budget = p.policy.BudgetTokens
	if in.BudgetTokens != nil {
		p.budget = *in.BudgetTokens
	}
	p.times, _ = parseTimeRange(in.Since, in.Until) // validated before
	p.scope = p.policy.RAGScope
	if in.RAGScope != "" {
		p.scope = in.RAGScope
	}
	p.filters = p.policy.Filters
	// The whole query, not p.query: a query past rag.MaxQueryBytes is cut
	// for retrieval, but the stored turn it matches is whole.
	p.filters.ExcludeQuery = in.Query
	p.trunc = p.policy.Truncation
	p.trunc.Query = p.query
	p.trunc.Scorer, p.trunc.Condenser = s.trunc.scorer, s.trunc.condenser
	p.trunc.Tokens = p.tok
	p.ranked = p.strategy == StrategyRAG && strings.TrimSpace(p.query) != ""
	p.verbTrunc = p.trunc
	if p.ranked {
		p.verbTrunc.MaxChars = rankedTurnChars(p.trunc.MaxChars, p.budget, p.policy.FloorTurns)
	}
	last := chat.LastSeq
	p.windowStart = max(1, last-int64(max(1, p.policy.RecentTurns))+1)
	p.retrieveFrom = p.windowStart
	if p.ranked {
		// One ranked budget shows the window beyond the floor only as far
		// as it earns its place: a turn there may be the one the query
		// asks for, so retrieval reaches it (the packer shows each turn
		// once, in the tail when the tail reaches it).
		p.retrieveFrom = max(p.windowStart, last-int64(floorTurns(p.policy.FloorTurns))+1)
	}
	return p
}

// assemble runs the stages: load → retrieve → summary → pack → account.
func (s *Service) assemble(ctx context.Context, p *plan) (*ContextResult, error) {
	res := &ContextResult{ChatID: p.chat.ID, Agent: p.agent, Strategy: p.strategy, Degraded: []string{}}
	if !s.agentDefined(p.agent) {
		res.degrade(DegradedUnknownAgent)
	}
	if err := s.loadSummary(ctx, p, res); err != nil {
		return nil, err
	}
	cands, err := s.loadTurns(ctx, p, res)
	if err != nil {
		return nil, err
	}
	s.reportLag(p, res)
	ragTurns, shape, err := s.retrieveStage(ctx, p, res)
	if err != nil {
		return nil, err
	}
	profile, err := s.profileStage(ctx, p, res)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	_, pack := s.stage(ctx, spanPack, p)
	defer pack.End()
	summary := s.summaryStage(p, res)
	a := Assemble(AssemblyInput{Budget: p.budget, Tokens: p.tok, Strategy: p.strategy, RAG: ragTurns, Summary: summary, Profile: profile,
		Verbatim: cands.verbatim, MustKeepFrom: cands.mustKeepFrom, CoveredTo: p.cursor, WholeChat: cands.wholeChat,
		SummaryLags: p.lags, LLMEpisodes: s.conf.llmEpisodes,
		Ranked: p.ranked, FloorTurns: p.policy.FloorTurns, Query: p.query, Shape: shape})
	res.AssemblyTime = time.Since(start)
	if p.indexBehind && !a.WholeChat { // the whole chat, verbatim, lacks nothing
		res.degrade(DegradedIndexBehind)
	}
	res.Offered = Offered{RAG: ragTurns, Verbatim: cands.verbatim, shape: shape}
	s.account(p, res, a, summary, cands)
	s.obs.observe(p.agent, res)
	return res, nil
}

// loadSummary waits for a fresh summary when asked, reads the head and
// decides, once, whether the summary lags.
func (s *Service) loadSummary(ctx context.Context, p *plan, res *ContextResult) error {
	if p.strategy == StrategyNone {
		return nil
	}
	ctx, span := s.stage(ctx, spanSummary, p)
	defer span.End()
	key := p.chat.Key()
	if p.wait {
		wctx, cancel := context.WithTimeout(ctx, summaryWait(ctx))
		_, reasons, err := s.jobs.summaries.Extend(wctx, key, true)
		cancel()
		res.degrade(reasons...)
		if err != nil {
			s.obs.logger.Warn("wait for summary", "chat", p.chat.ID, "err", err)
			res.degrade(DegradedSummaryWait)
		}
	}
	if err := s.readHead(ctx, p); err != nil {
		return err
	}
	if p.lags && !p.wait && !p.rebuilding {
		// Not over a clean record while rebuilding: the stretch after it
		// may be the chat, and the worker writes it shortly.
		s.preview(ctx, p)
	}
	return nil
}

// summaryWait is how long a request may wait for its summary: at most
// summaryWaitLimit, and never into the end of the request's own deadline
// (server.request_timeout), which the answer needs: a summariser slower
// than that (a hanging LLM) ends the wait as summary_wait_timeout with the
// summary as it was, not the request as a 503.
func summaryWait(ctx context.Context) time.Duration {
	d := summaryWaitLimit
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		d = min(d, left-min(summaryWaitReserve, left/2))
	}
	return max(d, 0)
}

func (s *Service) readHead(ctx context.Context, p *plan) error {
	head, err := s.cache.heads.head(ctx, s.store, p.chat, p.wait)
	if err != nil {
		return storeErr("read summary", err)
	}
	p.head = head
	if head != nil {
		p.cursor = head.CoveredToSeq
	}
	p.lags = s.lagging(p.chat, p.cursor)
	return s.unlessRebuilding(ctx, p)
}

// reportLag: when the summary lags, its uncovered turns are shown verbatim
// instead, ahead of RAG hits, and the worker is woken; so it is when the
// summary is withheld for a rebuild.
func (s *Service) reportLag(p *plan, res *ContextResult) {
	switch {
	case p.rebuilding:
		res.degrade(DegradedSummaryRebuilding)
	case p.lags:
		res.degrade(DegradedSummaryStale)
	default:
		return
	}
	s.jobs.summaries.Kick()
}

// candidates are the verbatim turns offered to the packer, and the turns
// accounted for without being offered.
type candidates struct {
	verbatim     []Turn
	mustKeepFrom int64
	capped       []int64 // removed by the filter's turn cap: dropped
	neverLoaded  int64   // uncovered turns older than what was read: dropped
	wholeChat    bool    // verbatim starts at the chat's first turn
	// filteredCovered are turns the summary covers that the filters
	// removed: counted as filtered only when the summary is not shown.
	filteredCovered int64
}

// loadTurns reads the candidates for verbatim display — the recent window,
// plus (when a summary is kept) the turns it does not cover yet — and runs
// them through the agent's filters and truncation.
func (s *Service) loadTurns(ctx context.Context, p *plan, res *ContextResult) (candidates, error) {
	ctx, span := s.stage(ctx, spanLoad, p)
	defer span.End()
	var c candidates
	last := p.chat.LastSeq
	var loadFrom int64 // first seq read
	if p.strategy == StrategyNone {
		loadFrom = max(1, last-int64(s.maxLoad(1000))+1)
		c.neverLoaded = loadFrom - 1
	} else {
		c.mustKeepFrom = p.windowStart
		loadFrom = min(p.cursor+1, p.windowStart)
		if pending := int64(s.maxLoad(400)); p.windowStart-loadFrom > pending {
			loadFrom = p.windowStart - pending
		}
	}
	var loaded []memory.Message
	if last >= loadFrom {
		msgs, err := s.cache.turns.window(ctx, s.store, p.chat, loadFrom)
		if err != nil {
			return c, storeErr("read messages", err)
		}
		loaded = msgs
	}
	if p.strategy != StrategyNone && p.filters.MaxTurns == 0 {
		all, err := s.withOlderTurns(ctx, p, loadFrom, loaded)
		if err != nil {
			return c, err
		}
		if len(all) > len(loaded) {
			loadFrom, loaded = all[0].Seq, all
		}
	}
	c.wholeChat = loadFrom <= 1
	if p.strategy != StrategyNone {
		c.neverLoaded = max(0, loadFrom-1-p.cursor)
	}
	fres := filters.Apply(loaded, p.filters)
	for _, r := range fres.Removed {
		switch {
		case r.Reason == filters.ReasonMaxTurns:
			c.capped = append(c.capped, r.Seq)
		case r.Seq <= p.cursor:
			c.filteredCovered++
		default:
			res.Usage.FilteredTurns++
		}
	}
	c.verbatim = make([]Turn, 0, len(fres.Kept))
	for _, m := range fres.Kept {
		c.verbatim = append(c.verbatim, s.verbatimTurn(ctx, p, res, m))
	}
	p.names = loadedNames(loaded)
	return c, nil
}

// loadedNames maps the loaded turns' seqs to their speakers' names, or is
// nil when none of them has a name (the chat does not name its speakers).
func loadedNames(ms []memory.Message) map[int64]string {
	named := slices.ContainsFunc(ms, func(m memory.Message) bool { return m.Name != "" })
	if !named {
		return nil
	}
	out := make(map[int64]string, len(ms))
	for _, m := range ms {
		out[m.Seq] = m.Name
	}
	return out
}

// verbatimTurn is a loaded turn as the tail shows it: cut to the agent's
// truncation (the whole turn kept aside, shown when the whole chat fits).
func (s *Service) verbatimTurn(ctx context.Context, p *plan, res *ContextResult, m memory.Message) Turn {
	content, info := s.truncate(ctx, m.Content, p.verbTrunc)
	if info.Fallback != "" {
		res.degrade("truncation_" + info.Fallback)
	}
	t := Turn{Seq: m.Seq, Role: string(m.Role), Name: m.Name, Content: content, CreatedAt: m.CreatedAt, Truncated: info.Truncated}
	if info.Truncated {
		t.full = m.Content
	}
	t.Tokens = s.cache.tokens.cost(p.tok, turnKey{tenant: p.chat.Tenant, chat: p.chat.ID, seq: m.Seq, n: len(content) + len(m.Name)}, t)
	return t
}

// tailTurnsMax bounds the turns read for the verbatim tail, whatever the
// budget: a million-token budget does not read a 100,000-turn chat.
const tailTurnsMax = 4000

// withOlderTurns is loaded with, before it, the turns the budget may still
// hold once what was loaded is shown: the verbatim tail extends back as far
// as the budget allows (the summary stands in only for turns that no longer
// fit). It reads by estimate (about four bytes a token), in at most four
// steps, so a chat much longer than the budget is never read whole; the
// turns are copied once, into one slice.
func (s *Service) withOlderTurns(ctx context.Context, p *plan, loadFrom int64, loaded []memory.Message) ([]memory.Message, error) {
	est := estTokens(loaded)
	var spans [][]memory.Message // newest first
	n := len(loaded)
	most := s.maxLoad(tailTurnsMax)
	for step := 0; step < 4 && loadFrom > 1 && est < p.budget && n < most; step++ {
		per := 16 // tokens a turn, about, until the chat says otherwise
		if n > 0 {
			per = max(est/n, 4)
		}
		k := min(int64((p.budget-est)/per+16), loadFrom-1, int64(most-n))
		msgs, err := s.cache.turns.span(ctx, s.store, p.chat, loadFrom-k, loadFrom-1)
		if err != nil {
			return nil, storeErr("read messages", err)
		}
		loadFrom -= k
		spans = append(spans, msgs)
		est += estTokens(msgs)
		n += len(msgs)
	}
	if len(spans) == 0 {
		return loaded, nil
	}
	out := make([]memory.Message, 0, n) // one copy of the turns, oldest first
	for i := len(spans) - 1; i >= 0; i-- {
		out = append(out, spans[i]...)
	}
	return append(out, loaded...), nil
}

// estTokens estimates the tokens of turns as the tail renders them.
func estTokens(ms []memory.Message) int {
	n := 0
	for _, m := range ms {
		n += (len(m.Content)+len(m.Name))/4 + 4
	}
	return n
}

// summaryStage is the summary the packer may show, with the fallbacks the
// background summariser took for it.
func (s *Service) summaryStage(p *plan, res *ContextResult) *memory.Summary {
	if p.head == nil || p.strategy == StrategyNone {
		return nil
	}
	res.degrade(s.jobs.summaries.LastDegraded(p.chat.Key())...)
	sum := p.head.Summary
	sum.Normalize()
	sum.Stale = p.lags || p.head.Stale || s.promptsChanged(p.chat.Agent, p.head)
	return &sum
}

// account turns what the packer kept into the answer, counting every turn
// it did not show: no turn is ever silently lost.
func (s *Service) account(p *plan, res *ContextResult, a Assembled, summary *memory.Summary, c candidates) {
	res.Context, res.Messages, res.Sections = a.Context, a.Messages, a.Sections
	if res.Messages == nil {
		res.Messages = []ChatMessage{}
	}
	usage := a.Usage
	usage.FilteredTurns = res.Usage.FilteredTurns
	if summary != nil && a.Sections.Summary != nil {
		usage.SummarizedTurns = summary.CoveredToSeq
	}
	dropped := append(append([]int64(nil), c.capped...), a.DroppedSeqs...)
	usage.DroppedTurns = c.neverLoaded + int64(len(dropped))
	if summary != nil && a.Sections.Summary == nil {
		// The summary is not shown: the turns it covers are dropped too,
		// but for those the tail shows and those the filters removed.
		usage.FilteredTurns += c.filteredCovered
		usage.DroppedTurns += max(0, summary.CoveredToSeq-a.CoveredShown-c.filteredCovered)
	}
	if usage.DroppedTurns > 0 && usage.DroppedTurns <= 100 && c.neverLoaded == 0 && (summary == nil || a.Sections.Summary != nil) {
		usage.DroppedSeqs = sortedSeqs(dropped)
	}
	res.Usage = usage
	if usage.DroppedTurns > 0 && p.strategy != StrategyNone {
		// Emergency path: the context does not hold everything; summarise
		// sooner so the next answer does.
		s.jobs.summaries.Kick()
	}
}

// degrade records fallbacks once each, in the order they happened.
func (r *ContextResult) degrade(reasons ...string) {
	for _, reason := range reasons {
		if reason != "" && !containsString(r.Degraded, reason) {
			r.Degraded = append(r.Degraded, reason)
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (s *Service) maxLoad(def int) int {
	if s.conf.maxLoad > 0 {
		return s.conf.maxLoad
	}
	return def
}

// retrieveStage finds past turns for rag_augmented, and how to cut those
// left lazy (ragTurns); a retrieval that fails makes the answer poorer
// (degraded), never failed.
func (s *Service) retrieveStage(ctx context.Context, p *plan, res *ContextResult) ([]RAGTurn, func(*RAGTurn), error) {
	if p.strategy != StrategyRAG {
		return nil, nil, nil
	}
	start := time.Now()
	defer func() { res.RetrievalTime = time.Since(start) }()
	ctx, span := s.stage(ctx, spanRetrieve, p)
	defer span.End()
	if s.vec.retriever == nil {
		res.degrade(DegradedVectorStore)
		return nil, nil, nil
	}
	if strings.TrimSpace(p.query) == "" {
		// Nothing to search for: the answer falls back to recency.
		res.degrade(DegradedEmptyQuery)
		return nil, nil, nil
	}
	// Only what derives from turns before the window counts: the window
	// is shown verbatim, lagging or not.
	behind, err := s.catchUp(ctx, p.chat.Key(), p.windowStart, lagKinds{turns: true, facts: true, episodes: p.policy.RAGEpisodes && s.episodesRetrieved(p.chat.Agent)})
	if err != nil {
		res.degrade(DegradedStorage)
	}
	p.indexBehind = behind // named unless the whole chat is shown (assemble)
	// Pending turns (older than the window, not yet summarised) may come
	// back as hits; the packer shows each turn once.
	turns, err := s.vec.retriever.Retrieve(ctx, s.ragRequest(p))
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, storeErr("retrieve", ctx.Err())
		}
		if errors.Is(err, rag.ErrEmbedder) {
			res.degrade(DegradedEmbedder)
		} else {
			res.degrade(DegradedVectorStore)
		}
		s.obs.logger.Warn("retrieval failed; answering without RAG", "chat", p.chat.ID, "err", err)
		return nil, nil, nil
	}
	turns, unchecked := s.dropForgotten(ctx, p.chat.Tenant, turns, cleanChat(p.chat))
	if unchecked != nil { // hits of other chats left out: poorer, and said
		res.degrade(DegradedStorage)
	}
	// The retriever answers chronologically; the packer packs best first.
	bigsort.Stable(turns, func(a, b *rag.Turn) int { return cmp.Compare(b.Score, a.Score) })
	rs, shape := s.ragTurns(ctx, p, res, s.withStanding(ctx, p, turns))
	return rs, shape, nil
}

// drillEpisodes: the best this many retrieved episodes are drilled into for
// their best-matching turns.
const drillEpisodes = 2

func (s *Service) ragRequest(p *plan) rag.Request {
	k := p.policy.RAGK
	if p.policy.RAGFill {
		// Enough candidates to fill the budget's room with short (~20
		// token) turns; the packer stops when the room is used.
		k = max(k, min(p.policy.RAGMaxHits, p.budget/20))
	}
	c := p.chat
	req := rag.Request{
		Tenant: c.Tenant, ChatID: c.ID, UserID: c.UserID,
		Query: p.query, K: k, Threshold: p.policy.RAGThreshold,
		Scope: p.scope, Neighbors: p.policy.RAGNeighbors, ExcludeFromSeq: p.retrieveFrom,
		Since: p.times.since, Until: p.times.until, Drill: drillEpisodes,
		Turns: chatTurns{cache: s.cache.turns, store: s.store, chat: c},
	}
	if !p.policy.RAGEpisodes {
		req.Kinds = []string{memory.KindTurn, memory.KindFact} // inside the index, before top-k
	}
	return req
}

// keptTurn is a retrieved turn that passed the filters: its index in the
// retrieved turns (a rag.Turn is ~200 bytes: not copied) and its filtered
// content.
type keptTurn struct {
	i       int
	content string
}

// keptTurns sorts the retrieved turns: the episodes and facts to show
// (ranked with the turns by ragTurns), and the turns that pass the
// filters and are not in the recent window; queryAt is the kept turn that
// is the current query (-1 when none), left out by ragTurns.
func (p *plan) keptTurns(turns []rag.Turn) (ks []keptTurn, episodes []RAGTurn, queryAt int) {
	ks = make([]keptTurn, 0, len(turns))
	queryAt = -1 // the last hit that is the current query is excluded
	for i := range turns {
		t := &turns[i]
		if t.Kind == memory.KindEpisode {
			if p.policy.RAGEpisodes {
				episodes = append(episodes, ragEpisode(*t, p.chat.ID))
			}
			continue
		}
		if t.Kind == memory.KindFact {
			episodes = append(episodes, ragFact(p, *t))
			continue
		}
		if t.ChatID == p.chat.ID && t.Seq >= p.retrieveFrom {
			continue // belt and braces: never repeat what is always shown
		}
		content, reason := p.filters.Item(memory.Role(t.Role), t.Content)
		if reason != "" {
			continue
		}
		if p.filters.IsQuery(memory.Role(t.Role), t.Content, content) {
			queryAt = len(ks)
		}
		ks = append(ks, keptTurn{i, content})
	}
	return ks, episodes, queryAt
}

// ragTurns passes hits through the same filters as verbatim turns (routing
// noise skipped, agent labels stripped, the current query excluded; no
// turn cap) and truncation (its fallbacks named in res), best first. A
// turn shown cut to its snippet (beyond the best rag_k hits, and every
// neighbour) is left lazy when it can be: the packer cuts it only if it
// may show it, through the returned function.
func (s *Service) ragTurns(ctx context.Context, p *plan, res *ContextResult, turns []rag.Turn) ([]RAGTurn, func(*RAGTurn)) {
	ks, episodes, queryAt := p.keptTurns(turns)
	sh := s.newShaper(ctx, p, res, turns, ks)
	out := make([]RAGTurn, 0, len(ks)+len(episodes)) // episodes join below
	// Hits seen, best first: the best rag_k are shown as retrieved, the
	// rest and neighbours cut.
	hits := 0
	asks := askingHits(turns, ks, p.chat.ID)
	for i, k := range ks {
		if i == queryAt {
			continue
		}
		t := &turns[k.i]
		if !asks[t.Seq-1] && acknowledgement(k.content) {
			continue // "👍" beside a hit, or found for its speaker's name, says nothing (ack.go)
		}
		cut := t.Neighbor || hits >= p.policy.RAGK
		if !t.Neighbor {
			hits++
		}
		rt := RAGTurn{ChatID: chatIDIfOther(t.ChatID, p.chat.ID), Seq: t.Seq, Role: t.Role, Score: t.Score, CreatedAt: t.CreatedAt,
			Neighbor: t.Neighbor, chosen: t.Chosen, choseFrom: t.ChoseFrom, standing: t.ChatID == p.chat.ID && p.standing[t.Seq]}
		if t.ChatID == p.chat.ID {
			rt.Name = sh.names[t.Seq]
		}
		rt.whole = len(k.content) <= wholeTurnBytes
		rt.asks = lex.EndsWithQuestion(k.content)
		if cut && sh.lazy {
			rt.lazy, rt.floor = int32(i+1), sh.floor(i, sh.maxBytes(t.Neighbor))
		} else {
			sh.fill(&rt, i, cut)
		}
		if !cut && sh.lazy && len(rt.Content) > sh.snip && (len(t.Passages) == 1 || len(t.Passages) == 0 && len(rt.Content) > wholeTurnBytes) {
			rt.snip = int32(i + 1)
		}
		out = append(out, rt)
		out = sh.appendParts(out, rt, i, cut)
	}
	markPairs(out)
	s.markUpdated(ctx, p, out)
	// An episode's summary says what its turns said: a later change marks it.
	s.markUpdated(ctx, p, episodes)
	if len(episodes) > 0 || sh.partsOffered > 0 { // episodes and parts ranked with the turns, best first
		if !s.conf.llmEpisodes {
			belowOwnTurns(episodes, out)
		}
		out = append(out, episodes...)
		bigsort.Stable(out, func(a, b *RAGTurn) int { return cmp.Compare(b.Score, a.Score) })
		out = topEpisodesOnly(out, p.policy.RAGK)
	}
	return out, sh.shape
}

// hitNames are the speakers' names of the retrieved turns of this chat,
// when the chat names its speakers (a turn the tail loaded has a name):
// "user: I'm vegetarian" in a chat of two friends does not say which one.
// Names the tail loaded are used as they are; the others are read once.
// Nil for a chat without names, or when the read fails (the turns are
// shown by role).
func (s *Service) hitNames(ctx context.Context, p *plan, turns []rag.Turn, ks []keptTurn) map[int64]string {
	if len(p.names) == 0 {
		return nil
	}
	var missing []int64
	for _, k := range ks {
		t := &turns[k.i]
		if _, ok := p.names[t.Seq]; !ok && t.ChatID == p.chat.ID {
			missing = append(missing, t.Seq)
		}
	}
	if len(missing) == 0 {
		return p.names
	}
	slices.Sort(missing)
	msgs, err := s.cache.turns.bySeq(ctx, s.store, p.chat, slices.Compact(missing))
	if err != nil {
		s.obs.logger.Warn("speaker names of retrieved turns left out", "chat", p.chat.ID, "err", err)
		return p.names
	}
	for _, m := range msgs {
		p.names[m.Seq] = m.Name
	}
	return p.names
}

// markPairs marks the neighbours that are the other half of a hit's
// exchange: a user turn and the assistant turn after it, the answer of a
// question, the options a choice chose among and the choice made among
// options (rag.Turn.Chosen, ChoseFrom).
func markPairs(rs []RAGTurn) {
	type key struct {
		chat string
		seq  int64
	}
	type hit struct {
		role  string
		score float32
	}
	hits := map[key]hit{}
	questions := map[key]float32{} // a turn asking a question, hit or neighbour: its score
	for _, r := range rs {
		if !r.Neighbor {
			hits[key{r.ChatID, r.Seq}] = hit{r.Role, r.Score}
		}
		if r.asks {
			questions[key{r.ChatID, r.Seq}] = r.Score
		}
	}
	for i, r := range rs {
		next, prev := hits[key{r.ChatID, r.Seq + 1}], hits[key{r.ChatID, r.Seq - 1}]
		if r.Neighbor {
			_, answers := hits[key{r.ChatID, r.Seq - 1}]
			answers = answers && questions[key{r.ChatID, r.Seq - 1}] > 0 // the answer to a hit asking a question
			rs[i].pair = r.chosen || r.choseFrom > 0 || answers || (r.Role == "user" && next.role == "assistant") || (r.Role == "assistant" && prev.role == "user")
			continue
		}
		// A hit that is the other half of a better hit's exchange is
		// worth what it would be as that hit's neighbour, at least: the
		// answer to a matched question ("set timeout-minutes: 45" after
		// "the job timed out") matched less, yet completes it. So is the
		// turn after any better-scored question, whoever asks it: between
		// people in a group chat ("same price to move it?" → "Hollins said
		// £25 to move it … £335 all in"), or the user's answer to the
		// assistant's question; the question a hit or a neighbour.
		asked := questions[key{r.ChatID, r.Seq - 1}]
		switch {
		case !r.whole:
			// A long turn shown as a hit is shown at length, as its
			// neighbour it would be a window: it earns its own room.
		case r.Role == "assistant" && prev.role == "user" && prev.score > r.Score:
			rs[i].pairScore = prev.score
		case r.Role == "user" && next.role == "assistant" && next.score > r.Score:
			rs[i].pairScore = next.score
		case asked > r.Score:
			rs[i].pairScore = asked
		}
	}
}

// chatIDIfOther names the chat only for hits from another chat, keeping
// in-chat headers short.
func chatIDIfOther(hit, current string) string {
	if hit == current {
		return ""
	}
	return hit
}

// truncate cuts a turn to the agent's limit. A turn shorter than a
// passage is never cut (whole or not at all); with the default strategy a
// longer one keeps whole sentences — its opening, and the run that best
// matches the query — with an elision mark where text was left out.
func (s *Service) truncate(ctx context.Context, text string, o truncation.Options) (string, truncation.Info) {
	// A string has no more runes than bytes: most turns are decided
	// without counting.
	if o.MaxChars <= 0 || len(text) <= max(o.MaxChars, wholeTurnBytes) || utf8.RuneCountInString(text) <= o.MaxChars {
		return text, truncation.Info{}
	}
	if (o.Strategy == "" || o.Strategy == truncation.Middle) && o.MaxTokens <= 0 {
		return cutSentences(text, o.Query, max(o.MaxChars, wholeTurnBytes)), truncation.Info{Truncated: true, Strategy: truncation.Middle}
	}
	return truncation.Truncate(ctx, text, o)
}

// cutSentences keeps whole sentences of text within about maxBytes: the
// first sentence (what the turn is about) when it is short, then the run
// of sentences that best matches the query, elision marks between.
func cutSentences(text, query string, maxBytes int) string {
	q := rag.NewWindowQuery(lex.Terms(query))
	head := 0
	if w := (rag.WindowQuery{}).SentenceWindow(text, maxBytes/4); w.From == 0 && w.To < len(text) && w.To <= maxBytes/3 {
		head = w.To // the opening sentence, when short
	}
	w := q.SentenceWindow(text[head:], maxBytes-head)
	from, to := head+w.From, head+w.To
	var b strings.Builder
	b.Grow(maxBytes + 16)
	if from == head { // the run follows the opening: one piece, its line breaks kept (code stays code)
		b.WriteString(strings.TrimSpace(text[:to]))
	} else {
		if b.WriteString(strings.TrimSpace(text[:head])); b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(rag.Elision + "\n")
		b.WriteString(strings.TrimSpace(text[from:to]))
	}
	if to < len(text) {
		b.WriteString("\n" + rag.Elision)
	}
	return b.String()
}

func sortedSeqs(s []int64) []int64 {
	out := append([]int64(nil), s...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
