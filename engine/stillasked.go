package engine

import (
	"regexp"
	"slices"
	"strings"

	"github.com/contextd/contextd/derive/facts"
	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/memory"
)

// A value asked after and answered with another. "wait is it still £320
// now they moved the day?" answered "oh no they knocked £20 off for the
// hassle. so £300 on the day" changed the £320 said before, in words no
// update pattern reads: the question names the old value, the answer
// gives another of its kind. Read only when the question asks whether
// the value still holds ("still"), names one value that names itself
// (an amount, a clock time, a dated day, a code; not a bare number or a
// weekday, which many things share), and the next turn is another
// person's, states a value of that kind, does not repeat the old one and
// does not open by agreeing ("yes, Thursday 9 April" is the 9th said
// again). Every earlier turn stating the old value is marked. A bare
// number is read when the question names its thing ("and price? still
// 15?" answered "make it 18"): then only a turn naming that thing too
// states it ("price £15 at the table", not "we sold like 15 shirts"), and
// the mark quotes the question with its answer.

// stillAsked is a turn asking whether a value still holds: its seq and
// speaker, the value (lower case) and its kind.
type stillAsked struct {
	seq        int64
	role, name string
	old, kind  string
	words      []string // for a bare number, the words naming its thing
	asked      string   // and the question, quoted with its answer
}

// stillAnswer is what an answer changed: old to new (and, for a bare
// number, the words naming its thing).
type stillAnswer struct {
	old, new string
	words    []string
}

// bareKind is the kind of a bare number asked after with its thing named
// in the question ("and price? still 15?"): the number alone names
// nothing, so only a turn naming the thing too states it.
const bareKind = "#number"

// asksStill reads m as a question whether one value still holds.
func asksStill(m memory.Message) (*stillAsked, bool) {
	if !strings.Contains(m.Content, "?") || !lex.EndsWithQuestion(m.Content) {
		return nil, false
	}
	last := strings.ToLower(lex.LastQuestion(m.Content))
	if !lex.HasPhrase(last, "still") {
		return nil, false
	}
	var v, kind string
	for _, w := range valueTokens(last) {
		k, ok := selfNamingKind(w)
		if !ok {
			continue
		}
		if v != "" {
			return nil, false // two values: which one changed is not said
		}
		v, kind = w, k
	}
	if v == "" {
		return askedBare(m, last)
	}
	return &stillAsked{seq: m.Seq, role: string(m.Role), name: m.Name, old: v, kind: kind}, true
}

// askedBare reads a question whether a bare number still holds, its thing
// named in the turn: "and price? still 15?".
func askedBare(m memory.Message, last string) (*stillAsked, bool) {
	var v string
	for _, w := range valueTokens(last) {
		if !isNumber(w) {
			return nil, false
		}
		if v != "" {
			return nil, false // two numbers: which one changed is not said
		}
		v = w
	}
	words := slices.DeleteFunc(namingWords(strings.ToLower(m.Content)), func(w string) bool { return w == "still" })
	if v == "" || len(words) == 0 {
		return nil, false
	}
	return &stillAsked{seq: m.Seq, role: string(m.Role), name: m.Name, old: v, kind: bareKind, words: words, asked: shortQuote(m.Content)}, true
}

// selfNamingKind is the kind of a value token that names one thing: an
// amount, a clock time, a code, a phone number, an address, or a day
// written with its number ("3rd", "12 nov" read by its number).
func selfNamingKind(w string) (string, bool) {
	if !strings.ContainsAny(w, "0123456789@") {
		return "", false // a weekday: every week has one
	}
	if facts.OrdinalDay(w) {
		return lex.KindDay, true
	}
	ks := lex.ValueKinds(w)
	if len(ks) != 1 {
		return "", false
	}
	return ks[0], true
}

// agrees: an answer opening by agreeing restates, whatever it writes.
var agrees = regexp.MustCompile(`^\W*(?:yes|yep|yeah|yup|ya|yh|aye|still|same|correct|right|sure|ok|okay|indeed|exactly|confirmed|that's right|thats right)\b`)

