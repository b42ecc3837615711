package engine

// The wire types of /v1/context: what a caller sends, what it gets back,
// and the assembler's own input and output.

import (
	"time"

	"github.com/contextd/contextd/internal/tokens"

	"github.com/contextd/contextd/memory"
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
	// Include lists which of context, messages and sections the answer
	// carries (empty: all three); usage and degraded always come.
	Include []string `json:"include"`
	// Since/Until (RFC 3339) restrict retrieval to that time range.
	Since string `json:"since"`
	Until string `json:"until"`
}

// Parts of the answer that Include selects.
const (
	IncludeContext  = "context"
	IncludeMessages = "messages"
	IncludeSections = "sections"
)

// ContextAnswer is the answer as sent: the parts not included are left
// out, so a caller that needs only messages pays for encoding only those.
type ContextAnswer struct {
	ChatID   string         `json:"chat_id"`
	Agent    string         `json:"agent"`
	Strategy Strategy       `json:"strategy"`
	Context  *string        `json:"context,omitempty"`
	Messages *[]ChatMessage `json:"messages,omitempty"`
	Sections *Sections      `json:"sections,omitempty"`
	Usage    Usage          `json:"usage"`
	Degraded []string       `json:"degraded"`
}

// Answer is r shaped by include (empty: everything).
func (r *ContextResult) Answer(include []string) ContextAnswer {
	a := ContextAnswer{ChatID: r.ChatID, Agent: r.Agent, Strategy: r.Strategy, Usage: r.Usage, Degraded: r.Degraded}
	all := len(include) == 0
	if all || containsString(include, IncludeContext) {
		a.Context = &r.Context
	}
	if all || containsString(include, IncludeMessages) {
		a.Messages = &r.Messages
	}
	if all || containsString(include, IncludeSections) {
		a.Sections = &r.Sections
	}
	return a
}

// ContextResult is the answer of POST /v1/context.
type ContextResult struct {
	ChatID   string        `json:"chat_id"`
	Agent    string        `json:"agent"`
	Strategy Strategy      `json:"strategy"`
	Context  string        `json:"context"`
	Messages []ChatMessage `json:"messages"`
	Sections Sections      `json:"sections"`
	Usage    Usage         `json:"usage"`
	Degraded []string      `json:"degraded"`
	// Timings are for the eval harness and metrics; not serialised.
	RetrievalTime time.Duration `json:"-"`
	AssemblyTime  time.Duration `json:"-"`
	// Offered is what the packer chose from (the eval's loss breakdown:
	// was evidence never retrieved, or retrieved and not packed?); not
	// serialised. It shares the request's slices: read, never modify.
	Offered Offered `json:"-"`
}

// Offered are the candidates one answer was packed from.
type Offered struct {
	// RAG are the retrieved facts, episodes, turns and passages, best
	// first; a turn the packer never needed is not cut to its snippet
	// yet (its Content empty, its Tokens 0): see ShapedRAG.
	RAG      []RAGTurn
	Verbatim []Turn // the recent window and the turns the summary does not cover yet
	shape    func(*RAGTurn)
}

// ShapedRAG is RAG with every candidate as it would be shown (a copy).
func (o Offered) ShapedRAG() []RAGTurn {
	out := append([]RAGTurn(nil), o.RAG...)
	for i := range out {
		if out[i].lazy != 0 && o.shape != nil {
			o.shape(&out[i])
		}
	}
	return out
}

