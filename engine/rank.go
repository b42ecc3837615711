package engine

// The ranked budget (rag_augmented with a query). The fixed section shares
// of Assemble spend the budget on text the question may not need: a
// summary about other things, the profile, the whole recent window. Here a
// floor of the newest turns is shown first (a follow-up such as "ok, do
// the second one" needs them), at most floorShare of the budget beyond the
// newest turn; then every other candidate competes for the rest by
// relevance per token:
//
//   - retrieved facts, episodes, turns and passages: their fused retrieval
//     score, relative to the best hit's (an extractive fact's at half);
//   - the rest of the recent window, and the turns the summary does not
//     cover yet: a recency prior, recentPrior for the turn just before the
//     floor, decaying by recentDecay per turn further back (recency is
//     relevance too);
//   - the summary and the profile, each as a block of its items most
//     related to the query (trimmed to at most blockShare of the budget):
//     blockPrior times the share of the query's words the block holds.
//
// A candidate's value is its relevance over cost^sizeExponent tokens: a
// mild preference for short items (a fact over a long turn that matches as
// well), not a rule that small beats relevant. The text keeps the
// contract's order (retrieved memory, summary, recent turns).

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/contextd/contextd/derive/facts"
	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/memory"
)

const (
	// DefaultFloorTurns: the last two exchanges are shown first.
	DefaultFloorTurns = 4
	// floorShare: the most of the budget the floor takes beyond the
	// newest turn. Four long recent turns would take all of 400 tokens,
	// and the older turn the question asks for would not be shown.
	floorShare  = 0.5
	recentPrior = 0.25
	recentDecay = 0.8
	blockPrior  = 0.8
	blockShare  = 0.25
	// standingShare: the most of the budget the standing turns take
	// before the rest is ranked (takeStanding): half what the summary's
	// block may, so a short instruction is shown at 500 tokens and the
	// question's own evidence keeps the rest.
	standingShare = blockShare / 2
	sizeExponent  = 0.25
	// extractiveFactWeight: a fact drawn without an LLM is made of its
	// turn's words, so it counts half against the turn itself (which also
	// shows what was around it); an LLM's fact counts in full.
	extractiveFactWeight = 0.5
	// neighborWeight: a turn retrieved for context around a hit (the
	// question before an answer, rag_neighbors) counts half its hit's
	// score: it fills the room the hits leave, it does not displace them.
	neighborWeight = 0.5
	// pairWeight: a neighbour that is the other half of its hit's exchange
	// (the user's question before a matched answer, the answer after a
	// matched question) says what the hit answers or what came of it, so
	// it counts 0.75 of its hit's score; other neighbours count half.
	pairWeight = 0.75
)

type candKind uint8

const (
	candRAG candKind = iota
	candVerb
	candSummary
	candProfile
)

type candidate struct {
	kind  candKind
	i     int // index into RAG or Verbatim
	order int // among the verbatim candidates, newest first
	value float64
	// A lazy retrieved turn's value is an upper bound (its cost a floor)
	// until it is cut: then rel gives its value.
	bound bool
	rel   float64
	pos   int // among the candidates as made: ties keep this order
}

