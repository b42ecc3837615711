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

// Replacements. A turn can change a choice without a pattern naming the
// old value beside the new one: "the Sage Green looked way too dark … we've
// changed to "Pebble Grey"", "Harlow wouldn't commit to the warranty …
// we're going with the second quote after all, Keystone", "ashgrove had a
// flood so they cant take her. the coordinator found a room at Brookfield
// Lodge instead". One sentence says the choice changed (the cue sentence);
// another rejects what was chosen before, and names it. An older turn that
// named that thing ("I think we go with Harlow") states the old choice.

// Replacement is a turn that changed a choice: its sentences (as
// written, and in lower case), which of them says the choice changed (the
// cue) and which reject something.
type Replacement struct {
	sents, low []string
	cue        int
	rejected   []int
	// cancelled: no choice replaced it, the cue sentence itself says what
	// was planned is off ("Avon Van Hire rang, they double booked the
	// minibus so that's cancelled"); the names it holds are rejected.
	cancelled bool
}

// DetectReplacement reads a turn that changed a choice: a sentence saying
// so, and another rejecting something. Without a rejecting sentence the
// turn names nothing it replaced ("we're doing Porto instead"): none.
func DetectReplacement(text string) (Replacement, bool) {
	if !strings.Contains(text, "instead") && !strings.Contains(text, "after all") && !strings.Contains(text, "ed ") && !strings.Contains(text, "went ") && !strings.Contains(text, "gone ") &&
		!strings.Contains(text, "cancel") && !strings.Contains(text, "called off") && !strings.Contains(text, "fell through") &&
		!strings.Contains(text, "cover") && !strings.Contains(text, " over") && !strings.Contains(text, "fill") && !strings.Contains(text, "step") {
		return Replacement{}, false // no cue can match
	}
	r := Replacement{sents: splitRejectingClause(lex.Sentences(prose.Clean(text))), cue: -1}
	cancel := -1
	for i, s := range r.sents {
		low := strings.ToLower(s)
		r.low = append(r.low, low)
		if r.cue < 0 && (choiceCue(low) || stoodIn.MatchString(s) && !holdsAny(low, hedges)) {
			r.cue = i
		} else if rejects(low) {
			r.rejected = append(r.rejected, i)
		}
		if cancel < 0 && cancels(low) {
			cancel = i
		}
	}
	if r.cue >= 0 && !choiceCue(r.low[r.cue]) {
		// Someone taking another's place replaces only one said to be out.
		r.rejected = slices.DeleteFunc(r.rejected, func(i int) bool { return !away.MatchString(r.low[i]) })
	}
	if (r.cue < 0 || len(r.rejected) == 0) && cancel >= 0 {
		r.cue, r.rejected, r.cancelled = cancel, []int{cancel}, true
	}
	return r, r.cue >= 0 && len(r.rejected) > 0
}

// splitRejectingClause splits a sentence saying a choice changed at the
// comma before its "instead" when the clause before it rejects something:
// "Felix is off sick all week, Grace is reviewing #4821 instead" rejects
// Felix in its first clause and names the new choice in its second (a
// name in the cue sentence is taken for the new choice). The clause must
// name someone or something by a name: "parents can't wait poolside,
// there's a viewing gallery upstairs instead" rejects no choice.
func splitRejectingClause(sents []string) []string {
	out := make([]string, 0, len(sents))
	for _, s := range sents {
		low := strings.ToLower(s)
		if len(low) != len(s) {
			// Lower case changed the bytes' count ("Ⱥ", invalid UTF-8):
			// its offsets would cut s in the wrong place. Left whole.
			out = append(out, s)
			continue
		}
		i := strings.Index(low, "instead")
		if i < 0 || strings.HasPrefix(low[i:], "instead of") {
			i = -1
			if m := stoodIn.FindStringIndex(s); m != nil {
				i = m[0] // "Ravi is sick, Elena swapped with him" (names read in their case)
			}
		}
		if i < 0 {
			out = append(out, s)
			continue
		}
		j := strings.LastIndex(low[:i], ", ")
		if j <= 0 || !rejects(low[:j]) || !choiceCue(low[j+2:]) && !stoodIn.MatchString(s[j+2:]) || len(Names(s[:j])) == 0 {
			out = append(out, s)
			continue
		}
		out = append(out, s[:j+1], s[j+2:])
	}
	return out
}

