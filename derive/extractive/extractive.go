// Package extractive is contextd's default summarizer: no LLM, deterministic
// heuristics over the new turns, merged into the previous summary. It reads
// only Prev and the turns it is given, never the chat's history.
package extractive

import (
	"context"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/contextd/contextd/derive/facts"
	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/internal/prose"
	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// Name and PromptVersion recorded on every summary this package writes.
const (
	Name          = "extractive"
	PromptVersion = "extractive-v1"
)

// Caps on the merged summary. Lists keep their most recent items.
const (
	MaxItemChars       = memory.MaxItemChars
	DefaultNarrativeTk = 600 // narrative cap when the request sets no MaxTokens
	topicsPerBatch     = 5
)

// Summarizer implements memory.Summarizer without an LLM.
type Summarizer struct {
	now func() time.Time
}

var _ memory.Summarizer = (*Summarizer)(nil)

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

	sum.Topics = oneForm(memory.MergeList(sum.Topics, b.topics, memory.MaxListItems))
	prev := replacedDetails(currentDetails(withoutDetails(sum.Entities), nil, b.all), nil, req.Turns)
	fresh := replacedDetails(currentDetails(b.entities, b.entityFrom, b.all), b.entityFrom, req.Turns)
	sum.Entities = memory.MergeEntities(prev, fresh, memory.MaxListItems)
	sum.ActionsTaken = memory.MergeList(sum.ActionsTaken, b.actions, memory.MaxListItems)
	sum.Decisions = memory.MergeList(current(sum.Decisions, decisionPrefix, b.fresh), b.decisions, memory.MaxListItems)
	sum.OpenQuestions = memory.MergeList(answered(sum.OpenQuestions, req.Turns), b.questions, memory.MaxListItems)
	sum.UserPreferences = memory.MergeList(current(sum.UserPreferences, "", b.fresh), b.preferences, memory.MaxListItems)
	sum.Narrative = currentNarrative(memory.JoinNarrative(sum.Narrative, b.narrative), b.all)
	narrCap := DefaultNarrativeTk
	if req.MaxTokens > 0 {
		narrCap = max(req.MaxTokens/2, 1)
	}
	sum.Narrative = tokens.TrimNarrative(sum.Narrative, narrCap)

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
	tokens.Fit(&sum, req.MaxTokens)
	sum.Normalize()
	return memory.SummarizeResult{Summary: sum}, nil
}

// withoutDetails drops the dates and quantities an older summary listed
// as entities: they are details of something (dropTypes), not things of
// their own.
func withoutDetails(es []memory.Entity) []memory.Entity {
	out := es[:0:0]
	for _, e := range es {
		if !dropTypes[e.Type] {
			out = append(out, e)
		}
	}
	return out
}

// batch is what one call extracted from its turns.
type batch struct {
	topics, actions, decisions, questions, preferences []string
	entities                                           []memory.Entity
	entityFrom                                         []memory.Message // the turn each entity's details are from
	narrative                                          string
	fresh                                              []memory.Fact // the current facts behind preferences and decisions
	all                                                []memory.Fact // every fact drawn, updates among them
}

// sentence is one prose sentence of a turn (code, formulas, tables,
// markup and links are not prose and are never read).
type sentence struct {
	text string
	role memory.Role
	who  prose.Speaker
	turn int
	// words are words(text), keys which of them are keywords and no
	// speaker's name: analyse fills them in, clause by clause.
	words []string
	keys  []bool
}

// proseOf returns the prose sentences of turns, the lowercased words of
// the speakers' names (which are nobody's topic or entity: they are the
// people talking) and the turns as read, which facts reads again.
func proseOf(turns []memory.Message) ([]sentence, map[string]bool, []prose.Reading) {
	sents := make([]sentence, 0, 4*len(turns))
	rs := make([]prose.Reading, 0, len(turns))
	names := map[string]bool{}
	for i, t := range turns {
		if t.Role == memory.RoleSystem || t.Deleted {
			continue // instructions, not conversation
		}
		r := prose.ReadProse(t)
		rs = append(rs, r)
		for _, w := range words(r.Turn.Speaker.Name) {
			names[w] = true
		}
		for _, s := range r.Sents {
			sents = append(sents, sentence{text: s, role: t.Role, who: r.Turn.Speaker, turn: i})
		}
	}
	return sents, names, rs
}

