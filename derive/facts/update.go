package facts

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/internal/prose"
)

// Updates. A sentence can say that something changed: "I moved from Berlin
// to Munich", "we changed the step size h to 0.25", "the meeting is now on
// Tuesday", "I no longer eat meat", "use Postgres instead of MySQL",
// "actually it's Munich, not Berlin". DetectUpdate reads what changed
// (Subject), what it was (Old) and what it is (New), so that an older fact
// holding the old value, or stating the subject, is superseded (Supersede)
// and a retrieved turn saying the old can be marked stale. It is
// conservative: a phrase that only looks like one ("now that you mention
// it", "I no longer remember") is none.

// Update is what one sentence says changed. Old and New are value phrases
// (lower case; either may be empty, not both), Subject the content words of
// what changed (may be empty when the values say it all: "from Berlin to
// Munich").
type Update struct {
	Old, New []string
	Subject  []string
	Sentence string
}

// DetectUpdate returns the first update that a sentence of text states.
func DetectUpdate(text string) (Update, bool) {
	if us := DetectUpdates(text, 1); len(us) == 1 {
		return us[0], true
	}
	return Update{}, false
}

// DetectUpdates returns the updates the sentences of text state, in
// order, at most max: a long message can carry several ("Velocity
// extended the kit deadline to Friday 28 August … the new code is
// WHEELS20 … we meet at the hut at 06:00 now, not 06:15").
func DetectUpdates(text string, max int) []Update {
	var out []Update
	clean := prose.Clean(text)
	for _, sentence := range lex.Sentences(clean) {
		for _, s := range emojiClauses(sentence) {
			u, ok := detectIn(s)
			if !ok {
				u, ok = movedOnto(s, clean)
			}
			if !ok {
				u, ok = movedValueOnto(s, clean)
			}
			if ok && len(u.Old) > 0 && slices.Equal(u.Old, u.New) {
				ok = false // "they change it from time to time": nothing changed
			}
			if ok {
				if u.Sentence == "" {
					u.Sentence = sentence // quoted whole: "… is cancelled 😞 the nurse said we can do a video call instead"
				}
				if out = append(out, u); len(out) == max {
					return out
				}
			}
		}
	}
	return out
}

// movedUs: someone moved the speakers (or "it", "everything") to a day
// or a time, the thing unnamed: "they moved us to saturday 22nd nov,
// same room same price".
var movedUs = regexp.MustCompile(`\b(?:they|he|she|we|you|i|[a-z]+)(?:'ve| have| had)?(?: just| now| kindly| already| have)? (?:moved|switched|changed|pushed|bumped|shifted|rescheduled|put) (?:us|me|it|them|everything|things|the whole thing)(?: back| forward| over)? ` + moveBy + `(?:to|till|until|onto) ([\w$€£.:/%+@'-]+(?: [\w$€£.:/%+@'-]+){0,5}?)` + clauseEnd) // a day and its time: "saturday the 12th at 10am"

// planVerbs move a thing as a plan said in the present ("I'm pushing
// the launch a week to …"); the change-verb gate admits them too.
const planVerbs = `moving pushing bumping shifting rescheduling changing switching`

// moveBy is how far a move went, said between the thing and its new
// value: "pushing the launch a week to Saturday 21 November", "moved it
// back by two days to the 14th".
const (
	moveDist = `(?:back |forward )?(?:by )?(?:a|an|one|two|three|four|a couple of|\d+) (?:days?|weeks?|months?|hours?|fortnight)`
	moveBy   = `(?:` + moveDist + ` )?`
)

// movedUsVerbs: one of them is in every sentence movedUs matches.
var movedUsVerbs = []string{"moved ", "switched ", "changed ", "pushed ", "bumped ", "shifted ", "rescheduled ", "put "}

// movedOnto reads movedUs in sentence s: what moved is not named, so the
// old value is the turn's (text's) other day, or other clock time, of the
// new value's kind (movedFrom): "double booking on the 15th … they moved
// us to saturday 22nd nov" changed the 15th. Without one it is no update:
// a move whose old value nobody can find marks nothing.
func movedOnto(s, text string) (Update, bool) {
	low := strings.ToLower(s)
	m := movedUsIn(low)
	if m == nil {
		return Update{}, false
	}
	nw := onlyTime(m[1])
	if nw == nil {
		return Update{}, false
	}
	old := movedFrom(saidBefore(text, low, m[0]), nw[0])
	if len(old) == 0 || len(old) > 2 { // more than two: which one moved is not said
		return Update{}, false
	}
	return Update{Old: old, New: nw, Sentence: movedSpan(text, s, old)}, true
}

// movedUsIn is movedUs's match in a sentence (lower case), nil for none;
// the expression runs only where a scan finds it may match (most
// sentences hold neither a verb of moving nor " to ").
func movedUsIn(low string) []string {
	if !strings.Contains(low, " to ") && !strings.Contains(low, " till ") && !strings.Contains(low, " until ") && !strings.Contains(low, " onto ") ||
		!slices.ContainsFunc(movedUsVerbs, func(v string) bool { return strings.Contains(low, v) }) {
		return nil
	}
	return movedUs.FindStringSubmatch(low)
}

// MovedUnnamed reads movedUs in a sentence of text whose turn names no
// old value ("called kpn, they moved it to thursday 4 sept 13:00-17:00"):
// the new day or time, for the turns just before it to give the old one
// (MovedFrom); the sentence, and the turn up to its end (cleaned as the
// sentence is: "they’ve" is "they've" in both). Nil when the turn names
// an old value itself (movedOnto's) or nothing is moved onto a time.
func MovedUnnamed(text string) (sentence, upTo string, nw []string) {
	low := strings.ToLower(text)
	if !slices.ContainsFunc(movedUsVerbs, func(v string) bool { return strings.Contains(low, v) }) {
		return "", "", nil // most turns: nothing moved, nothing read
	}
	clean := prose.Clean(text)
	for _, s := range lex.Sentences(clean) {
		low := strings.ToLower(s)
		m := movedUsIn(low)
		if m == nil {
			continue
		}
		if nw = onlyTime(m[1]); nw == nil {
			continue // "they moved it to the back room. then they moved it to 3pm"
		}
		if len(movedFrom(saidBefore(clean, low, m[0]), nw[0])) > 0 {
			return "", "", nil // the turn names what it moved from: movedOnto's
		}
		upTo = clean
		if i := strings.Index(clean, s); i >= 0 {
			upTo = clean[:i+len(s)]
		}
		return s, upTo, nw
	}
	return "", "", nil
}

// MovedFrom are the days, or clock times, of the kind of new that text
// (lower case) names other than new: what a move onto new, said of "it"
// just after text, moved from.
func MovedFrom(text, nw string) []string { return movedFrom(text, nw) }

// saidBefore is text (lower case) up to the move matched in its sentence
// low: the old value is said before the move ("can't do 4 June anymore …
// they moved it to 10 June"); one said after it is another thing's ("…
// deadline stays at 22 May").
func saidBefore(text, low, move string) string {
	before := strings.ToLower(text)
	if i := strings.Index(before, low); i >= 0 {
		before = before[:i+strings.Index(low, move)]
	}
	return before
}

// movedThing: a named thing moved onto a value that is no time ("I'm
// moving the Pi to 192.168.178.60 instead", "switched the invoices to
// billing@kestrel.io").
var movedThing = regexp.MustCompile(`\b(?:moved|moving|switched|switching|changed|changing)(?: the| our| my| his| her| their)? ([a-z][\w'-]*(?: [a-z][\w'-]*)?) (?:over )?to ([\w$€£.:/%+@'-]*\d[\w$€£.:/%+@'-]*|[\w.+-]+@[\w.-]+)(?: instead| now)?` + clauseEnd)

// movedValueOnto reads movedThing in sentence s. The old value is the one
// value of the new one's kinds (lex.ValueKinds) the turn (text) names
// before the move: "… it had 192.168.178.50 set statically on the
// printer … I'm moving the Pi to 192.168.178.60 instead" changed
// 192.168.178.50. With none, or more than one, nobody can say which value
// moved, and it is no update; a day or a time is movedOnto's.
func movedValueOnto(s, text string) (Update, bool) {
	low := strings.TrimRight(strings.ToLower(s), `.!?"' `)
	if !strings.Contains(low, " to ") || !hasChangeVerb(low) {
		return Update{}, false
	}
	m := movedThing.FindStringSubmatch(low)
	if m == nil || kindsIn(m[2]) != 0 {
		return Update{}, false
	}
	nw := strings.TrimRight(m[2], ".,:")
	kinds := lex.ValueKinds(nw)
	subj := thingWords(m[1]) // may be none: "the pi" is too short to name a thing by
	if len(kinds) == 0 || persons[m[1]] {
		return Update{}, false
	}
	var old string
	for _, f := range strings.Fields(saidBefore(text, low, m[0])) {
		v := strings.Trim(f, "()[]\"'`,;:!?.")
		if v == nw || v == old || !slices.Equal(lex.ValueKinds(v), kinds) {
			continue
		}
		if old != "" {
			return Update{}, false // two: which one moved is not said
		}
		old = v
	}
	if old == "" {
		return Update{}, false
	}
	return Update{Subject: subj, Old: []string{old}, New: []string{nw}}, true
}

// movedFrom are the values of new's kind that before (lower case) names
// other than new: the dates of the month, or, where it names none, the
// weekday things (weekdayThings); the clock times for a time.
func movedFrom(before, nw string) []string {
	var old []string
	switch k := kindsIn(nw); {
	case k&dayTime != 0:
		for _, d := range monthDayRe.FindAllString(before, -1) {
			if !SameDay(d, nw) && !strings.Contains(nw, d) && !slices.Contains(old, d) {
				old = append(old, d)
			}
		}
		if len(old) == 0 {
			old = weekdayThings(before, nw)
		}
	case k&clockTime != 0:
		for _, t := range clockRe.FindAllString(before, -1) {
			t = strings.TrimSpace(strings.TrimRight(t, ".,;:!?)"))
			if !strings.Contains(nw, t) && !slices.Contains(old, t) {
				old = append(old, t)
			}
		}
	}
	return old
}

// weekdayThing: a weekday naming what happens on it ("the friday
// pickup"): the thing is named with its day.
var weekdayThing = regexp.MustCompile(`\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)(?:'s)? ([a-z]{3,})\b`)