// cancels: a sentence saying what was planned is off, as done ("so
// that's cancelled", "the booking fell through"), not weighed ("if it's
// cancelled", "should we cancel?") nor asked for ("please cancel it").
func cancels(low string) bool {
	if holdsAny(low, hedges) || strings.Contains(low, "please") || strings.Contains(low, "pls") || strings.Contains(low, "if ") {
		return false
	}
	return cancelledRe.MatchString(low)
}

var cancelledRe = regexp.MustCompile(`\b(?:is|are|was|were|'s|'re|been|got|get) (?:now |just |all )?(?:cancell?ed|called off)\b|\b(?:fell|fallen) through\b`)

// Cue is the sentence saying the choice changed, as written.
func (r Replacement) Cue() string { return r.sents[r.cue] }

// Quote is what a mark under an older turn quotes of the replacing turn:
// the sentence rejecting what the older turn named (rejected, from
// Replaces) and the one saying the choice changed, in the turn's order,
// with an elision mark where the turn goes on around them.
func (r Replacement) Quote(rejected int, elision string) string {
	a, b := min(rejected, r.cue), max(rejected, r.cue)
	var out []string
	if a > 0 {
		out = append(out, elision)
	}
	out = append(out, r.sents[a])
	if b > a+1 {
		out = append(out, elision)
	}
	if b > a {
		out = append(out, r.sents[b])
	}
	if b < len(r.sents)-1 {
		out = append(out, elision)
	}
	return strings.Join(out, " ")
}

// choiceCue: a sentence that says a choice changed, not one weighing it
// ("should we go with Keystone instead?").
func choiceCue(low string) bool {
	if holdsAny(low, hedges) {
		return false
	}
	for _, w := range lex.Fields(low) {
		if choiceHedges[w] {
			return false
		}
	}
	if i := strings.Index(low, "instead"); i >= 0 && !strings.HasPrefix(low[i:], "instead of") {
		return true // "found a room at Brookfield Lodge instead"
	}
	return switchedTo.MatchString(low) || (strings.Contains(low, "after all") && goneWith.MatchString(low))
}

var (
	choiceHedges = set(`maybe might perhaps or wonder thinking`)
	switchedTo   = regexp.MustCompile(`\b(?:i|we|they|he|she)(?:'ve| have|'d| had)? (?:just |finally |now )?(?:(?:changed|switched|swapped)(?: over| it| that)? (?:to|for)|(?:went|gone|decided|settled|opted) (?:for|on|with)) `)
	// stoodIn: someone took another's place ("Elena Petrova swapped with
	// him", "Joe is covering for her", "Sam took over").
	stoodIn = regexp.MustCompile(`\b(?:(?:swapped|swapping|switched|traded) (?:with|shifts with) (?:him|her|them|me|us)|(?:covering|covers|covered|filling in|filled in|fills in) for (?:him|her|them|me|us|[A-Z][a-z]+)|(?:took|taking|takes|has taken) over(?: from (?:him|her|them|[A-Z][a-z]+)|[,.;!]|$)|(?:stepped|stepping|steps) in(?: for (?:him|her|them|[A-Z][a-z]+)|[,.;!]|$))`)
	// away says someone is out, as a place taken requires: "Ravi is
	// sick", not any "n't" ("Noah wasn't thrilled about sharing").
	away     = regexp.MustCompile(`\b(?:sick|unwell|ill|off|away|out|on leave|on holiday|on vacation|unavailable|can't make it|cannot make it|isn't coming|is not coming|won't be|had to leave)\b`)
	goneWith = regexp.MustCompile(`\b(?:go|going|gone|went|goes|do|doing|take|taking|pick|picking|book|booking)\b`)
)

