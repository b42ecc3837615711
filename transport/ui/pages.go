package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/filters"
	"github.com/contextd/contextd/memory"
)

// Page sizes: small enough to render fast on any chat.
const (
	chatsPerPage = 50
	turnsPerPage = 100
)

type chatsData struct {
	Filter string
	Rows   []memory.ChatRow
	Next   string
}

func (h *handler) chats(c echo.Context) error {
	filter := strings.TrimSpace(c.QueryParam("q"))
	rows, err := h.d.Lister.ListChats(c.Request().Context(), memory.ChatQuery{Tenant: tenantOf(c), Prefix: filter, After: c.QueryParam("after"), Limit: chatsPerPage + 1})
	if err != nil {
		return h.fail(c, err)
	}
	d := chatsData{Filter: filter, Rows: rows}
	if len(rows) > chatsPerPage {
		d.Rows = rows[:chatsPerPage]
		d.Next = d.Rows[chatsPerPage-1].ID
	}
	return h.render(c, http.StatusOK, "chats", "Chats", d)
}

// turnRow is one turn of the timeline with its state.
type turnRow struct {
	memory.Message
	// Deleted is a tombstone (memory.Message.Deleted): its content, vectors
	// and summary share are gone, so no other state applies to it.
	Deleted    bool
	Summarised bool
	Indexed    bool
	// Filtered is the rule that removes the turn for the chat's agent ("":
	// kept); Label marks an agent label or prefix stripped from it.
	Filtered string
	Label    bool
	Long     bool
	Preview  string
	// Episode owns the turn, once episodes exist ("" until then).
	Episode string
}

type chatData struct {
	Chat     memory.Chat
	Turns    []turnRow
	Next     int64
	Prev     int64
	HasPrev  bool
	Summary  *memory.Summary
	Chain    []memory.SummaryRecord
	Episodes []memory.Episode
	// Facts are the chat's facts, superseded ones included (they are shown
	// as history), each linking to its turns.
	Facts []memory.Fact
	// Profile is the chat's user's profile across chats (nil: no user).
	Profile *memory.Profile
}

func (h *handler) chat(c echo.Context) error {
	ctx, tenant, id := c.Request().Context(), tenantOf(c), chatID(c)
	after, _ := strconv.ParseInt(c.QueryParam("after"), 10, 64)
	summary, chain, err := h.d.Service.SummaryOf(ctx, tenant, id, chainOnPage)
	if err != nil {
		return h.fail(c, err)
	}
	msgs, next, err := h.d.Service.Messages(ctx, tenant, id, max(after, 0), turnsPerPage)
	if err != nil {
		return h.fail(c, err)
	}
	chat, err := h.d.Service.Chat(ctx, tenant, id)
	if err != nil {
		return h.fail(c, err)
	}
	turns, err := h.turnRows(c, chat, msgs)
	if err != nil {
		return h.fail(c, err)
	}
	from, to := pageRange(msgs)
	eps, err := h.episodes(c, chat, from, to)
	if err != nil {
		return h.fail(c, err)
	}
	ownEpisodes(turns, eps)
	facts, err := h.facts(c, chat, from, to)
	if err != nil {
		return h.fail(c, err)
	}
	var profile *memory.Profile
	if chat.UserID != "" {
		if profile, err = h.d.Service.UserProfile(ctx, tenant, chat.UserID); err != nil {
			return h.fail(c, err)
		}
	}
	d := chatData{Chat: chat, Turns: turns, Summary: summary, Chain: chain, Episodes: eps, Facts: facts, Profile: profile,
		HasPrev: after > 0, Prev: max(after-turnsPerPage, 0)}
	if len(msgs) == turnsPerPage && next < chat.LastSeq {
		d.Next = next
	}
	return h.render(c, http.StatusOK, "chat", "Chat "+id, d)
}

