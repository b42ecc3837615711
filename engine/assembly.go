package engine

import (
	"sort"
	"strings"
	"time"

	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// Section titles in the assembled context text. The order is fixed by the
// contract: RAG turns, then the summary, then the recent verbatim turns.
const (
	titleRAG     = "## Relevant earlier turns"
	titleSummary = "## Conversation summary"
	titleRecent  = "## Recent turns"
)

// RAGTurn is one retrieved past turn offered to the assembler, best first.
type RAGTurn struct {
	ChatID    string    `json:"chat_id,omitempty"`
	Seq       int64     `json:"seq"`
	Role      string    `json:"role"`
	Content   string    `json:"content"`
	Score     float32   `json:"score"`
	CreatedAt time.Time `json:"created_at"`
	// Neighbor marks a turn added for context around a hit.
	Neighbor bool `json:"neighbor,omitempty"`
	// Tokens, when set, is the cost of the rendered turn (a hint from the
	// engine's cache; 0 = count it).
	Tokens int `json:"-"`
}

// Turn is one verbatim turn in the recent section.
type Turn struct {
	Seq       int64     `json:"seq"`
	Role      string    `json:"role"`
	Name      string    `json:"name,omitempty"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
	// Truncated reports that Content was shortened by the truncation strategy.
	Truncated bool `json:"truncated,omitempty"`
	// Tokens, when set, is the cost of the rendered turn (0 = count it).
	Tokens int `json:"-"`
}

// ChatMessage is one OpenAI-style message of the answer.
type ChatMessage struct {
	Role    string `json:"role"`
	Name    string `json:"name,omitempty"`
	Content string `json:"content"`
}

// Sections is the structured view of the assembled context.
type Sections struct {
	RAG     []RAGTurn       `json:"rag"`
	Summary *memory.Summary `json:"summary"`
	Recent  []Turn          `json:"recent"`
}

// Usage accounts for the budget and for every turn not shown verbatim.
type Usage struct {
	BudgetTokens  int `json:"budget_tokens"`
	TotalTokens   int `json:"total_tokens"`
	RAGTokens     int `json:"rag_tokens"`
	SummaryTokens int `json:"summary_tokens"`
	RecentTokens  int `json:"recent_tokens"`
	// SummarizedTurns are turns covered by the summary (seq <= covered_to_seq).
	SummarizedTurns int64 `json:"summarized_turns"`
	// DroppedTurns are turns neither summarised nor shown because the
	// budget (or the turn cap) had no room; DroppedSeqs lists them when
	// there are few (at most 100), else it is omitted.
	DroppedTurns int64   `json:"dropped_turns"`
	DroppedSeqs  []int64 `json:"dropped_seqs,omitempty"`
	// FilteredTurns are turns the filter pipeline removed (routing noise,
	// empty, tool messages when dropped, the current query).
	FilteredTurns int64 `json:"filtered_turns"`
}

// AssemblyInput is everything the assembler needs; it does no I/O.
type AssemblyInput struct {
	Budget   int
	Strategy string
	// RAG are retrieved turns, best first; none of them is in Verbatim.
	RAG []RAGTurn
	// Summary is the chat's summary (nil: none, or strategy none).
	Summary *memory.Summary
	// Verbatim are the candidate verbatim turns in seq order: turns the
	// summary does not cover yet (pending) followed by the recent window.
	// The assembler keeps the newest that fit.
	Verbatim []Turn
	// MustKeepFrom: verbatim turns with seq >= it are the recent window and
	// are preferred over the summary; older ones (pending) come after it.
	MustKeepFrom int64
	// SummaryLags: as many pending turns as trigger a summary wait for it;
	// they then come before RAG hits (within their share), not after.
	SummaryLags bool
}

// Assembled is the assembler's output.
type Assembled struct {
	Context  string
	Messages []ChatMessage
	Sections Sections
	Usage    Usage
	// DroppedSeqs are the verbatim candidates left out for budget.
	DroppedSeqs []int64
	// SummaryTrimmed reports the summary was shortened to fit.
	SummaryTrimmed bool
	// RAGDropped counts retrieved turns that did not fit.
	RAGDropped int
}

// Budget shares: caps for the first pass; what a section leaves unused is
// handed on in a second pass, so a small section never wastes budget. With
// rag_augmented most of the budget goes to retrieval: the recent window and
// the summary still come first, but within smaller shares.
type shares struct{ recent, summary, pending float64 }

// minTurnTokens is the least a rendered turn costs ("user: x" and its
// newline), so packing stops once less than that is left.
const minTurnTokens = 4

func sharesFor(strategy string) shares {
	if strategy == StrategyRAG {
		return shares{recent: 0.25, summary: 0.15, pending: 0.15}
	}
	return shares{recent: 0.45, summary: 0.25, pending: 1}
}

// Assemble builds the context within in.Budget cl100k tokens. Priority when
// the budget is short: the recent window (newest first, up to its share),
// then the summary (up to its share), then — for rag_augmented — RAG hits in
// rank order, then turns the summary does not cover yet, then whatever is
// left goes to more verbatim turns. The text is laid out in the contract's
// order regardless.
func Assemble(in AssemblyInput) Assembled {
	budget := in.Budget
	var out Assembled
	out.Usage.BudgetTokens = budget
	sh := sharesFor(in.Strategy)

	// Fixed overhead of section titles, charged when a section first gets
	// an item. Each title costs its tokens plus the blank line.
	titleCost := func(t string) int { return tokens.Count(t+"\n") + 1 }

	recentIdx := make([]int, 0, len(in.Verbatim)) // indices, newest first
	pendingIdx := make([]int, 0)
	for i := len(in.Verbatim) - 1; i >= 0; i-- {
		if in.Verbatim[i].Seq >= in.MustKeepFrom {
			recentIdx = append(recentIdx, i)
		} else {
			pendingIdx = append(pendingIdx, i)
		}
	}
	verbCost := make([]int, len(in.Verbatim))
	for i, t := range in.Verbatim {
		if t.Tokens > 0 {
			verbCost[i] = t.Tokens + 1
		} else {
			verbCost[i] = tokens.Count(renderTurn(t)) + 1
		}
	}
	// RAG candidates are counted lazily: with rag_fill there are more of
	// them than fit, and the ones never considered are never counted.
	ragCost := make([]int, len(in.RAG))
	costRAG := func(i int) int {
		if ragCost[i] == 0 {
			r := in.RAG[i]
			if r.Tokens > 0 {
				ragCost[i] = r.Tokens + 1
			} else {
				ragCost[i] = tokens.Count(renderTurn(Turn{Role: r.Role, Content: r.Content})) + 1
			}
		}
		return ragCost[i]
	}

	remaining := budget
	keepVerb := make([]bool, len(in.Verbatim))
	verbBySeq := make(map[int64]int, len(in.Verbatim))
	for i, t := range in.Verbatim {
		verbBySeq[t.Seq] = i
	}
	keepRAG := make([]bool, len(in.RAG))
	verbTitlePaid, ragTitlePaid := false, false
	verbSpent := 0                 // tokens spent on verbatim turns so far
	ragGroups := map[string]bool{} // date headers already paid for
	spend := func(cost int) bool {
		if cost > remaining {
			return false
		}
		remaining -= cost
		return true
	}
	takeVerb := func(idx []int, capTokens int) {
		used := 0
		for _, i := range idx {
			if keepVerb[i] {
				continue
			}
			c := verbCost[i]
			if !verbTitlePaid {
				c += titleCost(titleRecent)
			}
			if used+c > capTokens || !spend(c) {
				return // keep the kept turns contiguous: never skip a newer one for an older
			}
			used += c
			verbSpent += c
			verbTitlePaid = true
			keepVerb[i] = true
		}
	}
	// groupOf memoises each candidate's header: formatting a date per
	// candidate is a visible cost when hundreds are considered.
	groups := make([]string, len(in.RAG))
	groupDone := make([]bool, len(in.RAG))
	type dayKey struct {
		chat string
		day  int
	}
	byDay := map[dayKey]string{}
	groupOf := func(i int) string {
		if !groupDone[i] {
			r := in.RAG[i]
			y, m, d := r.CreatedAt.UTC().Date()
			k := dayKey{r.ChatID, y*10000 + int(m)*100 + d}
			g, ok := byDay[k]
			if !ok {
				g = ragGroup(r)
				byDay[k] = g
			}
			groups[i], groupDone[i] = g, true
		}
		return groups[i]
	}
	takeRAG := func() {
		for i, r := range in.RAG {
			if remaining < minTurnTokens {
				return // no turn fits in what is left
			}
			if keepRAG[i] {
				continue
			}
			c := costRAG(i)
			if !ragTitlePaid {
				c += titleCost(titleRAG)
			}
			g := groupOf(i)
			if g != "" && !ragGroups[g] {
				c += tokens.Count(g) + 1
			}
			if vi, ok := verbBySeq[r.Seq]; ok && r.ChatID == "" {
				// A hit that is also a verbatim candidate (a pending turn
				// the summary does not cover yet) is shown once, verbatim
				// in its place, so the turn is "in recent", not elsewhere.
				if keepVerb[vi] {
					continue
				}
				vc := verbCost[vi]
				if !verbTitlePaid {
					vc += titleCost(titleRecent)
				}
				if spend(vc) {
					keepVerb[vi], verbTitlePaid = true, true
				}
				continue
			}
			if !spend(c) {
				continue // a shorter, lower-ranked hit may still fit
			}
			ragTitlePaid = true
			ragGroups[g] = true
			keepRAG[i] = true
		}
	}

	// 1. Recent window, newest first, up to its share (all of it when there
	// is nothing else to show).
	recentCap := budget
	if in.Summary != nil || len(in.RAG) > 0 || len(pendingIdx) > 0 {
		recentCap = int(float64(budget) * sh.recent)
	}
	takeVerb(recentIdx, recentCap)

	// 2. Summary, trimmed to its share.
	var summaryText string
	var summaryShown *memory.Summary
	if in.Summary != nil && !in.Summary.IsEmpty() {
		capTokens := int(float64(budget) * sh.summary)
		if capTokens > remaining {
			capTokens = remaining
		}
		s, text, trimmed := fitSummary(*in.Summary, capTokens-titleCost(titleSummary))
		if text != "" && spend(tokens.Count(text)+titleCost(titleSummary)) {
			summaryText, summaryShown = text, &s
			out.SummaryTrimmed = trimmed
		}
	}

	// 3. When the summary lags, the verbatim tail goes on, newest first:
	// the rest of the recent window, then the turns the summary does not
	// cover yet (they must not leave a gap), up to their shares. Then RAG
	// hits in rank order (rag_augmented), then whatever is left goes to the
	// rest of the recent window and of the pending turns.
	if in.SummaryLags && len(pendingIdx) > 0 {
		tailCap := int(float64(budget)*(sh.recent+sh.pending)) - verbSpent
		verbSpent0 := verbSpent
		takeVerb(recentIdx, tailCap)
		takeVerb(pendingIdx, tailCap-(verbSpent-verbSpent0))
	}
	if in.Strategy == StrategyRAG {
		takeRAG()
	}
	takeVerb(recentIdx, remaining)
	takeVerb(pendingIdx, remaining)
	takeRAG()

	// Lay out and measure. The sum of the parts can differ from the whole
	// by a token or two at joins, so when the whole is over the budget shed
	// the least important pieces worth at least the overshoot, and measure
	// again (rarely more than once).
	var ragText, recentText, sumText string
	for {
		out.Sections = Sections{Summary: summaryShown, RAG: []RAGTurn{}, Recent: []Turn{}}
		for i, r := range in.RAG {
			if keepRAG[i] {
				out.Sections.RAG = append(out.Sections.RAG, r)
			}
		}
		for i, t := range in.Verbatim {
			if keepVerb[i] {
				out.Sections.Recent = append(out.Sections.Recent, t)
			}
		}
		ragText = renderRAGSection(out.Sections.RAG)
		recentText = renderRecentSection(out.Sections.Recent)
		sumText = ""
		if summaryText != "" {
			sumText = titleSummary + "\n" + summaryText
		}
		out.Context = joinNonEmpty(ragText, sumText, recentText)
		out.Usage.TotalTokens = tokens.Count(out.Context)
		over := out.Usage.TotalTokens - budget
		if over <= 0 {
			break
		}
		for over > 0 {
			freed, ok := shedOne(keepRAG, keepVerb, in, ragCost, verbCost, &summaryText, &summaryShown)
			if !ok {
				break
			}
			over -= freed
		}
		if over > 0 { // nothing left to shed
			out.Context, out.Sections = "", Sections{RAG: []RAGTurn{}, Recent: []Turn{}}
			out.Usage.TotalTokens = 0
			ragText, recentText, sumText = "", "", ""
			break
		}
	}
	// The summary and recent sections repeat across a chat's requests (the
	// token memo knows them); the RAG section is new each time, so its share
	// is what the exact total leaves, separators included: the three add up
	// to total_tokens.
	out.Usage.SummaryTokens = tokens.Count(sumText)
	out.Usage.RecentTokens = tokens.Count(recentText)
	if ragText != "" {
		out.Usage.RAGTokens = max(0, out.Usage.TotalTokens-out.Usage.SummaryTokens-out.Usage.RecentTokens)
	} else if sumText != "" && recentText != "" {
		// Only the separator between summary and recent is left over.
		out.Usage.SummaryTokens = max(0, out.Usage.TotalTokens-out.Usage.RecentTokens)
	}

	for i, t := range in.Verbatim {
		if !keepVerb[i] {
			out.DroppedSeqs = append(out.DroppedSeqs, t.Seq)
		}
	}
	for i := range in.RAG {
		if !keepRAG[i] {
			out.RAGDropped++
		}
	}
	out.Messages = buildMessages(out.Sections, ragText, summaryText)
	return out
}

// shedOne drops the least important kept piece — the lowest-ranked RAG
// hit, then the oldest pending verbatim turn, then the summary, then the
// oldest recent turn — and returns about how many tokens that freed. False
// when nothing is left.
func shedOne(keepRAG, keepVerb []bool, in AssemblyInput, ragCost, verbCost []int, summaryText *string, summaryShown **memory.Summary) (int, bool) {
	for i := len(keepRAG) - 1; i >= 0; i-- {
		if keepRAG[i] {
			keepRAG[i] = false
			return ragCost[i], true
		}
	}
	for i := range keepVerb {
		if keepVerb[i] && in.Verbatim[i].Seq < in.MustKeepFrom {
			keepVerb[i] = false
			return verbCost[i], true
		}
	}
	if *summaryText != "" {
		freed := tokens.Count(*summaryText)
		*summaryText, *summaryShown = "", nil
		return freed, true
	}
	for i := range keepVerb {
		if keepVerb[i] {
			keepVerb[i] = false
			return verbCost[i], true
		}
	}
	return 0, false
}

func joinNonEmpty(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(p)
	}
	return b.String()
}

func renderTurn(t Turn) string {
	who := t.Role
	if t.Name != "" {
		who += " (" + t.Name + ")"
	}
	return who + ": " + t.Content
}

// ragGroup is the header a retrieved turn is shown under: its chat (when
// from another chat) and its day, so the model can place it in time
// (temporal questions need it) without paying a header on every turn.
func ragGroup(r RAGTurn) string {
	var parts []string
	if r.ChatID != "" {
		parts = append(parts, "chat "+r.ChatID)
	}
	if !r.CreatedAt.IsZero() {
		parts = append(parts, r.CreatedAt.UTC().Format("Mon 2 Jan 2006"))
	}
	if len(parts) == 0 {
		return ""
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// renderRAGSection lays retrieved turns out in chronological order under
// one header per chat and day: a model reads a conversation's excerpts best
// in the order they happened.
func renderRAGSection(rs []RAGTurn) string {
	if len(rs) == 0 {
		return ""
	}
	// By day, then chat, then seq: chronological, with each header once
	// (the assembler charged one header per day and chat).
	type keyed struct {
		r   RAGTurn
		day int
	}
	sorted := make([]keyed, len(rs))
	for i, r := range rs {
		y, m, d := r.CreatedAt.UTC().Date()
		sorted[i] = keyed{r, y*10000 + int(m)*100 + d}
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.day != b.day {
			return a.day < b.day
		}
		if a.r.ChatID != b.r.ChatID {
			return a.r.ChatID < b.r.ChatID
		}
		return a.r.Seq < b.r.Seq
	})
	var b strings.Builder
	b.WriteString(titleRAG)
	prevDay, prevChat := -1, ""
	for _, k := range sorted {
		r := k.r
		if k.day != prevDay || r.ChatID != prevChat {
			if g := ragGroup(r); g != "" {
				b.WriteString("\n")
				b.WriteString(g)
			}
			prevDay, prevChat = k.day, r.ChatID
		}
		b.WriteString("\n")
		b.WriteString(renderTurn(Turn{Role: r.Role, Content: r.Content}))
	}
	return b.String()
}

func renderRecentSection(ts []Turn) string {
	if len(ts) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(titleRecent)
	for _, t := range ts {
		b.WriteString("\n")
		b.WriteString(renderTurn(t))
	}
	return b.String()
}

// RenderSummary renders a structured summary as compact text.
func RenderSummary(s memory.Summary) string {
	var b strings.Builder
	list := func(label string, items []string) {
		if len(items) == 0 {
			return
		}
		b.WriteString(label)
		b.WriteString(": ")
		b.WriteString(strings.Join(items, "; "))
		b.WriteString("\n")
	}
	list("Topics", s.Topics)
	if len(s.Entities) > 0 {
		parts := make([]string, 0, len(s.Entities))
		for _, e := range s.Entities {
			p := e.Name
			if e.Type != "" {
				p += " (" + e.Type + ")"
			}
			if e.Details != "" {
				p += ": " + e.Details
			}
			parts = append(parts, p)
		}
		list("Entities", parts)
	}
	list("Actions taken", s.ActionsTaken)
	list("Decisions", s.Decisions)
	list("Open questions", s.OpenQuestions)
	list("User preferences", s.UserPreferences)
	if s.Narrative != "" {
		b.WriteString("Narrative: ")
		b.WriteString(s.Narrative)
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// fitSummary trims a summary until its rendering fits maxTokens: first the
// oldest list items (lists keep the most recent last), then the narrative's
// head. It returns the trimmed summary (what the answer shows) and its text.
func fitSummary(s memory.Summary, maxTokens int) (memory.Summary, string, bool) {
	if maxTokens <= 0 {
		return s, "", true
	}
	text := RenderSummary(s)
	if tokens.Count(text) <= maxTokens {
		return s, text, false
	}
	t := s
	t.Topics = append([]string(nil), s.Topics...)
	t.Entities = append([]memory.Entity(nil), s.Entities...)
	t.ActionsTaken = append([]string(nil), s.ActionsTaken...)
	t.Decisions = append([]string(nil), s.Decisions...)
	t.OpenQuestions = append([]string(nil), s.OpenQuestions...)
	t.UserPreferences = append([]string(nil), s.UserPreferences...)
	for tokens.Count(text) > maxTokens {
		// Trim the longest list by one item from its oldest end.
		lists := []*[]string{&t.Topics, &t.ActionsTaken, &t.Decisions, &t.OpenQuestions, &t.UserPreferences}
		longest, n := -1, 0
		for i, l := range lists {
			if len(*l) > n {
				longest, n = i, len(*l)
			}
		}
		switch {
		case len(t.Entities) > n:
			t.Entities = t.Entities[1:]
		case longest >= 0 && n > 0:
			*lists[longest] = (*lists[longest])[1:]
		case t.Narrative != "":
			// Keep the narrative's most recent part.
			over := tokens.Count(text) - maxTokens
			r := []rune(t.Narrative)
			cut := (over + 1) * 4
			if cut >= len(r) {
				t.Narrative = ""
			} else {
				t.Narrative = "…" + string(r[cut:])
			}
		default:
			return t, "", true
		}
		text = RenderSummary(t)
	}
	t.Normalize()
	return t, text, true
}

// buildMessages renders the sections as OpenAI-style messages: one system
// message carrying the RAG turns and the summary, then the recent turns in
// their own roles. Tool turns become assistant turns labelled with the tool,
// since a bare tool message without a tool_call_id is rejected by most APIs.
func buildMessages(s Sections, ragText, summaryText string) []ChatMessage {
	msgs := make([]ChatMessage, 0, len(s.Recent)+1)
	var sys []string
	if ragText != "" {
		sys = append(sys, "Relevant earlier turns of this conversation:"+strings.TrimPrefix(ragText, titleRAG))
	}
	if summaryText != "" {
		sys = append(sys, "Summary of the conversation so far:\n"+summaryText)
	}
	if len(sys) > 0 {
		msgs = append(msgs, ChatMessage{Role: "system", Content: strings.Join(sys, "\n\n")})
	}
	for _, t := range s.Recent {
		m := ChatMessage{Role: t.Role, Name: t.Name, Content: t.Content}
		if t.Role == string(memory.RoleTool) {
			label := "tool"
			if t.Name != "" {
				label += " " + t.Name
			}
			m = ChatMessage{Role: string(memory.RoleAssistant), Content: "[" + label + "] " + t.Content}
		}
		msgs = append(msgs, m)
	}
	return msgs
}
