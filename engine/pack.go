package engine

import (
	"regexp"
	"slices"
	"strings"

	"github.com/contextd/contextd/derive/facts"
	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// Budget shares: caps for the first pass; what a section leaves unused is
// handed on in a second pass, so a small section never wastes budget. With
// rag_augmented most of the budget goes to retrieval: the recent window and
// the summary still come first, but within smaller shares.
type shares struct{ recent, summary, pending float64 }

// minTurnTokens is the least a rendered turn costs ("user: x" and its
// newline), so packing stops once less than that is left.
const minTurnTokens = 4

func sharesFor(strategy Strategy) shares {
	if strategy == StrategyRAG {
		return shares{recent: 0.25, summary: 0.15, pending: 0.15}
	}
	return shares{recent: 0.45, summary: 0.25, pending: 1}
}

// Assemble builds the context within in.Budget tokens (in.Tokens; cl100k
// when nil). When the whole chat (in.WholeChat) and the profile fit, the
// context is the whole chat, verbatim and in order: nothing is summarised
// away while it fits. Otherwise, priority when the budget is short: the
// recent window (newest first, up to its share), then the summary (up to
// its share), then — for rag_augmented — RAG hits in rank order, then the
// turns the summary does not cover yet; whatever is left extends the
// verbatim tail further back, so no turn is dropped while budget is left.
// The text is laid out in the contract's order regardless.
func Assemble(in AssemblyInput) Assembled {
	p := newPacker(in)
	if p.packWholeChat() {
		a := p.layout()
		a.WholeChat = true
		return a
	}
	if in.Ranked && in.Strategy == StrategyRAG {
		p.packRanked()
		p.fillTail()
		return p.layout()
	}
	p.packRecent()
	p.packProfile()
	p.packSummary()
	p.packLaggingTail()
	if in.Strategy == StrategyRAG {
		p.packRAG()
	}
	p.extendTail(p.remaining, len(p.verb.recentIdx)+len(p.verb.pendingIdx))
	p.packRAG()
	p.fillTail()
	return p.layout()
}

// packer decides which candidates the budget holds. Every piece is charged
// as it is taken (with its section title and date header the first time),
// so the sum of the charges bounds the text; layout measures the real text.
type packer struct {
	in        AssemblyInput
	tok       tokens.Counter
	sh        shares
	remaining int
	verb      verbatimPicks
	rag       ragPicks
	shown     shownTexts
}

// verbatimPicks are the verbatim candidates in the packer's order and
// what it keeps of them.
type verbatimPicks struct {
	recentIdx, pendingIdx []int // verbatim indices, newest first
	coveredIdx            []int // verbatim candidates the summary covers, newest first
	// tail is every verbatim index, newest first (recent, pending,
	// covered); the kept verbatim turns are always tail[:tailN], a
	// contiguous newest run.
	tail      []int
	tailN     int
	tailDay   int // the day of the oldest turn kept (its day line is paid)
	cost      []int
	keep      []bool
	bySeq     map[int64]int
	titlePaid bool
	spent     int // tokens spent on verbatim turns
}

// ragPicks are what the packer charged and kept of the retrieved
// candidates.
type ragPicks struct {
	cost      []int
	keep      []bool
	titlePaid bool
	kept      map[turnKey2]bool // retrieved turns kept (their blocks' headers are paid)
	// parts are the parts reached before their turn was kept: each is
	// taken when its turn is (it was worth more than what came after).
	parts []int
	// lone are the neighbours reached before a turn next to them was
	// shown: a neighbour is context for its hit, and shown alone it is a
	// stray turn ("wait i thought we said leave at 1?" without the
	// message it answers). Each is taken when a turn next to it is.
	lone    []int
	joined  int   // parts shown in their turns' lines (render)
	headers []int // memoised cost of each candidate's block header (0: none yet)
}

// shownTexts are the summary and profile as the packer took them.
type shownTexts struct {
	summaryText    string
	summary        *memory.Summary
	profileText    string
	profile        *memory.Profile
	summaryTrimmed bool
}

// turnKey2 names a retrieved turn: its chat ("" for this one) and seq.
type turnKey2 struct {
	chat string
	seq  int64
}

func newPacker(in AssemblyInput) *packer {
	if in.Tokens == nil {
		in.Tokens = tokens.CL100K
	}
	p := &packer{
		in: in, tok: in.Tokens, sh: sharesFor(in.Strategy), remaining: in.Budget,
		verb: verbatimPicks{cost: make([]int, len(in.Verbatim)), keep: make([]bool, len(in.Verbatim)),
			bySeq: make(map[int64]int, len(in.Verbatim)), recentIdx: make([]int, 0, len(in.Verbatim))},
		rag: ragPicks{cost: make([]int, len(in.RAG)), keep: make([]bool, len(in.RAG)), kept: map[turnKey2]bool{},
			headers: make([]int, len(in.RAG))},
	}
	for i := len(in.Verbatim) - 1; i >= 0; i-- {
		switch seq := in.Verbatim[i].Seq; {
		case seq >= in.MustKeepFrom:
			p.verb.recentIdx = append(p.verb.recentIdx, i)
		case seq > in.CoveredTo:
			p.verb.pendingIdx = append(p.verb.pendingIdx, i)
		default:
			p.verb.coveredIdx = append(p.verb.coveredIdx, i)
		}
	}
	markChoices(p.in.RAG)
	p.verb.tail = make([]int, 0, len(in.Verbatim))
	p.verb.tail = append(append(append(p.verb.tail, p.verb.recentIdx...), p.verb.pendingIdx...), p.verb.coveredIdx...)
	for i, t := range in.Verbatim {
		p.verb.bySeq[t.Seq] = i
		if t.Tokens > 0 {
			p.verb.cost[i] = t.Tokens + 1
		} else {
			p.verb.cost[i] = p.tok.Count(renderTurn(t)) + 1
		}
	}
	return p
}

// titleCost is a section title's tokens plus its blank line, charged when
// the section first gets an item.
func (p *packer) titleCost(t string) int { return p.tok.Count(t+"\n") + 1 }

func (p *packer) spend(cost int) bool {
	if cost > p.remaining {
		return false
	}
	p.remaining -= cost
	return true
}

// costRAG counts a RAG candidate lazily: with rag_fill there are more of
// them than fit, and the ones never considered are never counted.
func (p *packer) costRAG(i int) int {
	if p.rag.cost[i] == 0 {
		p.shapeRAG(i)
		r := p.in.RAG[i]
		switch {
		case r.Tokens > 0 && r.update != "":
			p.rag.cost[i] = r.Tokens + p.tok.Count(r.update) + 2
		case r.Tokens > 0:
			p.rag.cost[i] = r.Tokens + 1
		default:
			p.rag.cost[i] = p.tok.Count(renderRAGItem(r)) + 1
		}
	}
	return p.rag.cost[i]
}

// shapeRAG cuts lazy candidate i to what it shows (AssemblyInput.Shape).
func (p *packer) shapeRAG(i int) {
	if p.in.RAG[i].lazy != 0 {
		p.in.Shape(&p.in.RAG[i])
		p.in.RAG[i].lazy, p.in.RAG[i].floor = 0, 0
	}
}

// leastCost is at most what taking candidate i may ever cost: its cost
// when known, else a lazy turn's floor, its newline and the least a block
// header adds (joining a kept neighbour's block); no title.
func (p *packer) leastCost(i int) int {
	if r := p.in.RAG[i]; r.lazy != 0 {
		if r.part {
			return r.floor + 1 // it joins its turn's line: no header
		}
		return r.floor + 1 + 2
	}
	return p.costRAG(i)
}

// headerCost is what showing retrieved candidate i adds in block headers:
// a turn next to a kept turn of its chat joins that block (its header's
// range widens, about two tokens), any other turn opens a block of its own.
// Joining two blocks frees a header this does not refund: the charges stay
// an upper bound, and layout measures the real text.
func (p *packer) headerCost(i int) int {
	r := p.in.RAG[i]
	if r.Episode != nil || r.Fact != nil || r.part {
		return 0 // an episode or a fact carries its own dates; a part joins its turn's line
	}
	if p.rag.kept[turnKey2{r.ChatID, r.Seq - 1}] || p.rag.kept[turnKey2{r.ChatID, r.Seq + 1}] {
		return 2
	}
	if p.rag.headers[i] == 0 {
		p.rag.headers[i] = p.tok.Count(blockHeader(r.ChatID, r.CreatedAt, r.Seq, r.Seq+1)) + 1
	}
	return p.rag.headers[i]
}

// extendTail takes more of the verbatim tail, newest first, up to
// capTokens and to the first upTo turns of p.verb.tail, stopping at the first
// that does not fit so the kept turns stay contiguous: a newer turn is
// never skipped for an older one.
func (p *packer) extendTail(capTokens, upTo int) {
	used := 0
	for p.verb.tailN < min(upTo, len(p.verb.tail)) {
		i := p.verb.tail[p.verb.tailN]
		c := p.verb.cost[i] + p.dayCost(i)
		if !p.verb.titlePaid {
			c += p.titleCost(titleRecent)
		}
		if used+c > capTokens || !p.spendTail(i, c) {
			return
		}
		used += c
		p.keep(i, c)
	}
}

// keep takes verbatim candidate i (the next of the tail) at cost c.
func (p *packer) keep(i, c int) {
	p.verb.tailDay = dayOf(p.in.Verbatim[i].CreatedAt)
	p.verb.spent += c
	p.verb.titlePaid = true
	p.verb.keep[i] = true
	p.verb.tailN++
	p.refundMarks(p.in.Verbatim[i].Seq)
}

// dayCost is what showing verbatim candidate i, the next (older) of the
// tail, adds in day lines: a line for its day when it is the first turn
// kept or its day is not the day of the oldest turn kept.
func (p *packer) dayCost(i int) int {
	t := p.in.Verbatim[i]
	if t.CreatedAt.IsZero() || (p.verb.tailN > 0 && dayOf(t.CreatedAt) == p.verb.tailDay) {
		return 0
	}
	return p.tok.Count(dayLine(t.CreatedAt)) + 1
}

// fillTail extends the verbatim tail with what the budget has left, back
// through the pending and covered turns: no turn is dropped while budget
// is left.
func (p *packer) fillTail() {
	for p.verb.tailN < len(p.verb.tail) && p.remaining >= minTurnTokens && p.takeVerb(p.verb.tail[p.verb.tailN]) {
	}
}

// packWholeChat shows the whole chat, verbatim and in order, with the
// profile, when they fit: a chat that fits the budget is never summarised
// away (nor retrieved from: every turn of it is there). Hits from other
// chats may use what is left. False when the chat does not fit.
func (p *packer) packWholeChat() bool {
	if !p.in.WholeChat || len(p.in.Verbatim) == 0 {
		return false
	}
	whole, cut := p.wholeChatCost()
	switch {
	case whole <= p.in.Budget:
		p.showUncut() // a turn cut only to make room is shown as it was said
	case cut <= p.in.Budget:
		// Every turn fits, its long ones cut to whole sentences: still
		// the whole chat, in order, and a summary would stand in for none.
	default:
		return false
	}
	p.extendTail(p.in.Budget, len(p.verb.tail))
	p.packProfile()
	for i, r := range p.in.RAG {
		if r.ChatID != "" && p.remaining >= minTurnTokens {
			p.takeRAG(i)
		}
	}
	return true
}

// wholeChatCost is what every verbatim candidate costs with its title and
// day lines: each turn whole, and each as cut to the agent's truncation.
func (p *packer) wholeChatCost() (whole, cut int) {
	base, day := p.titleCost(titleRecent), 0
	for i, t := range p.in.Verbatim {
		if d := dayOf(t.CreatedAt); d != 0 && d != day {
			base += p.tok.Count(dayLine(t.CreatedAt)) + 1
			day = d
		}
		cut += p.verb.cost[i]
		if t.full != "" {
			whole += p.tok.Count(renderTurn(Turn{Role: t.Role, Name: t.Name, Content: t.full})) + 1
		} else {
			whole += p.verb.cost[i]
		}
		if cut+base > p.in.Budget {
			break // neither fits: no need to count on
		}
	}
	return whole + base, cut + base
}

// showUncut shows every verbatim candidate as it was said.
func (p *packer) showUncut() {
	vs := make([]Turn, len(p.in.Verbatim))
	for i, t := range p.in.Verbatim {
		if t.full != "" {
			t.Content, t.Truncated, t.Tokens, t.full = t.full, false, 0, ""
			p.verb.cost[i] = p.tok.Count(renderTurn(t)) + 1
		}
		vs[i] = t
	}
	p.in.Verbatim = vs
}

// unkeepHit takes back the kept retrieved turn of this chat at seq and
// its parts, their cost refunded; it returns their indices (none when
// there is no such turn).
func (p *packer) unkeepHit(seq int64) []int {
	if !p.rag.kept[turnKey2{"", seq}] {
		return nil
	}
	var out []int
	for j, r := range p.in.RAG {
		if p.rag.keep[j] && r.ChatID == "" && r.Seq == seq && r.Episode == nil && r.Fact == nil {
			p.rag.keep[j] = false
			p.remaining += p.rag.cost[j]
			out = append(out, j)
		}
	}
	delete(p.rag.kept, turnKey2{"", seq})
	return out
}

// packRAG takes retrieved turns in rank order while anything fits.
func (p *packer) packRAG() {
	for i := range p.in.RAG {
		if p.remaining < minTurnTokens {
			return // no turn fits in what is left
		}
		p.takeRAG(i) // when it does not fit, a shorter, lower-ranked hit may
	}
}

// takeRAG shows retrieved candidate i when it fits and adds something.
func (p *packer) takeRAG(i int) {
	if p.rag.keep[i] || p.in.RAG[i].standsFor != 0 {
		return // a stand-in is shown only in its turn's place (takeStanding)
	}
	p.dropShownMark(i)
	r := p.in.RAG[i]
	if vi, ok := p.verb.bySeq[r.Seq]; ok && r.ChatID == "" && r.Episode == nil && r.Fact == nil &&
		(p.verb.keep[vi] || !p.in.Ranked && p.in.Verbatim[vi].Seq >= p.in.MustKeepFrom) {
		// Shown in the tail already, or a recent-window turn the window's
		// share will show: it is shown as part of the newest tail, never
		// out of order. (A ranked budget shows the window beyond its
		// floor only as far as it earns: a hit there is shown as one
		// until the tail reaches it.)
		return
	}
	if r.Episode != nil && !p.in.LLMEpisodes && p.episodeShown(r) {
		return // its own turns are already there: an extractive summary adds little
	}
	if r.Fact != nil {
		if p.takeSources(r); p.factRepeats(r) {
			return // its turns, shown, say all it says
		}
	}
	if r.part && !p.rag.kept[turnKey2{r.ChatID, r.Seq}] {
		p.rag.parts = append(p.rag.parts, i) // shown only with its turn
		return
	}
	if r.Neighbor && !p.besideShown(r) && !p.partnerShown(r) {
		p.rag.lone = append(p.rag.lone, i) // shown only beside a turn shown
		return
	}
	if r.Neighbor && r.choseFrom > 0 && !p.partnerFits(r, i) {
		return // context around a hit, "ok do the second one" without its options says nothing
	}
	if p.leastCost(i) > p.remaining {
		if p.toSnippet(i) {
			p.takeRAG(i)
		}
		return // cannot fit: a lazy turn is not cut for nothing
	}
	c := p.costRAG(i)
	if !p.rag.titlePaid {
		c += p.titleCost(titleRAG)
	}
	c += p.headerCost(i)
	if !p.spend(c) {
		if p.toSnippet(i) {
			p.takeRAG(i)
		}
		return
	}
	p.rag.titlePaid = true
	p.rag.keep[i] = true
	if r.Episode == nil && r.Fact == nil && !r.part {
		p.rag.kept[turnKey2{r.ChatID, r.Seq}] = true
		if r.standing {
			p.dropStandIns(r.Seq)
		}
		if r.ChatID == "" {
			p.refundMarks(r.Seq)
		}
		p.dropEpisodesOf(&p.in.RAG[i])
		p.takeParts(r.ChatID, r.Seq)
		p.takeBeside(r.ChatID, r.Seq)
		p.takePartner(r)
	}
}

// A mark repeats its updating turns. Once they are themselves shown (a
// retrieved turn, or in the recent tail), the model reads each update
// where it was said, dated, and the mark only takes room: it is left
// out, and what it was charged is given back.

// seqShown: turn seq of this chat is shown, retrieved or in the tail.
func (p *packer) seqShown(seq int64) bool {
	if p.rag.kept[turnKey2{"", seq}] {
		return true
	}
	vi, ok := p.verb.bySeq[seq]
	return ok && p.verb.keep[vi]
}

// marksShown: every turn r's mark quotes is shown.
func (p *packer) marksShown(r *RAGTurn) bool {
	if r.update == "" || len(r.updateSeqs) == 0 || r.ChatID != "" {
		return false
	}
	for _, s := range r.updateSeqs {
		if !p.seqShown(s) {
			return false
		}
	}
	return true
}

// dropShownMark leaves out candidate i's mark, not yet charged, when the
// turns it quotes are shown.
func (p *packer) dropShownMark(i int) {
	if r := &p.in.RAG[i]; p.marksShown(r) {
		r.update, r.updateSeqs = "", nil
		p.rag.cost[i] = 0
	}
}

// refundMarks gives back the marks of the kept candidates that turn seq,
// now shown, completes: their cost was their text's, their mark's and two
// (markCost); the refund leaves one of those two.
func (p *packer) refundMarks(seq int64) {
	for j := range p.in.RAG {
		r := &p.in.RAG[j]
		if !p.rag.keep[j] || r.Tokens == 0 || !slices.Contains(r.updateSeqs, seq) || !p.marksShown(r) {
			continue
		}
		refund := p.rag.cost[j] - (r.Tokens + 2)
		if refund <= 0 {
			continue
		}
		p.rag.cost[j] -= refund
		p.remaining += refund
		r.update, r.updateSeqs = "", nil
	}
}

// toSnippet makes best hit i, too long to fit whole, a lazy turn cut to
// its snippet (its matching sentences), once; false when it has none.
func (p *packer) toSnippet(i int) bool {
	r := &p.in.RAG[i]
	if r.snip == 0 || r.lazy != 0 || p.in.Shape == nil {
		return false
	}
	r.lazy, r.floor, r.snip = r.snip, 0, 0
	p.rag.cost[i] = 0
	return true
}

// besideShown: a turn next to r is shown, retrieved or in the tail.
func (p *packer) besideShown(r RAGTurn) bool {
	for _, s := range [2]int64{r.Seq - 1, r.Seq + 1} {
		if p.rag.kept[turnKey2{r.ChatID, s}] {
			return true
		}
		if vi, ok := p.verb.bySeq[s]; ok && r.ChatID == "" && p.verb.keep[vi] {
			return true
		}
	}
	return false
}

// takeBeside takes the waiting neighbours next to the turn just kept.
func (p *packer) takeBeside(chat string, seq int64) {
	for _, j := range p.rag.lone {
		if r := p.in.RAG[j]; r.ChatID == chat && (r.Seq == seq-1 || r.Seq == seq+1) && !p.rag.keep[j] {
			p.takeRAG(j)
		}
	}
}

// takeParts takes the waiting parts of the turn just kept.
func (p *packer) takeParts(chat string, seq int64) {
	for _, j := range p.rag.parts {
		if r := p.in.RAG[j]; r.ChatID == chat && r.Seq == seq {
			p.takeRAG(j)
		}
	}
}

// takeSources shows a retrieved fact's source turns that are candidates
// too, before the fact: words said are shown before (and, when the budget
// is short, in place of) a paraphrase of them. The fact still follows when
// it fits, for what it adds (a relative date resolved, turns joined).
func (p *packer) takeSources(f RAGTurn) {
	for _, seq := range f.Fact.Seqs {
		if j := p.ragTurnAt(f.ChatID, seq); j >= 0 {
			p.takeRAG(j)
		}
	}
}

// factRepeats reports whether retrieved fact f says nothing its source
// turns, as shown, do not: every term of it is among their words and
// their speakers' names (`Tomás said: "Dinner is 8pm Thursday now"` under
// that very turn). A fact that resolves a date ("on 7 May 2026" for
// "yesterday"), names who "I" is, or joins turns not all shown adds words,
// and is shown.
func (p *packer) factRepeats(f RAGTurn) bool {
	shown := map[string]bool{}
	for _, seq := range f.Fact.Seqs {
		text, ok := p.shownTurn(f.ChatID, seq)
		if !ok {
			return false
		}
		for _, t := range lex.Terms(text) {
			shown[t] = true
		}
	}
	for _, t := range lex.Terms(f.Content) {
		if !shown[t] && !factWords[t] {
			return false
		}
	}
	return true
}

// factWords are the terms a fact adds to say who said it, or that it is
// a standing instruction (facts.StandingPrefix).
var factWords = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range lex.Terms("said user assistant " + facts.StandingPrefix) {
		m[t] = true // as lex.Terms writes them ("standing" is "stand")
	}
	return m
}()