// weekdayThings are the old values of an unnamed move when the turn says
// no date: a weekday with the thing it names ("can't do the friday pickup
// anymore … they moved it to saturday the 12th" changed "friday pickup",
// so "pickup friday 11th at 4pm" is marked and a friday said of anything
// else is not). A weekday alone ("can't do thursday anymore") names no
// thing and is no old value.
func weekdayThings(lowText, nw string) []string {
	var out []string
	for _, m := range weekdayThing.FindAllStringSubmatch(lowText, -1) {
		w := m[2]
		if strings.Contains(nw, m[1]) || lex.IsRankStopword(w) || lex.IsWeekday(w) || lex.IsMonth(w) || timeWords[w] || w == "anymore" || hasDigit(w) {
			continue
		}
		if v := m[1] + " " + w; !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// movedSpan is what an unnamed move says, quoted: from the sentence of
// text naming an old value to the move's sentence s ("il glicine called,
// they double-booked the terrace with a wedding on the 12th. they moved us
// to sunday 13 sept"), so that what was moved is named in it.
func movedSpan(text, s string, old []string) string {
	ss := lex.Sentences(text)
	end := slices.IndexFunc(ss, func(x string) bool { return strings.Contains(x, s) })
	if end < 0 {
		return ""
	}
	for i := 0; i < end; i++ {
		low := strings.ToLower(ss[i])
		if slices.ContainsFunc(old, func(o string) bool { return strings.Contains(low, o) }) {
			return strings.Join(ss[i:end+1], " ")
		}
	}
	return ss[end]
}

// availability: the verbs of someone's being there ("can't make the
// 12th", "can't do tuesday anymore"): said of a day, they change who
// comes, not what else the chat said of that day.
var availability = set(`make do attend come`)

// isDay: v names a day or date and nothing else ("12th", "the 12th",
// "tuesday", "sat 14 march").
func isDay(v string) bool {
	return slices.Equal(lex.ValueKinds(v), []string{lex.KindDay}) || ordinalDay.MatchString(v)
}

var ordinalDay = regexp.MustCompile(`^(?:the )?(?:[1-9]|[12]\d|3[01])(?:st|nd|rd|th)$`)

// OrdinalDay: v is a day of the month said by its ordinal alone ("12th",
// "the 3rd").
func OrdinalDay(v string) bool { return ordinalDay.MatchString(v) }

// emojiClauses splits a sentence where texting ends a clause with an
// emoji and goes on without a stop: "YES old man is back on 🥾 tarn hows
// as plan b if it turns" states the walk back on, and the "if" is the
// plan B's. Without one, the sentence is itself.
func emojiClauses(s string) []string {
	var out []string
	start := 0
	for i, r := range s {
		if !isEmoji(r) {
			continue
		}
		if c := strings.TrimSpace(s[start:i]); c != "" {
			out = append(out, c)
		}
		start = i + utf8.RuneLen(r)
	}
	if start == 0 {
		return []string{s}
	}
	if c := strings.TrimSpace(s[start:]); c != "" {
		out = append(out, c)
	}
	return out
}

// isEmoji: a pictograph or symbol texting uses as punctuation.
func isEmoji(r rune) bool {
	return r >= 0x1F300 && r <= 0x1FAFF || r >= 0x2600 && r <= 0x27BF
}

// detectIn tries the update patterns on one sentence, most specific first.
func detectIn(s string) (Update, bool) {
	if strings.Contains(s, ` said: "`) { // a fact quoting its speaker
		s = saidLead.ReplaceAllString(s, "")
	}
	if u, ok := detectRename(s); ok {
		return u, true
	}
	low := strings.ToLower(s)
	low = strings.TrimRight(low, `.!?"' `)
	// A colon that opens what follows ends a value ("4 nights now not 5:
	// check-in …"); one inside a value ("8:30") does not.
	low = strings.ReplaceAll(low, ": ", " : ")
	m := cueMemo{low: low}
	if m.anyOf(cueIDs.hedges) {
		return Update{}, false
	}
	// Cues of their own: "ok no gin, …", "forget Lisbon" (each tried only
	// when the words it starts with are there: most sentences hold none).
	drops := strings.Contains(low, "no ") && dropped.MatchString(low) || m.anyOf(cueIDs.forget) && forgotten.MatchString(low)
	if !drops && (!m.anyOf(cueIDs.update) || !(m.anyOf(cueIDs.strong) || hasChangeVerb(low) || numberCorrection(low) || nameCorrection(s))) {
		return Update{}, false
	}
	for i, d := range detectors {
		if !m.anyOf(cueIDs.detectors[i]) {
			continue // its regular expression cannot match: not run
		}
		in := low
		if d.cased() {
			in = s
		}
		if m := d.re.FindStringSubmatch(in); m != nil {
			if u, ok := d.read(m); ok && (len(u.Old) > 0 || len(u.New) > 0) {
				return u, true
			}
		}
	}
	return Update{}, false
}

// detectRename reads a name given in place of another: "And Duarte
// becomes Davide Russo", "the Velvet Room is now called The Attic". Both
// are written as names (capitalised), so "the story becomes darker" and
// "it becomes clear" rename nothing.
func detectRename(s string) (Update, bool) {
	if !strings.Contains(s, "becomes ") && !strings.Contains(s, "renamed") && !strings.Contains(s, "now called") && !strings.Contains(s, "now named") {
		return Update{}, false
	}
	m := renamed.FindStringSubmatch(s)
	if m == nil || strings.EqualFold(m[1], m[2]) || notNames[strings.ToLower(m[1])] {
		return Update{}, false
	}
	return Update{Old: []string{strings.ToLower(m[1])}, New: []string{strings.ToLower(m[2])}}, true
}

var renamed = regexp.MustCompile(`(?:^(?:(?i:and|so|also|then|now|fyi|btw|ok|okay),? )*|[,;:] |\b(?:and|so|also|then|now|fyi|btw|ok|okay) )(?:(?i:the|our|my) )?([A-Z][\w'-]+(?: [A-Z][\w'-]+){0,2}) (?:becomes|is renamed(?: to)?|gets renamed(?: to)?|was renamed(?: to)?|is now called|is now named) (?:(?:the|The) )?([A-Z][\w'-]+(?: [A-Z][\w'-]+){0,2})\b`)

// possessive opens a phrase naming one's own thing ("my phone").
var possessive = regexp.MustCompile(`^(?:my|our|his|her|their|your|its) `)

var saidLead = regexp.MustCompile(`^[^"]{1,80} said: "`)

// updateCues are the words one of which every pattern needs: a cheap test
// before the regular expressions.
var updateCues = []string{" from ", " to ", " now", "no longer", "instead of", "actually", " not ", "anymore", "any more", "new ", "cancel", "called off",
	"is off", "'s off", "are off", "fell through", "fallen through", "working again", "running again", "back up", "back on", "fixed", "repaired", "reinstate", "restored",
	" back", " instead",
	"removed", "dropped", "scrapped", "ditched", "got rid of", "turned off", "disabled", "stopped using", "after all", "mended", " off ",
	"pulled out", "backed out"}

// hedges mark a sentence that weighs a change rather than states one
// ("whether to upgrade psycopg from 3.1.18 to 3.2", "should we move to
// Munich?").
var hedges = []string{"whether", "should we", "should i", "if we", "if i", "could we", "would we", "maybe we ", "perhaps we ", "?"}

// cueTable numbers every string the cue lists and the detectors need, so
// that a sentence is searched for each at most once: the lists share
// many (" to ", "now", "no longer"), and searching each list in turn was a
// third of update detection.
type cueTable struct {
	hedges, forget, update, strong []int
	detectors                      [][]int
	strings                        []string // by number
}

// maxCues bounds the distinct cue strings (a cueMemo's array).
const maxCues = 192

var cueIDs = func() cueTable {
	ids := map[string]int{}
	var strs []string
	number := func(words []string) []int {
		out := make([]int, len(words))
		for i, w := range words {
			id, ok := ids[w]
			if !ok {
				id = len(ids)
				ids[w] = id
				strs = append(strs, w)
			}
			out[i] = id
		}
		return out
	}
	t := cueTable{hedges: number(hedges), forget: number(forgetWords), update: number(updateCues), strong: number(strongCues)}
	for _, d := range detectors {
		t.detectors = append(t.detectors, number(d.need))
	}
	if len(ids) > maxCues {
		panic("facts: more cue strings than maxCues")
	}
	t.strings = strs
	return t
}()

// cueMemo remembers which cue strings one sentence (low) holds.
type cueMemo struct {
	low  string
	seen [maxCues]uint8 // 0 not looked for, 1 absent, 2 present
}

// anyOf reports whether the sentence holds one of the cues ids (true for
// none, as holdsAny).
func (m *cueMemo) anyOf(ids []int) bool {
	for _, id := range ids {
		if m.seen[id] == 0 {
			m.seen[id] = 1
			if strings.Contains(m.low, cueIDs.strings[id]) {
				m.seen[id] = 2
			}
		}
		if m.seen[id] == 2 {
			return true
		}
	}
	return len(ids) == 0
}

type detector struct {
	need []string // one of these must be in the sentence for re to match
	re   *regexp.Regexp
	read func(m []string) (Update, bool)
}

// cased: a detector's expression that reads the sentence as written (it
// opens with "(?i)"), not lower-cased.
func (d detector) cased() bool { return strings.HasPrefix(d.re.String(), "(?i)") }

// strongCues say a change without a change verb; every other pattern
// needs one of changeVerbs. Most sentences hold " to " or " from ": the
// two tests spare them the patterns (a sixth of the facts job's CPU went
// to running them on every sentence).
var (
	strongCues = []string{"actually", "instead of", "now", "no longer", "anymore", "any more", "new ", "cancel", "called off",
		"is off", "'s off", "are off", "fell through", "fallen through", "working again", "running again", "back up", "back on", "fixed", "repaired", "reinstate", "restored",
		" back", " instead",
		"removed", "dropped", "scrapped", "ditched", "got rid of", "turned off", "disabled", "stopped using", "after all", "mended", " up to ", " down to ", " off ",
		"pulled out", "backed out", "downgrading to", "upgrading to", "escalating to", "bumping", "raising it to", "lowering it to"}
	changeVerbs = gateVerbs()
	forgetWords = []string{"forget", "scrap", "scratch", "ditch", "skip"}
)

// gateVerbs are the change verbs, the plan verbs and the verbs moving an
// amount, but "up": "up the float to £150" is rare, and "up" is in most
// sentences with " to " ("pick her up to …"), each of which the gate
// would then send through every pattern.
func gateVerbs() map[string]bool {
	vs := set(strings.NewReplacer("(?:", "", ")", "", "|", " ").Replace(changeVerb+" "+amountMoveVerb+" "+amountSetVerb) + " " + planVerbs)
	delete(vs, "up")
	return vs
}

// hasChangeVerb reports whether low (lower case) holds one of the change
// verbs as a word: a scan and a set, not a regular expression of thirty
// alternatives run on every sentence holding " to " (most do).
func hasChangeVerb(low string) bool {
	for i := 0; i < len(low); {
		for i < len(low) && !asciiLetter(low[i]) {
			i++
		}
		j := i
		for j < len(low) && asciiLetter(low[j]) {
			j++
		}
		if j-i >= 2 && changeVerbs[low[i:j]] && (i == 0 || low[i-1] < 0x80) && (j == len(low) || low[j] < 0x80) {
			return true
		}
		i = j
	}
	return false
}

func asciiLetter(c byte) bool { return c >= 'a' && c <= 'z' }

const (
	changeVerb = `(?:moved|move|moving|relocated|relocating|switched|switch|switching|changed|change|changing|updated|update|migrated|migrate|upgraded|upgrade|downgraded|went|go|going|rescheduled|reschedule|shifted|pushed|push|bumped|bump|converted|swapped|set|reset|raised|raise|lowered|lower|increased|increase|decreased|decrease|reduced|reduce|cut|halved|doubled|tripled|extended|postponed|stretch|stretched|stretching|upped|lifted|capped)`
	// amountPhr is an amount and what follows it to the clause's end,
	// whatever that is ("£19.10 a sack from 1 march"): leadingAmount
	// takes the amount.
	amountPhr = `([$€£]?\d[\w$€£.,:/%+@'-]*(?: [^,;]*)?)`
	// A comma is part of a value only between digits ("£1,200"): "1.28,
	// we upgraded last month" is the value 1.28 and a clause.
	valuePhr  = `([\w$€£.:/%+@'-]+(?:,\d[\w$€£.:/%+@'-]*)*(?: [\w$€£.:/%+@'-]+(?:,\d[\w$€£.:/%+@'-]*)*){0,3}?)`
	clauseEnd = `(?:\s*(?:,|;| :|—|–| - | \(| and | but | because | since | so | for | last | next | this | in (?:the )?(?:\d|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))|\s(?:yesterday|today|tomorrow|tonight|again|too|instead|actually|after all|soon|completely|entirely|altogether|for good|please|on foot|by (?:train|car|bus|plane|bike|ferry))\b|$)`
)

// amountMoveVerb and amountSetVerb move an amount (amountMoves,
// amountSet); the change-verb gate (changeVerbs) admits each of them:
// "the balance drops to $1,740" had its pattern, and the gate kept it
// from being tried.
const (
	amountMoveVerb = `(?:going|gone|went|goes|go|rising|rose|risen|rises|increased|increasing|increases|dropped|dropping|drops|falling|fell|falls|bumped|raised|reduced|lowered|cut|climbed|jumped|pushed)`
	amountSetVerb  = `(?:stretch|stretched|stretching|raise|raised|raising|increase|increased|increasing|lift|lifted|lifting|cut|cutting|reduce|reduced|reducing|lower|lowered|lowering|extend|extended|extending|up|upped|upping|cap|capped|capping)`
)

// amountMoves: a thing (its subject, m[1]) whose amount moves (up or
// down, m[2]) to an amount (m[3]), per a rate (m[4]) or in a unit (m[5]).
var amountMoves = regexp.MustCompile(`(?:^|[^\w\s'] |\b(?:and|but|so|says?|said|now|that) )(?:the |our |my |their |your |his |her )?([a-z][\w-]*(?: [a-z][\w-]*)?)(?:'s| is| are| was| were| has| have| will| 'll)?(?: been| be)? ` + amountMoveVerb + `(?: (up|down))? to ([$€£]?\d[\d,.]*(?:%|k\b)?)(/ ?[a-z]+|\s(?:a|an|per) [a-z]+|\s(?:each|pp|pcm|pw|pa)\b)?( ?[a-z]+)?`)

// clauseWord opens a clause inside what a value phrase took.
var clauseWord = regexp.MustCompile(`\b(?:but|and|now|so|then)\b`)

// amountSet: an amount set (up or down, m[3]) to an amount (m[4], its
// rate m[5], its unit m[6]), the verb before the thing (m[2]), what comes
// before it m[1]. The thing is ours, mine, theirs or the: "increase
// your contributions to $300" is advice.
var amountSet = regexp.MustCompile(`^(.*?)\b` + amountSetVerb + ` (?:the |our |my |their |his |her )([a-z][\w-]*(?: [a-z][\w-]*)?)(?: (up|down))? to ([$€£]?\d[\d,.]*(?:%|k\b)?)(/ ?[a-z]+|\s(?:a|an|per) [a-z]+|\s(?:each|pp|pcm|pw|pa)\b)?( ?[a-z]+)?`)

// advised: what comes before a verb setting an amount makes it advice or
// a wish, not a change ("Consider increasing the block to 4 hours", "you
// should be able to increase the coverage to 90%").
var advised = regexp.MustCompile(`\b(?:consider|considering|try|trying|could|should|can|might|may|would|able to|if|want to|wants to|recommend|suggest|aim to|plan to|planning to|need to|needs to|helps? to|ways? to|how to)\b`)

// modals say what may be, not what is.
var modals = set(`can could may might would should must will`)

// isMoney: v is an amount of money or a share ("£1,010", "40 eur", "5%").
func isMoney(v string) bool {
	if strings.ContainsAny(v, "$€£%") {
		return true
	}
	for _, q := range quantitiesIn(v) {
		if strings.ContainsAny(q.unit, "$€£") {
			return true
		}
	}
	return false
}

// amountUpdate is the update of a thing's amount: its subject, whether
// it moved up or down, the amount, its rate and the word after it. The
// amount has a currency, a percent or a unit, or the move says up or
// down: "the kids are going to 3 parties" moves nothing.
func amountUpdate(thing, upDown, number, rate, after string) (Update, bool) {
	subj, amount := thingWords(thing), number+rate // "£6.95/kg", "£1,010 a month"
	if rate == "" && len(quantitiesIn(number)) == 0 && len(quantitiesIn(number+after)) > 0 {
		amount = number + after // "30s", "2 GB"
	}
	if len(subj) == 0 || !(upDown != "" || strings.ContainsAny(amount, "$€£%") || len(quantitiesIn(amount)) > 0) {
		return Update{}, false
	}
	return Update{Subject: subj, New: value(amount)}, true
}

// asksBetween: what stands between "actually" and the values holds a
// clause break and a question ("… - can you help me understand why this
// triangle is scalene and not isosceles"): the values are asked about.
var asksBetween = regexp.MustCompile(`(?: - |—|–|[.;?] ).*\b(?:why|whether|how come|understand|explain)\b`)

var detectors = []detector{
	// "actually it's Y, not X"; "actually, the meeting is on Tuesday not Monday"
	{[]string{"actually"}, regexp.MustCompile(`\bactually,? (?:(.*?) (?:is|are|was|were|'s|'re|will be) (?:on |at |in )?|it's |it is |(?:on |at |in )?)` + valuePhr + `,? (?:and )?not (?:on |at |in |the )?` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		if asksBetween.MatchString(m[1]) {
			return Update{}, false // "actually it's scalene … can you help me understand why this triangle is scalene and not isosceles" asks
		}
		nw := value(m[2])
		return Update{Subject: subjectWords(m[1]), New: nw, Old: withUnit(nw, value(m[3]))}, true
	}},
	// "i said python 3.12 earlier but staging is actually 3.11", "i said
	// tuesday but it's actually wednesday": a correction of one's own
	// words, naming both values (the subject, "staging", need not be in
	// the words corrected: "Stack: Python 3.12").
	{[]string{"actually"}, regexp.MustCompile(`\bi (?:said|wrote|told you|mentioned|put) ` + valuePhr + `(?: earlier| before| above| yesterday)?,? but (?:(.*?) (?:is|are|was|were|'s|'re|will be)|it's|it is|its) actually (?:on |at |in )?` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		return Update{Old: value(m[1]), New: value(m[3])}, true // what was said is retracted, whatever it was said of
	}},
	// "actually make it Fibre 300 instead", "we'll take room 12 instead":
	// a numbered thing chosen in place of the same thing under another
	// number (MovedNumber: "let's do Fibre 500" is the old choice).
	{[]string{" instead"}, regexp.MustCompile(`(?:^|[,;] |\b(?:make it|do|go with|go for|switch to|switching to|change it to|change to|take|book|use|get) )(?:the |a |an )?([a-z][\w-]*) (\d[\d.]*[a-z]?) instead(?: then)?(?:[.!,;]|$| after all| please| pls)`), func(m []string) (Update, bool) {
		if countWords[m[1]] || strings.TrimRight(m[1], "0123456789") != m[1] {
			return Update{}, false // "do 2 instead", "take 3 instead": a count, no thing
		}
		return Update{Subject: []string{m[1]}, New: []string{m[1] + " " + m[2]}}, true
	}},
	// "<subject> changed/moved … from X to Y". "go"/"going" from X to Y is
	// a way somewhere ("she can go straight from football to swimming"),
	// not a change; "went from Jira to Linear" is one. "push" from X to Y
	// sends something ("push from the dev branch to main").
	{[]string{" from "}, regexp.MustCompile(`^(?:.*\b)?(` + changeVerb + `)\b(.*?) from ` + valuePhr + ` (?:to|into|→|->) ` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		// The verb nearest "from" governs it ("reduce my workload, so I've
		// decided to cut down my weekly meetings from 5 to 3" cut the
		// meetings). "set aside … from 6 PM to 9 PM" is a span of time.
		if m[1] == "go" || m[1] == "going" || m[1] == "push" || m[1] == "set" && strings.HasPrefix(m[2], " aside") {
			return Update{}, false
		}
		return Update{Subject: subjectWords(m[2]), Old: value(m[3]), New: value(m[4])}, true
	}},
	// "changed/set the step size h to 0.25", "switched the API to v2"
	{[]string{" to ", " into "}, regexp.MustCompile(`\b(?:changed|change|changing|switched|switch|switching|updated|update|set|reset|moved|move|rescheduled|reschedule|pushed|bumped|bump|shifted|raised|raise|lowered|lower|increased|increase|decreased|decrease|reduced|reduce|upgraded|downgraded|migrated|halved|doubled|tripled|extended|extend|postponed|postpone) (?:the |our |my |its |his |her |their )([^,;:]+?) (?:to|into) ` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		subj := subjectWords(m[1]) // a thing named without a clause break: "extend the life of your shoes, ensuring they continue to provide …" changes nothing
		return Update{Subject: subj, New: value(m[2])}, len(subj) > 0
	}},
	// "the Atlantic agreed to push the release date to 24 August": "push"
	// moves a thing's time; onto anything else it sends it ("push the
	// image to the registry").
	{[]string{" to ", " till ", " until "}, regexp.MustCompile(`\bpush(?: back| forward)? (?:the |our |my |its |his |her |their )([a-z][\w'-]*(?: [a-z][\w'-]*)?) (?:back |forward )?` + moveBy + `(?:to|till|until) ` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		subj, nw := thingWords(m[1]), timeValue(value(m[2]))
		return Update{Subject: subj, New: nw}, len(subj) > 0 && nw != nil
	}},
	// "moved dinner to 8", "pushed standup to 10:30": a thing named
	// without an article, moved to a time (timeValue: "moved house to
	// Munich" moves none).
	{[]string{" to ", " till ", " until "}, regexp.MustCompile(`\b(?:moved|move|pushed|bumped|shifted|rescheduled|reschedule|changed|change|switched)(?: back| forward)? ([a-z][\w'-]*(?: [a-z][\w'-]*)?) (?:back |forward )?` + moveBy + `(?:to|till|until) ` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		subj, nw := thingWords(m[1]), timeValue(value(m[2]))
		return Update{Subject: subj, New: nw}, len(subj) > 0 && nw != nil
	}},
	// The same as a plan said in the present: "ok new plan, moving
	// methotrexate to saturdays", "we're moving standup to 10". After
	// "try" or "consider" it is advice ("you might try moving the
	// exercise to 8:00 AM"), so it opens its clause or follows its doer.
	{[]string{" to ", " till ", " until "}, regexp.MustCompile(`(?:^|[,;:] |\b(?:so|and|now|then|ok|okay)\b,? |\b(?:i'm|we're|i am|we are|they're|they are|she's|he's) (?:now |just )?)(?:` + strings.ReplaceAll(planVerbs, " ", "|") + `)(?: back| forward)? ([a-z][\w'-]*(?: [a-z][\w'-]*)?) (?:back |forward )?` + moveBy + `(?:to|till|until) ` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		subj, nw := thingWords(m[1]), timeValue(value(m[2]))
		return Update{Subject: subj, New: nw}, len(subj) > 0 && nw != nil
	}},
	// "release pushed back to thu 11 feb", "ok standup moved to 10:30",
	// "they're shut on the friday now, so collection moved to saturday
	// 12th": the same, the thing first in its clause, without an article.
	{[]string{" to ", " till ", " until "}, regexp.MustCompile(`(?:^|[,;] )(?:(?:ok|okay|so|and|alright|right|fine|well|oh|ah|wait|update|fyi|heads up|btw),? )*([a-z][\w'-]*(?: [a-z][\w'-]*)?) (?:got |has been |have been |is |was |'s |just )?(?:moved|pushed|pushed back|put back|postponed|rescheduled|bumped|shifted|brought forward) ` + moveBy + `(?:to|till|until) ` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		subj, nw := thingWords(m[1]), onlyTime(m[2])
		return Update{Subject: subj, New: nw}, len(subj) > 0 && nw != nil
	}},
	// "T55 going up to £19.10 a sack from 1 March", "rent's gone down to
	// £950": an amount, the thing first, without an article.
	{[]string{" up to ", " down to "}, regexp.MustCompile(`(?:^|[,;] |\band |\bso )(?:(?:ok|okay|so|and|alright|right|fine|well|oh|ah|wait|update|fyi|heads up|btw),? )*([a-z0-9][\w'-]*(?: [a-z][\w'-]*)?) (?:is |are |'s |has |have |just )?(?:going|gone|went|goes|come|came|coming) (?:up|down) to ` + amountPhr), func(m []string) (Update, bool) {
		subj, amount := thingWords(m[1]), leadingAmount(m[2])
		return Update{Subject: subj, New: amount}, len(subj) > 0 && amount != nil
	}},
	// "new deadline mon 22 march", "new time: 3pm": a time without a
	// verb, after "new" and what it is the time of. Without a colon or
	// "is", "new" opens its clause: "start the new job on May 1" and "the
	// new schedule today" name a thing, not its new time.
	{[]string{"new "}, regexp.MustCompile(`(?:\bnew ([a-z][\w'-]*(?: [a-z][\w'-]*)?)(?: :| is| =| now)|(?:^|[,;] )new ([a-z][\w'-]*)) ([\w$€£.,:/%+@'-]+(?: [\w$€£.,:/%+@'-]+){0,5}?)` + clauseEnd), func(m []string) (Update, bool) {
		subj, nw := thingWords(m[1]+m[2]), onlyTime(m[3])
		return Update{Subject: subj, New: nw}, len(subj) > 0 && nw != nil
	}},
	// "rent's going up to £1,010 from 1 December", "the rent is bumped
	// up to £1,395", "Rent goes to £1,395 from 1 June": a thing's amount
	// moving, said of the thing. The amount has a currency, a percent or
	// a unit, or the move says up or down: "the kids are going to 3
	// parties" moves nothing.
	{[]string{" up to ", " down to ", "goes to ", "going to ", "went to ", "gone to ", "rising to ", "rose to ", "risen to ", "rises to ", "increas", "dropp", "drops to ", "falling to ", "fell to ", "falls to ", "bumped to ", "raised to ", "reduced to ", "lowered to ", "cut to ", "climbed to ", "jumped to ", "pushed to "}, amountMoves, func(m []string) (Update, bool) {
		if w := strings.Fields(m[1]); modals[w[len(w)-1]] {
			return Update{}, false // "tickets can go up to £300 at the door": what may be
		}
		u, ok := amountUpdate(m[1], m[2], m[3], m[4], m[5])
		if ok && !isMoney(u.New[0]) {
			return Update{}, false // "heart rate went up to 165 bpm on the hill", "the limit goes down to 20mph outside the school": a reading or a place's, not a price
		}
		return u, ok
	}},
	// "finance agreed to stretch the budget to $48,000 a year", "we've
	// cut the float to £150": an amount set, the verb before its thing.
	{[]string{"stretch", "raise", "increas", "lift", "cut ", "reduc", "lower", "extend", "up ", "upped", "upping", "cap "}, amountSet, func(m []string) (Update, bool) {
		if advised.MatchString(m[1]) {
			return Update{}, false
		}
		return amountUpdate(m[2], m[3], m[4], m[5], m[6])
	}},
	// "put nottingham up to £10 a ticket", "knocked the rent down to
	// £950": an amount raised or lowered, said of the thing it is the
	// amount of.
	{[]string{" up to ", " down to "}, regexp.MustCompile(`\b(?:put|putting|puts|bumped|bump|bumping|knocked|knock|knocking|brought|bring|bringing|pushed|push|pushing) (?:the |our |my |their )?([a-z][\w'-]*(?: [a-z][\w'-]*)?) (?:up|down) to ` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		subj, amount := thingWords(m[1]), strings.Fields(m[2])[0] // "£10", of "£10 a ticket"
		return Update{Subject: subj, New: value(amount)}, len(subj) > 0 && hasDigit(amount)
	}},
	// "downgrading to SEV2", "raising it to P2", "bumping severity to
	// SEV1": a grade set anew, letters and a number (MovedGrade: a
	// sentence naming the same letters with another number states the
	// old one).
	{[]string{" to "}, regexp.MustCompile(`\b(?:bump|bumping|bumped|raise|raising|raised|lower|lowering|lowered|downgrade|downgrading|downgraded|upgrade|upgrading|upgraded|escalate|escalating|escalated|drop|dropping|dropped|move|moving|moved|set|setting|change|changing|changed)(?: it| this| that| the [a-z]+| severity| priority)? to ([a-z]{1,4})-?(\d{1,2})\b`), func(m []string) (Update, bool) {
		if notGrade[m[1]] || len(m[1]) == 1 && len(m[2]) > 1 {
			return Update{}, false // "moved to at 5"; "p45" is a form, a one-letter grade has one digit
		}
		return Update{Subject: []string{m[1]}, New: []string{m[1] + m[2]}}, true
	}},
	// "switched to Y" (what from is unsaid: no subject, only New)
	{[]string{" to "}, regexp.MustCompile(`\b(?:i|we|they|he|she|you)(?:'ve| have)? (?:just |finally |now )?(?:switched|moved|changed|migrated|upgraded) (?:over )?to ` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		return Update{New: value(m[1])}, true
	}},
	// "use/book Y instead of X"
	{[]string{"instead of"}, regexp.MustCompile(`^(?:.*\b(?:use|using|take|taking|book|booking|pick|picking|go with|going with|choose|choosing|chose|want|prefer|try|do|did|get|got) )?(?:the |a |an )?([\w$€£.,:/%+'-]+(?: [\w$€£.,:/%+'-]+){0,3}?) instead of (?:the |a |an )?` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		return Update{New: value(m[1]), Old: value(m[2])}, true
	}},
	// "… wear our yellow away kit instead of the home blues": what was
	// replaced, named in two or three words after "the", "our" or "my".
	{[]string{"instead of"}, regexp.MustCompile(`\binstead of (?:the|our|my) ([a-z][\w'-]*(?: [a-z][\w'-]*){1,2}?)` + clauseEnd), func(m []string) (Update, bool) {
		return Update{Old: []string{m[1]}}, len(lex.Keywords(m[1])) >= 2
	}},
	// "<subject> is now Y"
	{[]string{" now", " moved", " changed"}, regexp.MustCompile(`^(?:.*?\b)?(?:the |our |my |its )?([a-z][\w'-]*(?: [\w'-]+){0,3}) (?:is|are|has been|have been)(?: now| moved| changed)+ (?:to |on |at |in |for )?` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		subj := subjectWords(m[1])
		return Update{Subject: subj, New: value(m[2])}, len(subj) > 0
	}},
	// "I/we now live in Y", "we now use Y"
	{[]string{" now "}, regexp.MustCompile(`\b(?:i|we|they|he|she)(?:'m| am|'re| are)? now ([a-z]+) (?:(?:in|at|for|with|on|as|to) )?(?:the |a |an )?` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		verb := m[1]
		if notUpdateVerb[verb] || notUpdateVerb[verbLemma(verb)] {
			return Update{}, false
		}
		return Update{Subject: []string{verbLemma(verb)}, New: value(m[2])}, true
	}},
	// "I'm not vegetarian anymore", "she's no longer single": what one was.
	{[]string{"more", "no longer"}, regexp.MustCompile(`\b(?:'m|am|'re|are|'s|is) (?:not ([a-z][\w-]*) any ?more|no longer ([a-z][\w-]*)(?:,|$| and | but | since | because | so ))`), func(m []string) (Update, bool) {
		was := m[1] + m[2]
		if strings.HasSuffix(was, "ing") || notUpdateVerb[was] || uselessNow[was] || len(lex.Keywords(was)) == 0 {
			return Update{}, false // "I'm not coming anymore" says what stopped, not what one was; "erase data when it is no longer needed" names nothing
		}
		return Update{Old: []string{was}}, true
	}},
	// "van's no longer an option for the 13th", "the workshop is no
	// longer happening": the thing itself is dropped.
	{[]string{"no longer"}, regexp.MustCompile(`(?:^|[,;] |\bso |\bthe |\bour |\bmy )([a-z][\w'-]*(?: [a-z][\w'-]*)?)(?:'s| is| are|'re) no longer (?:an option|available|happening|going ahead|possible|on the table|a thing)\b`), func(m []string) (Update, bool) {
		old := value(m[1])
		if len(old) == 0 || thingWords(old[0]) == nil || len(lex.Keywords(old[0])) == 0 {
			return Update{}, false // "it's no longer an option"
		}
		return Update{Old: old}, true
	}},
	// "dale cant do tuesday so its thurs 16th now": who was to come at a
	// time cannot, and the time moved (MovedTime: a sentence naming them
	// with another time states the old one).
	{[]string{"can't", "cannot", "can not", "won't be able"}, regexp.MustCompile(`(?:^|[,;] |\bso |\bnow )((?:mr |mrs |ms |dr )?[a-z][\w'-]*) (?:can't|cannot|can not|won't be able to) (?:do|make|come|manage) [^,;]*?,? (?:so |and )?(?:it's|its|it is|it'll be|it will be|now) (?:now |on |at )?` + valuePhr + `(?: now)?` + clauseEnd), func(m []string) (Update, bool) {
		who, when := value(m[1]), onlyTime(m[2])
		if len(who) == 0 || persons[strings.Fields(who[0])[0]] || when == nil {
			return Update{}, false
		}
		return Update{Subject: who, New: when}, true
	}},
	// "Mr Dale can't do it after all, the agency says it's Ms Patel now":
	// who was to do something is out. The one dropping out is named (not
	// "I", "she").
	{[]string{"can't", "cannot", "can not", "won't be able"}, regexp.MustCompile(`(?:^|[,;] |\bso |\bnow )((?:mr |mrs |ms |dr )?[a-z][\w'-]*(?: [a-z][\w'-]*)?) (?:can't|cannot|can not|won't be able to) (?:do it|make it|do the [a-z]+|come|make the [a-z]+)(?: after all| anymore| any more)?\b`), func(m []string) (Update, bool) {
		who := value(m[1])
		if len(who) == 0 || persons[strings.Fields(who[0])[0]] || len(lex.Keywords(who[0])) == 0 {
			return Update{}, false
		}
		return Update{Old: who}, true
	}},
	// "I no longer eat meat", "we don't use Jira anymore"
	// "she won't touch the harrington's anymore", "we're not using Kasia
	// after all": what stopped, or what was chosen and is not.
	{[]string{"no longer", "more", "after all"}, regexp.MustCompile(`\b(?:no longer|don't|do not|doesn't|does not|aren't|isn't|am not|'m not|'s not|is not|'re not|are not|won't|will not|can't|cannot) ([a-z]+) (?:(?:in|at|for|with|on|as|to) )?(?:the |a |an )?` + valuePhr + `(?: any ?more| after all)?` + clauseEnd), func(m []string) (Update, bool) {
		verb := m[1]
		if notUpdateVerb[verb] || notUpdateVerb[verbLemma(verb)] || !holdsAny(m[0], []string{"no longer", "more", "after all"}) {
			return Update{}, false
		}
		old := value(m[2])
		if len(old) == 0 || len(lex.Keywords(old[0])) == 0 {
			return Update{}, false
		}
		if availability[verb] && isDay(old[0]) {
			return Update{}, false // "Ana can't make the 12th anymore": hers, not the 12th's
		}
		return Update{Old: old}, true // what stopped is its object: "meat"
	}},
	// "<subject> <verb> Y now, not X": "night shifts start on 28
	// September now, not in October", "we leave friday now, not
	// saturday". "now, not" is the cue, so the values need no digit.
	{[]string{" now, not ", " now not "}, regexp.MustCompile(`^(.*?) now,? not (?:on |at |in |the |to |from |until )?` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		subj, nw := nowNotLeft(m[1])
		old := value(m[2])
		if len(nw) == 0 || len(old) == 0 {
			return Update{}, false
		}
		return Update{Subject: subj, New: nw, Old: old}, true
	}},
	// A correction of one number by another, without "actually": "it's
	// 5k, not 3k", "wait no, it's room 204 not 240", "its the 27th not the
	// 28th", "it's 8:30 now, not 8". Both values must hold a digit: "it's
	// fine, not a problem" corrects nothing.
	{[]string{" not "}, regexp.MustCompile(`^(?:.*?\b)?(?:(?:the |our |my |its |their )?([a-z][\w'-]*(?: [\w'-]+){0,3}) (?:is|are|was|were|'s|'re|will be)|it's|it is|its) (?:now |still )?(?:on |at |in |the )?` + valuePhr + `,? (?:now,? )?(?:and )?not (?:on |at |in |the )?` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		nw, old, ok := numbers(m[2], m[3])
		return Update{Subject: subjectWords(m[1]), New: nw, Old: old}, ok
	}},
	// "deposit £200 not £150 – misread the email", "room 204 not 240":
	// a thing and its number corrected, without a verb. Both values hold a
	// digit, and the thing opens its clause.
	{[]string{" not "}, regexp.MustCompile(`(?:^|[,;:.!] |\b(?:so|and|but|ok|sorry|oops|correction|update)\b,? )(?:the |our |my |their |your )?([a-z][\w-]*(?: [a-z][\w-]*)?) ` + valuePhr + `,? not ` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		subj := thingWords(m[1])
		if clauseWord.MatchString(m[2]) {
			return Update{}, false // "same ref DWK-7752 but now 11am not 9:30": the value is the last clause's
		}
		nw, old, ok := numbers(m[2], m[3])
		return Update{Subject: subj, New: nw, Old: old}, ok && len(subj) > 0
	}},
	// "make it 40 cases, not 25", "actually make that 8pm not 7": an
	// order correcting one number by another; both values hold a digit.
	{[]string{" not "}, regexp.MustCompile(`\bmake (?:it|that|this|them) ` + valuePhr + `,? (?:and )?not (?:the )?` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		nw, old, ok := numbers(m[1], m[2])
		return Update{New: nw, Old: old}, ok
	}},
	// "same ref DWK-7752 but now 11am not 9:30": "now" and a number
	// correcting another, without a verb; both values hold a digit.
	{[]string{" not "}, regexp.MustCompile(`(?:^|[,;] |\bbut |\bso |\band )now (?:at |on |the )?` + valuePhr + `,? not (?:at |on |the )?` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		nw, old, ok := numbers(m[1], m[2])
		return Update{New: nw, Old: old}, ok
	}},
	// The same correction after a comma, without a verb: "make the
	// brother older, 34 not 28". The clause before the comma names what
	// changed; both values must hold a digit.
	{[]string{" not "}, regexp.MustCompile(`^(?:.*[.;:] )?(.*?), ` + valuePhr + ` not ` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		nw, old, ok := numbers(m[2], m[3])
		return Update{Subject: thingWords(m[1]), New: nw, Old: old}, ok
	}},
	// "the new address is Y", "my new email is Y": what changed, and to what.
	// Read in the sentence's own case: "the New Balance 990v5 is a great
	// shoe" names a brand.
	{[]string{" new "}, regexp.MustCompile(`(?i)\b(?:the|my|our|his|her|their|your) (new) ([a-z][\w'-]*(?: [\w'-]+){0,2}) (?:is|are|will be|'s) (?:now )?(?:on |at |in )?` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		if m[1] == "New" && unicode.IsUpper(rune(m[2][0])) {
			return Update{}, false
		}
		subj := thingWords(strings.ToLower(m[2]))
		return Update{Subject: subj, New: value(strings.ToLower(m[3]))}, len(subj) > 0
	}},
	// The same opening a sentence without "the": "new coordinator at
	// brightwater is Mark, direct line …". Read in the sentence's own case:
	// "New Balance sneakers are …" names a brand.
	{[]string{"new "}, regexp.MustCompile(`(?i)^(?:(?:ok|okay|so|and|fyi|btw|also|update),? )*(new) ([a-z][\w'-]*(?: [\w'-]+){0,2}) (?:is|'s) (?:now )?(?:on |at |in )?` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		if m[1] == "New" && m[2] != "" && unicode.IsUpper(rune(m[2][0])) {
			return Update{}, false
		}
		subj := thingWords(strings.ToLower(m[2]))
		return Update{Subject: subj, New: value(strings.ToLower(m[3]))}, len(subj) > 0
	}},
	// "<subject> changed to Y", "the deadline got pushed to Friday", "the
	// party moved to saturday", "price went up to 52 EUR".
	{[]string{" to ", " until ", " till "}, regexp.MustCompile(`\b(?:the|our|my|its|his|her|their) ([a-z][\w'-]*(?: [\w'-]+){0,3}) (?:got |was |were |has been |have been |is being |is |are |just )?(?:changed|moved|pushed(?: back)?|postponed|rescheduled|bumped|shifted|raised|lowered|increased|decreased|reduced|went (?:up|down)|has gone (?:up|down)) (?:to|until|till) ` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		subj := thingWords(m[1])
		return Update{Subject: subj, New: value(m[2])}, len(subj) > 0
	}},
	// "<subject> is at Y now": "scratch that, the flight is at 7:40 now".
	{[]string{" now"}, regexp.MustCompile(`\b(?:the|our|my|its|his|her|their) ([a-z][\w'-]*?(?: [\w'-]+?){0,3})(?: is| are|'s|'re| 's| 're) (?:on |at |in |for )?` + valuePhr + `,? now` + clauseEnd), func(m []string) (Update, bool) {
		subj := thingWords(m[1])
		v := value(m[2])
		if len(v) == 0 || notNow.MatchString(m[0]) {
			return Update{}, false // "on tenuous grounds right now" is a state, not a change
		}
		return Update{Subject: subj, New: v}, len(subj) > 0
	}},
	// "ok so dinner is 8pm thursday now", "standup's at 10 now", "… no
	// more saturday drops, eggs are coming fridays now": a thing named
	// without an article, first in its clause, at a time now (a verb of
	// its schedule between: "coming", "delivered").
	{[]string{" now"}, regexp.MustCompile(`(?:^|[,;] |\bso )(?:(?:ok|okay|so|and|alright|right|fine|well|oh|ah|wait|update),? )*([a-z][\w'-]*?)(?: is|'s| 's| are|'re) (?:[a-z]+(?:ing|ed) )?(?:on |at |for )?` + valuePhr + `,? now` + clauseEnd), func(m []string) (Update, bool) {
		subj, nw := thingWords(m[1]), timeValue(value(m[2]))
		return Update{Subject: subj, New: nw}, len(subj) == 1 && nw != nil && !notNow.MatchString(m[0])
	}},
	// "so subs are £7 a game from now on", "rent is £950 now": a thing
	// named without an article, first in its clause, at an amount now.
	{[]string{" now"}, regexp.MustCompile(`(?:^|[,;] |\bso )(?:(?:ok|okay|so|and|alright|right|fine|well|oh|ah|wait|update),? )*([a-z][\w'-]*?)(?: is|'s| 's| are|'re) ` + valuePhr + `,? (?:from )?now(?: on)?` + clauseEnd), func(m []string) (Update, bool) {
		subj, amount := thingWords(m[1]), leadingAmount(m[2])
		return Update{Subject: subj, New: amount}, len(subj) == 1 && amount != nil && !notNow.MatchString(m[0])
	}},
	// "ok no gin, we get her herbs then", "so no beach after all": a plan
	// dropped, said as texting says it — "no" and the thing, first in
	// the sentence, then a comma or "then", "after all", "anymore".
	{[]string{"no "}, dropped, func(m []string) (Update, bool) {
		what := strings.TrimSpace(m[1])
		if noInterjection[strings.Fields(what)[0]] || len(lex.Keywords(what)) == 0 {
			return Update{}, false // "no worries", "no idea"
		}
		return Update{Old: value(what)}, true
	}},
	// "@assistant forget Lisbon", "scrap the ferry, we take the train":
	// a plan dropped by an order, first in the sentence or a clause ("my
	// mobile changed, scratch the 07700 900481, use …"). What is dropped
	// must name something ("forget it", "scratch that" name nothing; "forget
	// to …" is no order to drop).
	{[]string{"forget", "scrap", "scratch", "ditch", "skip"}, forgotten, func(m []string) (Update, bool) {
		// What is dropped ends at its clause: "skip reviews, nobody reads
		// them" drops reviews (a value's word may carry its comma).
		what, _, _ := strings.Cut(strings.TrimSpace(m[1]), ", ")
		if strings.HasPrefix(what, "to ") || whWord.MatchString(what) || len(lex.Keywords(what)) == 0 && !hasDigit(what) {
			return Update{}, false
		}
		return Update{Old: value(what)}, true
	}},
	// "we dropped the outlier filter completely", "I removed the cron
	// job", "we got rid of pgbouncer": a setting or a thing someone had is
	// gone. Someone must do it ("the price dropped" is no removal), to
	// something of theirs or named ("I dropped my phone" is an accident,
	// not a change: no possessive).
	{[]string{"removed", "dropped", "scrapped", "ditched", "got rid of", "turned off", "disabled", "stopped using"}, regexp.MustCompile(`\b(?:i|we|they|he|she)(?:'ve| have| had)? (?:just |finally |now |also |already )?(?:removed|dropped|scrapped|ditched|got rid of|turned off|disabled|stopped using) (?:the |that |this |those |these )?` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		old := value(m[1])
		if len(old) == 0 || len(lex.Keywords(old[0])) == 0 || possessive.MatchString(m[1]) {
			return Update{}, false
		}
		return Update{Old: old}, true
	}},
	// "The Velvet Hours gig is cancelled", "the ferry got called off": what
	// was planned is no more, said of it. A last word naming the kind of
	// plan ("gig", "trip") is left out when a name comes before it: the
	// older turn names the thing ("booked the band The Velvet Hours").
	// A condition ("if the match is cancelled") is none.
	{[]string{"cancelled", "canceled", "called off"}, regexp.MustCompile(`^(.*?\b)?(?:the |our |my |his |her |their )?([a-z0-9][\w'&:-]*(?: [\w'&-]+){0,3}?) (?:is|are|was|were|has been|have been|got|'s|'re)(?: now| just| all)? (?:cancell?ed|called off)\b`), func(m []string) (Update, bool) {
		if conditional.MatchString(m[1]) {
			return Update{}, false
		}
		old := value(withoutPlanKind(m[2]))
		if len(old) == 1 && clockRe.MatchString(old[0]+" ") && len(strings.Fields(old[0])) == 1 {
			return Update{Old: old}, true // "our 9:05 is cancelled": the train at that time
		}
		if len(old) == 0 || len(lex.Keywords(old[0])) == 0 || thingWords(old[0]) == nil {
			return Update{}, false
		}
		return Update{Old: old}, true
	}},
	// "the kitchen refit is off for this year", "the sale fell through": a
	// plan dropped, said of it. "is off" only of a plan ("the heating is
	// off" is a state), "fell through" of anything named.
	{[]string{"is off", "'s off", "are off", "fell through", "fallen through"}, regexp.MustCompile(`^(.*?\b)?(?:the |our |my |his |her |their )([a-z0-9][\w'&-]*(?: [\w'&-]+){0,3}?) (?:(?:is|are|'s|'re)(?: now)? off\b|(?:has |have )?(?:fell|fallen) through\b)`), func(m []string) (Update, bool) {
		if conditional.MatchString(m[1]) {
			return Update{}, false
		}
		ws := strings.Fields(m[2])
		if strings.HasSuffix(m[0], "off") && !planKinds[ws[len(ws)-1]] {
			return Update{}, false
		}
		old := value(m[2])
		if len(old) == 0 || len(lex.Keywords(old[0])) == 0 || thingWords(old[0]) == nil {
			return Update{}, false
		}
		return Update{Old: old}, true
	}},
	// "buzzer's working again", "the boiler got fixed": a thing that had
	// stopped works. What it makes stale is the thing said broken: its
	// old values are the thing with each word that says so. "working
	// fine" is no repair, nor "this budget is fixed" (set, not mended).
	{[]string{"working again", "running again", "back up", "back on", "fixed", "repaired"}, regexp.MustCompile(`^(.*?\b)?(?:the |our |my |his |her |their )?([a-z][\w-]*(?: [a-z][\w-]*)?)(?:'s| is| are|'re)(?: all)? (?:working|running|back up|back on) again\b|^(.*?\b)?(?:the |our |my |his |her |their )?([a-z][\w-]*(?: [a-z][\w-]*)?) (?:got|has been|have been|was|were) (?:fixed|repaired)\b`), func(m []string) (Update, bool) {
		if conditional.MatchString(m[1] + m[3]) {
			return Update{}, false
		}
		return thingStates(m[2]+m[4], brokenWords)
	}},
	// "landlord's fixed the latch", "Dave mended the gate": the same, said
	// of whoever did it. The thing has its article ("fixed the price at
	// £20" is set, and no older turn says the price was broken).
	{[]string{"fixed", "repaired", "mended"}, regexp.MustCompile(`^(.*?\b)?('s|'ve|[a-z]+) (?:fixed|repaired|mended) (?:the |our |my |his |her |their )([a-z][\w-]*(?: [a-z][\w-]*)??)` + clauseEnd), func(m []string) (Update, bool) {
		if conditional.MatchString(m[1]) || askers[m[2]] {
			return Update{}, false // "has anyone fixed the printer"
		}
		return thingStates(m[3], brokenWords)
	}},
	// "migration is back on", "UPDATE … kayaking is back on!!": a plan
	// called off is on again. What it makes stale is the thing said
	// called off. "X is back on again" is a repair (above); "it's back
	// on" names nothing.
	{[]string{" back on"}, regexp.MustCompile(`(?:^|[,;.!] |\bso |\band |\bbut |\bok |\byes )(?:the |our |my |their )?([a-z][\w-]*(?: [a-z][\w-]*)?)(?:'s| is| are|'re)(?: now| officially| definitely| all)? back on\b(?: again)?(?:[!.,;]|$| for | then| after all| tho| though| btw| [^\w\s])`), func(m []string) (Update, bool) {
		if strings.HasSuffix(m[0], "again") {
			return Update{}, false
		}
		u, ok := thingStates(m[1], calledOffWords)
		if stem := lex.Stem(m[1]); ok && strings.HasSuffix(m[1], "ing") && !strings.Contains(m[1], " ") && stem != m[1] {
			v, _ := thingStates(stem, calledOffWords) // "kayaking is back on": the kayak trip was called off
			u.Old = append(u.Old, v.Old...)
		}
		return u, ok
	}},
	// "she's back on apixaban but 2.5mg twice a day", "dad's back on the
	// night tablets": what was stopped is taken again. Said of a person
	// (a name or a pronoun); what it makes stale is the thing said
	// stopped.
	{[]string{" back on "}, regexp.MustCompile(`\b(?:she|he|they|we|i|[a-z]+)(?:'s|'re|'m| is| are| am) back on (?:the |her |his |their |my |our )?([a-z][\w-]*)`), func(m []string) (Update, bool) {
		if notBackOn[m[1]] {
			return Update{}, false // "she's back on track", "we're back on monday"
		}
		return thingStates(m[1], stoppedWords)
	}},
	// "put the workshop back in", "add the dessert back on": a thing
	// dropped is restored ("bring your focus back" is advice, not one). What it makes stale is the thing said dropped:
	// its old values are the thing with each word that says so.
	{[]string{" back"}, regexp.MustCompile(`^(.*?\b)?(?:put|puts|putting|add|adds|adding|added) (?:the |our |my |that |this )?([a-z][\w-]*(?: [a-z][\w-]*){0,2}) back (?:in|on|into)\b`), func(m []string) (Update, bool) {
		if conditional.MatchString(m[1]) {
			return Update{}, false
		}
		if strings.HasPrefix(m[2], "your ") || strings.HasPrefix(m[2], "them ") {
			return Update{}, false
		}
		return thingStates(m[2], droppedWords)
	}},
	// "courtesy car reinstated", "the 6pm visit has been restored",
	// "reinstated the courtesy car": a thing dropped or called off is on
	// again. Its old values are the thing with each word that dropped it
	// ("forget the courtesy car").
	{[]string{"reinstate", "restored"}, regexp.MustCompile(`(?:^|[,;:.!] |\band |\bso |\bbut )(?:the |our |my |your |her |his |their )?([a-z0-9][\w-]*(?: [a-z][\w-]*){0,2})(?: (?:is|are|has been|have been|was|were|got))? (?:reinstated|restored)(?:[,.;:!?]|$| from | on | for | at | by | today| yesterday| now| again| too| and | but )|\b(?:reinstated|restored|reinstating) (?:the |our |my |your |her |his |their )([a-z][\w-]*(?: [a-z][\w-]*){0,2})`), func(m []string) (Update, bool) {
		thing := m[1] + m[2]
		if notRestored[strings.Fields(thing)[0]] || m[2] != "" && preposition[strings.Fields(m[2])[0]] {
			return Update{}, false
		}
		return thingStates(thing, append(append(append([]string{}, calledOffWords...), droppedWords...), forgetWords...))
	}},
	// "we cancelled the trip to Lisbon", "they called off the match": what
	// was planned is no more (done: "please cancel my order" is a request).
	{[]string{"cancelled", "canceled", "called off"}, regexp.MustCompile(`\b(?:cancell?ed|called off) (?:the |our |my |his |her |their )?` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		old := value(m[1])
		if len(old) == 0 || len(lex.Keywords(old[0])) == 0 {
			return Update{}, false
		}
		return Update{Old: old}, true
	}},
	// "Spice Route have pulled out", "The Velvet Hours have double-booked
	// the 19th … and have cancelled on us": who was booked withdrew. Said
	// of them by name (not "they", "we", "i").
	{[]string{"pulled out", "dropped out", "backed out", "cancelled on", "canceled on"}, regexp.MustCompile(`(?:^|[,;:.!] |\bso |\band |\bbut )(?:the )?([a-z][\w'&-]*(?: [a-z][\w'&-]*){0,3}?)(?: have| has|'ve|'s)(?: just| now| also| both)? (?:[^,;.?]*? and (?:have |has )?)?(?:pulled out|dropped out|backed out|cancell?ed on (?:us|me|you|them|him|her))(?:\s*[,;.!—–(:]|$| - | of | after all| too| btw| last minute| at the last minute| on us| on me| because| as | so )`), func(m []string) (Update, bool) {
		old := value(m[1])
		if len(old) == 0 || subjectPronouns[strings.Fields(old[0])[0]] || persons[strings.Fields(old[0])[0]] || len(lex.Keywords(old[0])) == 0 || thingWords(old[0]) == nil {
			return Update{}, false
		}
		return Update{Old: old}, true
	}},
	// "they've moved their whole team off Trados", "we migrated off
	// Jenkins": what was used is no more.
	{[]string{" off "}, regexp.MustCompile(`\b(?:moved|moving|migrated|migrating|came|come|got|gotten|getting) (?:[a-z]+ ){0,3}?off (?:of )?` + valuePhr + clauseEnd), func(m []string) (Update, bool) {
		old := value(m[1])
		if len(old) == 0 || len(lex.Keywords(old[0])) == 0 || possessive.MatchString(m[1]) || notOff[strings.Fields(old[0])[0]] {
			return Update{}, false // "got off the bus", "came off my bike"
		}
		return Update{Old: old}, true
	}},
	// Last: one value put in place of another of the same shape, however
	// the sentence goes around it: "so it'd be £345 instead of £295",
	// "should have been £25, not £15", "split 5 = £35 each not 30",
	// "they want to leave 8.15 not 8.45", "heat loss comes out at 5.9
	// kW, not the 6.8 Peak Heat said". Both are numbers, the old one bare
	// or with the new one's currency or unit.
	{[]string{" not ", "instead of", "rather than"}, regexp.MustCompile(`(?:^|[\s(=])([$€£]?\d[\d,.:]*(?:k|am|pm|%)?(?: ?` + unitWord + `)?)(?: (each|a head|per [a-z]+|a [a-z]+))?,? (?:not|instead of|rather than) (?:the )?([$€£]?\d[\d,.:]*(?:k|am|pm|%)?)( ?` + unitWord + `)?(?:[\s,.;:!)]|$)`), func(m []string) (Update, bool) {
		nw, od := strings.TrimRight(m[1], ".,:"), strings.TrimRight(m[3], ".,:")
		if nw == od || !sameShape(nw, od) {
			return Update{}, false
		}
		if m[4] != "" { // the old number's own unit: "2 hours, not 30 minutes"
			return Update{New: []string{nw}, Old: []string{od + m[4]}}, true
		}
		old := withUnit([]string{nw}, []string{od})
		if unitAfter.MatchString(nw) {
			// "14 days, not 30" makes "30 days" stale, not every 30 ("30 %").
			old = slices.DeleteFunc(old, bareNumber.MatchString)
		}
		return Update{New: []string{nw}, Old: old}, true
	}},
	// A count put right, the thing counted said once: "they want 3
	// labels not 4", "4 nights not 5". The old count is of the same
	// thing ("4 labels"); a count said of nothing stays a bare number
	// (the pattern above).
	{[]string{" not "}, regexp.MustCompile(`(?:^|[\s(])(\d{1,4}) ([a-z][a-z'-]{2,}s) not (\d{1,4})(?:[\s,.;:!)]|$)`), func(m []string) (Update, bool) {
		if m[1] == m[3] || lex.IsRankStopword(m[2]) {
			return Update{}, false
		}
		return Update{New: []string{m[1] + " " + m[2]}, Old: []string{m[3] + " " + m[2]}}, true
	}},
	// One name put in place of another, said of what a thing is: "they're
	// on AQA not Edexcel", "it's Nationwide, not Halifax", "the contact
	// there is Rafael not Sam". An explanation contrasting two ("all our
	// changes happen in Cloudflare, not GoDaddy") says what is, not what
	// changed. Both are written with a capital (a name, a code), neither
	// is a word only a sentence's start capitalises, and a question ("is
	// it Leeds not York?") changes nothing.
	{[]string{" not "}, regexp.MustCompile(`(?i)(?:'s|'re|’s|’re|\bis|\bare|\bwas|\bwere|\bits)(?: on| at| in| with| called| named)? (?:[a-z][\w&'-]+ )?([a-z][\w&'-]+),? not ([a-z][\w&'-]+)(?:[\s,.;:!)][^?]*)?$`), func(m []string) (Update, bool) {
		if !namedValue(m[1]) || !namedValue(m[2]) || strings.EqualFold(m[1], m[2]) {
			return Update{}, false
		}
		return Update{New: []string{strings.ToLower(m[1])}, Old: []string{strings.ToLower(m[2])}}, true
	}},
}

// namedValue: a word written as a name or a code ("AQA", "Edexcel",
// "Nationwide"), two letters or more, not "I" nor a word of a sentence's
// shape ("Not", "The").
func namedValue(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return len(w) >= 2 && unicode.IsUpper(r) && !lex.IsRankStopword(strings.ToLower(w))
}

// sameShape: two values written alike, so one can stand for the other:
// the same currency or the old one bare, both clock times or neither
// ("8.15" and "8.45"; "£35" and "30"; not "£25" and "€15", "9:30" and "4").
func sameShape(nw, old string) bool {
	cur := func(v string) string {
		if r, n := utf8.DecodeRuneInString(v); strings.ContainsRune("$€£", r) {
			return v[:n]
		}
		return ""
	}
	if c := cur(old); c != "" && c != cur(nw) {
		return false
	}
	return strings.Contains(nw, ":") == strings.Contains(old, ":")
}

// notGrade: words before a number that make no grade ("to at 5"); "v"
// is a version's ("moving to v2 of the api"), and "v8", "node v18" in an
// older turn name other things.
var notGrade = set(`a an at on in by the to of and or for from is it its no we us me my our v`)

// notOff: what one gets or comes off is a vehicle or a call, not a
// tool dropped.
var notOff = set(`to the a an bus train plane tube ferry boat bike call phone work shift lightly easy cheap well badly it them`)

// askers before "fixed" make a question of it.
var askers = set(`anyone anybody who somebody`)

// conditional: what comes before a cancellation makes it a condition,
// not a fact ("if the match is cancelled we go to the pub").
var conditional = regexp.MustCompile(`\b(?:if|unless|whether|in case|when|what if|hope|hopefully|maybe|might)\b`)

// withoutPlanKind leaves out a last word naming the kind of plan after a
// name ("the velvet hours gig" → "the velvet hours"); a plan named by its
// kind alone ("the trip") keeps it.
func withoutPlanKind(p string) string {
	ws := strings.Fields(p)
	if len(ws) > 1 && planKinds[ws[len(ws)-1]] {
		return strings.Join(ws[:len(ws)-1], " ")
	}
	return p
}

// onlyTime is a value phrase that says a day or a clock time and nothing
// else ("mon 22 march 12 noon", "10:30" before "from tomorrow"): "new
// camera gear on aug 20" and "new job at 7 am" are things, not times.
func onlyTime(v string) []string {
	v, _, _ = strings.Cut(v, ", ") // a value's token may take the comma that ends it
	if i := strings.Index(v+" ", " from "); i >= 0 {
		v = v[:i]
	}
	if kindsIn(v) == 0 {
		return nil
	}
	for _, w := range lex.Words(v) {
		if !hasDigit(w) && !timeWords[w] {
			return nil
		}
	}
	return value(v)
}

var timeWords = set(`monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun
january february march april may june july august september october november december jan feb mar apr jun jul aug sep
sept oct nov dec am pm noon midday midnight at on the of today tonight tomorrow morning afternoon evening night
mondays tuesdays wednesdays thursdays fridays saturdays sundays mornings afternoons evenings nights weekend weekends`)

// leadingAmount is the amount with a unit or a currency a value phrase
// opens with ("£19.10" of "£19.10 a sack"), nil when it opens with none.
func leadingAmount(v string) []string {
	w, _, _ := strings.Cut(strings.TrimSpace(v), " ")
	w = strings.TrimRight(w, ",.;:")
	if qs := quantitiesIn(w); len(qs) != 1 {
		return nil
	}
	return value(w)
}

// thingStates is an update whose old values are the thing (a phrase
// naming one) with each of the words that said its old state: "boiler
// broken", "workshop dropped".
func thingStates(thing string, stateWords []string) (Update, bool) {
	subj := thingWords(thing)
	if len(subj) == 0 || len(lex.Keywords(thing)) == 0 {
		return Update{}, false
	}
	old := make([]string, 0, len(stateWords))
	for _, w := range stateWords {
		old = append(old, strings.Join(subj, " ")+" "+w)
	}
	return Update{Old: old}, true
}

// withUnit gives a bare old number the unit or currency of the new
// value: "she's actually 24.5kg not 22" corrects "22kg", "£40 not 35"
// "£35", "40 cases, not 25" "25 cases". The bare number stays among the
// old values, for a text naming what it numbers ("the airbnb for 5").
func withUnit(nw, old []string) []string {
	if len(nw) != 1 || len(old) != 1 || !bareNumber.MatchString(old[0]) {
		return old
	}
	m := unitAmount.FindStringSubmatch(nw[0])
	switch {
	case m == nil:
		return old
	case m[1] != "":
		return []string{m[1] + old[0], old[0]}
	case m[3] != "" && m[2] == "": // "24.5kg": an older "22 kg" too
		return []string{old[0] + m[3], old[0] + " " + m[3], old[0]}
	case m[3] != "":
		return []string{old[0] + " " + m[3], old[0]}
	}
	return old
}

// unitWord is a unit of measure written after a number ("5.9 kW", "2
// TB", "45 mins"): a word a number takes as its unit, not a word of the
// sentence ("5 for", "30 and").
const unitWord = `(?:kwh|kw|mah|mw|w|kg|mg|g|lbs|lb|km|cm|mm|m|mi|miles|ml|l|tb|gb|mb|mph|kph|ft|hrs|hr|h|mins|min|minutes|ms|secs|sec|s|°c|°f|days|weeks|nights|hours)\b`

// UnitAmount: v (lower case) is a number and its unit of measure
// ("30 days", "6.8 kw"), an amount written as one phrase.
func UnitAmount(v string) bool { return unitAmountRe.MatchString(v) }

var unitAmountRe = regexp.MustCompile(`^\d+(?:[.,]\d+)* ?` + unitWord + `$`)

var (
	unitAfter  = regexp.MustCompile(`\d ?` + unitWord + `$`)
	bareNumber = regexp.MustCompile(`^\d+(?:[.,]\d+)*$`)
	// unitAmount is an amount with a currency before it or a unit word
	// after it: "£40", "24.5kg", "40 cases".
	unitAmount = regexp.MustCompile(`^([$€£]?)\d+(?:[.,]\d+)*( ?)([a-z%]+)?$`)
)

// notRestored: what is restored that was never dropped ("power
// restored", "service restored" are repairs; "it"/"that" name nothing).
var notRestored = set(`it that this power service connection access everything all`)

var preposition = set(`from to on at in by for after since with until before`)

// droppedWords say a thing was taken out ("I'm dropping the workshop").
var droppedWords = []string{"dropping", "dropped", "drop", "removed", "removing", "remove", "cut", "scrapped", "scrapping", "ditched", "ditching"}

// calledOffWords say a plan was called off ("they've cancelled the 9:30
// trip", "cancel the file migration").
var calledOffWords = []string{"cancelled", "canceled", "cancel", "cancelling", "called off", "off"}

// stoppedWords say a thing taken was stopped ("they've stopped her
// apixaban").
var stoppedWords = []string{"stopped", "stopping", "stop", "paused", "off"}

// notBackOn: what one is "back on" that is no thing taken.
var notBackOn = set(`track form top board line schedule course duty shift call site the a an it its this that monday tuesday wednesday thursday friday saturday sunday tomorrow today tonight again feet foot sale speaking air stream land earth`)

// brokenWords say a thing does not work ("the buzzer stopped working").
var brokenWords = []string{"stopped", "broken", "broke", "dead", "died", "faulty", "leaking"}

var planKinds = set(`gig party trip booking reservation meeting session class appointment event show concert dinner lunch
flight order visit call tour match game ceremony refit renovation deal sale plan plans wedding holiday move job viewing
workshop`)

// nowNotLeft reads what comes before "now, not": the new value is what
// follows its last preposition or copula ("night shifts start on | 28
// september", "the airbnb is | 4 nights"),
// else its last word ("we leave | friday"); the subject is the thing
// before it, when it names a thing (thingWords: not "we").
func nowNotLeft(left string) (subject, nw []string) {
	if i := strings.LastIndex(left, ", "); i >= 0 {
		left = left[i+2:] // the clause it is in
	}
	for _, prep := range []string{" on ", " at ", " in ", " to ", " from ", " until ", " is ", " are "} {
		if i := strings.LastIndex(left, prep); i >= 0 && len(strings.Fields(left[i+len(prep):])) <= 4 {
			return thingWords(left[:i]), value(left[i+len(prep):])
		}
	}
	ws := strings.Fields(left)
	if len(ws) < 2 {
		return nil, nil
	}
	return thingWords(strings.Join(ws[:len(ws)-1], " ")), value(ws[len(ws)-1])
}

// thingWords are the subject's words when it names a thing that changed;
// none when it names a person (a restated fact's "the user", a pronoun):
// an update that names no old value makes stale every fact holding its
// subject's words, and "the user moved to Denver" must not make stale
// every fact about the user.
func thingWords(p string) []string {
	if howFar.MatchString(p) {
		return nil // "pushed back a week to the 14th": how far, not what
	}
	ws := subjectWords(p)
	for _, w := range ws {
		if persons[w] {
			return nil
		}
	}
	return ws
}

var howFar = regexp.MustCompile(`^` + moveDist + `$`)

var persons = set(`user assistant i we you he she they it everyone everybody someone somebody people`)

// numberCorrection: a sentence that may correct one number by another ("it's
// 5k, not 3k"), worth the patterns without a change verb.
func numberCorrection(low string) bool {
	return strings.Contains(low, " not ") && strings.IndexAny(low, "0123456789") >= 0
}

// nameCorrection: a sentence (as written) that may put one name in place
// of another ("they're on AQA not Edexcel"), worth the patterns without
// a change verb.
func nameCorrection(s string) bool {
	i := strings.Index(s, " not ")
	return i > 0 && strings.IndexFunc(s[i+5:], unicode.IsUpper) >= 0 && strings.IndexFunc(s[:i], unicode.IsUpper) >= 0
}

// dropped is a sentence that drops a thing: "ok no gin, …", "so no beach
// after all".
var dropped = regexp.MustCompile(`^(?:(?:ok|okay|so|and|then|alright|fine|right|well|oh|ah|hmm|wait),? )*no ([a-z][\w'-]*(?: [a-z][\w'-]*)?)(?:,|$| then\b| after all\b| anymore\b| any more\b)`)

// forgotten is an order to drop a thing, first in the sentence after an
// address or an interjection: "@assistant forget Lisbon", "ok scrap the
// ferry", "nvm, ditch the van".
var forgotten = regexp.MustCompile(`(?:^|[,;] )(?:@[\w.-]+,? )?(?:(?:ok|okay|so|and|then|alright|fine|right|well|oh|ah|hmm|wait|nvm|yeah|yes|no|actually),? )*(?:forget(?: about)?|scrap|scratch|ditch|(?:(?:and|oh|ok|okay|so|let's|lets),? )skip) (?:the |that |this |our |my )?` + valuePhr + clauseEnd)

// whWord opens a clause, not a thing: "forget what I said".
var whWord = regexp.MustCompile(`^(?:what|who|where|when|why|how|which|whatever|it|that|this|everything|all|about)\b`)

// noInterjection: "no" and one of these is a way of speaking, not a thing
// dropped.
// countWords count rather than name: "the 2 of us instead".
var countWords = set(`of one two three four five six seven eight nine ten more less fewer extra another other them those these it that`)

var noInterjection = set(`worries worry problem problems prob probs way idea clue rush thanks thank kidding doubt biggie
stress pressure offense offence joke comment wonder matter need one body thing sweat shit sir ma'am chance luck
change changes difference different news issue issues`)

// notNow: a "now" that dates a state rather than marks a change.
var notNow = regexp.MustCompile(`\b(?:right|for|by|until|till|up to|just) now\b`)

func hasDigit(s string) bool { return strings.IndexAny(s, "0123456789") >= 0 }

// numbers reads a correction of one number by another ("34 not 28"): the
// new and the old value, ok when both hold a digit ("it's fine, not a
// problem" corrects nothing).
func numbers(nwPhrase, oldPhrase string) (nw, old []string, ok bool) {
	nw, old = value(nwPhrase), value(oldPhrase)
	ok = len(nw) > 0 && len(old) > 0 && hasDigit(nw[0]) && hasDigit(old[0])
	return nw, withUnit(nw, old), ok
}

// notUpdateVerb are verbs of thinking, saying or small talk: "I no longer
// remember", "now that you mention it", "we now know" say nothing changed
// in the world.
var notUpdateVerb = set(`remember recall know knew think thought believe care mind understand see saw hear heard feel felt
mean guess wonder recognise recognize notice that this it mention mentioned say said tell told talk ask asked want need
have had get got be been being do did is are was were can could will would should may might must let`)

// verbLemma folds "lives", "living", "lived" to "live" (roughly: enough to
// compare with an older fact's words).
func verbLemma(v string) string {
	for _, suf := range []string{"ing", "ed", "es", "s"} {
		if stem, ok := strings.CutSuffix(v, suf); ok && len(stem) >= 3 {
			if suf == "ing" || suf == "ed" {
				if !strings.HasSuffix(stem, "e") && len(stem) > 3 && strings.ContainsAny(stem[len(stem)-1:], "vcz") {
					return stem + "e" // "living" → "live"
				}
			}
			return stem
		}
	}
	return v
}

// value trims a value phrase of articles, end punctuation and a
// possessive ("the harrington's" is what Harrington's makes); nil when
// nothing is left.
func value(v string) []string {
	v = strings.TrimSuffix(strings.Trim(strings.TrimSpace(v), ".,;:!?\"'"), "'s")
	v = articles.ReplaceAllString(v, "")
	if v == "" || updateStop[v] || pointsBack(v) {
		return nil
	}
	return []string{v}
}

// pointsBack: a value naming its thing only by pointing at it ("that
// purpose", "this approach"), whose words are no value a turn states; a
// time so named is one ("this friday", "this afternoon at 3").
func pointsBack(v string) bool {
	d, rest, ok := strings.Cut(v, " ")
	if !ok || d != "that" && d != "this" && d != "these" && d != "those" && d != "such" {
		return false
	}
	w, _, _ := strings.Cut(rest, " ")
	return !timeWords[w] && !lex.IsWeekday(w) && w != "week" && w != "weekend" && w != "month" && w != "year" && w != "time"
}

// subjectWords are the content words of a subject phrase (a variable's
// one-letter name counts: "the step size h").
func subjectWords(p string) []string {
	var out []string
	for _, w := range lex.Words(p) {
		if (lex.Keyword(w) || (len(w) == 1 && w != "a" && w != "i")) && !updateStop[w] {
			out = append(out, w)
		}
	}
	return out
}

// uselessNow are what a thing "is no longer" when it is of no more use:
// said of data, files or steps in advice, they name no value.
var uselessNow = set(`needed required necessary used useful relevant valid applicable supported maintained`)

// updateStop are words of a subject that name nothing, among them an
// aside ("vodafone cancelled btw" cancelled no "btw"). Comparatives among them say how the value changed, not what
// it is a value of: "make the brother older, 34 not 28" updates the
// brother's age, and "older" is in no sentence stating the old one ("her
// brother Tobias, 28").
var updateStop = set(`it this that them there here something anything everything nothing one now then also just really
plan plans mind
btw fyi lol haha tho though too already again anyway finally officially
older younger bigger smaller larger higher lower longer shorter earlier later cheaper pricier faster slower nearer closer
more less fewer`)