// turnRows adds each turn's state: summary coverage, index, filter rule.
func (h *handler) turnRows(c echo.Context, chat memory.Chat, msgs []memory.Message) ([]turnRow, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	key := memory.ChatKey{Tenant: chat.Tenant, ChatID: chat.ID}
	pending, err := h.d.Lister.UnindexedSeqs(c.Request().Context(), key, msgs[0].Seq, msgs[len(msgs)-1].Seq)
	if err != nil {
		return nil, err
	}
	unindexed := make(map[int64]bool, len(pending))
	for _, s := range pending {
		unindexed[s] = true
	}
	fo := h.d.Service.PolicyOf(chat.Agent).Filters
	out := make([]turnRow, len(msgs))
	for i, m := range msgs {
		out[i] = turnRow{Message: m, Deleted: true}
		if !m.Deleted { // a tombstone's empty content would read as filtered
			out[i] = liveTurn(m, chat.SummaryCursor, !unindexed[m.Seq], fo)
		}
	}
	return out, nil
}

// liveTurn is a stored turn's state: summary coverage, index, filter rule.
func liveTurn(m memory.Message, cursor int64, indexed bool, fo filters.Options) turnRow {
	kept, rule := fo.Item(m.Role, m.Content)
	t := turnRow{Message: m, Summarised: m.Seq <= cursor, Indexed: indexed,
		Filtered: ruleName(rule), Label: rule == "" && kept != m.Content, Long: len(m.Content) > 280}
	if t.Long {
		t.Preview = preview(m.Content, 200)
	}
	return t
}

func (h *handler) episodes(c echo.Context, chat memory.Chat, from, to int64) ([]memory.Episode, error) {
	if h.d.Episodes == nil || to < from {
		return nil, nil
	}
	return h.d.Episodes(c.Request().Context(), memory.ChatKey{Tenant: chat.Tenant, ChatID: chat.ID}, from, to)
}

// pageRange is the seqs the page's turns span (to < from: none).
func pageRange(msgs []memory.Message) (from, to int64) {
	if len(msgs) == 0 {
		return 1, 0
	}
	return msgs[0].Seq, msgs[len(msgs)-1].Seq
}

// facts are the chat's facts drawn from turns from..to (a page's), in seq
// order: a long chat has thousands, which one page cannot show.
func (h *handler) facts(c echo.Context, chat memory.Chat, from, to int64) ([]memory.Fact, error) {
	var out []memory.Fact
	for after := from - 1; after < to; {
		page, next, err := h.d.Service.Facts(c.Request().Context(), chat.Tenant, chat.ID, after, 500, true)
		if err != nil {
			return nil, err
		}
		for _, f := range page {
			if len(f.Seqs) > 0 && f.Seqs[0] > to {
				return out, nil
			}
			out = append(out, f)
		}
		if len(page) == 0 || next <= after {
			return out, nil
		}
		after = next
	}
	return out, nil
}

// ownEpisodes names the episode that owns each turn (episodes hold
// contiguous, non-overlapping seq ranges in seq order).
func ownEpisodes(turns []turnRow, eps []memory.Episode) {
	j := 0
	for i := range turns {
		for j < len(eps) && eps[j].ToSeq < turns[i].Seq {
			j++
		}
		if j < len(eps) && eps[j].FromSeq <= turns[i].Seq {
			turns[i].Episode = fmt.Sprintf("%d–%d", eps[j].FromSeq, eps[j].ToSeq)
		}
	}
}

// ruleName says in words which filter rule removes a turn.
func ruleName(reason string) string {
	switch reason {
	case "":
		return ""
	case filters.ReasonTool:
		return "tool turn"
	case filters.ReasonSkippedPrefix:
		return "routing noise (skip prefix)"
	case filters.ReasonEmpty:
		return "empty after stripping agent labels"
	}
	return reason
}

