package engine

import (
	"cmp"
	"slices"
	"strconv"
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

func renderTurn(t Turn) string {
	var b strings.Builder
	b.Grow(len(t.Role) + len(t.Name) + len(t.Content) + 5)
	writeTurn(&b, t.Role, t.Name, t.Content)
	return b.String()
}

// writeTurn writes a turn as renderTurn renders it, straight into the
// section being built (no string per turn).
func writeTurn(b *strings.Builder, role, name, content string) {
	b.WriteString(role)
	if name != "" {
		b.WriteString(" (")
		b.WriteString(name)
		b.WriteString(")")
	}
	b.WriteString(": ")
	b.WriteString(content)
}

// blockHeader opens a block of consecutive retrieved turns: its chat
// (when another), its day and its turn numbers — "[Tue 3 October 2026 ·
// turns 11–12]". A model reads two lines printed one after the other as one
// exchange; the header says where a block starts, so turns 11 and 20 are
// never read as question and answer.
func blockHeader(chatID string, at time.Time, from, to int64) string {
	var b strings.Builder
	b.WriteString("[")
	if chatID != "" {
		b.WriteString("chat " + chatID + " · ")
	}
	if !at.IsZero() {
		b.WriteString(at.UTC().Format(DayLayout) + " · ")
	}
	if from == to {
		b.WriteString("turn " + strconv.FormatInt(from, 10))
	} else {
		b.WriteString("turns " + strconv.FormatInt(from, 10) + "–" + strconv.FormatInt(to, 10))
	}
	b.WriteString("]")
	return b.String()
}

// ragItem is a retrieved item placed in the RAG section, with its day.
type ragItem struct {
	r   *RAGTurn // not a copy: sorting moved ~300-byte structs by reflection
	day int
}

// sameBlock: b continues a's block (same chat and day, the next turn).
func sameBlock(a, b ragItem) bool {
	return a.r.Episode == nil && a.r.Fact == nil && b.r.Episode == nil && b.r.Fact == nil &&
		a.r.ChatID == b.r.ChatID && a.day == b.day && b.r.Seq == a.r.Seq+1
}

func derived(r *RAGTurn) bool { return r.Episode != nil || r.Fact != nil }

// blockFrom reads the block of consecutive turns that starts at sorted[i]:
// its turns, the facts and episodes dated inside it (shown after it, so
// they never split a block into two under two headers), and its last
// index.
func blockFrom(sorted []ragItem, i int) (block, after []int, last int) {
	block, last = []int{i}, i
	var pending []int
	for m := i + 1; m < len(sorted); m++ {
		switch {
		case derived(sorted[m].r):
			pending = append(pending, m)
			continue
		case sameBlock(sorted[last], sorted[m]):
			block, after, pending, last = append(block, m), append(after, pending...), nil, m
			continue
		}
		break
	}
	return block, after, last
}

// writeRAGSection lays retrieved items out in chronological order: turns
// in blocks of consecutive turns, each under its header; an episode or a
// fact on its own line with its own dates. b is the context's one buffer
// (renderText), grown once for every section (sectionBytes).
func writeRAGSection(b *strings.Builder, rs []*RAGTurn) {
	if len(rs) == 0 {
		return
	}
	sorted := make([]ragItem, len(rs))
	for i, r := range rs {
		at := r.CreatedAt
		if r.Episode != nil && !r.Episode.StartedAt.IsZero() {
			at = r.Episode.StartedAt // an episode sits where it began
		}
		if r.Fact != nil && !r.Fact.ValidAt.IsZero() {
			at = r.Fact.ValidAt
		}
		y, m, d := at.UTC().Date()
		sorted[i] = ragItem{r, y*10000 + int(m)*100 + d}
	}
	slices.SortStableFunc(sorted, func(a, b ragItem) int {
		return cmp.Or(cmp.Compare(a.day, b.day), strings.Compare(a.r.ChatID, b.r.ChatID), cmp.Compare(a.r.Seq, b.r.Seq))
	})
	b.WriteString(titleRAG)
	for i := 0; i < len(sorted); i++ {
		r := sorted[i].r
		if derived(r) { // its own date; no header
			b.WriteString("\n")
			b.WriteString(renderRAGItem(*r))
			continue
		}
		block, after, last := blockFrom(sorted, i)
		b.WriteString("\n")
		b.WriteString(blockHeader(r.ChatID, r.CreatedAt, r.Seq, sorted[last].r.Seq))
		for _, k := range block {
			b.WriteString("\n")
			writeRAGTurn(b, sorted[k].r)
		}
		for _, k := range after {
			b.WriteString("\n")
			b.WriteString(renderRAGItem(*sorted[k].r))
		}
		i = last
	}
}

// writeRAGTurn writes a retrieved turn's line, and under it the mark of a
// later turn that updated what it says.
func writeRAGTurn(b *strings.Builder, r *RAGTurn) {
	writeTurn(b, r.Role, r.Name, r.Content)
	if r.update != "" {
		b.WriteString("\n")
		b.WriteString(r.update)
	}
}

// renderRAGItem is one line of the RAG section: a turn, or an episode's
// short summary under its dates and range.
func renderRAGItem(r RAGTurn) string {
	var line string
	switch {
	case r.Episode != nil:
		e := r.Episode
		line = renderEpisodeLine(e.StartedAt, e.EndedAt, e.FromSeq, e.ToSeq, r.Content)
		if r.ChatID != "" {
			line = "[chat " + r.ChatID + "] " + line
		}
	case r.Fact != nil:
		line = renderFactLine(r.ChatID, r.Fact, r.Content)
	default:
		var b strings.Builder
		writeRAGTurn(&b, &r) // the turn's line, its mark under it
		return b.String()
	}
	if r.update != "" { // a later turn changed what its turns said
		line += "\n" + r.update
	}
	return line
}

// renderFactLine is one fact: "[24 March 2022] Nate has had his turtles
// for 3 years. (turns 212, 215)"; a superseded fact says it is history.
func renderFactLine(chatID string, f *FactRef, text string) string {
	var b strings.Builder
	if !f.ValidAt.IsZero() {
		b.WriteString("[" + f.ValidAt.UTC().Format("2 January 2006") + "] ")
	}
	if chatID != "" {
		b.WriteString("[chat " + chatID + "] ")
	}
	if f.Superseded {
		b.WriteString("(earlier, since updated) ")
	}
	b.WriteString(text)
	if len(f.Seqs) > 0 {
		label := "turn"
		if len(f.Seqs) > 1 {
			label = "turns"
		}
		ss := make([]string, len(f.Seqs))
		for i, s := range f.Seqs {
			ss[i] = strconv.FormatInt(s, 10)
		}
		b.WriteString(" (" + label + " " + strings.Join(ss, ", ") + ")")
	}
	return b.String()
}

func renderEpisodeLine(started, ended time.Time, from, to int64, short string) string {
	return EpisodeHeader(started, ended, from, to) + " " + short
}

// writeRecentSection writes the recent turns in order under their title,
// a day line where the day changes.
func writeRecentSection(b *strings.Builder, ts []Turn) {
	if len(ts) == 0 {
		return
	}
	b.WriteString(titleRecent)
	day := 0
	for i := range ts {
		if d := dayOf(ts[i].CreatedAt); d != 0 && d != day {
			b.WriteString("\n")
			b.WriteString(dayLine(ts[i].CreatedAt))
			day = d
		}
		b.WriteString("\n")
		writeTurn(b, ts[i].Role, ts[i].Name, ts[i].Content)
	}
}

// dayOf is a time's UTC day as yyyymmdd (0 for the zero time).
func dayOf(t time.Time) int {
	if t.IsZero() {
		return 0
	}
	y, m, d := t.UTC().Date()
	return y*10000 + int(m)*100 + d
}

// dayLine dates the recent turns: a line when the day changes, so a model
// reading a chat shown whole can place what was said in time ("last
// Tuesday", "two weeks ago") as it can a retrieved block.
func dayLine(t time.Time) string { return "[" + t.UTC().Format(DayLayout) + "]" }

// DayLayout is how a context dates turns: headers, day lines, update
// marks. The month is spelled out, as in fact lines ("[3 July 2023]"):
// one context never names a month two ways, so "Jul" in a header and
// "July" in a fact are the same word to whoever matches words.
const DayLayout = "Mon 2 January 2006"

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

// buildMessages renders the sections as OpenAI-style messages: one system
// message carrying the RAG turns and the summary, then the recent turns in
// their own roles. Tool turns become assistant turns labelled with the tool,
// since a bare tool message without a tool_call_id is rejected by most APIs.
func buildMessages(s Sections, ragText, profileText, summaryText string) []ChatMessage {
	msgs := make([]ChatMessage, 0, len(s.Recent)+1)
	// The system message: each part under its heading, built in one buffer
	// (the retrieved turns alone are most of a large answer's text).
	parts := [...]struct {
		on         bool
		head, text string
	}{
		{ragText != "", "Relevant earlier turns of this conversation:", strings.TrimPrefix(ragText, titleRAG)},
		{profileText != "", "What is known about the user from other conversations:\n", profileText},
		{summaryText != "", "Summary of the conversation so far:\n", summaryText},
	}
	n := 0
	for _, p := range parts {
		n += len(p.head) + len(p.text) + 2
	}
	var sys strings.Builder
	sys.Grow(n)
	for _, p := range parts {
		if !p.on {
			continue
		}
		if sys.Len() > 0 {
			sys.WriteString("\n\n")
		}
		sys.WriteString(p.head)
		sys.WriteString(p.text)
	}
	if sys.Len() > 0 {
		msgs = append(msgs, ChatMessage{Role: "system", Content: sys.String()})
	}
	for _, t := range s.Recent {
		m := ChatMessage{Role: t.Role, Name: openAIName(t.Name), Content: t.Content}
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

// fitSummary trims a summary until its rendering fits maxTokens: first the
// oldest list items (lists keep the most recent last), then the narrative's
// head. It returns the trimmed summary (what the answer shows) and its text.
func fitSummary(s memory.Summary, maxTokens int, tok tokens.Counter) (memory.Summary, string, bool) {
	if maxTokens <= 0 {
		return s, "", true
	}
	text := RenderSummary(s)
	if tok.Count(text) <= maxTokens {
		return s, text, false
	}
	t := s.Clone() // trimmed below; the caller's lists stay whole
	for {
		over := tok.Count(text) - maxTokens
		if over <= 0 {
			break
		}
		// Drop items until what they may have saved covers the overage,
		// then count again: one count of the whole text per batch, not per
		// item (the loop was quadratic in the items dropped).
		for saved := 0; saved < over; {
			// The narrative is cut by an exact overage: only first in a batch.
			got, narrative, ok := trimOldest(&t, over, saved == 0, tok)
			if !ok {
				return t, "", true
			}
			if narrative {
				break
			}
			saved += got
		}
		text = RenderSummary(t)
	}
	t.Normalize()
	return t, text, true
}

// trimOldest drops one item of t, in fitSummary's order: an entity while
// they outnumber every list, else the longest list's oldest item, else the
// narrative's head (by over tokens, and only when cutOK; otherwise it
// leaves it). It returns about the most tokens that saved (the item's own
// count, its separator's and a token for merges at its edges): batched on
// an overestimate, fitSummary never drops an item the exact count would
// have kept. It also says whether the narrative
// was next, and false when nothing was left to drop.
func trimOldest(t *memory.Summary, over int, cutOK bool, tok tokens.Counter) (saved int, narrative, ok bool) {
	lists := t.Lists()
	longest, n := -1, 0
	for i, l := range lists {
		if len(*l) > n {
			longest, n = i, len(*l)
		}
	}
	switch {
	case len(t.Entities) > n:
		e := t.Entities[0]
		t.Entities = t.Entities[1:]
		return tok.Count(e.Name) + tok.Count(e.Type) + tok.Count(e.Details) + 4, false, true
	case longest >= 0 && n > 0:
		item := (*lists[longest])[0]
		*lists[longest] = (*lists[longest])[1:]
		return tok.Count(item) + 2, false, true
	case t.Narrative != "" && !cutOK:
		return 0, true, true
	case t.Narrative != "":
		// Keep the narrative's most recent part.
		r := []rune(t.Narrative)
		cut := (over + 1) * 4
		if cut >= len(r) {
			t.Narrative = ""
		} else {
			t.Narrative = "…" + string(r[cut:])
		}
		return over, true, true
	}
	return 0, false, false
}

// openAIName fits a speaker's name to the pattern OpenAI's "name" field
// accepts (^[a-zA-Z0-9_-]{1,64}$): other characters become "_", runs of
// them one "_". The text keeps the name as it was written.
func openAIName(name string) string {
	var b strings.Builder
	under := false
	for _, r := range name {
		ok := r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			if !under && b.Len() > 0 {
				b.WriteByte('_')
			}
			under = true
			continue
		}
		b.WriteRune(r)
		under = r == '_'
		if b.Len() >= 64 {
			break
		}
	}
	return strings.TrimRight(b.String(), "_")
}
