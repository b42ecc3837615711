package episodes

import (
	"strings"

	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// The running summary is the root of a small tree whose children are the
// closed episodes. Fold extends the root with one child's summary without
// reading any turn again. Every list of the root is kept in order of last
// reference: an item the new child mentions again moves to the end, so when
// the root passes its cap, Fit trims from the front — what the conversation
// has not come back to for longest — and an item it keeps returning to
// stays. Whatever is trimmed still lives in the episode that mentioned it.

// MaxRootItems caps each list of the root (the extractive summarizer's cap).
const MaxRootItems = memory.MaxListItems

// Fold returns root extended with child (an episode's summary, or the open
// tail's), capped at maxTokens (<= 0: no cap). short, when set, is the
// child's one-line gist, added to the root's narrative without the
// sentences the root's already holds: no sentence is said twice.
func Fold(root, child memory.Summary, short string, maxTokens int) memory.Summary {
	out := root.Clone()
	adds := child.Lists()
	for i, l := range out.Lists() {
		*l = memory.MergeList(*l, *adds[i], MaxRootItems)
	}
	out.Entities = memory.MergeEntities(out.Entities, child.Entities, MaxRootItems)
	gist := strings.TrimSpace(short)
	if gist == "" {
		gist = strings.TrimSpace(child.Narrative)
	}
	// A sentence said again leaves its older place; one the root already
	// holds twice (a small model retelling gists) is kept once.
	out.Narrative = memory.UniqueSentences(memory.JoinNarrative(out.Narrative, gist))
	if maxTokens > 0 {
		out.Narrative = tokens.TrimNarrative(out.Narrative, max(maxTokens/2, 1))
	}
	if out.CoveredFromSeq == 0 || (child.CoveredFromSeq > 0 && child.CoveredFromSeq < out.CoveredFromSeq) {
		out.CoveredFromSeq = child.CoveredFromSeq
	}
	out.CoveredToSeq = max(out.CoveredToSeq, child.CoveredToSeq)
	tokens.Fit(&out, maxTokens)
	out.Normalize()
	return out
}
