package engine

import (
	"cmp"
	"slices"
	"strings"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// A long turn's other matching passages (rag.Turn.More) are offered as
// candidates of their own, each valued by how well it matched per token,
// and shown in their turn's line beside the passage it was retrieved by:
// a log whose failing test and error line fell into two passages shows
// both when the budget has room for the second, and one when it has not.

// partRef is a part offered lazily: its turn (an index in the shaper's
// turns), the passage (its text as filtered) and the most shown of it.
type partRef struct {
	turn     int
	pa       rag.Passage
	maxBytes int
}

// appendParts appends to out the other matching passages of kept turn i
// (rt: its candidate), cut like the turn (cut: to a snippet's window),
// left lazy when the turns are.
func (sh *shaper) appendParts(out []RAGTurn, rt RAGTurn, i int, cut bool) []RAGTurn {
	k := sh.ks[i].i
	t := &sh.turns[k]
	if t.Neighbor {
		return out
	}
	for _, pa := range t.More {
		text, reason := sh.p.filters.Item(memory.Role(t.Role), pa.Text)
		if reason != "" || strings.TrimSpace(text) == "" {
			continue
		}
		pa.Text = text
		ref := partRef{turn: k, pa: pa, maxBytes: len(text)}
		if cut {
			ref.maxBytes = sh.snip
		}
		r := RAGTurn{ChatID: rt.ChatID, Seq: rt.Seq, Role: rt.Role, Name: rt.Name, Score: pa.Score, CreatedAt: rt.CreatedAt, part: true}
		if sh.lazy {
			sh.parts = append(sh.parts, ref)
			r.lazy, r.floor = -int32(len(sh.parts)), sh.partFloor(ref)
		} else {
			sh.fillPart(&r, ref)
		}
		out = append(out, r)
		sh.partsOffered++
	}
	return out
}

// fillPart sets what is shown of part r and its tokens.
func (sh *shaper) fillPart(r *RAGTurn, ref partRef) {
	t := &sh.turns[ref.turn]
	one := rag.Turn{Passages: []rag.Passage{ref.pa}, TurnBytes: t.TurnBytes}
	r.Content, r.Passages = snippet(ref.pa.Text, one, sh.terms, ref.maxBytes)
	r.Tokens = sh.s.cache.tokens.cost(sh.p.tok, turnKey{tenant: sh.p.chat.Tenant, chat: t.ChatID, seq: t.Seq,
		n: len(r.Content) + len(r.Name), passages: r.Passages}, Turn{Role: r.Role, Name: r.Name, Content: r.Content})
}

// partFloor is snippetFloor of a part, remembered as sh.floor's are.
func (sh *shaper) partFloor(ref partRef) int {
	t := &sh.turns[ref.turn]
	one := rag.Turn{Passages: []rag.Passage{ref.pa}, TurnBytes: t.TurnBytes}
	key := turnKey{tok: "part-floor", tenant: sh.p.chat.Tenant, chat: t.ChatID, seq: t.Seq,
		n: ref.maxBytes, passages: []PassageRef{{From: ref.pa.From, To: ref.pa.To, Len: len(ref.pa.Text)}}}
	return sh.s.cache.tokens.memo(key, func() int { return snippetFloor(ref.pa.Text, one, ref.maxBytes, &sh.marks) })
}

// foldParts shows each kept part in its turn's line: the entries of one
// retrieved turn become one, their passages in content order with elision
// marks between them, where the first of them was. Entries are shared, not
// copied, unless folded.
func foldParts(rs []*RAGTurn) []*RAGTurn {
	groups := map[turnKey2][]*RAGTurn{}
	for _, r := range rs {
		if !derived(r) && len(r.Passages) > 0 {
			k := turnKey2{r.ChatID, r.Seq}
			groups[k] = append(groups[k], r)
		}
	}
	out := rs[:0:0]
	for _, r := range rs {
		g := groups[turnKey2{r.ChatID, r.Seq}]
		switch {
		case derived(r) || len(g) < 2:
			out = append(out, r)
		case g[0] == r:
			merged := joinParts(g)
			out = append(out, &merged)
		}
	}
	return out
}

// joinParts is one line for the entries of one turn: the first's, with
// every entry's passages in content order.
func joinParts(g []*RAGTurn) RAGTurn {
	out := *g[0]
	ps := make([]rag.Passage, 0, len(g))
	out.Passages = nil
	for _, r := range g {
		ps = append(ps, rag.Passage{From: r.Passages[0].From, To: r.Passages[len(r.Passages)-1].To, Text: unmarked(r.Content)})
		out.Passages = append(out.Passages, r.Passages...)
		if out.update == "" {
			out.update = r.update
		}
	}
	out.Content = rag.JoinPassages(ps, g[0].Passages[0].Len)
	sortRefs(out.Passages)
	out.part, out.Tokens = false, 0
	return out
}

// unmarked is a shown part of a turn without the elision marks around it.
func unmarked(content string) string {
	s := strings.TrimPrefix(content, rag.Elision+"\n")
	return strings.TrimSuffix(s, "\n"+rag.Elision)
}

func sortRefs(ps []PassageRef) {
	slices.SortFunc(ps, func(a, b PassageRef) int { return cmp.Compare(a.From, b.From) })
}