// rejects: a sentence that says something is out — negated, off, too
// much, full, closed, cancelled.
func rejects(low string) bool {
	low = strings.ReplaceAll(low, "not sure", "") // a doubt rejects nothing
	prev, prev2 := "", ""
	for _, w := range strings.Fields(low) {
		w = strings.Trim(w, `"'(“‘,.;:!?)”’`)
		if rejectWords[w] && (!stateWords[w] || saysState(prev) || objects[prev] && saysState(prev2)) || strings.HasSuffix(w, "n't") {
			return true // … or "Ashgrove called it off"
		}
		prev, prev2 = w, prev
	}
	return false
}

// objects stand between a verb and its state word: "called it off".
var objects = set(`it them that this us everything`)

// stateWords reject only as a thing's state, after a form of "be" or a
// verb putting it there ("ashgrove is off", "Felix's out", "sold out",
// "called off"): "we'll have the lights off" and "we're out of milk"
// reject no choice … nor does "Ben is bringing Dad in at 7:45 and we'll
// have the lights off" reject Ben.
var stateWords = set(`off out`)

// saysState: the word before a state word puts a thing in that state
// ("is off", "Jonas is pulling out", "she's coming off the apoquel").
func saysState(prev string) bool {
	return beForms[prev] || strings.HasSuffix(prev, "'s") || strings.HasSuffix(prev, "’s")
}

var beForms = set(`is are was were be been being it's that's its thats sold called pull pulled pulling pulls drop dropped dropping drops
back backed backing backs come comes coming came opt opted opting bow bowed bowing ruled crossed taken`)

var rejectWords = set(`not no never nope off out too cant wont dont didnt doesnt isnt wasnt arent couldnt wouldnt shouldnt
havent hasnt cancelled canceled cancel full closed dead broken flooded flood refused sick unwell unavailable`)

// Replaces reports whether text (an older turn, as written) names a thing
// the replacement rejected, and the sentence rejecting it: a name of the
// text (capitalised inside a sentence) in a rejecting sentence, not
// addressed there ("Sorry Mel, I can't …" rejects nothing of Mel's) and
// not in the cue sentence (a name there is the new choice, or goes with
// it).
func (r Replacement) Replaces(text string) (int, bool) {
	names, openers := nameCandidates(text)
	for _, name := range names {
		if i, ok := r.rejecting(name, false); ok {
			return i, true
		}
	}
	// A word opening a sentence of text is a name when the rejecting
	// sentence writes it capitalised too ("Harlow is cheapest" and
	// "Harlow wouldn't commit"): "Address is …" is not rejected by "… no
	// address yet".
	for _, w := range openers {
		if lex.IsRankStopword(strings.ToLower(w)) || sentenceOpeners[strings.ToLower(w)] {
			continue // "Also we need …": a word any sentence may open with
		}
		if i, ok := r.rejecting(w, true); ok {
			return i, true
		}
	}
	// Texting writes names in lower case: "community fibre doesnt cover our
	// street yet … going with Zen instead" rejects what the older turn
	// called "community fibre". The phrase before a rejecting sentence's
	// negation names what it rejects when it names a thing.
	low := strings.ToLower(text)
	for _, i := range r.rejected {
		if subj := rejectedSubject(r.low[i]); subj != "" && lex.HasPhrase(low, subj) && !lex.HasPhrase(r.low[r.cue], subj) {
			return i, true
		}
	}
	return 0, false
}

// sentenceOpeners are words sentences open with that name nothing.
var sentenceOpeners = set(`also and but so then now well still anyway plus btw yes yeah no oh sorry thanks hi hey morning
update actually just maybe again meanwhile however`)