// packRanked packs the floor, then every candidate by value.
func (p *packer) packRanked() {
	n := min(floorTurns(p.in.FloorTurns), len(p.verb.recentIdx))
	p.extendTail(p.in.Budget, 1)
	p.extendTail(int(float64(p.in.Budget)*floorShare)-p.verb.spent, n)
	n = p.verb.tailN // the floor's turns left out compete with the rest of the window
	p.takeStanding()
	terms := lex.QueryTerms(p.in.Query)
	cs := p.ragCandidates()
	// The rest of the window and the pending turns compete with a recency
	// prior; the covered turns only extend the tail with what is left.
	for j := n; j < len(p.verb.recentIdx)+len(p.verb.pendingIdx); j++ {
		rel := recentPrior * math.Pow(recentDecay, float64(j-n))
		cs = append(cs, candidate{kind: candVerb, i: p.verb.tail[j], order: j, value: value(rel, p.verb.cost[p.verb.tail[j]])})
	}
	sumText, sumShown := p.rankedSummary(terms)
	if sumText != "" {
		cost := p.tok.Count(sumText) + p.titleCost(titleSummary)
		cs = append(cs, candidate{kind: candSummary, value: value(blockPrior*lex.Coverage(terms, sumText), cost)})
	}
	profText, profShown := p.rankedProfile(terms)
	if profText != "" {
		cost := p.tok.Count(profText) + p.titleCost(titleProfile)
		cs = append(cs, candidate{kind: candProfile, value: value(blockPrior*lex.Coverage(terms, profText), cost)})
	}
	rk := p.newRanking(cs)
	stuck := false // a verbatim turn did not fit: nothing older may follow a gap
	for p.remaining >= minTurnTokens {
		c, ok := rk.next()
		if !ok {
			return
		}
		switch c.kind {
		case candRAG:
			p.takeRAG(c.i)
		case candVerb:
			// Verbatim turns stay a contiguous newest tail: an older one
			// is taken only after every newer one.
			if stuck || c.order != p.verb.tailN {
				continue
			}
			stuck = !p.takeVerb(c.i)
		case candSummary:
			if p.spend(p.tok.Count(sumText) + p.titleCost(titleSummary)) {
				p.shown.summaryText, p.shown.summary, p.shown.summaryTrimmed = sumText, sumShown, !sameSummary(sumShown, p.in.Summary)
			}
		case candProfile:
			if p.spend(p.tok.Count(profText) + p.titleCost(titleProfile)) {
				p.shown.profileText, p.shown.profile = profText, profShown
			}
		}
	}
}

// takeStanding shows the standing turns offered (standing.go) before any
// other retrieved memory, while they fit in standingShare of the budget.
// They govern every answer and share few words with the question, so
// valued by relevance they lose to whatever matches it: "paces in min/km,
// never miles" went unshown under a dozen hits for "a recovery-week plan".
func (p *packer) takeStanding() {
	room := int(float64(p.in.Budget) * standingShare)
	for i, r := range p.in.RAG {
		if !r.standing || p.rag.keep[i] {
			continue
		}
		before := p.remaining
		// Its real cost (a lazy one is cut for it: at most maxStanding
		// are offered), so it is packed the same whether it came cut or
		// whole. A turn too long for the share is stood in for by its
		// instructions' sentences: the turn may still earn its place
		// later, and then replaces them.
		// A turn longer than a passage may be shown cut, without the
		// instruction: its sentences come first.
		if !r.whole {
			p.takeStandIns(r.Seq, room)
		}
		if p.costRAG(i)+p.headerCost(i) <= room-(before-p.remaining) {
			p.takeRAG(i)
		}
		p.takeStandIns(r.Seq, room-(before-p.remaining))
		room -= before - p.remaining
	}
}

// takeStandIns shows the stand-ins for standing turn seq (RAGTurn.standsFor)
// that fit in room.
func (p *packer) takeStandIns(seq int64, room int) {
	for j, f := range p.in.RAG {
		if f.standsFor != seq || p.rag.keep[j] || p.factRepeats(f) {
			continue // the turn as shown says it
		}
		c := p.costRAG(j)
		if !p.rag.titlePaid {
			c += p.titleCost(titleRAG) // kept paid if the turn replaces it: the turn is in the section
		}
		if c > room || !p.spend(c) {
			continue
		}
		room -= c
		p.rag.titlePaid, p.rag.keep[j] = true, true
	}
}

// dropStandIns leaves out the kept stand-ins of standing turn seq, now
// shown itself, whose words the turn as shown holds (cut to a passage it
// may not), and gives back what they were charged but the section's title.
func (p *packer) dropStandIns(seq int64) {
	for j, f := range p.in.RAG {
		if f.standsFor == seq && p.rag.keep[j] && p.factRepeats(f) {
			p.rag.keep[j] = false
			p.remaining += p.costRAG(j)
		}
	}
}

// floorTurns is the floor set, or the default.
func floorTurns(set int) int {
	if set <= 0 {
		return DefaultFloorTurns
	}
	return set
}

// value is relevance per token (softened: see sizeExponent).
func value(rel float64, cost int) float64 {
	return rel / math.Pow(float64(max(cost, 8)), sizeExponent)
}

