package engine

// A choice by place and the options it chose among are one exchange:
// "ok do the second one" alone cannot be read, and options alone do not
// say which was taken. Each is shown with the other (its partner).

// markChoices marks the turns listing options that a retrieved choice by
// place chose among (RAGTurn.listsChosen).
func markChoices(rs []RAGTurn) {
	for _, c := range rs {
		if c.choseFrom == 0 {
			continue
		}
		for i := range rs {
			if choseAmong(c, rs[i]) {
				rs[i].listsChosen = true
			}
		}
	}
}

// choseAmong: c is a choice by place made among the options r lists.
func choseAmong(c, r RAGTurn) bool {
	return c.choseFrom == r.Seq && c.ChatID == r.ChatID && turnLine(c) && turnLine(r)
}

// turnLine: r is a retrieved turn shown in its own line, not an episode,
// a fact or another passage of a long turn.
func turnLine(r RAGTurn) bool { return r.Episode == nil && r.Fact == nil && !r.part }

// hasPartner: r is a choice by place or the options of one.
func hasPartner(r RAGTurn) bool { return r.choseFrom > 0 || r.listsChosen }

// partnerOf is the candidate that is r's other half, -1 for none: the
// options a choice by place chose among, or the first choice made among
// the options r lists.
func (p *packer) partnerOf(r RAGTurn) int {
	if !turnLine(r) {
		return -1
	}
	if r.choseFrom > 0 {
		return p.ragTurnAt(r.ChatID, r.choseFrom)
	}
	return p.choiceAmong(r, false)
}

// choiceAmong is the first candidate choosing among the options r lists
// (a kept one only, when kept), -1 for none.
func (p *packer) choiceAmong(r RAGTurn, kept bool) int {
	for j, c := range p.in.RAG {
		if (!kept || p.rag.keep[j]) && choseAmong(c, r) {
			return j
		}
	}
	return -1
}

// takePartner takes the other half of a turn just kept.
func (p *packer) takePartner(r RAGTurn) {
	if !hasPartner(r) {
		return
	}
	if j := p.partnerOf(r); j >= 0 && !p.rag.keep[j] {
		p.takeRAG(j)
	}
}

// partnerFits: r's other half is shown, or fits beside r (i).
func (p *packer) partnerFits(r RAGTurn, i int) bool {
	j := p.partnerOf(r)
	if j < 0 {
		return false
	}
	return p.rag.keep[j] || p.leastCost(i)+p.leastCost(j)+2*p.headerCost(j) <= p.remaining
}

// partnerShown: r's other half is shown: its options, or any of the
// choices made among the options r lists (two may point at one list:
// "go with option 1" … "ok do the second one").
func (p *packer) partnerShown(r RAGTurn) bool {
	switch {
	case r.choseFrom > 0:
		j := p.partnerOf(r)
		return j >= 0 && p.rag.keep[j]
	case r.listsChosen:
		return p.choiceAmong(r, true) >= 0
	}
	return false
}

// partnerCost is the least a turn's other half (takePartner: the
// options of a choice by place, the choice among options) adds to it,
// while it is not shown.
func (p *packer) partnerCost(r RAGTurn) int {
	if !hasPartner(r) {
		return 0
	}
	if j := p.partnerOf(r); j >= 0 && !p.rag.keep[j] {
		return p.leastCost(j)
	}
	return 0
}
