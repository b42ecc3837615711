package llmsum

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/contextd/contextd/memory"
)

// Caps applied to whatever the model returns.
const (
	MaxListItems      = 20
	MaxEntities       = 30
	MaxItemChars      = 300
	MaxNarrativeChars = 4000
)

// ErrNoJSON: the model's reply holds no usable JSON summary object.
var ErrNoJSON = errors.New("llmsum: no JSON summary in reply")

var (
	// Chat-template tokens that leak from badly configured servers, and
	// reasoning blocks some models emit before their answer.
	thinkRe    = regexp.MustCompile(`(?s)<think>.*?</think>`)
	templateRe = regexp.MustCompile(`<\|[A-Za-z0-9_]+\|>|</?s>|\[/?INST\]|<</?SYS>>|<start_of_turn>|<end_of_turn>`)
	fenceRe    = regexp.MustCompile("(?m)^\\s*```[A-Za-z0-9_-]*\\s*$")
	// A role label left behind once "<|im_start|>assistant" lost its token.
	roleLabelRe = regexp.MustCompile(`(?i)^\s*(?:assistant|model)\s*:?\s*\n`)
)

// Clean strips chat-template tokens, reasoning blocks and code fences from a
// model reply and trims it.
func Clean(raw string) string {
	s := strings.ToValidUTF8(raw, "")
	s = thinkRe.ReplaceAllString(s, "")
	s = templateRe.ReplaceAllString(s, "")
	s = fenceRe.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "```", "")
	s = roleLabelRe.ReplaceAllString(s, "")
	return strings.TrimSpace(s)
}

// ParseSummary reads a model's reply as a structured summary, robustly:
// template tokens, fences and prose around the JSON object are ignored;
// wrongly typed fields are coerced or dropped; lists and strings are capped;
// entities are de-duplicated case-insensitively by name (details merged).
// Only the content fields are set. ErrNoJSON when no JSON object with at
// least one summary field is found.
func ParseSummary(raw string) (memory.Summary, error) {
	s := Clean(raw)
	obj, err := firstObject(s)
	if err != nil {
		return memory.Summary{}, err
	}
	// Some models wrap the answer: {"summary": {...}}.
	if inner, ok := obj["summary"].(map[string]any); ok && !hasSummaryKey(obj) {
		obj = inner
	}
	if !hasSummaryKey(obj) {
		return memory.Summary{}, fmt.Errorf("%w: no summary field", ErrNoJSON)
	}
	var sum memory.Summary
	sum.Topics = strList(obj["topics"])
	sum.ActionsTaken = strList(obj["actions_taken"])
	sum.Decisions = strList(obj["decisions"])
	sum.OpenQuestions = strList(obj["open_questions"])
	sum.UserPreferences = strList(obj["user_preferences"])
	sum.Entities = entityList(obj["entities"])
	sum.Narrative = narrativeOf(obj["narrative"])
	sum.Normalize()
	return sum, nil
}

var summaryKeys = []string{"topics", "entities", "actions_taken", "decisions", "open_questions", "user_preferences", "narrative"}

func hasSummaryKey(obj map[string]any) bool {
	for _, k := range summaryKeys {
		if _, ok := obj[k]; ok {
			return true
		}
	}
	return false
}

// firstObject decodes the first JSON object in s, ignoring prose before it
// and anything after it.
func firstObject(s string) (map[string]any, error) {
	// Bounded: a reply full of braces must not cost quadratic time.
	for start, tries := strings.IndexByte(s, '{'), 0; start >= 0 && tries < 32; tries++ {
		dec := json.NewDecoder(strings.NewReader(s[start:]))
		var obj map[string]any
		if err := dec.Decode(&obj); err == nil && obj != nil {
			return obj, nil
		}
		next := strings.IndexByte(s[start+1:], '{')
		if next < 0 {
			break
		}
		start += 1 + next
	}
	return nil, ErrNoJSON
}

func strList(v any) []string {
	var items []string
	switch t := v.(type) {
	case string:
		items = []string{t}
	case []any:
		for _, e := range t {
			if s := scalar(e); s != "" {
				items = append(items, s)
			}
		}
	}
	for i, s := range items {
		items[i] = capItem(s)
	}
	return memory.MergeList(nil, items, MaxListItems)
}

// scalar renders a string, number or boolean; objects and lists give "".
func scalar(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case float64, bool, json.Number:
		return fmt.Sprint(t)
	}
	return ""
}

func entityList(v any) []memory.Entity {
	list, ok := v.([]any)
	if !ok {
		return []memory.Entity{}
	}
	var out []memory.Entity
	for _, e := range list {
		var ent memory.Entity
		switch t := e.(type) {
		case string:
			ent.Name = t
		case map[string]any:
			ent.Name = scalar(t["name"])
			ent.Type = scalar(t["type"])
			switch d := t["details"].(type) {
			case []any:
				var parts []string
				for _, p := range d {
					if s := scalar(p); s != "" {
						parts = append(parts, s)
					}
				}
				ent.Details = strings.Join(parts, "; ")
			default:
				ent.Details = scalar(d)
			}
		}
		ent.Name = capItem(ent.Name)
		ent.Type = capRunes(strings.ToLower(strings.Join(strings.Fields(ent.Type), " ")), 40)
		ent.Details = capItem(ent.Details)
		if ent.Name != "" {
			out = append(out, ent)
		}
	}
	out = memory.MergeEntities(nil, out, MaxEntities)
	for i := range out { // merged details may have grown
		out[i].Details = capItem(out[i].Details)
	}
	return out
}

func narrativeOf(v any) string {
	switch t := v.(type) {
	case string:
		return capRunes(strings.TrimSpace(t), MaxNarrativeChars)
	case []any:
		var parts []string
		for _, p := range t {
			if s := strings.TrimSpace(scalar(p)); s != "" {
				parts = append(parts, s)
			}
		}
		return capRunes(strings.Join(parts, " "), MaxNarrativeChars)
	}
	return ""
}

func capItem(s string) string {
	return capRunes(strings.Join(strings.Fields(s), " "), MaxItemChars)
}

// capRunes cuts s to at most max runes (the cut marked with an ellipsis
// that counts toward max), always at a rune boundary.
func capRunes(s string, max int) string {
	s = strings.ToValidUTF8(s, "")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)[:max-1]
	return strings.TrimRightFunc(string(r), func(c rune) bool { return c == ' ' }) + "…"
}

// summaryJSON is the compact JSON of a summary's content fields, as the
// extension prompt shows it to the model.
func summaryJSON(s memory.Summary) string {
	s.Normalize()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		Topics          []string        `json:"topics"`
		Entities        []memory.Entity `json:"entities"`
		ActionsTaken    []string        `json:"actions_taken"`
		Decisions       []string        `json:"decisions"`
		OpenQuestions   []string        `json:"open_questions"`
		UserPreferences []string        `json:"user_preferences"`
		Narrative       string          `json:"narrative"`
	}{s.Topics, s.Entities, s.ActionsTaken, s.Decisions, s.OpenQuestions, s.UserPreferences, s.Narrative})
	return strings.TrimSpace(b.String())
}
