package extractive

import (
	"encoding/json"
	"strings"

	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// These helpers are shared with memory/llmsum, which caps and merges the
// LLM's output the same way.

// Clone returns a deep copy of s (its lists are not shared).
func Clone(s memory.Summary) memory.Summary {
	c := s
	c.Topics = append([]string(nil), s.Topics...)
	c.Entities = append([]memory.Entity(nil), s.Entities...)
	c.ActionsTaken = append([]string(nil), s.ActionsTaken...)
	c.Decisions = append([]string(nil), s.Decisions...)
	c.OpenQuestions = append([]string(nil), s.OpenQuestions...)
	c.UserPreferences = append([]string(nil), s.UserPreferences...)
	return c
}

// MergeList appends add to prev, de-duplicating case-insensitively (an item
// seen again moves to the end: it is recent again) and keeping the last max
// items (max <= 0: no cap).
func MergeList(prev, add []string, max int) []string {
	var out []string
	index := map[string]int{}
	push := func(item string) {
		item = strings.TrimSpace(item)
		k := normKey(item)
		if k == "" {
			return
		}
		if i, ok := index[k]; ok {
			out = append(out[:i], out[i+1:]...)
			for kk, j := range index {
				if j > i {
					index[kk] = j - 1
				}
			}
		}
		index[k] = len(out)
		out = append(out, item)
	}
	for _, it := range prev {
		push(it)
	}
	for _, it := range add {
		push(it)
	}
	if max > 0 && len(out) > max {
		out = out[len(out)-max:]
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// MergeEntities merges entity lists by case-insensitive name. An entity seen
// again moves to the end; its type is kept unless it was generic, and new
// details are added when they say something the old ones did not.
func MergeEntities(prev, add []memory.Entity, max int) []memory.Entity {
	var out []memory.Entity
	for _, e := range append(append([]memory.Entity(nil), prev...), add...) {
		e.Name = strings.Join(strings.Fields(e.Name), " ")
		if e.Name == "" {
			continue
		}
		k := normKey(e.Name)
		found := -1
		for i := range out {
			if normKey(out[i].Name) == k {
				found = i
				break
			}
		}
		if found >= 0 {
			old := out[found]
			out = append(out[:found], out[found+1:]...)
			if old.Type != "" && old.Type != TypeName {
				e.Type = old.Type
			} else if e.Type == "" {
				e.Type = old.Type
			}
			e.Details = mergeDetails(old.Details, e.Details)
		}
		out = append(out, e)
	}
	if max > 0 && len(out) > max {
		out = out[len(out)-max:]
	}
	if out == nil {
		out = []memory.Entity{}
	}
	return out
}

func mergeDetails(old, add string) string {
	old, add = strings.TrimSpace(old), strings.TrimSpace(add)
	switch {
	case add == "" || strings.Contains(strings.ToLower(old), strings.ToLower(add)):
		return old
	case old == "" || strings.Contains(strings.ToLower(add), strings.ToLower(old)):
		return clip(add, 2*MaxItemChars)
	}
	return clip(old+"; "+add, 2*MaxItemChars)
}

// TrimNarrative drops the oldest sentences of a narrative until it fits in
// maxTokens (<= 0: no cap); a single sentence that is still too long is cut.
func TrimNarrative(n string, maxTokens int) string {
	n = strings.TrimSpace(n)
	if maxTokens <= 0 || tokens.Count(n) <= maxTokens {
		return n
	}
	sents := splitSentences(n)
	for len(sents) > 1 && tokens.Count(strings.Join(sents, " ")) > maxTokens {
		sents = sents[1:]
	}
	return tokens.Truncate(strings.Join(sents, " "), maxTokens)
}

// Tokens is the size of a summary in cl100k tokens: the compact JSON of its
// content fields, which is what a context assembler renders at most.
func Tokens(s memory.Summary) int {
	return tokens.Count(contentJSON(s))
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

// Fit trims s until Tokens(s) <= maxTokens (<= 0: no cap): it drops, from
// whichever part is currently the largest, the oldest narrative sentence or
// the oldest list item.
func Fit(s *memory.Summary, maxTokens int) {
	if maxTokens <= 0 {
		return
	}
	for Tokens(*s) > maxTokens {
		lists := []*[]string{&s.Topics, &s.ActionsTaken, &s.Decisions, &s.OpenQuestions, &s.UserPreferences}
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
			if sents := splitSentences(s.Narrative); len(sents) > 1 {
				s.Narrative = strings.Join(sents[1:], " ")
			} else {
				over := Tokens(*s) - maxTokens
				s.Narrative = tokens.Truncate(s.Narrative, max(tokens.Count(s.Narrative)-over, 0))
			}
		case best == 6:
			s.Entities = s.Entities[1:]
		default:
			*lists[best-1] = (*lists[best-1])[1:]
		}
	}
}
