// Package extractive is contextd's default summarizer: no LLM, deterministic
// heuristics over the new turns, merged into the previous summary. It reads
// only Prev and the turns it is given, never the chat's history.
package extractive

import (
	"context"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/contextd/contextd/memory"
)

// Name and PromptVersion recorded on every summary this package writes.
const (
	Name          = "extractive"
	PromptVersion = "extractive-v1"
)

// Caps on the merged summary. Lists keep their most recent items.
const (
	MaxListItems       = 12
	MaxItemChars       = memory.MaxItemChars
	DefaultNarrativeTk = 600 // narrative cap when the request sets no MaxTokens
	topicsPerBatch     = 5
)

// Summarizer implements memory.Summarizer without an LLM.
type Summarizer struct {
	now func() time.Time
}

// New returns the extractive summarizer.
func New() *Summarizer { return &Summarizer{now: time.Now} }

// Name implements memory.Summarizer.
func (*Summarizer) Name() string { return Name }

// UsesLLM implements memory.Summarizer: the extractive summarizer is free.
func (*Summarizer) UsesLLM() bool { return false }

// PromptVersion is the version the extractive summarizer records whatever
// the prompts: it uses none.
func (*Summarizer) PromptVersion(memory.Prompts) string { return PromptVersion }

// Summarize implements memory.Summarizer.
func (s *Summarizer) Summarize(ctx context.Context, req memory.SummarizeRequest) (memory.SummarizeResult, error) {
	if err := ctx.Err(); err != nil {
		return memory.SummarizeResult{}, err
	}
	var sum memory.Summary
	if req.Prev != nil {
		sum = req.Prev.Clone()
	}
	b := analyse(req.Turns)

	sum.Topics = memory.MergeList(sum.Topics, b.topics, MaxListItems)
	sum.Entities = memory.MergeEntities(sum.Entities, b.entities, MaxListItems)
	sum.ActionsTaken = memory.MergeList(sum.ActionsTaken, b.actions, MaxListItems)
	sum.Decisions = memory.MergeList(sum.Decisions, b.decisions, MaxListItems)
	sum.OpenQuestions = memory.MergeList(answered(sum.OpenQuestions, req.Turns), b.questions, MaxListItems)
	sum.UserPreferences = memory.MergeList(sum.UserPreferences, b.preferences, MaxListItems)
	if b.narrative != "" {
		sum.Narrative = strings.TrimSpace(sum.Narrative + " " + b.narrative)
	}
	narrCap := DefaultNarrativeTk
	if req.MaxTokens > 0 {
		narrCap = max(req.MaxTokens/2, 1)
	}
	sum.Narrative = TrimNarrative(sum.Narrative, narrCap)

	if len(req.Turns) > 0 {
		if sum.CoveredFromSeq == 0 {
			sum.CoveredFromSeq = req.Turns[0].Seq
		}
		sum.CoveredToSeq = req.Turns[len(req.Turns)-1].Seq
	}
	sum.Stale = false
	sum.Model = Name
	sum.PromptVersion = PromptVersion
	sum.UpdatedAt = s.now().UTC()
	Fit(&sum, req.MaxTokens)
	sum.Normalize()
	return memory.SummarizeResult{Summary: sum}, nil
}

// batch is what one call extracted from its turns.
type batch struct {
	topics, actions, decisions, questions, preferences []string
	entities                                           []memory.Entity
	narrative                                          string
}

type sentence struct {
	text string
	role memory.Role
	turn int
}