// shownTurn is the text the context shows of the chat's turn at seq (its
// speaker's name, its retrieved entries or its verbatim line), and whether
// it is shown at all.
func (p *packer) shownTurn(chat string, seq int64) (string, bool) {
	var b strings.Builder
	for j, r := range p.in.RAG {
		if p.rag.keep[j] && r.Episode == nil && r.Fact == nil && r.ChatID == chat && r.Seq == seq {
			b.WriteString(r.Name + " " + r.Content + "\n")
		}
	}
	if vi, ok := p.verb.bySeq[seq]; ok && chat == "" && p.verb.keep[vi] {
		b.WriteString(p.in.Verbatim[vi].Name + " " + p.in.Verbatim[vi].Content)
	}
	return b.String(), b.Len() > 0
}

// ragTurnAt is the index of the retrieved turn (not a fact or an episode)
// of the chat at seq, -1 when it is no candidate.
func (p *packer) ragTurnAt(chat string, seq int64) int {
	for j, r := range p.in.RAG {
		if r.Episode == nil && r.Fact == nil && r.ChatID == chat && r.Seq == seq {
			return j
		}
	}
	return -1
}

// episodeShown reports whether a retrieved turn inside the episode's range
// (same chat) is already kept: an episode stands in for turns that are not.
func (p *packer) episodeShown(e RAGTurn) bool {
	for i := range p.in.RAG {
		if p.rag.keep[i] && e.holds(&p.in.RAG[i]) {
			return true
		}
	}
	return false
}