func preview(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

type playData struct {
	ChatID   string
	Query    string
	Agent    string
	Strategy string
	// Budget is the form's value as typed ("": the agent's default).
	Budget   string
	Ran      bool
	Result   *engine.ContextResult
	Hits     []engine.SearchHit
	Bars     []bar
	Degraded []string
	Err      string
}

type bar struct {
	Name    string
	Tokens  int
	Percent int
}

// playground runs /v1/context's use case with nothing appended.
func (h *handler) playground(c echo.Context) error {
	ctx, tenant, id := c.Request().Context(), tenantOf(c), chatID(c)
	chat, err := h.d.Service.Chat(ctx, tenant, id)
	if err != nil {
		return h.fail(c, err)
	}
	d := playData{ChatID: id, Query: c.QueryParam("query"), Agent: c.QueryParam("agent"), Strategy: c.QueryParam("strategy")}
	if d.Agent == "" {
		d.Agent = chat.Agent
	}
	d.Budget = strings.TrimSpace(c.QueryParam("budget"))
	status := http.StatusOK
	if c.QueryParam("run") != "" && !h.runPlayground(c, tenant, &d) {
		status = http.StatusBadRequest
	}
	return h.render(c, status, "playground", "Playground "+id, d)
}

// runPlayground runs the context use case; false when the form's input
// was refused (d.Err says why, as the API would).
func (h *handler) runPlayground(c echo.Context, tenant string, d *playData) bool {
	ctx := c.Request().Context()
	d.Ran = true
	in := engine.ContextInput{ChatID: d.ChatID, Agent: d.Agent, Query: d.Query, Strategy: d.Strategy}
	if d.Budget != "" {
		n, err := strconv.Atoi(d.Budget)
		if err != nil {
			d.Err = fmt.Sprintf("budget: %q is not a whole number of tokens (leave it empty for the agent's default)", d.Budget)
			return false
		}
		in.BudgetTokens = &n // the engine refuses 0, negatives and absurd sizes
	}
	res, err := h.d.Service.Context(ctx, tenant, in)
	if err != nil {
		d.Err = errorText(err)
		e, ok := engine.AsError(err)
		return !ok || e.Kind != engine.KindInvalid
	}
	d.Result = res
	u := res.Usage
	for _, s := range []struct {
		n string
		t int
	}{{"retrieved", u.RAGTokens}, {"summary", u.SummaryTokens}, {"recent", u.RecentTokens}} {
		d.Bars = append(d.Bars, bar{Name: s.n, Tokens: s.t, Percent: percent(s.t, u.BudgetTokens)})
	}
	for _, code := range res.Degraded {
		d.Degraded = append(d.Degraded, explain(code))
	}
	if d.Query != "" {
		sr, err := h.d.Service.Search(ctx, tenant, engine.SearchInput{Query: d.Query, ChatID: d.ChatID})
		if err != nil {
			d.Degraded = append(d.Degraded, "search failed: "+err.Error())
		}
		for _, code := range sr.Degraded {
			d.Degraded = append(d.Degraded, "search: "+explain(code))
		}
		d.Hits = sr.Hits
	}
	return true
}

// errorText is an engine error as the API words it: "field: message".
func errorText(err error) string {
	if e, ok := engine.AsError(err); ok && e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return err.Error()
}

func percent(n, of int) int {
	if of <= 0 {
		return 0
	}
	return min(100, n*100/of)
}

// explain turns a degraded code into a sentence.
func explain(code string) string {
	if s, ok := degradedText[code]; ok {
		return code + ": " + s
	}
	return code
}

var degradedText = map[string]string{
	engine.DegradedVectorStore:  "the vector store did not answer; no past turns were retrieved.",
	engine.DegradedEmbedder:     "the embedder did not answer; retrieval fell back or was skipped.",
	engine.DegradedEmptyQuery:   "no query was given, so nothing was retrieved.",
	engine.DegradedSummaryStale: "the summary lags behind the chat or was written with other prompts; uncovered turns were shown verbatim where they fit.",
	engine.DegradedStorage:      "the conversation store could not be read; the context is incomplete.",
	engine.DegradedSummaryWait:  "a fresh summary was awaited but did not arrive in time.",
	engine.DegradedUnknownAgent: "agents.yaml does not define this agent; it got the supervisor's settings (a typo?).",
	engine.DegradedIndexBehind:  "the index had not taken in every turn appended before the search; the hits come from what is indexed.",
}

type confirmData struct {
	ChatID string
	Action string
	Verb   string
}

func (h *handler) confirm(c echo.Context) error {
	ctx, tenant, id := c.Request().Context(), tenantOf(c), chatID(c)
	if _, err := h.d.Service.Chat(ctx, tenant, id); err != nil {
		return h.fail(c, err)
	}
	d := confirmData{ChatID: id, Action: c.QueryParam("action")}
	switch d.Action {
	case "delete":
		d.Verb = "Delete this chat and everything derived from it"
	case "summarise":
		d.Verb = "Summarise this chat now"
	default:
		return h.notFound(c, "no such action")
	}
	return h.render(c, http.StatusOK, "confirm", "Confirm", d)
}

func (h *handler) summarize(c echo.Context) error {
	id := chatID(c)
	if _, _, err := h.d.Service.RefreshSummary(c.Request().Context(), tenantOf(c), id); err != nil {
		return h.fail(c, err)
	}
	return c.Redirect(http.StatusSeeOther, "/ui/chats/"+url.PathEscape(id))
}

func (h *handler) deleteChat(c echo.Context) error {
	if err := h.d.Service.DeleteChat(c.Request().Context(), tenantOf(c), chatID(c)); err != nil {
		return h.fail(c, err)
	}
	return c.Redirect(http.StatusSeeOther, "/ui/")
}

type statusData struct {
	Ready map[string]string
	// Backlog is the whole process's with auth off (one tenant), the
	// logged-in tenant's own with auth on (nil: unavailable).
	Backlog *tenantBacklog
	// Scoped is auth on: the page shows one tenant's figures, so the
	// workers' process-wide activity is left out.
	Scoped   bool
	Activity map[string]string
	Config   string
	Agents   map[string]string
	Now      time.Time
}

// tenantBacklog is a backlog that may stop short of a huge tenant.
type tenantBacklog struct {
	memory.Backlog
	// Partial: only the tenant's first backlogPage*backlogPages chats
	// were counted.
	Partial bool
}

func (h *handler) status(c echo.Context) error {
	ctx := c.Request().Context()
	d := statusData{Config: h.d.Config, Agents: h.d.Agents, Now: time.Now().UTC(), Scoped: h.keys.Enabled()}
	if h.d.Ready != nil {
		d.Ready = h.d.Ready(ctx)
	}
	d.Backlog = h.backlog(ctx, d.Scoped, tenantOf(c))
	if h.d.Activity != nil && !d.Scoped {
		d.Activity = h.d.Activity()
	}
	return h.render(c, http.StatusOK, "status", "Status", d)
}

// backlog is the store's process-wide count with auth off, where every
// turn is tenant "default"'s; with auth on those counts hold other
// tenants' work, so it adds up the tenant's own chats instead.
func (h *handler) backlog(ctx context.Context, scoped bool, tenant string) *tenantBacklog {
	if scoped {
		b, err := countTenantBacklog(ctx, h.d.Lister, tenant, backlogPage, backlogPages)
		if err != nil {
			h.d.Logger.Warn("ui backlog", "err", err)
			return nil
		}
		return &b
	}
	if h.d.Backlog == nil {
		return nil
	}
	b, err := h.d.Backlog(ctx)
	if err != nil {
		return nil
	}
	return &tenantBacklog{Backlog: b}
}

// The status page reads a tenant's chats backlogPage at a time, at most
// backlogPages times: bounded work on a tenant with very many chats.
const (
	backlogPage  = 1000
	backlogPages = 20
)

// countTenantBacklog sums the per-chat counts the chats list shows, over
// the tenant's first page*pages chats (Partial when it stopped there).
func countTenantBacklog(ctx context.Context, l memory.ChatLister, tenant string, page, pages int) (tenantBacklog, error) {
	var b tenantBacklog
	after := ""
	for range pages {
		rows, err := l.ListChats(ctx, memory.ChatQuery{Tenant: tenant, After: after, Limit: page})
		if err != nil {
			return tenantBacklog{}, err
		}
		for _, r := range rows {
			b.Unindexed += r.Unindexed
			b.Unsummarised += r.LastSeq - r.SummaryCursor
		}
		if len(rows) < page {
			return b, nil
		}
		after = rows[len(rows)-1].ID
	}
	b.Partial = true // "at least": also true when the last page was exactly full
	return b, nil
}

// chatID is the path's chat id (ids may hold '/', '?', '#', '%'), already
// unescaped by the API's router (api.unescapeParams) for every route it
// serves: unescaping it again here would turn the id "a/%41" into "a/A".
func chatID(c echo.Context) string {
	return c.Param("chat_id")
}

// chainOnPage is how many records of the summary chain the chat page shows,
// newest first.
const chainOnPage = 20
