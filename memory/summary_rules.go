package memory

import (
	"strings"

	"github.com/contextd/contextd/internal/lex"
)

// The rules every summary keeps, whoever writes it (the extractive
// summariser, the LLM's, the root fold over episodes): lists capped at
// their newest items, a narrative that never says a sentence twice, a
// short gist. Fitting a summary to a token cap is internal/tokens' (Fit,
// TrimNarrative): it counts cl100k tokens, and the domain imports no
// tokenizer.

// Caps on a summary and an episode's short summary.
const (
	// MaxListItems caps each list of a summary: lists keep their most
	// recent items.
	MaxListItems = 12
	// MaxShortChars caps an episode's short summary.
	MaxShortChars = 320
)

// JoinNarrative appends a batch's narrative to the running one; a sentence
// the batch says again leaves its older place, so the narrative does not
// tell one thing twice.
func JoinNarrative(prev, add string) string {
	add = strings.TrimSpace(add)
	if add == "" {
		return strings.TrimSpace(prev)
	}
	again := map[string]bool{}
	for _, s := range lex.Sentences(add) {
		again[normKey(s)] = true
	}
	var kept []string
	for _, s := range lex.Sentences(prev) {
		if !again[normKey(s)] {
			kept = append(kept, s)
		}
	}
	return strings.TrimSpace(strings.Join(append(kept, add), " "))
}

// UniqueSentences drops every sentence of a narrative that an earlier one
// already says (case, spacing and end punctuation aside), keeping the
// first: a fold appends each episode's gist, and a small model's gists
// often repeat one another word for word. A narrative without a repeat is
// returned unchanged.
func UniqueSentences(n string) string {
	sents := lex.Sentences(n)
	seen := make(map[string]bool, len(sents))
	kept := sents[:0:0]
	for _, s := range sents {
		if k := normKey(s); !seen[k] {
			seen[k] = true
			kept = append(kept, s)
		}
	}
	if len(kept) == len(sents) {
		return n
	}
	return strings.Join(kept, " ")
}

// Short is a one- or two-sentence gist of the summary, at most
// MaxShortChars: its narrative's first two sentences, or its topics when it
// has no narrative. An episode's short summary when its summariser wrote
// none.
func (s Summary) Short() string {
	if sents := lex.Sentences(s.Narrative); len(sents) > 0 {
		return lex.Clip(strings.Join(sents[:min(2, len(sents))], " "), MaxShortChars)
	}
	if len(s.Topics) > 0 {
		return lex.Clip("About "+strings.Join(s.Topics, ", ")+".", MaxShortChars)
	}
	return ""
}