// ragCandidates values every retrieved candidate by its score relative to
// the best one.
func (p *packer) ragCandidates() []candidate {
	newer := newerFirst(p.in.Query, p.in.RAG)
	best := 0.0
	for _, r := range p.in.RAG {
		best = max(best, float64(r.Score)*newer(r))
	}
	out := make([]candidate, 0, len(p.in.RAG)+len(p.in.Verbatim)+2)
	for i, r := range p.in.RAG {
		rel := 1.0
		if best > 0 {
			rel = max(float64(r.Score)*newer(r), 0) / best
		}
		if r.Fact != nil && !p.in.LLMEpisodes {
			rel *= extractiveFactWeight
		}
		switch {
		case r.pair:
			rel *= pairWeight
		case r.Neighbor:
			rel *= neighborWeight
		case r.pairScore > 0 && best > 0:
			rel = max(rel, pairWeight*float64(r.pairScore)*newer(r)/best)
		}
		if r.lazy != 0 { // valued by its floor until the packer reaches it
			out = append(out, candidate{kind: candRAG, i: i, value: value(rel, r.floor+1), bound: true, rel: rel})
			continue
		}
		// A choice by place and its options are shown together: valued at both costs.
		out = append(out, candidate{kind: candRAG, i: i, value: value(rel, p.costRAG(i)+p.partnerCost(r))})
	}
	return out
}

// newerFirst weighs a retrieved candidate by how late it was said, when
// the question asks how things stand now ("which photographer is doing
// the day in the end?", "is Tom still riding the 108?"): the newest of the
// candidates counts in full, the oldest half. A chat's opening turns match
// a topic's words as well as the turn that settled it ("changed my mind
// on the photographer … we went with Ollie Brandt"); for such a question
// the later one is the answer. Other questions weigh all alike.
func newerFirst(query string, rag []RAGTurn) func(RAGTurn) float64 {
	if !lex.AsksCurrent(query) || len(rag) < 2 {
		return func(RAGTurn) float64 { return 1 }
	}
	lo, hi := rag[0].CreatedAt, rag[0].CreatedAt
	for _, r := range rag[1:] {
		if r.CreatedAt.Before(lo) {
			lo = r.CreatedAt
		}
		if r.CreatedAt.After(hi) {
			hi = r.CreatedAt
		}
	}
	span := hi.Sub(lo)
	if span <= 0 {
		return func(RAGTurn) float64 { return 1 }
	}
	return func(r RAGTurn) float64 {
		return 0.5 + 0.5*float64(r.CreatedAt.Sub(lo))/float64(span)
	}
}

// takeVerb shows verbatim candidate i, the next of the tail, when it
// fits. A turn shown as a retrieved hit moves into the tail (shown once,
// in its place); when the tail has no room for it, it stays a hit.
func (p *packer) takeVerb(i int) bool {
	c := p.verb.cost[i] + p.dayCost(i)
	if !p.verb.titlePaid {
		c += p.titleCost(titleRecent)
	}
	if !p.spendTail(i, c) {
		return false
	}
	p.keep(i, c)
	return true
}

// spendTail spends c on verbatim candidate i, the next of the tail: a
// retrieved hit of the same turn moves into the tail (its cost refunded,
// shown once, in its place); when the tail has no room, it stays a hit.
func (p *packer) spendTail(i, c int) bool {
	hits := p.unkeepHit(p.in.Verbatim[i].Seq)
	if p.spend(c) {
		return true
	}
	for _, hit := range hits {
		p.rag.keep[hit] = true
		p.remaining -= p.rag.cost[hit]
		p.rag.kept[turnKey2{"", p.in.RAG[hit].Seq}] = true
	}
	return false
}

// rankedSummary is the summary with the items most related to the query
// kept first, trimmed to its share.
func (p *packer) rankedSummary(terms []string) (string, *memory.Summary) {
	if p.in.Summary == nil || p.in.Summary.IsEmpty() {
		return "", nil
	}
	s := byRelevance(*p.in.Summary, terms)
	capTokens := min(int(float64(p.in.Budget)*blockShare), p.remaining) - p.titleCost(titleSummary)
	fitted, text, _ := fitSummary(s, capTokens, p.tok)
	if text == "" {
		return "", nil
	}
	mostRelatedFirst(&fitted)
	text = RenderSummary(fitted)
	return text, &fitted
}

// rankedProfile is the profile trimmed to its share.
func (p *packer) rankedProfile(terms []string) (string, *memory.Profile) {
	if p.in.Profile == nil || p.in.Profile.IsEmpty() {
		return "", nil
	}
	capTokens := min(int(float64(p.in.Budget)*blockShare), p.remaining) - p.titleCost(titleProfile)
	pr, text := fitProfile(*p.in.Profile, capTokens, p.tok)
	if text == "" {
		return "", nil
	}
	return text, &pr
}