func analyse(turns []memory.Message) batch {
	var b batch
	var sents []sentence
	for i, t := range turns {
		if t.Role == memory.RoleSystem {
			continue // instructions, not conversation
		}
		for _, s := range splitSentences(t.Content) {
			sents = append(sents, sentence{s, t.Role, i})
		}
	}
	// Frequencies over the batch: keywords, bigrams, capitalised words.
	freq := map[string]int{}
	first := map[string]int{}
	bigram := map[string]int{}
	capCount := map[string]int{}
	pos := 0
	for _, s := range sents {
		ws := words(stripLinks(s.text))
		for j, w := range ws {
			if !keyword(w) {
				continue
			}
			freq[w]++
			if _, ok := first[w]; !ok {
				first[w] = pos
			}
			pos++
			if j+1 < len(ws) && keyword(ws[j+1]) {
				bg := w + " " + ws[j+1]
				bigram[bg]++
				if _, ok := first[bg]; !ok {
					first[bg] = pos
				}
			}
		}
		for _, m := range properRe.FindAllString(s.text, -1) {
			for _, f := range strings.Fields(m) {
				capCount[strings.ToLower(f)]++
			}
		}
	}
	b.topics = topics(freq, bigram, first)

	// Entities, in order of first appearance.
	seen := map[string]bool{}
	for _, s := range sents {
		for _, f := range findEntities(s.text, capCount) {
			k := normKey(f.ent.Name)
			if seen[k] {
				continue
			}
			seen[k] = true
			b.entities = append(b.entities, f.ent)
		}
	}

	lastAssistant := -1
	for i, t := range turns {
		if t.Role == memory.RoleAssistant {
			lastAssistant = i
		}
	}
	for _, s := range sents {
		question := strings.HasSuffix(s.text, "?")
		switch s.role {
		case memory.RoleAssistant:
			if !question && len(words(s.text)) >= 3 && actionRe.MatchString(s.text) {
				b.actions = append(b.actions, clip(s.text, MaxItemChars))
			}
		case memory.RoleUser:
			if question && s.turn > lastAssistant {
				b.questions = append(b.questions, clip(s.text, MaxItemChars))
			}
			if prefRe.MatchString(s.text) && (!question || prefPleaseRe.MatchString(s.text)) {
				b.preferences = append(b.preferences, clip(s.text, MaxItemChars))
			}
		}
		if (s.role == memory.RoleUser || s.role == memory.RoleAssistant) && !question && len(words(s.text)) >= 3 && decisionRe.MatchString(s.text) {
			b.decisions = append(b.decisions, clip(s.text, MaxItemChars))
		}
	}
	b.narrative = narrative(sents, freq)
	return b
}

// topics picks the batch's salient keywords and bigrams: frequency at least
// two, bigrams weighted double, ties broken by first appearance.
func topics(freq, bigram map[string]int, first map[string]int) []string {
	type cand struct {
		term  string
		score int
	}
	var cs []cand
	covered := map[string]bool{}
	for bg, n := range bigram {
		if n >= 2 {
			cs = append(cs, cand{bg, 2 * n})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].score != cs[j].score {
			return cs[i].score > cs[j].score
		}
		return first[cs[i].term] < first[cs[j].term]
	})
	if len(cs) > topicsPerBatch {
		cs = cs[:topicsPerBatch]
	}
	for _, c := range cs {
		for _, w := range strings.Fields(c.term) {
			// A word seen mostly inside the bigram is not a topic of its own.
			if freq[w] <= bigram[c.term]+1 {
				covered[w] = true
			}
		}
	}
	for w, n := range freq {
		if n >= 2 && !covered[w] {
			cs = append(cs, cand{w, n})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].score != cs[j].score {
			return cs[i].score > cs[j].score
		}
		return first[cs[i].term] < first[cs[j].term]
	})
	if len(cs) > topicsPerBatch {
		cs = cs[:topicsPerBatch]
	}
	// Emit in order of first appearance so the list reads naturally.
	sort.SliceStable(cs, func(i, j int) bool { return first[cs[i].term] < first[cs[j].term] })
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.term
	}
	return out
}

