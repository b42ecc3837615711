package engine

import (
	"regexp"
	"slices"
	"strings"

	"github.com/contextd/contextd/derive/facts"
	"github.com/contextd/contextd/internal/lex"
)

// Values restated. The update patterns (facts.DetectUpdate) read the
// phrasings they know; people have more ("nurse says folic acid on
// Wednesdays now", "they can only do 7:15 for the rehearsal dinner now,
// same back room"). What such a sentence has in common with the one it
// changes is not its phrasing but its shape: a person states, with a word
// of change, a value of a kind the older sentence also states (a day, a
// time, an amount, a code …), about the same thing — two of its naming
// words are the older sentence's ("folic acid", "back room"), or one for
// an identifier ("the printer is 192.168.10.40 now") — and the value is
// another. A retrieved turn holding such an older sentence is
// marked with the later one, as an update's mark.

// restatement is a person's sentence stating a value with a word of
// change: its value kinds (lex.ValueKinds), its values and its naming
// words.
type restatement struct {
	kinds, vals, words []string
	low                string // the sentence, lower case
	// turnVals are the fields of its turn (lower case) that may hold a
	// value namesOld looks for: a hot chat's update cache keeps every
	// restatement, and the whole turn in each was 7 MB of a 1,000-chat
	// server's live heap (turnValueFields).
	turnVals string
	whole    bool // a short turn read whole, not one sentence
	retires  bool // it holds a word retiring a value (retiresOld looks only then)
}

// restatedMax bounds the sentences of one turn read as restatements, and
// restatedWords a sentence's length: a long sentence names too much to
// say which thing it changed.
const (
	restatedMax           = 2
	restatedWords         = 30
	restatedTurnSentences = 3
	restatedTurnWords     = 40 // an older turn read whole: a note or a list of a few lines ("Saved: - Brightwater … - Coordinator Sue, 0113 …")
)

// restatedSentence is a sentence of a turn and what it restates.
type restatedSentence struct {
	text string
	r    restatement
}

// restatementsOf are the sentences of a person's turn (content) that may
// restate a value.
func restatementsOf(content string) []restatedSentence {
	var out []restatedSentence
	ss := lex.Sentences(content)
	whole := len(ss) > 1 && len(ss) <= restatedTurnSentences
	if whole {
		// A short turn is read whole too: its word of change and its value
		// may be in two sentences ("Changed the key safe btw … new code:
		// 7312").
		ss = append([]string{strings.Join(strings.Fields(content), " ")}, ss...)
	}
	var turn string // read once, when a sentence restates
	for i, s := range ss {
		low := strings.ToLower(s)
		if !restates(low) {
			continue
		}
		if turn == "" {
			turn = turnValueFields(strings.ToLower(content))
		}
		r := restatement{kinds: lex.ValueKinds(s), vals: valueTokens(low), words: namingWords(low), low: low, turnVals: turn, whole: whole && i == 0,
			retires: slices.ContainsFunc(retiring, func(c string) bool { return lex.HasPhrase(low, c) })}
		if len(r.kinds) == 0 || len(r.vals) == 0 || len(r.words) < r.naming(r.kinds) {
			continue
		}
		if out = append(out, restatedSentence{s, r}); len(out) == restatedMax {
			break
		}
	}
	return out
}

// turnValueFields are the fields (between ASCII spaces) of a turn (lower
// case) that hold a digit, '@' or '#', or a weekday's stem, joined by
// spaces. namesOld asks whether the turn names a value token (one of
// those, without spaces) as a phrase: every such match lies within one
// field, and a space is no word byte, so asking these fields answers as
// asking the whole turn.
func turnValueFields(low string) string {
	var b strings.Builder
	for _, f := range strings.FieldsFunc(low, asciiSpace) { // a non-ASCII space is a word byte to lex.HasPhrase
		if !strings.ContainsAny(f, "0123456789@#") && !holdsWeekdayStem(f) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f)
	}
	return b.String()
}

func asciiSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f'
}

// holdsWeekdayStem: f holds the start every way of writing a weekday
// begins with (lex.IsWeekday: "weds", "thurs", "saturdays").
func holdsWeekdayStem(f string) bool {
	for _, d := range [...]string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"} {
		if strings.Contains(f, d) {
			return true
		}
	}
	return false
}