// rejectedSubject is the thing a rejecting sentence (lower case) says is
// out, the words of its clause before the negation ("community fibre" of
// "scratch that, community fibre doesnt cover our street"): one to three
// words naming a thing, "" for a person, a pronoun or none.
func rejectedSubject(low string) string {
	ws := strings.Fields(low)
	for j, w := range ws {
		w = strings.Trim(w, `"'(“‘,.;:!?)”’`)
		if !rejectWords[w] && !strings.HasSuffix(w, "n't") {
			continue
		}
		from := j
		for from > 0 && !strings.HasSuffix(ws[from-1], ",") && !strings.HasSuffix(ws[from-1], ";") && j-from < 4 {
			from--
		}
		if j-from == 0 || j-from > 3 || from > 0 && !strings.HasSuffix(ws[from-1], ",") && !strings.HasSuffix(ws[from-1], ";") {
			return "" // no subject, or more than a name's words
		}
		subj := strings.Trim(strings.Join(ws[from:j], " "), `"'(“‘,.;:!?)”’`)
		subj = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(subj, "the "), "our "), "my ")
		if len(nameWords(subj)) == 0 || thingWords(subj) == nil || subjectPronouns[strings.Fields(subj)[0]] {
			return ""
		}
		return subj
	}
	return ""
}

var subjectPronouns = set(`i we you he she they it that this there which who what what's that's it's there's everyone nobody`)

// rejecting finds the rejecting sentence naming name (as written, when
// capitalised is set), not addressed there and not in the cue sentence.
func (r Replacement) rejecting(name string, capitalised bool) (int, bool) {
	ws := nameWords(name)
	if len(ws) == 0 || !r.cancelled && anyPhrase(r.low[r.cue], ws) {
		return 0, false
	}
	for _, i := range r.rejected {
		// Its first word names it: "Leah Marsh" is "leah" later, "The
		// Velvet Hours" "velvet".
		if lex.HasPhrase(r.low[i], ws[0]) && !addressed(r.low[i], ws[0]) && !reports(r.low[i], ws[0]) && (!capitalised || writesCapitalised(r.sents[i], ws[0])) {
			return i, true
		}
	}
	return 0, false
}

// writesCapitalised: sentence holds word (lower case) with a capital first
// letter.
func writesCapitalised(sentence, word string) bool {
	for _, w := range strings.Fields(sentence) {
		if w = strings.Trim(w, `"'(“‘,.;:!?)”’`); nameWord(w) && lex.HasPhrase(strings.ToLower(w), word) {
			return true
		}
	}
	return false
}

// Names are the runs of capitalised words inside a text's sentences: a
// word capitalised because it opens a sentence is no name, nor is a word
// in capitals ("MOVED"), a weekday, a month or a word in markdown marks.
func Names(text string) []string {
	names, _ := nameCandidates(text)
	return names
}

// nameCandidates are text's Names and the capitalised words opening its
// sentences ("Harlow is cheapest"), which may be names or not ("Address
// is …").
func nameCandidates(text string) (names, openers []string) {
	for _, s := range lex.Sentences(text) {
		if strings.HasPrefix(s, "#") {
			continue // a heading is written in title case
		}
		words := strings.Fields(s)
		first := 0
		if len(words) > 1 && listMark.MatchString(words[0]) {
			first = 1 // "- Mum: up to ten" opens with "Mum"
		}
		if first < len(words) && nameWord(words[first]) {
			openers = append(openers, strings.Trim(words[first], `"'(“‘,.;:!?)”’`))
		}
		for first+1 < len(words) && nameWord(words[first]) && nameWord(words[first+1]) && !leadWords[strings.ToLower(words[first])] {
			first++ // "Piggin' Out quoted …": a run opening the sentence may be no name ("Let Leah know" opens with none)
		}
		for i := first + 1; i < len(words); i++ {
			j := i
			for j < len(words) && nameWord(words[j]) && (j == i || !opens(words[j])) {
				j++
				if w := words[j-1]; strings.TrimRight(w, `,.;:!?)"”’`) != w {
					break // a name ends at its punctuation
				}
			}
			if j > i {
				names = append(names, strings.Trim(strings.Join(words[i:j], " "), `"'(“‘,.;:!?)”’`))
				i = j - 1
			}
		}
	}
	return names, openers
}