// dropEpisodesOf leaves out an extractive episode line kept before turn t
// of its range, now shown, when the line only repeats shown
// turns: each sentence it quotes is in a kept turn of the range. It gives
// back the line's cost. (The header it may have paid for stays paid:
// fewer tokens used, never more.)
func (p *packer) dropEpisodesOf(t *RAGTurn) {
	if p.in.LLMEpisodes {
		return
	}
	for j := range p.in.RAG {
		e := &p.in.RAG[j]
		if !p.rag.keep[j] || e.Episode == nil || !e.holds(t) || !p.quotesShown(e) {
			continue
		}
		p.rag.keep[j] = false
		p.remaining += p.rag.cost[j]
	}
}

// quotesShown: every quote of extractive episode line e ("The user said:
// \"…\"") is in a turn of its range kept whole or in part; false for a
// line quoting nothing.
func (p *packer) quotesShown(e *RAGTurn) bool {
	qs := quoted.FindAllStringSubmatch(e.Content, -1)
	for _, q := range qs {
		if !slices.ContainsFunc(p.in.RAG, func(r RAGTurn) bool {
			return e.holds(&r) && p.rag.kept[turnKey2{r.ChatID, r.Seq}] && quotes(r.Content, q[1])
		}) {
			return false
		}
	}
	return len(qs) > 0
}