// answeredBy reads m as the answer that changed the value asked after.
func (a *stillAsked) answeredBy(m memory.Message) (chatUpdate, bool) {
	if m.Seq != a.seq+1 || string(m.Role) == a.role && m.Name == a.name {
		return chatUpdate{}, false
	}
	low := strings.ToLower(m.Content)
	if lex.HasPhrase(low, a.old) || agrees.MatchString(low) {
		return chatUpdate{}, false
	}
	if a.kind == bareKind && stays.MatchString(low) {
		return chatUpdate{}, false // "Ana says the price stays, we only have 3 shirts left"
	}
	for _, s := range lex.Sentences(m.Content) {
		if strings.HasSuffix(strings.TrimSpace(s), "?") {
			continue // "can we do 11:00? stuck at work" asks, it does not answer
		}
		sl := strings.ToLower(s)
		for _, w := range valueTokens(sl) {
			k, ok := selfNamingKind(w)
			if a.kind == bareKind {
				k, ok = bareKind, isNumber(w) && bareAnswer(sl, w, a.words)
			}
			if ok && k == a.kind && w != a.old {
				q := updateQuote(m.Content, s)
				if a.asked != "" {
					q = "asked \"" + a.asked + "\": " + q // "make it 18" says 18 of what only after its question
				}
				return chatUpdate{seq: m.Seq, at: m.CreatedAt, still: &stillAnswer{old: a.old, new: w, words: a.words}, quote: q}, true
			}
		}
	}
	return chatUpdate{}, false
}

// stays: an answer saying the value holds, whatever numbers it gives.
var stays = regexp.MustCompile(`\b(?:stays|staying|same|unchanged|as before|as it was|doesn't change|no change)\b`)

// bareAnswer: number n in sentence s (lower case) answers a bare number
// asked after, not counting something else ("3 shirts left", "the 2
// lists"): it ends its clause, or what follows says what it is in
// (a currency word, "now", "each") or is the thing asked after.
func bareAnswer(s, n string, words []string) bool {
	fs := strings.Fields(s)
	for i, f := range fs {
		if strings.Trim(f, `.,;:!?()"'`) != n {
			continue
		}
		if strings.ContainsAny(f[len(f)-1:], ".,;:!)") || i+1 == len(fs) {
			return true
		}
		next := strings.Trim(fs[i+1], `.,;:!?()"'`)
		if bareAfter[next] || slices.Contains(words, next) {
			return true
		}
	}
	return false
}

var bareAfter = lex.Set(`now each then instead quid pounds euros euro dollars bucks pp per a an at from`)

// changes: a turn (lower case) states the old value and not the new.
func (s *stillAnswer) changes(low string) bool {
	if len(s.words) > 0 { // a bare number: maybe written as an amount ("£15"), its thing named
		return namesAny(low, s.words) && saysNumber(low, s.old) && !saysNumber(low, s.new)
	}
	return lex.HasPhrase(low, s.old) && !lex.HasPhrase(low, s.new)
}

// saysNumber: low holds number n alone or as an amount ("15", "£15",
// "15€").
func saysNumber(low, n string) bool {
	for _, v := range [...]string{n, "£" + n, "$" + n, "€" + n, n + "€"} {
		if lex.HasPhrase(low, v) {
			return true
		}
	}
	return false
}

// readUpdates appends what m changed (readUpdate) and what it changed as
// the answer to the question before it (asked, nil when that turn asked
// nothing), and returns the question m asks in turn.
func readUpdates(ups []chatUpdate, asked *stillAsked, m memory.Message) ([]chatUpdate, *stillAsked) {
	ups = append(ups, readUpdate(m, ups)...)
	if asked != nil {
		if c, ok := asked.answeredBy(m); ok {
			ups = append(ups, c)
		}
	}
	next, _ := asksStill(m)
	return ups, next
}