func analyse(turns []memory.Message) batch {
	sents, names, readings := proseOf(turns)
	terms, proper, capCount := countTerms(sents, func(w string) bool { return keyword(w) && !names[w] })
	// In the order they always ran: narrative reads what the others leave.
	b := batch{topics: topics(terms), actions: actionsOf(sents)}
	var from []int
	b.entities, from = entitiesOf(sents, proper, capCount, names)
	for _, i := range from {
		b.entityFrom = append(b.entityFrom, turns[i])
	}
	b.preferences, b.decisions, b.questions, b.fresh, b.all = factItems(readings)
	b.narrative = narrative(sents, terms)
	return b
}

// countTerms fills in each sentence's words and keys and counts, over the
// batch, its keywords (isKey), their bigrams (within a clause) and its
// capitalised words; proper are each sentence's capitalised runs. The
// weight counts the user's words double, so that the topics are what the
// user talks about before what the reply explains.
func countTerms(sents []sentence, isKey func(string) bool) (terms *termStats, proper [][][2]int, capCount map[string]int) {
	terms = newTermStats(8 * len(sents))
	capCount = map[string]int{}
	pos := 0
	proper = make([][][2]int, len(sents))
	for i := range sents {
		s := &sents[i]
		w8 := 1
		if s.role == memory.RoleUser {
			w8 = 2
		}
		// A clause's words are the sentence's words between its breaks
		// (every break ends a word): the sentence's words are theirs.
		clauses(s.text, func(clause string) {
			ws := words(clause)
			from := len(s.words)
			s.words = append(s.words, ws...)
			for _, w := range ws {
				s.keys = append(s.keys, isKey(w))
			}
			keys := s.keys[from:]
			for j, w := range ws {
				if !keys[j] {
					continue
				}
				t := terms.word(w, pos)
				t.freq++
				t.weight += w8
				pos++
				if j+1 < len(ws) && keys[j+1] {
					bg := terms.bigram(w, ws[j+1], pos)
					bg.bigram++
					bg.weight += w8
				}
			}
		})
		proper[i] = properNames(s.text)
		for _, m := range proper[i] {
			for _, f := range strings.Fields(s.text[m[0]:m[1]]) {
				capCount[strings.ToLower(f)]++
			}
		}
	}
	return terms, proper, capCount
}

// entitiesOf are the sentences' entities, in order of first appearance;
// never a speaker. A name said in full and in part ("Asics Novablast",
// "the new Novablast") is one entity, listed under its fuller name. from
// is the index of the turn each entity's details are from.
func entitiesOf(sents []sentence, proper [][][2]int, capCount map[string]int, names map[string]bool) (out []memory.Entity, from []int) {
	var keys []string
	for i, s := range sents {
		for _, f := range findEntities(s.text, proper[i], capCount) {
			k := memory.EntityKey(f.ent.Name)
			if names[normKey(f.ent.Name)] {
				continue
			}
			if j := memory.SameEntity(keys, k); j >= 0 {
				if len(k) > len(keys[j]) { // the fuller name, in the first one's place
					keys[j], out[j].Name = k, f.ent.Name
					if out[j].Type == TypeName {
						out[j].Type = f.ent.Type
					}
				}
				continue
			}
			keys = append(keys, k)
			out = append(out, f.ent)
			from = append(from, s.turn)
		}
	}
	return out, from
}

// actionsOf are the assistant's sentences that report an action taken.
func actionsOf(sents []sentence) []string {
	var out []string
	for _, s := range sents {
		if s.role == memory.RoleAssistant && !s.who.Person && !strings.HasSuffix(s.text, "?") && len(s.words) >= 3 && mayBeAction(s.text) && actionRe.MatchString(s.text) {
			out = append(out, clip(s.text, MaxItemChars))
		}
	}
	return out
}

// factItems are the list items drawn from the turns' facts: preferences
// and decisions are the current facts of those kinds (also returned, for
// current); open questions the ones nobody answered.
func factItems(readings []prose.Reading) (preferences, decisions, questions []string, fresh, fs []memory.Fact) {
	fs, open := facts.FromReadings(readings)
	updated := facts.Supersede(nil, fs) // "use h = 0.25 instead" replaces "h = 0.5"
	for _, f := range fs {
		if _, old := updated[f.ID]; old {
			continue
		}
		switch {
		case f.Kind == memory.FactAttribute && relationAttr.MatchString(f.Text):
			continue // "Mo's car failed its MOT": a fact, no preference
		case f.Kind == memory.FactAttribute && doing(f.Text):
			continue // "Josh is doing the chalkboard", "the user is raising their rates": a task or a plan
		case f.Kind == memory.FactPreference, f.Kind == memory.FactAttribute:
			preferences = append(preferences, f.Text)
		case f.Kind == memory.FactDecision:
			decisions = append(decisions, strings.TrimPrefix(f.Text, decisionPrefix))
		default:
			continue
		}
		fresh = append(fresh, f)
	}
	for _, q := range open {
		questions = append(questions, q.Text)
	}
	return preferences, decisions, questions, fresh, fs
}

