package tokens

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/memory"
)

// Fitting a summary to a token cap: the rule every summary keeps, whoever
// writes it (the extractive summariser, the LLM's, the root fold over
// episodes), with the lists' and the narrative's other rules in memory.

// Summary is the size of a summary in cl100k tokens: the compact JSON of
// its content fields, which is what a context assembler renders at most.
func Summary(s memory.Summary) int {
	return Count(contentJSON(s))
}

func contentJSON(s memory.Summary) string {
	b, _ := json.Marshal(struct {
		Topics          []string        `json:"topics,omitempty"`
		Entities        []memory.Entity `json:"entities,omitempty"`
		ActionsTaken    []string        `json:"actions_taken,omitempty"`
		Decisions       []string        `json:"decisions,omitempty"`
		OpenQuestions   []string        `json:"open_questions,omitempty"`
		UserPreferences []string        `json:"user_preferences,omitempty"`
		Narrative       string          `json:"narrative,omitempty"`
	}{s.Topics, s.Entities, s.ActionsTaken, s.Decisions, s.OpenQuestions, s.UserPreferences, s.Narrative})
	return string(b)
}

// Fit trims s until Summary(*s) <= maxTokens (<= 0: no cap): it drops,
// from whichever part is currently the largest, a narrative sentence of
// its older half (TrimNarrative's thinning) or the oldest list item.
func Fit(s *memory.Summary, maxTokens int) {
	if maxTokens <= 0 {
		return
	}
	for Summary(*s) > maxTokens {
		lists := s.Lists()
		bestTk, best := -1, 0 // best: 0 narrative, 1..5 lists, 6 entities
		consider := func(tk, part int) {
			if tk > bestTk {
				bestTk, best = tk, part
			}
		}
		if s.Narrative != "" {
			consider(Count(s.Narrative), 0)
		}
		for i, l := range lists {
			if len(*l) > 0 {
				consider(Count(strings.Join(*l, " ")), i+1)
			}
		}
		if len(s.Entities) > 0 {
			b, _ := json.Marshal(s.Entities)
			consider(Count(string(b)), 6)
		}
		switch {
		case bestTk < 0:
			return // nothing left to drop
		case best == 0:
			if sents := lex.Sentences(s.Narrative); len(sents) > 1 {
				// One sentence fewer, taken where TrimNarrative thins.
				s.Narrative = strings.Join(dropOne(sents), " ")
			} else {
				over := Summary(*s) - maxTokens
				s.Narrative = Clip(s.Narrative, max(Count(s.Narrative)-over, 0))
			}
		case best == 6:
			s.Entities = s.Entities[1:]
		default:
			*lists[best-1] = (*lists[best-1])[1:]
		}
	}
}

// TrimNarrative fits a narrative into maxTokens (<= 0: no cap) coarse to
// fine: it keeps its first sentence (how the chat began) and its newest
// ones, and thins the older half (dropOne), so the older a stretch, the
// fewer sentences tell it, and the narrative always ends with the newest.
// Two sentences still too long lose the older; a single one is cut at a
// clause or word boundary (Clip), never inside a word.
func TrimNarrative(n string, maxTokens int) string {
	n = strings.TrimSpace(n)
	if maxTokens <= 0 || Count(n) <= maxTokens {
		return n
	}
	sents := lex.Sentences(n)
	for len(sents) > 1 && Count(strings.Join(sents, " ")) > maxTokens {
		sents = dropOne(sents)
	}
	return Clip(strings.Join(sents, " "), maxTokens)
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