// quoted is a quote of an extractive episode line.
var quoted = regexp.MustCompile(`"([^"]+)"`)

// quotes: content holds quote q of an episode line (cut or not).
func quotes(content, q string) bool {
	q = strings.TrimSuffix(strings.TrimSpace(q), "…")
	return q != "" && strings.Contains(content, q)
}

// packRecent takes the recent window, newest first, up to its share (all
// of it when there is nothing else to show).
func (p *packer) packRecent() {
	capTokens := p.in.Budget
	if p.in.Summary != nil || len(p.in.RAG) > 0 || len(p.verb.pendingIdx) > 0 {
		capTokens = int(float64(p.in.Budget) * p.sh.recent)
	}
	p.extendTail(capTokens, len(p.verb.recentIdx))
}

// packSummary takes the summary, trimmed to its share.
func (p *packer) packSummary() {
	if p.in.Summary == nil || p.in.Summary.IsEmpty() {
		return
	}
	capTokens := min(int(float64(p.in.Budget)*p.sh.summary)-p.profileSpent(), p.remaining)
	s, text, trimmed := fitSummary(*p.in.Summary, capTokens-p.titleCost(titleSummary), p.tok)
	if terms := lex.QueryTerms(p.in.Query); trimmed && len(terms) > 0 {
		// Trimmed for a question: the items least related to it go
		// first, not the oldest ("cc bea on every invoice email" kept for
		// "doing an invoice for a new shop"), shown in their own order.
		s, text, trimmed = fitSummary(byRelevance(*p.in.Summary, terms), capTokens-p.titleCost(titleSummary), p.tok)
		if text != "" {
			s = inOrderOf(s, *p.in.Summary)
			text = RenderSummary(s)
		}
	}
	if text != "" && p.spend(p.tok.Count(text)+p.titleCost(titleSummary)) {
		p.shown.summaryText, p.shown.summary, p.shown.summaryTrimmed = text, &s, trimmed
	}
}

