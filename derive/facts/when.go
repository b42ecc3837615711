package facts

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/contextd/contextd/internal/lex"
)

// Times moved. "moved dinner to 8" names what changed by one word and
// not what it was. The word alone ("dinner") is a topic: most sentences
// holding it say nothing of when. But the new value is a time, so what
// changed is a time said of that thing: an older sentence naming it with
// another clock time or day ("dinner at 19:30") is what the update made
// stale, and one naming it without any ("cheap dinner wherever") is not.

// timeKind is what kind of time a value is: a clock time, a day, both.
type timeKind uint8

const (
	clockTime timeKind = 1 << iota
	dayTime
	// partTime is a time of day by its name ("every morning", "night
	// time"): another such name is another time, a clock time may be
	// within it ("dinner in the evening" is no other time than 8).
	partTime
)

var (
	// clockRe: "19:30", "8pm", "8.30 am", "noon". A bare number is no
	// clock time in a sentence ("table for 4").
	clockRe = regexp.MustCompile(`\b(?:[01]?\d|2[0-4])(?:[:.][0-5]\d)? ?(?:am|pm|a\.m\.|p\.m\.)(?:\W|$)|\b(?:[01]?\d|2[0-4]):[0-5]\d\b|\b(?:noon|midday|midnight)\b`)
	// dayRe: a weekday ("fridays" too: a schedule), "tomorrow", "the 14th", "14 May", "May 14".
	// A short weekday is a day before a number ("Fri 6/12", "sat 14th"),
	// not in "the sun is out".
	dayRe = regexp.MustCompile(`\b(?:(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?|tues|thurs|today|tonight|tomorrow)\b|\b(?:mon|tue|wed|weds|thu|fri|sat|sun)\.? \d|\b\d{1,2}(?:st|nd|rd|th)\b|\b\d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* \d{1,2}\b`)
	// partOfDay: a time of day by its name ("switched the amlodipine to
	// night time" after "amlodipine 5 mg every morning"). "3 nights" is
	// a stay, not a time.
	partOfDay = regexp.MustCompile(`\b(?:morning|evening|afternoon|night ?time|bedtime|lunchtime|teatime)s?\b`)
	bareHour  = regexp.MustCompile(`^(?:[1-9]|1\d|2[0-4])(?::[0-5]\d)?$`)
)

// kindOf is the kind of time a value phrase (lower case) is; 0 for none.
// A bare hour ("8", "8:30") is a clock time as a value: "moved dinner to
// 8" ("0.25" is none).
func kindOf(v string) timeKind {
	k := kindsIn(v)
	if bareHour.MatchString(v) {
		k |= clockTime
	}
	return k
}

// kindsIn are the kinds of time a sentence (lower case) says.
func kindsIn(s string) timeKind {
	var k timeKind
	if clockRe.MatchString(s) {
		k |= clockTime
	}
	if partOfDay.MatchString(s) {
		k |= partTime
	}
	if dayRe.MatchString(s) {
		k |= dayTime
	}
	return k
}

// MovedTime reports whether u moved one named thing to a time without
// saying what it was ("moved dinner to 8", "standup is at 10:30 now").
func MovedTime(u Update) bool {
	_, ok := timeSubject(u)
	return ok && len(u.Old) == 0 && len(u.New) == 1 && kindOf(u.New[0]) != 0 &&
		!strings.ContainsAny(u.New[0], "$€£") // "$149/night" is a price, by the night
}

