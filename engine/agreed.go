package engine

import (
	"regexp"
	"slices"
	"strings"

	"github.com/contextd/contextd/derive/facts"
	"github.com/contextd/contextd/internal/lex"
)

// A value settled on. "is $40 a day ok?" then "deal, $35 a day it is";
// "saturday 13 june?" then "ok Saturday 20 June it is, sorry Marco": the
// later turn names the value agreed, the earlier one asked about another
// of its kind. Nothing names what the two values are of (no update
// pattern reads "X it is"), but a proposal asked about shortly before,
// of the same kind, with another value, is what the agreement settled
// otherwise. Only a question is marked: "lunch at 1pm" said as a fact
// may be another thing's time.

// agreedValue is the value a person settled on ("$35 a day it is"): its
// value tokens and kinds.
type agreedValue struct {
	phrase      string   // what was agreed, lower case ("saturday 20 june")
	vals, kinds []string // its tokens holding a digit; its kinds
}

// agreedReach is how far back a proposal the agreement settles may be.
const agreedReach = 6

// agreedKinds are the kinds of value people settle on in a chat: a price,
// a time, a day.
var agreedKinds = []string{lex.KindMoney, lex.KindTime, lex.KindDay}

// itIs is a clause ending "… it is": what comes before it, back to the
// clause's start or a word of assent (a time's colon and a price's point
// inside it: "ok 13:00 it is", "£37.50 a day it is"). "it is" must end
// its clause: "at 3pm it is too hot" settles nothing.
var itIs = regexp.MustCompile(`(?:^|[,;!] |\b(?:ok|okay|deal|fine|great|perfect|agreed|right|so|yes|yep|sure|then)\b,? )([^,;!?]{1,40}?) it is(?:[,;:!.)]|\s*$|\s+then\b)`)

// agreedIn reads the value a person's turn (content) settles on.
func agreedIn(content string) (agreedValue, string, bool) {
	low := strings.ToLower(content)
	if !strings.Contains(low, " it is") {
		return agreedValue{}, "", false
	}
	for _, s := range lex.Sentences(content) {
		ls := strings.ToLower(s)
		m := itIs.FindStringSubmatch(ls)
		if m == nil || strings.Contains(ls, "?") {
			continue
		}
		kinds := slices.DeleteFunc(lex.ValueKinds(m[1]), func(k string) bool { return !slices.Contains(agreedKinds, k) })
		vals := slices.DeleteFunc(valueTokens(m[1]), func(v string) bool { return !strings.ContainsAny(v, "0123456789") })
		if len(kinds) == 0 || len(vals) == 0 {
			continue
		}
		return agreedValue{phrase: m[1], vals: vals, kinds: kinds}, s, true
	}
	return agreedValue{}, "", false
}

// settles: an older turn (low, lower case) asked about another value of
// one of a's kinds, in a question naming none of a's values.
func (a agreedValue) settles(low string) bool {
	for _, s := range lex.Sentences(low) {
		if !strings.Contains(s, "?") {
			continue
		}
		ks := lex.ValueKinds(s)
		if !slices.ContainsFunc(a.kinds, func(k string) bool { return slices.Contains(ks, k) }) {
			continue
		}
		if a.same(s) {
			continue // "lunch at 1pm?" … "1pm it is": asked and agreed, no change
		}
		return true
	}
	return false
}

// same: sentence s (lower case) names the agreed value: the same day
// however written, or one of its numbers.
func (a agreedValue) same(s string) bool {
	if slices.Contains(a.kinds, lex.KindDay) && facts.SameDay(a.phrase, s) {
		return true
	}
	return slices.ContainsFunc(a.vals, func(v string) bool {
		return lex.HasPhrase(s, v) || len(v) <= 2 && slices.ContainsFunc([]string{"st", "nd", "rd", "th"}, func(o string) bool { return lex.HasPhrase(s, v+o) }) // "the 23rd?" … "23 May it is"
	})
}
