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
			if r := &rs[i]; r.Seq == c.choseFrom && r.ChatID == c.ChatID && r.Episode == nil && r.Fact == nil && !r.part {
				r.listsChosen = true
			}
		}
	}
}

// partnerOf is the candidate that is r's other half, -1 for none: the
// options a choice by place chose among, or the choice made among the
// options r lists.
func (p *packer) partnerOf(r RAGTurn) int {
	if r.Episode != nil || r.Fact != nil || r.part {
		return -1
	}
	if r.choseFrom > 0 {
		return p.ragTurnAt(r.ChatID, r.choseFrom)
	}
	for j, o := range p.in.RAG {
		if o.choseFrom == r.Seq && o.ChatID == r.ChatID && o.Episode == nil && o.Fact == nil && !o.part {
			return j
		}
	}
	return -1
}

// takePartner takes the other half of a turn just kept.
func (p *packer) takePartner(r RAGTurn) {
	if r.choseFrom == 0 && !r.listsChosen {
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
		for j, o := range p.in.RAG {
			if p.rag.keep[j] && o.choseFrom == r.Seq && o.ChatID == r.ChatID && o.Episode == nil && o.Fact == nil && !o.part {
				return true
			}
		}
	}
	return false
}

// partnerCost is the least a turn's other half (takePartner: the
// options of a choice by place, the choice among options) adds to it,
// while it is not shown.
func (p *packer) partnerCost(r RAGTurn) int {
	if r.choseFrom == 0 && !r.listsChosen {
		return 0
	}
	if j := p.partnerOf(r); j >= 0 && !p.rag.keep[j] {
		return p.leastCost(j)
	}
	return 0
}