const decisionPrefix = "Decision: "

// relationAttr is an attribute of someone's relation or possession that
// says what happened to it ("my car failed its MOT" → "Mo's car failed
// its MOT", "my mum has been on the phone every night") or will do ("my
// dad can lend the transit"): an event or a plan, not what the user is or
// likes. It stays a fact; the summary's preferences
// keep the states ("Nate's sister lives in Portland", "Mo is vegetarian").
var relationAttr = regexp.MustCompile(`^(?:The user|[A-Z][\w.-]*(?: [A-Z][\w.-]*)?)'s (?:[\w-]+ ){1,2}?(?:[a-z]+ed|was|were|had|has been|have been|got|went|broke|came|took|left|fell|lost|ran|sent|told|said|is going|is gonna|wants|needs)\b|^(?:The user|[A-Z][\w.-]*(?: [A-Z][\w.-]*)?)'s (?:[\w-]+ ){1,2}?(?:can|could|will|would|might|may|should) `)

// doing: an attribute says what someone is doing ("Josh is doing the
// chalkboard", "The user is raising their day rate from March", "The
// user is writing the abstract"): a task under way or a plan, which the
// facts keep and the narrative tells, not a preference or a state. The
// verbs of a state stay ("The user is living in Leeds", "… is allergic",
// "… is expecting twins", "… is using Postgres 15"), and so does a
// routine ("… is doing two glaze firings a week").
func doing(text string) bool {
	m := activityAttr.FindStringSubmatch(text)
	return m != nil && !stateVerbs[m[1]] && !routine.MatchString(text) // "… is doing two glaze firings a week": a routine is a state
}

var (
	activityAttr = regexp.MustCompile(`^(?:The user|[A-Z][\w.-]*(?: [A-Z][\w.-]*)?)(?:'s [\w-]+)? (?:is|are) (?:now |currently |still |also )?([a-z]+ing)\b`)
	routine      = regexp.MustCompile(`\b(?:a|per|each|every) (?:day|week|month|year|night|morning|evening)\b|\b(?:daily|weekly|monthly|nightly)\b`)
	stateVerbs   = lex.Set(`living staying working studying using expecting running renting owning learning training recovering struggling suffering`)
)

// current drops the items of an earlier summary's list that a newer fact
// supersedes, as the facts job does for the chat's facts: "the user went
// vegan" drawn from this batch makes "the user is vegetarian … eats
// dairy" from an earlier one stale, and a list of current preferences
// does not show both. prefix is what the list trimmed from its facts'
// texts.
func current(prev []string, prefix string, fresh []memory.Fact) []string {
	kind := memory.FactPreference
	if prefix == decisionPrefix {
		kind = memory.FactDecision
	}
	return currentAs(prev, kind, prefix, fresh)
}

// currentNarrative drops the sentences of an earlier narrative that a
// fact of this batch makes stale, as current does for the lists: a
// narrative that said "Priya said: "thinking sat 14 november"" moves on
// when the chat does ("moved to saturday 21 november"), instead of
// quoting the old value beside the new.
func currentNarrative(prev string, all []memory.Fact) string {
	if prev == "" || len(all) == 0 {
		return prev
	}
	sents := lex.Sentences(prev)
	kept := currentAs(sents, memory.FactOther, "", all)
	if len(kept) == len(sents) {
		return prev
	}
	return strings.Join(kept, " ")
}

// currentAs is current for items of a kind.
func currentAs(prev []string, kind, prefix string, fresh []memory.Fact) []string {
	if len(prev) == 0 || len(fresh) == 0 {
		return prev
	}
	old := make([]memory.Fact, len(prev))
	for i, item := range prev { // older than every fresh fact: no time, no seq
		old[i] = memory.Fact{ID: "prev:" + strconv.Itoa(i), Kind: kind, Text: prefix + item}
	}
	gone := facts.Supersede(old, fresh)
	if len(gone) == 0 {
		return prev
	}
	out := make([]string, 0, len(prev))
	for i, item := range prev {
		if _, stale := gone[old[i].ID]; !stale {
			out = append(out, item)
		}
	}
	return out
}

// term is what the batch says of a keyword or a bigram (two keywords
// within a clause): how often it occurs (freq for a word, bigram for a
// bigram), its weight (the user's words count double) and where it first
// appears.
type term struct{ freq, bigram, weight, first int }

