package memory

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/internal/tokens"
)

// The size rules every summary keeps, whoever writes it (the extractive
// summariser, the LLM's, the root fold over episodes): lists capped at
// their newest items, a narrative thinned coarse to fine and never saying
// a sentence twice, the whole fitted to a token cap.

// Caps on a summary and an episode's short summary.
const (
	// MaxListItems caps each list of a summary: lists keep their most
	// recent items.
	MaxListItems = 12
	// MaxShortChars caps an episode's short summary.
	MaxShortChars = 320
)

// TrimNarrative fits a narrative into maxTokens (<= 0: no cap) coarse to
// fine: it keeps its first sentence (how the chat began) and its newest
// ones, and thins the older half (dropOne), so the older a stretch, the
// fewer sentences tell it, and the narrative always ends with the newest.
// Two sentences still too long lose the older; a single one is cut at a
// clause or word boundary (tokens.Clip), never inside a word.
func TrimNarrative(n string, maxTokens int) string {
	n = strings.TrimSpace(n)
	if maxTokens <= 0 || tokens.Count(n) <= maxTokens {
		return n
	}
	sents := lex.Sentences(n)
	for len(sents) > 1 && tokens.Count(strings.Join(sents, " ")) > maxTokens {
		sents = dropOne(sents)
	}
	return tokens.Clip(strings.Join(sents, " "), maxTokens)
}

// dropOne drops one sentence of the older half of sents, never the first
// of three or more (of two, the older): the one whose text hashes lowest.
// The older half is thus a sample of all the sentences that passed through
// it, spread over the whole chat however long (a sentence keeps its place
// as long as no newer one hashes above it, whatever its age), and the
// newer half is every sentence: coarse to fine, and deterministic.
func dropOne(sents []string) []string {
	if len(sents) <= 2 {
		return sents[1:]
	}
	drop, low := 1, uint32(math.MaxUint32)
	for i := 1; i < max(len(sents)/2, 2); i++ {
		h := fnv.New32a()
		h.Write([]byte(sents[i]))
		if v := h.Sum32(); v < low {
			drop, low = i, v
		}
	}
	return slices.Delete(sents, drop, drop+1)
}

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

// Tokens is the size of the summary in cl100k tokens: the compact JSON of
// its content fields, which is what a context assembler renders at most.
func (s Summary) Tokens() int {
	return tokens.Count(contentJSON(s))
}

func contentJSON(s Summary) string {
	b, _ := json.Marshal(struct {
		Topics          []string `json:"topics,omitempty"`
		Entities        []Entity `json:"entities,omitempty"`
		ActionsTaken    []string `json:"actions_taken,omitempty"`
		Decisions       []string `json:"decisions,omitempty"`
		OpenQuestions   []string `json:"open_questions,omitempty"`
		UserPreferences []string `json:"user_preferences,omitempty"`
		Narrative       string   `json:"narrative,omitempty"`
	}{s.Topics, s.Entities, s.ActionsTaken, s.Decisions, s.OpenQuestions, s.UserPreferences, s.Narrative})
	return string(b)
}

// Fit trims s until s.Tokens() <= maxTokens (<= 0: no cap): it drops,
// from whichever part is currently the largest, a narrative sentence of
// its older half (TrimNarrative's thinning) or the oldest list item.
func (s *Summary) Fit(maxTokens int) {
	if maxTokens <= 0 {
		return
	}
	for s.Tokens() > maxTokens {
		lists := s.Lists()
		bestTk, best := -1, 0 // best: 0 narrative, 1..5 lists, 6 entities
		consider := func(tk, part int) {
			if tk > bestTk {
				bestTk, best = tk, part
			}
		}
		if s.Narrative != "" {
			consider(tokens.Count(s.Narrative), 0)
		}
		for i, l := range lists {
			if len(*l) > 0 {
				consider(tokens.Count(strings.Join(*l, " ")), i+1)
			}
		}
		if len(s.Entities) > 0 {
			b, _ := json.Marshal(s.Entities)
			consider(tokens.Count(string(b)), 6)
		}
		switch {
		case bestTk < 0:
			return // nothing left to drop
		case best == 0:
			if sents := lex.Sentences(s.Narrative); len(sents) > 1 {
				// One sentence fewer, taken where TrimNarrative thins.
				s.Narrative = strings.Join(dropOne(sents), " ")
			} else {
				over := s.Tokens() - maxTokens
				s.Narrative = tokens.Clip(s.Narrative, max(tokens.Count(s.Narrative)-over, 0))
			}
		case best == 6:
			s.Entities = s.Entities[1:]
		default:
			*lists[best-1] = (*lists[best-1])[1:]
		}
	}
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
