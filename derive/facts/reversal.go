package facts

import (
	"regexp"
	"strings"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/internal/prose"
)

// Reversals. A change can be undone: "we've gone back to her old name",
// "scratch the nottingham price change, back to £8", "back to mornings but
// starting at 8". The turns that said the change ("she's Juniper now") read
// as current unless they carry the reversal too. A reversal names what it
// goes back to: a value ("£8", "mornings") or, for "the old/original X",
// what had changed ("name"). The change it undoes is the newest earlier
// update whose sentence holds those words (Reverses); a reversal that
// undoes no update found is shown under nothing.

// Reversal is a sentence going back on a change: the words of what it goes
// back to.
type Reversal struct {
	Back     []string
	Sentence string
	// Latest: it names nothing it goes back to ("back to the original,
	// sat 2nd", "back to plan A"): it undoes the newest change.
	Latest bool
}

// DetectReversal returns the first sentence of text that goes back to an
// earlier value.
func DetectReversal(text string) (Reversal, bool) {
	if !strings.Contains(text, "back to") && !strings.Contains(text, "Back to") && !strings.Contains(text, "after all") {
		return Reversal{}, false
	}
	for _, s := range lex.Sentences(prose.Clean(text)) {
		low := strings.ToLower(s)
		if r, ok := wantedAfterAll(s, low); ok {
			return r, true
		}
		m := backTo.FindStringSubmatch(low)
		if m == nil || conditional.MatchString(m[1]) || (m[2] == "" && notReversal(m[1], m[3])) {
			continue // "the old X" says a reversal whatever the verb: "went back to the original plan"
		}
		var back []string
		if m[2] != "" { // "her old name": what changed, not a value
			back = thingWords(m[3])
		} else if v := value(m[3]); len(v) > 0 && !notBack[strings.Fields(v[0])[0]] {
			back = lex.Keywords(v[0])
			if hasDigit(v[0]) {
				// "back to £8", "node 20": the number with what it
				// numbers, each a word of the change's sentence ("Node
				// 22 now, not 20").
				back = back[:0]
				for _, w := range lex.Fields(v[0]) {
					if hasDigit(w) || !lex.IsRankStopword(w) {
						back = append(back, w)
					}
				}
			}
		}
		switch {
		case undoesLatest.MatchString(m[0]):
			return Reversal{Sentence: s, Latest: true}, true
		case len(back) > 0:
			return Reversal{Back: back, Sentence: s}, true
		}
	}
	return Reversal{}, false
}

// wantedAfterAll reads a thing wanted or done after all, once dropped:
// "marketing wants reviews after all", "the Tuesday Crew CAN do sunday
// after all". What it goes back to is the thing named; "not … after all"
// drops it (an update), and a condition or a question weighs it.
func wantedAfterAll(s, low string) (Reversal, bool) {
	m := afterAll.FindStringSubmatch(low)
	if m == nil || conditional.MatchString(low) || strings.Contains(low, "?") || negated.MatchString(m[1]) {
		return Reversal{}, false
	}
	back := lex.Keywords(m[3])
	if len(back) == 0 {
		return Reversal{}, false
	}
	return Reversal{Back: back, Sentence: s}, true
}

var (
	afterAll = regexp.MustCompile(`^(.*?)\b(wants?|wanted|needs?|needed|can do|can make|can come|is on|are on|'s on|is back on|are back on|is happening|are happening) (?:the |our |my )?([\w'-]+(?: [\w'-]+){0,2}?) after all\b`)
	negated  = regexp.MustCompile(`\b(?:not|no|never|don't|doesn't|didn't|can't|cannot|won't|isn't|aren't)\b`)
)

// notReversal: what comes before "back to" (before) says a way
// somewhere, an answer or a postponement, not a return to value. Going
// back to something numbered ("Node 20", "£8") is a return: no place is
// said so.
func notReversal(before, value string) bool {
	if postponed.MatchString(before) {
		return true
	}
	return travels.MatchString(before) && !(hasDigit(value) && goes.MatchString(before) && !otherWay.MatchString(before))
}

// Reverses reports whether the update sentence u (as written) states the
// change r goes back on: it holds every word of what r goes back to.
func (r Reversal) Reverses(u string) bool {
	low := strings.ToLower(u)
	for _, w := range r.Back {
		if !lex.HasPhrase(low, w) {
			return false
		}
	}
	return true
}

var (
	// backTo: "(we've gone) back to (her old) name", "back to £8". What
	// comes before decides whether it is a reversal (notReversal).
	backTo = regexp.MustCompile(`^(.*?)\bback to (?:the |her |his |our |my |their |its )?(old |original |previous |usual |first )?` + valuePhr + clauseEnd)
	// postponed: a time "pushed back to" or "put back to" is postponed,
	// not restored.
	postponed = regexp.MustCompile(`\b(?:dates|dated|dating|push|pushed|pushing|put|putting|set|moved|move|moving|bumped)\b[^,]*$`)
	// travels: going somewhere or answering someone ("get back to you",
	// "drive back to the hotel", "went back to sleep").
	travels = regexp.MustCompile(`\b(?:` + otherWays + `|go|going|gone|went)\b[^,]*$`)
	// otherWays are the verbs of travels other than going.
	otherWays = `get|getting|got|come|coming|came|write|writing|wrote|reply|report|drive|driving|drove|walk|walking|walked|fly|flying|flew|head|heading|headed|run|ran|take|took|bring|brought|send|sent|way|ride|rode|travel|travelled|traveled|sail`
	otherWay  = regexp.MustCompile(`\b(?:` + otherWays + `)\b[^,]*$`)
	// goes: people going back to a version or an amount as well as to a
	// place ("we're going back to Node 20 for now"; a refund "going back
	// to the Visa ending 4471" returns nothing).
	goes = regexp.MustCompile(`\b(?:i|we|they|he|she|you|everyone)(?:'re|'m|'s|'ve|'ll| are| am| is| have| will)? (?:just |now |all |probably )?(?:go|going|gone|went)\b[^,]*$`)
	// undoesLatest: going back to what was, naming nothing of it.
	undoesLatest = regexp.MustCompile(`\bback to (?:the |our |my )?(?:original|old|previous|first|usual)(?: plan| one| idea| time| date| day| arrangement)?(?:[,.;!]|$| then| after all| again)|\bback to plan a\b`)
	notBack      = set(`normal work school sleep bed home basics square you me him her them us it this that there here life reality earth`)
)