// profileSpent is what the profile took of the summary's share.
func (p *packer) profileSpent() int {
	if p.shown.profileText == "" {
		return 0
	}
	return p.tok.Count(p.shown.profileText) + p.titleCost(titleProfile)
}

// packLaggingTail: when the summary lags, the verbatim tail goes on, newest
// first: the rest of the recent window, then the turns the summary does not
// cover yet (they must not leave a gap), up to their shares.
func (p *packer) packLaggingTail() {
	if !p.in.SummaryLags || len(p.verb.pendingIdx) == 0 {
		return
	}
	tailCap := int(float64(p.in.Budget)*(p.sh.recent+p.sh.pending)) - p.verb.spent
	p.extendTail(tailCap, len(p.verb.recentIdx)+len(p.verb.pendingIdx))
}

// layout renders the kept pieces in the contract's order and measures the
// text. The sum of the parts can differ from the whole by a token or two
// at joins, so when the whole is over the budget it sheds the least
// important pieces worth at least the overshoot and measures again.
func (p *packer) layout() Assembled {
	out := Assembled{Usage: Usage{BudgetTokens: p.in.Budget}, SummaryTrimmed: p.shown.summaryTrimmed}
	var text sectionTexts
	for {
		out.Sections, text = p.render()
		out.Context = text.all
		out.Usage.TotalTokens = p.tok.Count(out.Context)
		over := out.Usage.TotalTokens - p.in.Budget
		if over <= 0 {
			break
		}
		for over > 0 {
			freed, ok := p.shedOne()
			if !ok {
				break
			}
			over -= freed
		}
		if over > 0 { // nothing left to shed
			out.Context, out.Sections = "", Sections{RAG: []RAGTurn{}, Episodes: []SectionEpisode{}, Facts: []SectionFact{}, Recent: []Turn{}}
			out.Usage.TotalTokens, text = 0, sectionTexts{}
			break
		}
	}
	out.partsJoined = p.rag.joined
	p.account(&out, text)
	out.Messages = buildMessages(out.Sections, text.rag, p.shown.profileText, p.shown.summaryText)
	return out
}