// termStats are the batch's terms by text (a bigram holds a space, a word
// never does): an index into one slice, so that counting allocates only
// for a new term.
type termStats struct {
	at    map[string]int
	terms []term
	buf   []byte // a bigram's text while it is looked up
}

// newTermStats makes room for about n terms.
func newTermStats(n int) *termStats {
	return &termStats{at: make(map[string]int, n), terms: make([]term, 0, n)}
}

// word returns the word w's term, added as first seen at pos when new.
func (ts *termStats) word(w string, pos int) *term {
	i, ok := ts.at[w]
	if !ok {
		i = ts.add(w, pos)
	}
	return &ts.terms[i]
}

// bigram returns the term of the bigram "a b", added as first seen at pos
// when new.
func (ts *termStats) bigram(a, b string, pos int) *term {
	ts.buf = append(append(append(ts.buf[:0], a...), ' '), b...)
	i, ok := ts.at[string(ts.buf)] // no allocation for a lookup
	if !ok {
		i = ts.add(string(ts.buf), pos)
	}
	return &ts.terms[i]
}

func (ts *termStats) add(t string, pos int) int {
	ts.terms = append(ts.terms, term{first: pos})
	ts.at[t] = len(ts.terms) - 1
	return len(ts.terms) - 1
}

// get returns the term t (nil: not a term of the batch).
func (ts *termStats) get(t string) *term {
	if i, ok := ts.at[t]; ok {
		return &ts.terms[i]
	}
	return nil
}

// freq is how often the word w occurs (0: never, or not a keyword).
func (ts *termStats) freq(w string) int {
	if x := ts.get(w); x != nil {
		return x.freq
	}
	return 0
}

// oneForm keeps one form of each topic, the newest (the list ends with
// it): "walk" and "walks" are one topic.
func oneForm(topics []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(topics))
	for i := len(topics) - 1; i >= 0; i-- {
		var key []string
		for _, w := range strings.Fields(strings.ToLower(topics[i])) {
			key = append(key, lex.Stem(w))
		}
		if k := strings.Join(key, " "); !seen[k] {
			seen[k] = true
			out = append(out, topics[i])
		}
	}
	slices.Reverse(out)
	return out
}

// topics picks the batch's salient keywords and bigrams: frequency at least
// two, scored by weight (the user's words count double), bigrams weighted
// double, ties broken by first appearance.
func topics(terms *termStats) []string {
	type cand struct {
		term         string
		score, first int
		bigram       bool
	}
	var cs []cand
	covered := map[string]bool{}
	// earlier orders terms by first appearance. A bigram and its second
	// word share one (the position after the bigram's first word): the
	// bigram, which starts a word before, comes first, so that the order
	// never depends on the maps' iteration order.
	earlier := func(a, b cand) bool {
		if a.first != b.first {
			return a.first < b.first
		}
		return a.bigram && !b.bigram
	}
	// bestTopics keeps the topicsPerBatch best, ties to the earlier.
	bestTopics := func(cs []cand) []cand {
		sort.Slice(cs, func(i, j int) bool {
			if cs[i].score != cs[j].score {
				return cs[i].score > cs[j].score
			}
			return earlier(cs[i], cs[j])
		})
		return cs[:min(len(cs), topicsPerBatch)]
	}
	for bg, i := range terms.at {
		if t := terms.terms[i]; t.bigram >= 2 {
			cs = append(cs, cand{bg, 2 * t.weight, t.first, true})
		}
	}
	cs = bestTopics(cs)
	for _, c := range cs {
		for _, w := range strings.Fields(c.term) {
			// A word seen mostly inside the bigram is not a topic of its own.
			if terms.freq(w) <= terms.get(c.term).bigram+1 {
				covered[w] = true
			}
		}
	}
	for w, i := range terms.at {
		if t := terms.terms[i]; t.freq >= 2 && !covered[w] && !strings.Contains(w, " ") && !notTopic(w) {
			cs = append(cs, cand{w, t.weight, t.first, false})
		}
	}
	cs = bestTopics(cs)
	// Emit in order of first appearance so the list reads naturally.
	sort.SliceStable(cs, func(i, j int) bool { return earlier(cs[i], cs[j]) })
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.term
	}
	return out
}

// notTopic: a word said often that is no subject of its own: when
// something happens ("day", "week", "saturday", "march"), or how it went
// ("fine"), or "ill" for an "I'll" typed without its apostrophe.
func notTopic(w string) bool {
	return timeWords[w] || lex.IsWeekday(w) || lex.IsMonth(w) || notSubjects[w]
}