// RAGTurn is one retrieved past turn offered to the assembler, best first.
type RAGTurn struct {
	ChatID string `json:"chat_id,omitempty"`
	Seq    int64  `json:"seq"`
	Role   string `json:"role"`
	// Name is the speaker's name, when the turn has one (a chat of several
	// people or agents: who said it is part of what was said).
	Name      string    `json:"name,omitempty"`
	Content   string    `json:"content"`
	Score     float32   `json:"score"`
	CreatedAt time.Time `json:"created_at"`
	// Neighbor marks a turn added for context around a hit.
	Neighbor bool `json:"neighbor,omitempty"`
	// pair marks a neighbour that is the other half of its hit's exchange
	// (the question before an answer, the answer after a question).
	pair bool
	// chosen marks a neighbour that put forward what a hit chose
	// (rag.Turn.Chosen): a pair, shown with its choice.
	chosen bool
	// choseFrom, on a turn choosing an option by its place ("ok do the
	// second one"), is the seq of the turn listing the options: the packer
	// shows them with it (rag.Turn.ChoseFrom).
	choseFrom int64
	// listsChosen marks a turn listing options that a retrieved choice by
	// place chose among (markChoices, as the packer starts): shown with it.
	listsChosen bool
	// pairScore, when set, is the score of the better hit whose exchange
	// this hit completes (markPairs): it is worth that hit's pair, at
	// least.
	pairScore float32
	// whole: the turn is short enough to be shown whole as a neighbour
	// would be (rag.PassageBytes).
	whole bool
	// asks: the turn ends with a question (its answer completes it:
	// markPairs).
	asks bool
	// part marks another matching passage of a long turn offered as a hit
	// (rag.Turn.More): it is shown only with its turn, in the turn's line
	// (foldParts), when it earns its room.
	part bool
	// standing marks a turn stating a standing instruction or a
	// constraint of the user's (standing.go): shown first of the
	// retrieved memory, within a share of the budget.
	standing bool
	// standsFor, on a standing instruction's fact, is the seq of the turn
	// stating it: the fact is shown in the turn's place when the turn does
	// not fit the standing share (takeStanding), and never otherwise.
	standsFor int64
	// update, when set, is the mark of a later turn that updated what this
	// turn says, shown on the line under it.
	update string
	// updateSeqs are the turns update quotes (dropped with it once they
	// are shown: packer.refundMarks).
	updateSeqs []int64
	// Tokens, when set, is the cost of the rendered turn (a hint from the
	// engine's cache; 0 = count it).
	Tokens int `json:"-"`
	// lazy, when set, says Content, Passages, update and Tokens are not
	// computed yet: AssemblyInput.Shape computes them when the packer
	// needs them (a long turn's snippet is cut only if it may be shown).
	// floor is then at most the Tokens it will have. (> 0: a turn, < 0:
	// a part.)
	lazy  int32
	floor int
	// snip, when set, is the lazy index a best-rag_k turn shown whole
	// takes when it does not fit whole: its snippet, at the same rank
	// (a long turn's matching sentences beat nothing at all).
	snip int32
	// Episode, when set, makes this candidate a retrieved episode: Content
	// is its short summary, shown under its dates and range (in place of
	// its turns), ranked with the turns; Seq is its FromSeq.
	Episode *EpisodeRef `json:"-"`
	// Fact, when set, makes this candidate a retrieved fact: Content is
	// the fact, shown on one line with its date and source turns; Seq is
	// its first source seq.
	Fact *FactRef `json:"-"`
	// Passages, when set, say Content is part of a long turn: its matching
	// passages, or its window best matching the query (a snippet), joined
	// by elision marks; their byte offsets in its content (a snippet of a
	// whole turn: in its content as filtered, which is the stored text
	// unless a filter stripped an agent label).
	Passages []PassageRef `json:"passages,omitempty"`
}

// FactRef names a retrieved fact's id, source turns and date.
type FactRef struct {
	ID      string
	Seqs    []int64
	ValidAt time.Time
	// Superseded: a newer fact updates this one (shown as history).
	Superseded bool
}

// PassageRef is a passage's byte offsets [From, To) in its turn's content
// and the turn's length, so the reader knows what was left out.
type PassageRef struct {
	From int `json:"from"`
	To   int `json:"to"`
	Len  int `json:"len"`
}

// SectionFact is one retrieved fact shown in the RAG section.
type SectionFact struct {
	ID      string    `json:"id"`
	ChatID  string    `json:"chat_id,omitempty"`
	Text    string    `json:"text"`
	Seqs    []int64   `json:"seqs"`
	ValidAt time.Time `json:"valid_at"`
	Score   float32   `json:"score"`
}

// EpisodeRef names a retrieved episode's range and dates.
type EpisodeRef struct {
	ID        string
	FromSeq   int64
	ToSeq     int64
	StartedAt time.Time
	EndedAt   time.Time
}