// timeSubject is the one word naming the thing whose time moved: the
// subject's word, or the word before "date", "time" or "day", which name
// what changed of it ("my start date got pushed to October 1" moves when
// something starts).
func timeSubject(u Update) (string, bool) {
	var ws []string
	for _, w := range u.Subject {
		if !timeNouns[w] {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 && len(u.Subject) == 1 && u.Subject[0] == "deadline" {
		ws = u.Subject // "the deadline got pushed to Friday": a thing of its own
	}
	if len(ws) == 0 || len(ws) > 2 || len(u.Subject) > 3 {
		return "", false
	}
	return ws[0], true
}

// timeSubjectRest are the subject's other word naming the thing whose
// time moved, if any: "trash pickup" moved is said of both words ("trash
// … go out tuesday night, pickup is early wed").
func timeSubjectRest(u Update) []string {
	var ws []string
	for _, w := range u.Subject {
		if !timeNouns[w] {
			ws = append(ws, w)
		}
	}
	return ws[min(1, len(ws)):]
}

var timeNouns = set(`date time day deadline`) // "the kit deadline": when the kit is due

// SaysOtherTime reports whether text (lower case) has a sentence naming
// the thing u moved with a time of the kind u moved it to, other than
// the new one: "dinner at 19:30" after "moved dinner to 8".
func SaysOtherTime(u Update, text string) bool {
	subj, _ := timeSubject(u)
	if !MovedTime(u) {
		return false
	}
	want, rest := kindOf(u.New[0]), timeSubjectRest(u)
	other := func(s string) bool {
		for _, w := range rest {
			if !hasWord(s, w) {
				return false
			}
		}
		return kindsIn(s)&want != 0 && !lex.HasPhrase(s, u.New[0])
	}
	if sentenceNaming(text, subj, other) || nextSentenceGives(text, subj, other) {
		return true
	}
	// "the kit deadline" moved: a text naming the kit, with a sentence
	// giving its deadline another day ("Kit! … Order deadline Friday 21
	// August."), said it too.
	for _, w := range u.Subject {
		if w != subj && timeNouns[w] && strings.Contains(text, subj) && hasWord(text, subj) && sentenceNaming(text, w, other) {
			return true
		}
	}
	return false
}

// MovedValue reports whether u moved one named thing to a time or to an
// amount with a unit without saying what it was (MovedTime,
// MovedQuantity): the word naming it is a topic, so only a sentence
// naming it with another value of that kind states the old one
// (SaysOtherValue).
func MovedValue(u Update) bool {
	return MovedTime(u) || MovedQuantity(u) || MovedGrade(u) || MovedCode(u) || MovedNumber(u)
}

// MovedGrade reports whether u set a grade anew ("downgrading to SEV2",
// "raising it to P2"): one word of letters and a number of one or two
// digits, its subject the letters.
func MovedGrade(u Update) bool {
	if len(u.Old) != 0 || len(u.Subject) != 1 || len(u.New) != 1 {
		return false
	}
	rest, ok := strings.CutPrefix(u.New[0], u.Subject[0])
	return ok && isGradeNumber(rest)
}

func isGradeNumber(s string) bool {
	return len(s) >= 1 && len(s) <= 2 && strings.Trim(s, "0123456789") == ""
}

// SaysOtherGrade reports whether text (lower case) names the grade u set
// with another number: "logged it as INC-0048812, priority P3" after
// "raising it to P2", "bumping severity to SEV1" after "downgrading to
// SEV2".
func SaysOtherGrade(u Update, text string) bool {
	if !MovedGrade(u) {
		return false
	}
	ws := lex.Words(text)
	for i, w := range ws {
		if i+1 < len(ws) && w == u.Subject[0] && isGradeNumber(ws[i+1]) { // "sev-1", "p 3"
			w += ws[i+1]
		}
		rest, ok := strings.CutPrefix(w, u.Subject[0])
		rest = strings.TrimPrefix(rest, "-") // "sev-1"
		if ok && isGradeNumber(rest) && (len(u.Subject[0]) > 1 || len(rest) == 1) && w != u.New[0] {
			return true
		}
	}
	return false
}

// MovedNumber reports whether u chose a thing under a new number ("make
// it Fibre 300 instead"): its one subject word, then the number.
func MovedNumber(u Update) bool {
	return len(u.Old) == 0 && len(u.Subject) == 1 && len(u.New) == 1 && strings.HasPrefix(u.New[0], u.Subject[0]+" ")
}

// SaysOtherNumber reports whether text (lower case) names the thing u
// numbered anew under another number: "let's do fibre 500" after "make it
// fibre 300 instead".
func SaysOtherNumber(u Update, text string) bool {
	if !MovedNumber(u) {
		return false
	}
	subj, nw := u.Subject[0], u.New[0]
	if lex.HasPhrase(text, nw) {
		return false // it names the new one too: a list of options, not the old choice
	}
	ws := strings.Fields(text) // "3.11" is one number, not two words
	for i := 0; i+1 < len(ws); i++ {
		n := strings.TrimRight(ws[i+1], ".,;:!?)\"'")
		if strings.Trim(ws[i], "(\"'") == subj && hasDigit(n) && subj+" "+n != nw {
			return true
		}
	}
	return false
}

// SaysOtherValue reports whether text (lower case) names the thing u
// moved with another value of the kind u moved it to: "dinner at 19:30"
// after "moved dinner to 8", "our timeout is set to 10s" after "bump the
// timeout to 30s".
func SaysOtherValue(u Update, text string) bool {
	switch {
	case MovedTime(u):
		return SaysOtherTime(u, text)
	case MovedGrade(u):
		return SaysOtherGrade(u, text)
	case MovedCode(u):
		return SaysOtherCode(u, text)
	case MovedNumber(u):
		return SaysOtherNumber(u, text)
	}
	return SaysOtherQuantity(u, text)
}

// MovedCode reports whether u set one named thing to a code ("the new
// code is WHEELS20", "the door code is 4417 now"): letters and digits in
// one word, or four digits or more.
func MovedCode(u Update) bool {
	_, ok := codeSubject(u)
	return ok && len(u.Old) == 0 && len(u.New) == 1 && isCode(u.New[0])
}

// codeSubject is the one word naming the thing whose code changed: "our
// garage code" is the garage's (a word naming the kind of value — code,
// pin, password, number — says what changed of it, as "date" does of a
// time).
func codeSubject(u Update) (string, bool) {
	var ws []string
	all := strings.Fields(strings.Join(u.Subject, " ")) // "garage code" may come as one phrase
	for _, w := range all {
		if !codeNouns[w] {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 && len(all) == 1 {
		ws = all // "the new code is WHEELS20": the code itself
	}
	if len(ws) != 1 || len(all) > 2 {
		return "", false
	}
	return ws[0], true
}

var codeNouns = set(`code codes pin password passcode combination number ref reference`)

// SaysOtherCode reports whether text (lower case) has a sentence naming
// the thing u changed with another code: "with the club discount code
// RIDGE15" after "the new code is WHEELS20".
func SaysOtherCode(u Update, text string) bool {
	if !MovedCode(u) {
		return false
	}
	subj, _ := codeSubject(u)
	return sentenceNaming(text, subj, func(s string) bool {
		for _, w := range strings.Fields(s) {
			if w = strings.Trim(w, ".,;:!?()\"'"); isCode(w) && w != u.New[0] {
				return true
			}
		}
		return false
	})
}

// isCode: one word of letters and digits both ("wheels20", "kx-4417"),
// or of four digits or more ("4417"), not a time, an amount or a year
// alone.
func isCode(w string) bool {
	if len(w) < 4 || strings.ContainsAny(w, " :.,£$€") || kindOf(w) != 0 {
		return false
	}
	letters, digits := 0, 0
	for _, r := range w {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'a' && r <= 'z':
			letters++
		case r != '-' && r != '_' && r != '/':
			return false
		}
	}
	return digits > 0 && (letters > 0 || digits >= 4)
}

// sentenceNaming reports whether a sentence of text (lower case) holds
// the word subj (hasWord) and says what other looks for.
func sentenceNaming(text, subj string, other func(sentence string) bool) bool {
	if !strings.Contains(text, subj) {
		return false
	}
	for _, s := range lex.Sentences(text) {
		if hasWord(s, subj) && other(s) {
			return true
		}
	}
	return false
}

// nextSentenceGives reports whether the sentence right after one naming
// subj says what other looks for, and names no other thing with a
// subject of its own before it: "so an engineer has to visit. The
// earliest slot is Tuesday 24 March" gives the engineer's time, the way
// people introduce a thing and then its time.
func nextSentenceGives(text, subj string, other func(sentence string) bool) bool {
	if !strings.Contains(text, subj) {
		return false
	}
	ss := lex.Sentences(text)
	for i := 0; i+1 < len(ss); i++ {
		if hasWord(ss[i], subj) && !other(ss[i]) && slotLead.MatchString(ss[i+1]) && other(ss[i+1]) {
			return true
		}
	}
	return false
}

// slotLead: a sentence that gives a time of what was just named, by what
// it calls it ("the earliest slot is", "it's booked for", "that's on").
var slotLead = regexp.MustCompile(`^(?:the (?:earliest |first |next |only |new )?(?:slot|appointment|visit|date|time|window|booking)|it's|it is|it'll be|it will be|that's|that is|they're|they are|they'll|booked for|scheduled for|planned for)\b`)

// hasWord: s holds w as a whole word, or its plural or verb forms
// ("dinners", "launches", "starting", "started").
func hasWord(s, w string) bool {
	for _, x := range lex.Words(s) {
		if x == w || x == w+"s" || x == w+"es" || x == w+"ing" || x == w+"ed" {
			return true
		}
	}
	return false
}

// timeValue keeps a moved-to value that is a time, else none: "moved
// house to Munich" moves no time, and its one-word subject alone would
// make stale every sentence holding "house".
// The phrase ends at a comma: "8, same day, same place" moves to 8.
func timeValue(v []string) []string {
	if len(v) == 1 {
		v = value(strings.Split(v[0], ", ")[0])
	}
	if len(v) != 1 || kindOf(v[0]) == 0 {
		return nil
	}
	if n, err := strconv.Atoi(v[0]); err == nil && n == 0 {
		return nil
	}
	return v
}

// Days said otherwise. "scrap the 13th, they can only do the 20th" makes
// stale "Cotswold Farm Park for Saturday 13 June"; "water's going off
// Thursday 17th now, not weds" makes stale "Water will be off Wednesday
// 16th". People name one day in several writings, so an old value that
// is a day is compared as a day: its day of the month (and month, when
// both say one), else its weekday.

// monthDayRe is a day of the month: "13 june", "13th of june", "june 13",
// "the 13th" (submatches: day, month; month, day; day alone).
var monthDayRe = regexp.MustCompile(`\b(?:(\d{1,2})(?:st|nd|rd|th)?(?: of)? (jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*|(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* (\d{1,2})(?:st|nd|rd|th)?|(\d{1,2})(?:st|nd|rd|th))\b`)

var monthNo = map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}

// date is a day of the month, and its month when said (0 when not).
type date struct{ day, month int }

// datesIn are the days of the month a text (lower case) names.
func datesIn(s string) []date {
	var out []date
	for _, ix := range monthDayRe.FindAllStringSubmatchIndex(s, -1) {
		m := func(g int) string {
			if ix[2*g] < 0 {
				return ""
			}
			return s[ix[2*g]:ix[2*g+1]]
		}
		var d date
		switch {
		case m(1) != "":
			d = date{atoi(m(1)), monthNo[m(2)]}
		case m(4) != "":
			d = date{atoi(m(4)), monthNo[m(3)]}
		case countsThing(s[ix[1]:]):
			continue // "a 3rd man to carry it", "the 2nd floor": an ordinal, no day
		default:
			d = date{day: atoi(m(5))}
		}
		if d.day >= 1 && d.day <= 31 {
			out = append(out, d)
		}
	}
	return out
}

// countsThing: the text after a bare ordinal starts with a thing it
// counts ("man", "floor", "time"), so the ordinal is no day.
func countsThing(after string) bool {
	ws := lex.Words(after[:min(len(after), 24)])
	return len(ws) > 0 && strings.HasPrefix(after, " ") && ordinalThings[ws[0]]
}

var ordinalThings = lex.Set(`man men woman person people time times place round draft year years grade edition
	generation attempt try option choice quarter week weeks month months day days birthday anniversary one ones
	child kid son daughter row seat item line page chapter version floor level course dose shot coat half`)

// weekdaysIn are the weekdays a text (lower case) names, by their first
// three letters ("weds", "wednesdays" and "wed" are "wed").
func weekdaysIn(s string) []string {
	var out []string
	for _, w := range lex.Words(s) {
		if len(w) >= 3 && lex.IsWeekday(w) {
			out = append(out, w[:3])
		}
	}
	return out
}

// slotWords name what is booked on a day, not another thing.
var slotWords = set(`slot one appointment booking window`)

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// onlyDay: every word of v names a day ("sat 13th", "the 13th of june",
// "weds"), or the booking on it ("the thursday slot", "the friday one"): a
// value that is a day and nothing else.
func onlyDay(v string) bool {
	for _, w := range lex.Words(v) {
		if w == "the" || w == "of" || lex.IsWeekday(w) || monthNo[w[:min(3, len(w))]] != 0 && len(w) >= 3 || slotWords[w] {
			continue
		}
		if n := strings.TrimRight(w, "stndrh"); n != "" && strings.Trim(n, "0123456789") == "" {
			continue
		}
		return false
	}
	return true
}

// SameDay reports whether text (lower case) names the day the value v
// names, written otherwise: "13 june" or "saturday 13th" for "13th",
// "wednesday 16th" for "weds". Its day of the month decides when v says
// one (and its month, when both say one), else its weekday.
func SameDay(v, text string) bool {
	if !onlyDay(v) {
		return false
	}
	if ds := datesIn(v); len(ds) == 1 {
		for _, t := range datesIn(text) {
			if t.day == ds[0].day && (ds[0].month == 0 || t.month == 0 || t.month == ds[0].month) {
				return true
			}
		}
		return false
	}
	if ws := weekdaysIn(v); len(ws) == 1 {
		return slices.Contains(weekdaysIn(text), ws[0])
	}
	return false
}