var (
	timeWords   = toSet(`day days week weeks weekend weekends month months year years morning mornings afternoon afternoons evening evenings night nights today tonight tomorrow yesterday hour hours minute minutes`)
	notSubjects = toSet(`fine ill free okay sure thing things bit lot`)
)

// narrativeSpan is how many sentences one pair of narrative sentences
// stands for; a longer batch (a bulk import summarised at once) is cut in
// stretches of about this many, up to narrativeStretches, each giving its
// own pair, so its narrative tells of all of it, not of its start alone.
const (
	narrativeSpan      = 600
	narrativeStretches = 6
)

// narrative picks the batch's key sentences, stretch by stretch in order
// (one stretch for a batch of up to narrativeSpan sentences).
func narrative(sents []sentence, terms *termStats) string {
	k := min(max(len(sents)/narrativeSpan, 1), narrativeStretches)
	var parts []string
	for i := range k {
		if p := narrativeOf(sents[i*len(sents)/k:(i+1)*len(sents)/k], terms); p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}

// narrativeOf picks a stretch's key sentences: the best user sentence and
// the best assistant sentence (or the two best when one role is missing),
// scored by the batch frequency of their keywords; a sentence needs two
// keywords (small talk has none). Each is stated with its speaker, in the
// third person when they speak of themself ("Caroline went to …"), else
// quoted ("The assistant said: "…""), never with a raw role label.
func narrativeOf(sents []sentence, terms *termStats) string {
	score := func(s sentence) float64 {
		seen := map[string]bool{}
		total, n := 0, 0
		ws := s.words
		for j, w := range ws {
			if s.keys[j] && !seen[w] {
				seen[w] = true
				n++
				if f := terms.freq(w); f >= 2 {
					total += f
				}
			}
		}
		if len(ws) < 3 || n < 2 {
			return 0 // "ok", "thanks!", "Wow, John!" carry nothing
		}
		return float64(total+n) / math.Sqrt(float64(len(ws)))
	}
	// Each sentence is scored once, though up to four picks read it.
	scores := make([]float64, len(sents))
	for i, s := range sents {
		if s.role == memory.RoleUser || s.role == memory.RoleAssistant {
			scores[i] = score(s)
		}
	}
	best := func(role memory.Role, skip int) int {
		bi, bs := -1, 0.0
		for i, s := range sents {
			if s.role != role || i == skip {
				continue
			}
			if sc := scores[i]; sc > bs {
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
		parts = append(parts, state(sents[i]))
	}
	return strings.Join(parts, " ")
}

// state says one sentence with its speaker, cut at MaxItemChars.
func state(s sentence) string {
	text := clip(s.text, MaxItemChars)
	subject := prose.Subject(s.who, s.role)
	var out string
	switch {
	case s.who.Person && prose.FirstPerson(text) && !strings.HasSuffix(text, "?"):
		out = prose.SentenceCase(prose.ThirdPerson(text, subject))
	case strings.HasSuffix(text, "?"):
		out = prose.SentenceCase(subject) + ` asked: "` + text + `"`
	default:
		out = prose.SentenceCase(subject) + ` said: "` + text + `"`
	}
	if !strings.ContainsAny(out[len(out)-1:], ".!?…\"") {
		out += "."
	}
	return out
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

var (
	actionRe = regexp.MustCompile(`(?i)\b(?:i|we)(?:'ve| have)?\s+(?:just\s+|now\s+|already\s+|also\s+|successfully\s+)?(?:created|updated|sent|fixed|added|removed|deleted|deployed|scheduled|booked|wrote|written|set up|configured|installed|merged|opened|closed|filed|submitted|renamed|moved|changed|implemented|refactored|ran|tested|generated|uploaded|published|released|reverted|restarted|cancell?ed|ordered|paid|emailed|called|saved|completed|finished|resolved|migrated|built|made|drafted|prepared|shared|posted|reserved|applied|enabled|disabled|upgraded|rolled back)\b|^(?:(?:ok|okay|right|great|all)[,!. ]+)?(?:done|deployed|completed|finished|all set)\b|\b(?:is|are|'s|'re|was|were|has been|have been|now) (?:all |now )?(?:done|deployed|completed|finished|set up)\b`)
)

// An action is a report of something done: said by "I" or "we" with its
// verb, opened by "Done" or "All set", or said of a thing that "is done"
// now. "done" or "finished" elsewhere is a plan or a state ("so finished
// around Friday 19 September", "£22,750, fully finished", "we can get a
// full draft done over a week").