// byRelevance orders each list of s least related to the query first, so
// that fitSummary, which trims from the front, drops those first. A
// standing instruction counts as related to every question: it governs
// every answer.
func byRelevance(s memory.Summary, terms []string) memory.Summary {
	out := s.Clone()
	for _, l := range out.Lists() {
		sortByCoverage(*l, terms, func(x string) string { return x })
	}
	standingLast(out.UserPreferences)
	sortByCoverage(out.Entities, terms, func(e memory.Entity) string { return e.Name + " " + e.Details })
	return out
}

// sortByCoverage orders xs by the coverage of their text, least first,
// stably, measuring each once (not once per comparison).
func sortByCoverage[T any](xs []T, terms []string, text func(T) string) {
	if len(xs) < 2 {
		return
	}
	type item struct {
		x   T
		cov float64
	}
	items := make([]item, len(xs))
	for i, x := range xs {
		items[i] = item{x, lex.Coverage(terms, text(x))}
	}
	sort.SliceStable(items, func(a, b int) bool { return items[a].cov < items[b].cov })
	for i, it := range items {
		xs[i] = it.x
	}
}

// standingLast moves the standing instructions among prefs to its end
// (kept longest), keeping the order of each part.
func standingLast(prefs []string) {
	slices.SortStableFunc(prefs, func(a, b string) int {
		return cmp.Compare(b2i(strings.HasPrefix(a, facts.StandingPrefix)), b2i(strings.HasPrefix(b, facts.StandingPrefix)))
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// inOrderOf is fitted (a trimmed copy of orig, its lists reordered) with
// each list and the entities back in orig's order.
func inOrderOf(fitted, orig memory.Summary) memory.Summary {
	out := fitted.Clone()
	kept, from := out.Lists(), orig.Lists()
	for i, l := range kept {
		*l = keepOrder(*from[i], *l, func(x string) string { return x })
	}
	out.Entities = keepOrder(orig.Entities, out.Entities, func(e memory.Entity) string { return e.Name + "\x00" + e.Type + "\x00" + e.Details })
	return out
}

// keepOrder is the items of all that are among some (as many times as
// they are there), in all's order.
func keepOrder[T any](all, some []T, key func(T) string) []T {
	n := map[string]int{}
	for _, x := range some {
		n[key(x)]++
	}
	out := make([]T, 0, len(some))
	for _, x := range all {
		if k := key(x); n[k] > 0 {
			n[k]--
			out = append(out, x)
		}
	}
	return out
}

// mostRelatedFirst reverses the lists byRelevance ordered.
func mostRelatedFirst(s *memory.Summary) {
	for _, l := range s.Lists() {
		reverse(*l)
	}
	for i, j := 0, len(s.Entities)-1; i < j; i, j = i+1, j-1 {
		s.Entities[i], s.Entities[j] = s.Entities[j], s.Entities[i]
	}
}

func reverse(xs []string) {
	for i, j := 0, len(xs)-1; i < j; i, j = i+1, j-1 {
		xs[i], xs[j] = xs[j], xs[i]
	}
}

func sameSummary(shown, orig *memory.Summary) bool {
	if shown == nil || orig == nil {
		return shown == orig
	}
	// What RenderSummary shows, compared in place: rendering both (two
	// strings a request) was 3% of a context's allocations under churn.
	if shown.Narrative != orig.Narrative || !slices.Equal(shown.Entities, orig.Entities) {
		return false
	}
	a, b := shown.Lists(), orig.Lists()
	for i := range a {
		if !slices.Equal(*a[i], *b[i]) {
			return false
		}
	}
	return true
}

// rankedTurnChars caps a turn shown verbatim when the budget is ranked: the
// floor's turns together take at most a quarter of the budget (~4
// characters a token), so long turns (an assistant's 900-token answer)
// leave room for the evidence; never above the agent's own cap.
func rankedTurnChars(agentCap, budget, floor int) int {
	c := max(budget*4/4/floorTurns(floor), wholeTurnBytes)
	if agentCap > 0 {
		c = min(c, agentCap)
	}
	return c
}