// sectionTexts are the rendered context (all) and its sections, each
// with its title: substrings of all, between blank lines.
type sectionTexts struct{ all, rag, profile, summary, recent string }

func (p *packer) render() (Sections, sectionTexts) {
	s := Sections{Summary: p.shown.summary, Profile: p.shown.profile, Episodes: []SectionEpisode{}, Facts: []SectionFact{}}
	if s.Summary != nil {
		// A summary trimmed to its share may have lost whole lists: they
		// are [] in the answer, as everywhere else, never null.
		shown := *s.Summary
		shown.Normalize()
		s.Summary = &shown
	}
	// Sized up front: a RAGTurn is ~200 bytes and a large budget keeps
	// hundreds, so growing by appends copied them several times over.
	kept := 0
	for _, k := range p.rag.keep {
		if k {
			kept++
		}
	}
	s.RAG = make([]RAGTurn, 0, kept)
	s.Recent = make([]Turn, 0, len(p.in.Verbatim))
	shown := make([]*RAGTurn, 0, kept) // turns and episodes, rendered together
	for i := range p.in.RAG {
		if !p.rag.keep[i] {
			continue
		}
		shown = append(shown, &p.in.RAG[i])
	}
	n := len(shown)
	shown = foldParts(shown)
	p.rag.joined = n - len(shown)
	for _, r := range shown {
		if f := r.Fact; f != nil {
			s.Facts = append(s.Facts, SectionFact{ID: f.ID, ChatID: r.ChatID, Text: r.Content, Seqs: f.Seqs, ValidAt: f.ValidAt, Score: r.Score})
		} else if e := r.Episode; e != nil {
			s.Episodes = append(s.Episodes, SectionEpisode{ID: e.ID, ChatID: r.ChatID, FromSeq: e.FromSeq, ToSeq: e.ToSeq,
				StartedAt: e.StartedAt, EndedAt: e.EndedAt, Short: r.Content, Score: r.Score})
		} else {
			s.RAG = append(s.RAG, *r)
		}
	}
	for i, t := range p.in.Verbatim {
		if p.verb.keep[i] {
			s.Recent = append(s.Recent, t)
		}
	}
	return s, p.renderText(shown, s.Recent)
}

