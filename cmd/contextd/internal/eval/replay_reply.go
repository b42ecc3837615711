package eval

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
)

// replySummary is the Summary shape the replay answers with.
type replySummary struct {
	Topics          []string      `json:"topics"`
	Entities        []replyEntity `json:"entities"`
	ActionsTaken    []string      `json:"actions_taken"`
	Decisions       []string      `json:"decisions"`
	OpenQuestions   []string      `json:"open_questions"`
	UserPreferences []string      `json:"user_preferences"`
	Narrative       string        `json:"narrative"`
}

type replyEntity struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Details string `json:"details"`
}

type replyFact struct {
	Text string  `json:"text"`
	Seqs []int64 `json:"seqs"`
}

// Caps a careful model keeps to: llmsum cuts longer lists and narratives
// from the end, which would lose the newest items, so the replay drops the
// oldest first.
const (
	replayListCap      = 20
	replayNarrativeCap = 3500 // characters
	replayShortCap     = 400
)

var (
	preferenceWords = regexp.MustCompile(`(?i)\b(love[sd]?|like[sd]?|enjoy(s|ed)?|prefer(s|red)?|favou?rite|passion(ate)?|hate[sd]?|dislike[sd]?|fan of)\b`)
	planWords       = regexp.MustCompile(`(?i)\b(plan(s|ning|ned)?|decide[sd]?|going to|will|intends?|wants? to|hop(es|ing) to|looking forward)\b`)
)

// observationsOf lists, in conversation order, the observations citing
// the given turns whose every evidence turn the request shows (own or in
// visible, its earlier context): a model could not state the others.
func (m *material) observationsOf(own, visible []int) []int {
	shown := map[int]bool{}
	for _, t := range append(append([]int(nil), own...), visible...) {
		shown[t] = true
	}
	seen := map[int]bool{}
	var out []int
	for _, t := range own {
		for _, o := range m.obsOf[t] {
			if !seen[o] && m.allShown(o, shown) {
				out = append(out, o)
			}
			seen[o] = true
		}
	}
	sort.Ints(out)
	return out
}

func (m *material) allShown(o int, shown map[int]bool) bool {
	for _, d := range m.obs[o].Evidence {
		if t, ok := m.byDia[d]; ok && !shown[t] {
			return false
		}
	}
	return true
}

// lists sorts observations into the Summary lists: the user's preferences,
// plans and decisions, and what happened; one entity per speaker, its
// details the speaker's first observation here.
func (m *material) lists(obs []int) replySummary {
	var s replySummary
	seen := map[string]bool{}
	for _, i := range obs {
		o := m.obs[i]
		switch {
		case preferenceWords.MatchString(o.Text) && o.Speaker == m.user:
			s.UserPreferences = append(s.UserPreferences, o.Text)
		case planWords.MatchString(o.Text):
			s.Decisions = append(s.Decisions, o.Text)
		default:
			s.ActionsTaken = append(s.ActionsTaken, o.Text)
		}
		if !seen[o.Speaker] {
			seen[o.Speaker] = true
			s.Entities = append(s.Entities, replyEntity{Name: o.Speaker, Type: "person", Details: o.Text})
		}
	}
	return s
}

func (m *material) texts(obs []int) []string {
	out := make([]string, 0, len(obs))
	for _, i := range obs {
		out = append(out, m.obs[i].Text)
	}
	return out
}

// episodeReply answers an episode request: short from the session
// summaries' sentences that match the turns (else the longest
// observations), narrative and facts from the turns' observations.
func (m *material) episodeReply(own, visible []int) string {
	obs := m.observationsOf(own, visible)
	s := m.lists(obs)
	s.Narrative = strings.Join(m.texts(obs), " ")
	inEpisode := map[int]bool{}
	for _, t := range own {
		inEpisode[t] = true
	}
	facts := make([]replyFact, 0, len(obs))
	for _, i := range obs {
		f := replyFact{Text: m.obs[i].Text}
		for _, d := range m.obs[i].Evidence {
			if t, ok := m.byDia[d]; ok && inEpisode[t] {
				if seq := m.seqOf(t); seq > 0 {
					f.Seqs = append(f.Seqs, seq)
				}
			}
		}
		if len(f.Seqs) > 0 {
			facts = append(facts, f)
		}
	}
	out, _ := json.Marshal(struct {
		Short string `json:"short"`
		replySummary
		Facts []replyFact `json:"facts"`
	}{m.short(own, obs), s, facts})
	return string(out)
}

