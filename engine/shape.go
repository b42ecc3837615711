package engine

import (
	"context"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/rag"
	"github.com/contextd/contextd/truncation"
)

// shaper cuts one request's retrieved turns to what is shown of them
// (their snippets, or the agent's truncation) and counts their tokens:
// eagerly for the turns shown as retrieved, on the packer's demand for
// the rest (ragTurns).
type shaper struct {
	s              *Service
	ctx            context.Context
	p              *plan
	res            *ContextResult
	turns          []rag.Turn
	ks             []keptTurn
	names          map[int64]string
	terms          rag.WindowQuery
	snip, neighbor int // bytes shown of a hit beyond rag_k, of a neighbour
	// lazy: the cut turns may wait for the packer. Not when the agent's
	// truncation can fall back (named in the answer whether or not the
	// turn is shown) or the tokenizer is not one snippetFloor bounds.
	lazy bool
	// ups are the chat's updates, read on the first lazy turn cut.
	ups     []chatUpdate
	upsRead bool
	marks   []int // snippetFloor's scratch
	// parts are the lazy parts (RAGTurn.lazy < 0: -1 is parts[0]);
	// partsOffered counts every part offered, lazy or not.
	parts        []partRef
	partsOffered int
}

func (s *Service) newShaper(ctx context.Context, p *plan, res *ContextResult, turns []rag.Turn, ks []keptTurn) *shaper {
	o := p.trunc
	plainCut := (o.Strategy == "" || o.Strategy == truncation.Middle) && o.MaxTokens <= 0
	name := p.tok.Name()
	return &shaper{s: s, ctx: ctx, p: p, res: res, turns: turns, ks: ks, names: s.hitNames(ctx, p, turns, ks),
		terms: rag.NewWindowQuery(lex.Terms(p.query)), snip: rag.PassageBytes(snippetTokens), neighbor: rag.PassageBytes(neighborSnippetTokens),
		lazy: plainCut && (name == tokens.CL100KName || name == tokens.O200KName)}
}

// floor is snippetFloor of kept turn i cut to maxBytes, remembered across
// requests with the token counts: it depends on the turn, the passage and
// the size alone, not on the query (a wrong floor from a hash collision
// can only cost a turn its place, never the budget: see tokenCache).
func (sh *shaper) floor(i int, maxBytes int) int {
	k := sh.ks[i]
	t := &sh.turns[k.i]
	from, to := 0, len(k.content)
	if len(t.Passages) > 0 {
		from, to = t.Passages[0].From, t.Passages[len(t.Passages)-1].To
	}
	name := "snippet-floor" // in the token cache, apart from any tokenizer's counts
	if maxBytes == sh.neighbor {
		name = "neighbor-snippet-floor"
	}
	key := turnKey{tok: name, tenant: sh.p.chat.Tenant, chat: t.ChatID, seq: t.Seq,
		n: len(k.content), passages: []PassageRef{{From: from, To: to, Len: len(t.Passages)}}}
	return sh.s.cache.tokens.memo(key, func() int { return snippetFloor(k.content, *t, maxBytes, &sh.marks) })
}

// maxBytes is what is shown of a cut turn.
func (sh *shaper) maxBytes(neighbor bool) int {
	if neighbor {
		return sh.neighbor
	}
	return sh.snip
}

// fill sets what is shown of kept turn i (cut: to its snippet) and its
// tokens.
func (sh *shaper) fill(rt *RAGTurn, i int, cut bool) {
	k := sh.ks[i]
	t := &sh.turns[k.i]
	content, refs := k.content, passageRefs(*t)
	if cut {
		content, refs = snippet(k.content, *t, sh.terms, sh.maxBytes(t.Neighbor))
	}
	if len(t.Passages) == 0 && len(refs) == 0 {
		var info truncation.Info
		if content, info = sh.s.truncate(sh.ctx, k.content, sh.p.trunc); info.Fallback != "" {
			sh.res.degrade("truncation_" + info.Fallback)
		}
	}
	rt.Content, rt.Passages = content, refs
	rt.Tokens = sh.s.cache.tokens.cost(sh.p.tok, turnKey{tenant: sh.p.chat.Tenant, chat: t.ChatID, seq: t.Seq, n: len(content) + len(rt.Name), passages: refs},
		Turn{Role: rt.Role, Name: rt.Name, Content: content})
}

// shape completes lazy turn r (AssemblyInput.Shape): its snippet, tokens
// and update mark, as ragTurns would have set them.
func (sh *shaper) shape(r *RAGTurn) {
	switch {
	case r.lazy == 0:
		return
	case r.lazy < 0:
		sh.fillPart(r, sh.parts[-r.lazy-1])
	default:
		sh.fill(r, int(r.lazy-1), true)
	}
	r.lazy, r.floor = 0, 0
	if !sh.upsRead { // markUpdated read them too (and logged a failure)
		sh.ups, _ = sh.s.cache.updates.get(sh.ctx, sh.s.store, sh.p.chat)
		sh.upsRead = true
	}
	sh.s.cache.marks.mark(sh.p.chat, sh.ups, r)
}