// narrative picks the batch's key sentences: the best user sentence and the
// best assistant sentence (or the two best when one role is missing),
// scored by the batch frequency of their keywords.
func narrative(sents []sentence, freq map[string]int) string {
	score := func(s sentence) float64 {
		seen := map[string]bool{}
		total := 0
		ws := words(stripLinks(s.text))
		for _, w := range ws {
			if keyword(w) && !seen[w] && freq[w] >= 2 {
				seen[w] = true
				total += freq[w]
			}
		}
		if len(ws) < 3 {
			return 0 // "ok", "thanks!" carry nothing
		}
		return float64(total) / math.Sqrt(float64(len(ws)))
	}
	best := func(role memory.Role, skip int) int {
		bi, bs := -1, 0.0
		for i, s := range sents {
			if s.role != role || i == skip {
				continue
			}
			if sc := score(s); sc > bs {
				bi, bs = i, sc
			}
		}
		return bi
	}
	u := best(memory.RoleUser, -1)
	a := best(memory.RoleAssistant, -1)
	if u < 0 && a >= 0 {
		u = best(memory.RoleAssistant, a)
	} else if a < 0 && u >= 0 {
		a = best(memory.RoleUser, u)
	}
	picked := []int{}
	for _, i := range []int{u, a} {
		if i >= 0 {
			picked = append(picked, i)
		}
	}
	sort.Ints(picked)
	var parts []string
	for _, i := range picked {
		label := "User"
		switch sents[i].role {
		case memory.RoleAssistant:
			label = "Assistant"
		case memory.RoleTool:
			label = "Tool"
		}
		text := clip(sents[i].text, MaxItemChars)
		if !strings.ContainsAny(text[len(text)-1:], ".!?…") {
			text += "."
		}
		parts = append(parts, label+": "+text)
	}
	return strings.Join(parts, " ")
}

// answered drops previous open questions that the new turns answer: an
// assistant sentence shares at least half of the question's keywords, or
// the batch opens with the assistant (answering the latest question).
func answered(open []string, turns []memory.Message) []string {
	if len(open) == 0 {
		return open
	}
	var reply strings.Builder
	opensWithAssistant := false
	for _, t := range turns {
		if t.Role == memory.RoleUser || t.Role == memory.RoleAssistant {
			opensWithAssistant = t.Role == memory.RoleAssistant
			break
		}
	}
	for _, t := range turns {
		if t.Role == memory.RoleAssistant {
			reply.WriteString(" ")
			reply.WriteString(t.Content)
		}
	}
	replyWords := map[string]bool{}
	for _, w := range words(reply.String()) {
		replyWords[w] = true
	}
	var out []string
	for i, q := range open {
		if opensWithAssistant && i == len(open)-1 {
			continue
		}
		kw, hit := 0, 0
		for _, w := range words(q) {
			if keyword(w) {
				kw++
				if replyWords[w] {
					hit++
				}
			}
		}
		if kw > 0 && hit*2 >= kw {
			continue
		}
		out = append(out, q)
	}
	return out
}

var linkRe = regexp.MustCompile(`\bhttps?://\S+|\S+@\S+\.\w+`)

// stripLinks removes URLs and e-mail addresses, whose parts are not topics.
// Every match holds ':' (a URL) or '@' (an address): most text holds
// neither and skips the regular expression.
func stripLinks(s string) string {
	if !strings.ContainsAny(s, ":@") {
		return s
	}
	return linkRe.ReplaceAllString(s, " ")
}

var (
	actionRe     = regexp.MustCompile(`(?i)\b(?:i|we)(?:'ve| have)?\s+(?:just\s+|now\s+|already\s+|also\s+|successfully\s+)?(?:created|updated|sent|fixed|added|removed|deleted|deployed|scheduled|booked|wrote|written|set up|configured|installed|merged|opened|closed|filed|submitted|renamed|moved|changed|implemented|refactored|ran|tested|generated|uploaded|published|released|reverted|restarted|cancell?ed|ordered|paid|emailed|called|saved|completed|finished|resolved|migrated|built|made|drafted|prepared|shared|posted|reserved|applied|enabled|disabled|upgraded|rolled back)\b|\b(?:done|deployed|completed|finished|all set)\b`)
	decisionRe   = regexp.MustCompile(`(?i)\b(?:we(?:'ve| have)? decided|decided to|decision is|let'?s go with|let us go with|we'?ll use|we will use|we'?ll go with|we will go with|agreed|going with|we chose|we picked|settled on|final answer is)\b`)
	prefRe       = regexp.MustCompile(`(?i)\b(?:i(?:'d| would)? prefer|i (?:really )?(?:like|love|hate|dislike)|i (?:don't|do not) (?:want|like)|please (?:always|never)|always use|never use|my favou?rite|i want you to)\b`)
	prefPleaseRe = regexp.MustCompile(`(?i)\bplease (?:always|never)\b`)
)
