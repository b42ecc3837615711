package engine

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/contextd/contextd/internal/lex"
)

// Headcounts. Planning a gathering, people say how many are coming again
// and again, each time in other words: "I counted roughly 40 people",
// later "two more yeses, Lorna and her husband. 48 total"; "i'd say we're
// at roughly 34", later "told daniela today, final number is 43". No
// update pattern reads these (no word of change, nothing named in
// common), yet the newer count is current and the older one stale. A
// person's later statement of a headcount marks an older turn stating
// another.
//
// What a headcount is: a number of people said as one, by a cue bound to
// the number ("N people", "N incl us", "N total", "N confirmed", "we're
// at N", "final number is N", "guest count … N"), five or more (three
// people who submitted a survey twice are no gathering), and not a
// room's capacity ("the hall holds 60 people", "max 40").

// headcount is the number of people a sentence says are coming; firm
// when said as a count of us or of replies ("we're at 38", "48 total",
// "27 confirmed", "44 ppl now"), not only as a number of people ("about
// 40 people"), which may be any people ("North, which only has 58
// people"): only a firm count replaces another.
type headcount struct {
	n    int
	firm bool
}

var (
	countBefore = regexp.MustCompile(`(?:\b(?:we're|we are|we’re)(?: now)?(?: at)?|\bwere(?: now)? at|\b(?:headcount|head count|guest count|guest list|final numbers?|final count)(?: update)?(?: is| are| now| at|:|,)*)(?: now| at)?(?: roughly| about| around| like)? (\d{1,3})\b`)
	countAfter  = regexp.MustCompile(`\b(\d{1,3}) (people|ppl|guests|of us|incl(?:\.|uding)? us|total|confirmed|yeses|rsvps)\b( now)?`)
	// capacity words say what a room takes, not who comes.
	capacity = lex.Set(`holds hold fits fit seats seat seated capacity max maximum limit minimum min takes room`)
	// notCount: a number after one of these is a size or a threshold
	// ("a cake for 30 people", "potluck with 40 people", "over 30
	// people", "if 8 of us turn up"), not a count of who comes.
	notCount = lex.Set(`for with over under than least if per`)
)

// headcountMin: fewer than this is no gathering's count.
const headcountMin = 5

// headcountOf is the one headcount low (a sentence, lower case) states:
// none when it states two (which one the later count replaces is not
// known) or speaks of capacity.
func headcountOf(low string, people bool) (headcount, bool) {
	if !strings.ContainsAny(low, "0123456789") {
		return headcount{}, false
	}
	var c headcount
	for i, re := range []*regexp.Regexp{countBefore, countAfter} {
		for _, m := range re.FindAllStringSubmatchIndex(low, -1) {
			from, to := m[2], m[3]
			if !aCount(low, from, to) {
				continue
			}
			if i == 0 && !countedAfter(low[to:]) {
				continue // "we're at 25 degrees already", "we're at 35% now"
			}
			if i == 1 && !people && !peopleNouns[low[m[4]:m[5]]] {
				continue // "the caterer quote came to 28 total": a total of no one
			}
			v, _ := strconv.Atoi(low[from:to])
			if c.n != 0 && v != c.n {
				return headcount{}, false
			}
			firm := i == 0 || low[m[4]:m[5]] != "people" && low[m[4]:m[5]] != "ppl" || m[6] >= 0
			c = headcount{n: v, firm: c.firm || firm}
		}
	}
	if c.n < headcountMin || slices.ContainsFunc(lex.Words(low), func(w string) bool { return capacity[w] }) {
		return headcount{}, false
	}
	return c, true
}

// countedAfter: what follows "we're at N" counts people: nothing, a
// people word or a word of the clause ("we're at 38 now", "… 34 with all
// the cousins"), not a unit ("we're at 25 degrees", "35%").
func countedAfter(rest string) bool {
	if strings.HasPrefix(rest, "%") {
		return false
	}
	if i := strings.IndexAny(rest, ",;.!?()"); i >= 0 {
		rest = rest[:i] // its clause: "final count is 55, three more from mums work"
	}
	ws := lex.Words(rest)
	return len(ws) == 0 || !isLetters(ws[0]) || afterCount[ws[0]] || peopleNouns[ws[0]]
}

func isLetters(w string) bool { return strings.Trim(w, "abcdefghijklmnopqrstuvwxyz'") == "" }

var (
	// afterCount are the words that may follow a headcount in its clause.
	afterCount = lex.Set(`now total confirmed yeses rsvps of incl including so and with then plus already btw lol haha tho though but if as for at from in on by`)
	// peopleNouns name people; a turn holding one speaks of who comes.
	peopleNouns = lex.Set(`people ppl guests guest adults kids children us yeses rsvps confirmed invited invites invite coming family friends cousins headcount`)
)

// speaksOfPeople: a turn (lower case) names people or who comes.
func speaksOfPeople(low string) bool {
	return slices.ContainsFunc(lex.Words(low), func(w string) bool { return peopleNouns[w] })
}

// aCount: the number low[from:to] stands alone (not in "£48", "€45",
// "48.5", "12:30", "912 448 309", "~50") after no word of size or
// threshold.
func aCount(low string, from, to int) bool {
	if r, _ := utf8.DecodeLastRuneInString(low[:from]); from > 0 && strings.ContainsRune("£$€¥.,:/-#~", r) {
		return false
	}
	if to+1 < len(low) && strings.ContainsRune(".,:% ", rune(low[to])) && low[to+1] >= '0' && low[to+1] <= '9' {
		return false
	}
	before := strings.Fields(low[:from])
	return len(before) == 0 || !notCount[strings.Trim(before[len(before)-1], "(,")]
}

// headcountsOf are the headcounts a person's turn states, sentence by
// sentence, each with its sentence: none in a question.
func headcountsOf(content string) (headcount, string, bool) {
	if !strings.ContainsAny(content, "0123456789") {
		return headcount{}, "", false // most turns: no number, nothing read
	}
	people := speaksOfPeople(strings.ToLower(content))
	for _, s := range lex.Sentences(content) {
		low := strings.ToLower(s)
		if strings.Contains(low, "?") {
			continue
		}
		if c, ok := headcountOf(low, people); ok && c.firm {
			return c, s, true
		}
	}
	return headcount{}, "", false
}

// replaces: c, said later, replaces the headcount text (lower case)
// states: another number of the same gathering, within half again of it
// either way (a count that trebled is another gathering's: a dinner for
// 12 is not the party of 40).
func (c headcount) replaces(low string) bool {
	people := speaksOfPeople(low)
	for _, s := range lex.Sentences(low) {
		o, ok := headcountOf(s, people)
		if !ok || o.n == c.n {
			continue
		}
		if 3*c.n >= 2*o.n && 3*o.n >= 2*c.n { // each at least two thirds of the other
			return true
		}
	}
	return false
}