// nameWord: a word written as a name — an upper-case letter, then a
// lower-case one (after an opening quote or bracket).
func nameWord(w string) bool {
	if strings.ContainsAny(w, "*_`#") {
		return false // markdown: "**Static Files**" is a heading, "`Config`" code
	}
	w = strings.TrimLeft(w, `"'(“‘`)
	r, n := utf8.DecodeRuneInString(w)
	if !unicode.IsUpper(r) {
		return false
	}
	r2, _ := utf8.DecodeRuneInString(w[n:])
	return unicode.IsLower(r2) && !notNames[strings.ToLower(strings.Trim(w, `"'.,;:!?)”’`))]
}

// opens: a word opening a quote or a bracket, which starts a name of its
// own (`the Mandarin Stone "Sage Green"`).
func opens(w string) bool { return strings.ContainsAny(w[:1], `"'(“‘`) }

// nameWords are the words of a name that tell it apart: "Ashgrove House"
// is told by "ashgrove" (a lodge or a street is any), "Harlow & Sons" by
// "harlow", "New Forest" by "forest".
func nameWords(name string) []string {
	var out []string
	for _, w := range lex.Fields(strings.ToLower(name)) {
		if !genericNameWords[w] && !lex.IsRankStopword(w) && len(w) > 2 && !nameAdjectives[w] && !rejectWords[w] {
			out = append(out, w)
		}
	}
	return out
}

var (
	notNames = set(`i i'm i've i'd i'll monday tuesday wednesday thursday friday saturday sunday january february march april may
june july august september october november december mon tue tues wed thu thur thurs fri sat sun jan feb mar apr jun jul aug
sep sept oct nov dec ok okay mum mom dad mother father gran granny grandma grandpa nan nana auntie aunt uncle`)
	leadWords = set(`let tell ask call email text ping message meet invite thanks thank hi hey dear and but so also then if when
with for from at in on to book cancel pay remind`)
	listMark         = regexp.MustCompile(`^(?:[-*•–]|\d+[.)]|\(?[a-z]\))$`)
	genericNameWords = set(`house lodge home street st road rd avenue ave lane way close court place square hotel inn hall
centre center park station airport bridge sons son co company ltd inc llc group ward room`)
	nameAdjectives = set(`new old big little great grand royal north south east west upper lower saint mount`)
)

// addressed: the name opens its sentence's address ("sorry mel, …", "hey
// caroline!"), a speaker spoken to rather than a thing rejected.
func addressed(sentence, word string) bool {
	i := strings.Index(sentence, word)
	if i < 0 {
		return false
	}
	after := strings.TrimLeft(sentence[i+len(word):], " ")
	before := lex.Fields(sentence[:i])
	return (len(before) == 0 || len(before) == 1 && greetings[before[0]]) && (after == "" || strings.HasPrefix(after, ",") || strings.HasPrefix(after, "!"))
}

// reports: the name is who says what the sentence rejects ("Dev pointed
// out we never use more than 200"), the teller, not the thing told of.
func reports(sentence, word string) bool {
	i := strings.Index(sentence, word)
	if i < 0 {
		return false
	}
	after := lex.Fields(sentence[i+len(word):])
	if len(after) > 0 && (after[0] == "s" || after[0] == "also" || after[0] == "just" || after[0] == "then") {
		after = after[1:] // "Dev's pointed out", "Dev also said"
	}
	return len(after) > 0 && reportVerbs[after[0]]
}

var reportVerbs = set(`said says pointed reckons reckoned thinks thought told tells mentioned mentions noticed notices explained
suggested suggests asked asks reminded reminds confirmed confirms replied wrote writes texted emailed messaged warned warns
figured figures found reminded argued argues insists insisted feels felt believes believed knows knew agreed agrees`)

var greetings = set(`hi hey hello thanks thank sorry ok okay oh yes no dear morning night bye`)

func anyPhrase(text string, ws []string) bool {
	for _, w := range ws {
		if lex.HasPhrase(text, w) {
			return true
		}
	}
	return false
}