// sectionBytes is about the size of the rendered context: titles and
// blank lines, each line's role, name and marks, a header a retrieved
// turn, a day line a recent turn.
func (p *packer) sectionBytes(shown []*RAGTurn, recent []Turn) int {
	n := len(p.shown.profileText) + len(p.shown.summaryText) + 128
	for _, r := range shown {
		n += len(r.Content) + len(r.Role) + len(r.update) + 64
	}
	for i := range recent {
		n += len(recent[i].Role) + len(recent[i].Name) + len(recent[i].Content) + 6
	}
	return n
}

// renderText writes the sections in the contract's order, a blank line
// between two, into one buffer: the context, each section a substring of
// it (rendering them apart and joining them copied the text twice).
func (p *packer) renderText(shown []*RAGTurn, recent []Turn) sectionTexts {
	var b strings.Builder
	b.Grow(p.sectionBytes(shown, recent))
	var span [4][2]int // each section's [start, end) in the text
	write := func(k int, empty bool, w func()) {
		if empty {
			span[k] = [2]int{b.Len(), b.Len()}
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		start := b.Len()
		w()
		span[k] = [2]int{start, b.Len()}
	}
	write(0, len(shown) == 0, func() { writeRAGSection(&b, shown) })
	write(1, p.shown.profileText == "", func() { b.WriteString(titleProfile + "\n"); b.WriteString(p.shown.profileText) })
	write(2, p.shown.summaryText == "", func() { b.WriteString(titleSummary + "\n"); b.WriteString(p.shown.summaryText) })
	write(3, len(recent) == 0, func() { writeRecentSection(&b, recent) })
	all := b.String()
	at := func(k int) string { return all[span[k][0]:span[k][1]] }
	return sectionTexts{all: all, rag: at(0), profile: at(1), summary: at(2), recent: at(3)}
}

// account fills the section token counts and what was left out. The
// summary and recent sections repeat across a chat's requests (the token
// memo knows them); the RAG section is new each time, so its share is what
// the exact total leaves, separators included: the three add up to
// total_tokens.
func (p *packer) account(out *Assembled, text sectionTexts) {
	out.Usage.SummaryTokens = p.tok.Count(text.summary)
	out.Usage.RecentTokens = p.tok.Count(text.recent)
	out.Usage.ProfileTokens = p.tok.Count(text.profile)
	if text.rag != "" {
		out.Usage.RAGTokens = max(0, out.Usage.TotalTokens-out.Usage.SummaryTokens-out.Usage.RecentTokens-out.Usage.ProfileTokens)
		// Episode lines, each with its newline, out of the RAG section's.
		for _, e := range out.Sections.Episodes {
			r := RAGTurn{ChatID: e.ChatID, Content: e.Short, Episode: &EpisodeRef{FromSeq: e.FromSeq, ToSeq: e.ToSeq, StartedAt: e.StartedAt, EndedAt: e.EndedAt}}
			out.Usage.EpisodeTokens += p.tok.Count(renderRAGItem(r)) + 1
		}
		out.Usage.EpisodeTokens = min(out.Usage.EpisodeTokens, out.Usage.RAGTokens)
		out.Usage.RAGTokens -= out.Usage.EpisodeTokens
		for _, f := range out.Sections.Facts {
			out.Usage.FactTokens += p.tok.Count(renderFactLine(f.ChatID, &FactRef{Seqs: f.Seqs, ValidAt: f.ValidAt}, f.Text)) + 1
		}
		out.Usage.FactTokens = min(out.Usage.FactTokens, out.Usage.RAGTokens)
		out.Usage.RAGTokens -= out.Usage.FactTokens
	} else {
		// Only the separators between sections are left over: they go to
		// the first section there is.
		left := out.Usage.TotalTokens - out.Usage.RecentTokens - out.Usage.SummaryTokens - out.Usage.ProfileTokens
		switch {
		case text.profile != "":
			out.Usage.ProfileTokens += left
		case text.summary != "":
			out.Usage.SummaryTokens += left
		default:
			out.Usage.RecentTokens += left
		}
	}
	for i, t := range p.in.Verbatim {
		switch {
		case p.verb.keep[i] && t.Seq <= p.in.CoveredTo:
			out.CoveredShown++
		case !p.verb.keep[i] && t.Seq > p.in.CoveredTo:
			out.DroppedSeqs = append(out.DroppedSeqs, t.Seq)
		}
	}
	for i := range p.in.RAG {
		if !p.rag.keep[i] {
			out.RAGDropped++
		}
	}
}

// shedOne drops the least important kept piece — the lowest-ranked RAG
// hit, then the oldest pending verbatim turn, then the summary, then the
// oldest recent turn — and returns about how many tokens that freed. False
// when nothing is left.
func (p *packer) shedOne() (int, bool) {
	for i := len(p.rag.keep) - 1; i >= 0; i-- {
		if p.rag.keep[i] {
			p.rag.keep[i] = false
			return p.rag.cost[i], true
		}
	}
	for i := range p.verb.keep {
		if p.verb.keep[i] && p.in.Verbatim[i].Seq < p.in.MustKeepFrom {
			p.verb.keep[i] = false
			p.verb.tailN--
			return p.verb.cost[i], true
		}
	}
	if p.shown.profileText != "" {
		freed := p.tok.Count(p.shown.profileText)
		p.shown.profileText, p.shown.profile = "", nil
		return freed, true
	}
	if p.shown.summaryText != "" {
		freed := p.tok.Count(p.shown.summaryText)
		p.shown.summaryText, p.shown.summary = "", nil
		return freed, true
	}
	for i := range p.verb.keep {
		if p.verb.keep[i] {
			p.verb.keep[i] = false
			p.verb.tailN--
			return p.verb.cost[i], true
		}
	}
	return 0, false
}