// restates: a sentence (lower case) that states a change: a word of change,
// not a question, not one weighing the present ("for now", "not sure").
// A request to use one's new identifier is no question: "could you send
// it to my new address instead? Oudegracht 214-bis, 3511 NT Utrecht"
// gives the address (a turn read whole).
func restates(low string) bool {
	if strings.Contains(low, "?") && !asksToUseNew.MatchString(low) || looksLikeCode(low) || len(strings.Fields(low)) > restatedWords || asksFirst.MatchString(low) || weighs.MatchString(low) {
		return false
	}
	for _, c := range changeWords {
		if lex.HasPhrase(low, c) && (c != "update" || !softwareUpdate.MatchString(low)) {
			return true
		}
	}
	return false
}

// softwareUpdate: "update" naming a program's new version ("since
// yesterday's update", "the firmware update"), no change of a value.
var softwareUpdate = regexp.MustCompile(`(?:\b(?:yesterday|today|tonight|last night|this morning|[a-z]+day)(?:'s|’s)|\b(?:firmware|software|app|system|security|os|ios|android|windows|driver)) update\b`)

// looksLikeCode: a line of a program, whose "now" is Date.now() and whose
// numbers are its constants.
func looksLikeCode(s string) bool {
	return strings.ContainsAny(s, "{}") || strings.Contains(s, "&&") || strings.Contains(s, "||") || strings.Contains(s, "=>") ||
		strings.Contains(s, "==") || strings.Contains(s, "();") || strings.Contains(s, "()")
}

var (
	changeWords = []string{"now", "instead", "changed", "moved", "moving", "actually", "update", "updated", "correction", "scrap", "nvm",
		"after all", "switched", "no longer", "anymore", "cancelled", "canceled", "pushed", "bumped", "postponed", "rescheduled",
		"going up", "gone up", "went up", "increased", "raised", "extended", "make it", "change it to", "changing",
		// a new identifier, said of its kind: "new number is 07700 914 583"
		"new number", "new mobile", "new phone", "new code", "new email", "new address", "new iban", "new account number"}
	asksToUseNew = regexp.MustCompile(`\b(?:could|can|would|will) you\b[^?]*\b(?:my|our) new (?:address|number|mobile|phone|email|e-mail)\b[^?]*\?\s*\S`)
	asksFirst    = regexp.MustCompile(`^(?:what|what's|whats|where|when|who|why|how|which|is|are|do|does|did|can|could|would|will|should)\b`)
	weighs       = regexp.MustCompile(`\b(?:right|for|just|until|till|by) now\b|\bnot sure\b|\bworried\b|\bwondering\b`)
)

// valueTokens are the words of a sentence (lower case) that are values:
// holding a digit, an '@' or a '#', naming a weekday, or a host.
func valueTokens(low string) []string {
	var out []string
	for _, w := range strings.Fields(low) {
		w = strings.Trim(w, ".,;:!?()\"'`")
		if strings.ContainsAny(w, "0123456789@#") || lex.IsWeekday(w) || strings.Contains(w, ".") && slices.Contains(lex.ValueKinds(w), lex.KindHost) {
			out = append(out, w) // a host names itself, digits or none ("sftp.koszyk-partners.net")
		}
	}
	return out
}

