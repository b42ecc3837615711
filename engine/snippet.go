package engine

import (
	"strings"

	"github.com/contextd/contextd/rag"
)

// snippetTokens is the most shown of a retrieved turn beyond the best
// rag_k hits (and of every neighbour), in estimated tokens: a long turn,
// or its passage, is cut to its window that best matches the query
// (rag.WindowQuery.SentenceWindow: whole sentences). The best hits are shown as retrieved; the
// fill beyond them shows the gist of more turns, not the whole of fewer.
// 64: BEAM 100K recall / containment 2k 0.577/0.699 -> 0.598/0.698, 8k
// 0.789/0.836 -> 0.838/0.834 (56: 0.609/0.696, 0.852/0.829; 80 for every
// hit: 0.606/0.690, 0.814/0.832); LoCoMo a little up at every budget.
const snippetTokens = 64

// neighborSnippetTokens is the most shown of a neighbour (the turn next to
// a hit, shown as context for it): enough to show what was asked.
const neighborSnippetTokens = 32

// wholeTurnBytes: a turn shorter than a passage (the unit retrieval
// matches) is shown whole or not at all. A 144-character answer cut to its
// first sentence loses the sentence the question needed, and a model
// cannot tell what was left out of a short turn.
var wholeTurnBytes = rag.PassageBytes(0)

// snippet is what is shown of retrieved turn t (content: its text once
// filtered) and where that is in the turn: its matching passage, or the
// whole turn, cut to its best window of at most maxBytes. A turn shown
// whole returns nil refs.
func snippet(content string, t rag.Turn, q rag.WindowQuery, maxBytes int) (string, []PassageRef) {
	if len(t.Passages) > 1 { // several passages: shown as retrieved
		return content, passageRefs(t)
	}
	text, base, total := content, 0, len(content)
	if len(t.Passages) == 1 {
		pa := t.Passages[0]
		text, base, total = pa.Text, pa.From, t.TurnBytes
	}
	if len(t.Passages) == 0 && len(text) <= wholeTurnBytes {
		return content, nil // shorter than a passage: whole or not at all
	}
	w := q.SentenceWindow(text, maxBytes)
	if w.From == 0 && w.To == len(text) && len(t.Passages) == 0 {
		return content, nil // a short turn, whole
	}
	from, to := base+w.From, base+w.To
	var b strings.Builder
	if from > 0 {
		b.WriteString(rag.Elision + "\n")
	}
	b.WriteString(strings.TrimSpace(text[w.From:w.To]))
	if to < total {
		b.WriteString("\n" + rag.Elision)
	}
	return b.String(), []PassageRef{{From: from, To: to, Len: total}}
}