var sentenceEnd = regexp.MustCompile(`[.!?]["')\]]?\s+`)

// sentences splits a paragraph after ., ! or ? followed by a space.
func sentences(p string) []string {
	var out []string
	from := 0
	for _, loc := range sentenceEnd.FindAllStringIndex(p, -1) {
		if s := strings.TrimSpace(p[from:loc[1]]); s != "" {
			out = append(out, s)
		}
		from = loc[1]
	}
	if s := strings.TrimSpace(p[from:]); s != "" {
		out = append(out, s)
	}
	return out
}

// short picks the (at most two) sentences of the touched sessions'
// summaries whose content words the episode's turns hold most, net of the
// words only the session's other turns hold.
func (m *material) short(own []int, obs []int) string {
	in, out := map[string]bool{}, map[string]bool{}
	sessions := map[int]bool{}
	mine := map[int]bool{}
	for _, t := range own {
		mine[t] = true
		sessions[m.turns[t].session] = true
		for _, w := range contentWords(m.turns[t].text) {
			in[w] = true
		}
	}
	for _, w := range contentWords(strings.Join(m.texts(obs), " ")) {
		in[w] = true
	}
	for i, t := range m.turns {
		if sessions[t.session] && !mine[i] {
			for _, w := range contentWords(t.text) {
				if !in[w] {
					out[w] = true
				}
			}
		}
	}
	type scored struct {
		pos   int
		text  string
		score int
	}
	var cands []scored
	var ns []int
	for n := range sessions {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	for _, n := range ns {
		for _, s := range sentences(m.sums[n]) {
			sc := 0
			for _, w := range contentWords(s) {
				if in[w] {
					sc++
				} else if out[w] {
					sc--
				}
			}
			if sc > 0 {
				cands = append(cands, scored{len(cands), s, sc})
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	cands = cands[:min(2, len(cands))]
	sort.Slice(cands, func(i, j int) bool { return cands[i].pos < cands[j].pos })
	var picked []string
	for _, c := range cands {
		picked = append(picked, c.text)
	}
	if len(picked) == 0 { // no summary sentence fits: the longest observation
		for _, t := range m.texts(obs) {
			if len(picked) == 0 || len(t) > len(picked[0]) {
				picked = []string{t}
			}
		}
	}
	return capSentences(picked, replayShortCap)
}

// capSentences joins sentences, dropping the later ones beyond max
// characters (the first is kept whole).
func capSentences(ss []string, max int) string {
	out := ""
	for _, s := range ss {
		if out != "" && len(out)+1+len(s) > max {
			break
		}
		out = strings.TrimSpace(out + " " + s)
	}
	return out
}

// summaryReply answers a running-summary request: the existing summary
// (prior, nil for a compression) with the new turns' observations added,
// oldest dropped first beyond the caps; prose replies the narrative alone.
func (m *material) summaryReply(prior *replySummary, own, visible []int, prose bool) string {
	var s replySummary
	if prior != nil {
		s = *prior
	}
	obs := m.observationsOf(own, visible)
	add := m.lists(obs)
	s.Narrative = trimFront(strings.TrimSpace(s.Narrative+" "+strings.Join(m.texts(obs), " ")), replayNarrativeCap)
	if prose {
		return s.Narrative
	}
	s.Topics = mergeList(s.Topics, add.Topics)
	s.ActionsTaken = mergeList(s.ActionsTaken, add.ActionsTaken)
	s.Decisions = mergeList(s.Decisions, add.Decisions)
	s.OpenQuestions = mergeList(s.OpenQuestions, add.OpenQuestions)
	s.UserPreferences = mergeList(s.UserPreferences, add.UserPreferences)
	for _, e := range add.Entities {
		if !hasEntity(s.Entities, e.Name) {
			s.Entities = append(s.Entities, e)
		}
	}
	if len(s.Entities) > replayListCap {
		s.Entities = s.Entities[len(s.Entities)-replayListCap:]
	}
	out, _ := json.Marshal(s)
	return string(out)
}

func hasEntity(es []replyEntity, name string) bool {
	for _, e := range es {
		if strings.EqualFold(e.Name, name) {
			return true
		}
	}
	return false
}

// mergeList appends the new items not already there, keeping the newest
// replayListCap.
func mergeList(old, add []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(old)+len(add))
	for _, x := range append(append([]string(nil), old...), add...) {
		if k := strings.ToLower(strings.TrimSpace(x)); k != "" && !seen[k] {
			seen[k] = true
			out = append(out, x)
		}
	}
	if len(out) > replayListCap {
		out = out[len(out)-replayListCap:]
	}
	return out
}

// trimFront drops whole sentences from the front until text fits max
// characters.
func trimFront(text string, max int) string {
	ss := sentences(text)
	for len(ss) > 1 && len(strings.Join(ss, " ")) > max {
		ss = ss[1:]
	}
	return strings.Join(ss, " ")
}

var summaryKeys = []string{"topics", "entities", "actions_taken", "decisions", "open_questions", "user_preferences", "narrative"}

var priorProse = regexp.MustCompile(`(?is)current summary:\s*(.*?)\n\s*\n\s*new messages:`)

// priorSummary finds the existing summary an extension request gives: a
// JSON object with summary fields that is not a turn's text, or the prose
// between "Current summary:" and "New messages:".
func priorSummary(user string) (*replySummary, bool) {
	for _, obj := range jsonObjects(user) {
		if !hasAnyKey(obj.fields, summaryKeys) {
			continue
		}
		var s replySummary
		if json.Unmarshal(obj.raw, &s) != nil {
			continue
		}
		return &s, true
	}
	if p := priorProse.FindStringSubmatch(user); p != nil && strings.TrimSpace(p[1]) != "" {
		return &replySummary{Narrative: strings.TrimSpace(p[1])}, true
	}
	return nil, false
}

type jsonObject struct {
	raw    json.RawMessage
	fields map[string]json.RawMessage
}

// jsonObjects decodes the top-level JSON objects in s (bounded tries).
func jsonObjects(s string) []jsonObject {
	var out []jsonObject
	for start, tries := strings.IndexByte(s, '{'), 0; start >= 0 && tries < 64; tries++ {
		dec := json.NewDecoder(strings.NewReader(s[start:]))
		var raw json.RawMessage
		next := start + 1
		if dec.Decode(&raw) == nil {
			var fields map[string]json.RawMessage
			if json.Unmarshal(raw, &fields) == nil {
				out = append(out, jsonObject{raw, fields})
				next = start + int(dec.InputOffset())
			}
		}
		k := strings.IndexByte(s[min(next, len(s)):], '{')
		if k < 0 {
			break
		}
		start = next + k
	}
	return out
}

func hasAnyKey(fields map[string]json.RawMessage, keys []string) bool {
	for _, k := range keys {
		if _, ok := fields[k]; ok {
			return true
		}
	}
	return false
}

var profileKeys = []string{"entities", "user_preferences", "topics", "open_questions"}

// profileReply answers a profile merge: the existing profile's items, plus
// the user's observations that the chat summary given states (the user's
// preferences, and the rest as topics).
func (m *material) profileReply(user string) string {
	var prof replySummary
	var blob strings.Builder
	blob.WriteString(user)
	found := false
	for _, obj := range jsonObjects(user) {
		collectStrings(obj.raw, &blob)
		if _, isSummary := obj.fields["narrative"]; !found && !isSummary && hasAnyKey(obj.fields, profileKeys) {
			found = json.Unmarshal(obj.raw, &prof) == nil
		}
	}
	stated := normalise(blob.String())
	var prefs, topics []string
	for _, o := range m.obs {
		if o.Speaker != m.user || !strings.Contains(stated, normalise(o.Text)) {
			continue
		}
		if preferenceWords.MatchString(o.Text) {
			prefs = append(prefs, o.Text)
		} else {
			topics = append(topics, o.Text)
		}
	}
	out, _ := json.Marshal(map[string]any{
		"entities":         nonNil(prof.Entities),
		"user_preferences": mergeList(prof.UserPreferences, prefs),
		"topics":           mergeList(prof.Topics, topics),
		"open_questions":   nonNil(prof.OpenQuestions),
	})
	return string(out)
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// collectStrings writes every string value in a JSON document to b.
func collectStrings(raw json.RawMessage, b *strings.Builder) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return
	}
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case string:
			b.WriteString("\n" + t)
		case []any:
			for _, e := range t {
				walk(e)
			}
		case map[string]any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(v)
}

// normalise lower-cases text and collapses its white space, for substring
// tests that survive re-wrapping.
func normalise(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