// namingWords are the words of a sentence (lower case) that may name a
// thing: four letters or more, no function word, no word of change ("changed"
// names nothing changed), no day, month or number.
func namingWords(low string) []string {
	if strings.Contains(low, "@") {
		low = withoutMailboxes(low) // "info@janesbakes.com" names janesbakes, not its "info"
	}
	var out []string
	for _, w := range lex.Words(low) {
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s") // "door code's been changed" names the door code
		if len(w) >= 4 && !slices.Contains(changeWords, w) && !lex.IsRankStopword(w) && !lex.IsWeekday(w) && !lex.IsMonth(w) && !trailing[w] &&
			strings.IndexAny(w, "0123456789") < 0 && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// withoutMailboxes is low with each email's mailbox left out: "info",
// "hello", "accounts" are every firm's; the domain names the firm.
func withoutMailboxes(low string) string {
	fs := strings.Fields(low)
	for i, f := range fs {
		if _, domain, ok := strings.Cut(f, "@"); ok {
			fs[i] = domain
		}
	}
	return strings.Join(fs, " ")
}

// restatedIn: a sentence of content (low: the same in lower case) states
// a value of one of r's kinds about the same thing (naming words in
// common) where r states another value.
func (r restatement) restatedIn(content, low string) bool {
	if in := shared(r.words, low); in < r.naming(r.kinds) && (in == 0 || !r.namesOld(low)) && !r.retiresOld(low) {
		return false // no sentence of it, nor the whole, names the thing: the common case, read without splitting
	}
	ss := lex.Sentences(content)
	for _, s := range ss {
		if r.statedIn(s, 2) {
			return true
		}
	}
	// A short turn (three sentences, or a few lines) is read whole too, as
	// a restatement is, when the sentence stating the value names the thing
	// once: "Home carers: the agency is Brightwater … Coordinator is Sue,
	// 0113 496 0725" names its coordinator's agency in another sentence.
	// Not when the restatement is itself a turn read whole: two wholes
	// share words and kinds by chance ("Tamsin said yes to £13! … 36
	// small mugs now" is no change of "Ordered 100 from Kite … large
	// mugs … £84.99").
	short := len(ss) <= restatedTurnSentences || len(strings.Fields(content)) <= restatedTurnWords
	if r.whole || len(ss) < 2 || !short || !r.statedIn(strings.Join(strings.Fields(content), " "), 2) {
		return false
	}
	return slices.ContainsFunc(ss, func(s string) bool { return r.statedIn(s, 1) })
}

// statedIn: sentence s states a value of one of r's kinds where r states
// another, and holds at least n of r's naming words (or one naming its
// thing, for an identifier: naming).
func (r restatement) statedIn(s string, n int) bool {
	low := strings.ToLower(s)
	in := shared(r.words, low)
	retires := r.retiresOld(low)
	if in == 0 && !retires || !slices.ContainsFunc(r.vals, func(v string) bool { return !lex.HasPhrase(low, v) }) ||
		!slices.ContainsFunc(valueTokens(low), r.replaces) {
		return false
	}
	ks := lex.ValueKinds(s)
	both := slices.DeleteFunc(slices.Clone(r.kinds), func(k string) bool { return !slices.Contains(ks, k) })
	if len(both) == 0 {
		return false
	}
	if in >= n || retires || r.namesOld(low) {
		return true
	}
	// One naming word for an identifier, when it names the thing, not the
	// identifier's kind ("number", "code": Dale's number is not Chloe's).
	if r.naming(both) > 1 {
		return false
	}
	ws := namingWords(low) // whole words: "house" is not named in "Chonk_2G_house"
	return slices.ContainsFunc(r.words, func(w string) bool { return !kindNouns[w] && slices.Contains(ws, w) })
}

// namesOld: the restatement's turn names, outside the restatement, the
// number of a value of the older sentence (low) that it replaces, a value
// of a kind it restates: "it's 68€ now for members at all four huts. the
// 62 was last year's list" names the "62€ for members" it changes, one
// naming word in common ("members") where an amount needs two. A number
// of one digit names nothing this way (a count, a day of the month), nor
// one of no kind restated ("2016 Toyota Yaris … €9,950" is not named by
// "worth it for a 2016 car?").
func (r restatement) namesOld(low string) bool {
	for _, v := range valueTokens(low) {
		n := strings.Trim(v, "$€£%")
		if len(n) < 2 || !r.replaces(v) || lex.HasPhrase(r.low, n) || !lex.HasPhrase(r.turnVals, n) ||
			!slices.ContainsFunc(lex.ValueKinds(v), func(k string) bool { return slices.Contains(r.kinds, k) }) {
			continue
		}
		return true
	}
	return false
}

// retiresOld: the restatement names, as the one going and alone in its
// clause, a value of the older sentence (low) that names itself (four
// characters or more, a digit among them): "new number is 07911 402557,
// the 233140 one won't work after friday" retires "my number is 07911
// 233140", whatever words the two sentences share. Alone: in "new number
// is 07700 900 482, the old one is dead" the clause holding "07700" holds
// the new number too, and another person's "07700 900 117" is not retired.
// (A day may qualify it: "… won't work after friday".)
func (r restatement) retiresOld(low string) bool {
	if !r.retires {
		return false // the common case: the older turn is not split
	}
	for _, v := range valueTokens(low) {
		if len(v) < 4 || !strings.ContainsAny(v, "0123456789") || !lex.HasPhrase(r.low, v) {
			continue
		}
		if clause, _ := clauseOf(r.low, v); retired(r.low, v) && !slices.ContainsFunc(valueTokens(clause), func(o string) bool { return o != v && strings.ContainsAny(o, "0123456789") }) {
			return true
		}
	}
	return false
}

// kindNouns name a kind of identifier, not the thing it identifies.
var kindNouns = map[string]bool{"number": true, "numbers": true, "code": true, "codes": true, "phone": true, "mobile": true,
	"email": true, "address": true, "account": true, "line": true, "reference": true, "details": true, "contact": true}

// naming is how many naming words a restatement of values of these kinds
// shares with the sentence it changes: two, or one for an identifier (an
// address, a phone number, an email, a code: "The printer is
// 192.168.10.40 now" names the printer of "IP 192.168.1.40"), which no
// other thing shares by chance as it shares a day, a time or an amount.
func (restatement) naming(kinds []string) int {
	for _, k := range kinds {
		if k == lex.KindHost || k == lex.KindEmail || k == lex.KindPhone || k == lex.KindCode {
			return 1
		}
	}
	return 2
}

// replaces: the restatement does not state the older value v (as
// written, or as the same day): a list restating it beside other values
// ("Updated: methotrexate Saturday 8pm, folic acid Wednesday 8pm") leaves
// "folic acid on Wednesdays now" current.
func (r restatement) replaces(v string) bool {
	if lex.HasPhrase(r.low, v) {
		return retired(r.low, v)
	}
	return !facts.SameDay(v, r.low)
}

// retired: sentence low names value v as the one going ("new number is
// 555-0193 for anything post-op, the 555-0148 line is only for scheduling
// now", "under a new reference, RF-31377 (the old one, RF-30918, has been
// cancelled)"): the clause holding v — back to a comma, on to the end of
// its sentence or bracket — says it no longer holds.
func retired(low, v string) bool {
	clause, ok := clauseOf(low, v)
	return ok && slices.ContainsFunc(retiring, func(c string) bool { return lex.HasPhrase(clause, c) })
}

// clauseOf is the clause of low holding v's first occurrence: back to a
// comma, a semicolon, a bracket or its sentence's start, on to the end of
// its sentence or bracket.
func clauseOf(low, v string) (string, bool) {
	i := lex.PhraseIndex(low, v) // "2345" is not inside "12345"
	if i < 0 {
		return "", false
	}
	from := strings.LastIndexAny(low[:i], ",;(") + 1
	for _, end := range []string{". ", "! ", "? "} { // not back past its sentence: "the old number is dead. new one is 07700 900562"
		if j := strings.LastIndex(low[:i], end); j >= 0 {
			from = max(from, j+len(end))
		}
	}
	to := len(low)
	for _, end := range []string{";", ")", ". ", "! ", "? "} {
		if j := strings.Index(low[i+len(v):], end); j >= 0 {
			to = min(to, i+len(v)+j)
		}
	}
	return low[from:to], true
}

// retiring says a value no longer holds. "the old …" is not among them:
// it is said of the value replaced or of the one replacing it
// ("DRV-20688 replaces the old booking").
var retiring = []string{"cancelled", "canceled", "going away", "goes away", "no longer", "doesn't work", "does not work",
	"won't work", "wont work", "will not work",
	"dead", "only for", "anymore", "any more", "stopped", "closed", "scrapped", "expired"}

// shared counts the words of ws that low holds.
func shared(ws []string, low string) int {
	n := 0
	for _, w := range ws {
		if lex.HasPhrase(low, w) {
			n++
		}
	}
	return n
}

// confirmation opens an assistant's turn that reports a change made, not
// one it advises: "Updated: Chloe Barnes (Flat A) is now on 07412 558
// 903", "Done, moved you to Sat 30 May", "Corrected: …". An assistant's
// other sentences are left out: "you could move it to 8:00" advises.
var confirmation = regexp.MustCompile(`^(?:updated|done|moved|changed|corrected|rebooked|switched)\b[:,.!—–-]`)

// confirmsChange: content opens as a confirmation of a change.
func confirmsChange(content string) bool {
	return confirmation.MatchString(strings.ToLower(strings.TrimSpace(content)))
}