// SectionEpisode is one retrieved episode shown in the RAG section.
type SectionEpisode struct {
	ID        string    `json:"id"`
	ChatID    string    `json:"chat_id,omitempty"`
	FromSeq   int64     `json:"from_seq"`
	ToSeq     int64     `json:"to_seq"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	Short     string    `json:"short"`
	Score     float32   `json:"score"`
}

// Turn is one verbatim turn in the recent section.
type Turn struct {
	Seq       int64     `json:"seq"`
	Role      string    `json:"role"`
	Name      string    `json:"name"` // "" when none, as the contract lists it
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
	// Truncated reports that Content was shortened by the truncation strategy.
	Truncated bool `json:"truncated,omitempty"`
	// Tokens, when set, is the cost of the rendered turn (0 = count it).
	Tokens int `json:"-"`
	// full is the turn as filtered, before truncation cut it ("" when it
	// was not cut): shown instead when the whole chat fits.
	full string
}

// ChatMessage is one OpenAI-style message of the answer.
type ChatMessage struct {
	Role    string `json:"role"`
	Name    string `json:"name,omitempty"`
	Content string `json:"content"`
}

// Sections is the structured view of the assembled context.
type Sections struct {
	RAG []RAGTurn `json:"rag"`
	// Episodes are the retrieved episodes whose short summaries the RAG
	// section shows, chronologically among its turns.
	Episodes []SectionEpisode `json:"episodes"`
	// Facts are the retrieved facts the RAG section shows, one line each.
	Facts []SectionFact `json:"facts"`
	// Profile is the user's cross-chat profile shown first in the summary
	// section (null: none).
	Profile *memory.Profile `json:"profile"`
	Summary *memory.Summary `json:"summary"`
	Recent  []Turn          `json:"recent"`
}

// Usage accounts for the budget and for every turn not shown verbatim.
type Usage struct {
	BudgetTokens int `json:"budget_tokens"`
	TotalTokens  int `json:"total_tokens"`
	RAGTokens    int `json:"rag_tokens"`
	// EpisodeTokens are the RAG section's episode summaries (not counted
	// in RAGTokens).
	EpisodeTokens int `json:"episode_tokens"`
	// FactTokens are the RAG section's fact lines (not counted in
	// RAGTokens).
	FactTokens    int `json:"fact_tokens"`
	ProfileTokens int `json:"profile_tokens"`
	SummaryTokens int `json:"summary_tokens"`
	RecentTokens  int `json:"recent_tokens"`
	// SummarizedTurns are turns covered by the summary (seq <=
	// covered_to_seq). On the wire it is summarised_turns: one spelling
	// with the contract's ("every summarised turn") and the backlog metric
	// (contextd_backlog_unsummarised_turns).
	SummarizedTurns int64 `json:"summarised_turns"`
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
	Budget int
	// Tokens counts the budget (the agent's tokenizer; nil: cl100k).
	Tokens   tokens.Counter
	Strategy Strategy
	// RAG are retrieved turns, best first; none of them is in Verbatim.
	RAG []RAGTurn
	// Summary is the chat's summary (nil: none, or strategy none).
	Summary *memory.Summary
	// Profile is the user's profile (nil: none), shown before the summary.
	Profile *memory.Profile
	// Verbatim are the candidate verbatim turns in seq order: turns the
	// summary does not cover yet (pending) followed by the recent window.
	// The assembler keeps the newest that fit.
	Verbatim []Turn
	// MustKeepFrom: verbatim turns with seq >= it are the recent window and
	// are preferred over the summary; older ones (pending) come after it.
	MustKeepFrom int64
	// CoveredTo: verbatim turns with seq <= it are covered by the summary;
	// they only extend the verbatim tail with budget nothing else needs.
	CoveredTo int64
	// WholeChat: Verbatim starts at the chat's first turn, so when it all
	// fits (with the profile) the context is the whole chat.
	WholeChat bool
	// SummaryLags: as many pending turns as trigger a summary wait for it;
	// they then come before RAG hits (within their share), not after.
	SummaryLags bool
	// LLMEpisodes: episode summaries were written by an LLM, so they say
	// what their turns may not (in other words, across turns): a retrieved
	// episode is kept even when some of its turns are shown. An extractive
	// episode summary is made of its turns' words and stands aside for them.
	LLMEpisodes bool
	// Ranked packs one ranked budget (rag_augmented with a query): a floor
	// of the FloorTurns newest turns, then every candidate — retrieved
	// facts, episodes, turns and passages, the rest of the recent window
	// (with a recency prior), the summary and the profile (by how much of
	// Query they hold) — competes by relevance per token.
	Ranked     bool
	FloorTurns int
	Query      string
	// Shape completes a retrieved turn left lazy (RAGTurn.lazy): its
	// Content, Passages, update mark and Tokens, and clears lazy. The
	// packer calls it only for the candidates whose exact cost it needs;
	// it must depend on the turn alone. Nil when no turn is lazy.
	Shape func(r *RAGTurn)
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
	// CoveredShown counts the verbatim turns shown that the summary covers.
	CoveredShown int64
	// WholeChat: the context is the whole chat, verbatim (it fits).
	WholeChat bool
	// partsJoined counts the parts shown in their turns' lines.
	partsJoined int
}
