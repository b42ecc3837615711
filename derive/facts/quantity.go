package facts

import (
	"regexp"
	"strings"

	"github.com/contextd/contextd/internal/lex"
)

// Quantities changed. "Bump the timeout to 30s" names what changed by one
// word, like "moved dinner to 8" (when.go), and not what it was. The word
// alone ("timeout") is a topic. But the new value is a quantity with a
// unit, so what changed is that quantity: an older sentence naming the
// thing with another amount of the same unit ("our timeout is set to
// 10s") is what the update made stale; one with none, or with another
// unit ("the timeout error came 3 times"), is not.

// quantityRe is an amount with a unit or a currency: "30s", "2.5 GB",
// "€45", "15 minutes". A bare number has no unit and says nothing here.
var quantityRe = regexp.MustCompile(`(?:^|[^\w.,])([$€£]?)(\d+(?:[.,]\d+)*) ?(%|[a-z]+(?:/[a-z]+)?)?(?:[^\w]|$)`)

// unitWords fold the spellings of one unit.
var unitWords = map[string]string{"sec": "s", "secs": "s", "second": "s", "seconds": "s", "min": "min", "mins": "min", "minute": "min",
	"minutes": "min", "hr": "h", "hrs": "h", "hour": "h", "hours": "h", "day": "d", "days": "d", "week": "w", "weeks": "w",
	"millisecond": "ms", "milliseconds": "ms", "eur": "€", "euro": "€", "euros": "€", "usd": "$", "dollars": "$", "gbp": "£"}

// quantity is an amount: its number and unit, and for money the rate
// it is per, when said ("£6.95/kg" per kg, "£160 a week" per week).
type quantity struct{ number, unit, per string }

// sameUnit: a and b are amounts of one thing. Money per kilo is a price
// of each kilo: only another price per kilo is one ("£160 a week on
// butter and £93 on eggs" holds none). Other rates may be alike ("rent
// £950", "£1,010 a month"; "£6 each", "£7 a game").
func (a quantity) sameUnit(b quantity) bool {
	switch {
	case a.unit != b.unit:
		return false
	case a.per == b.per:
		return true
	case perItem[a.per] || perItem[b.per]:
		return false
	}
	return true // "£6 each a game" and "£7 a game"
}

// perItem are the rates that price one of something, not a stretch of
// time.
var perItem = map[string]bool{"kg": true, "g": true, "lb": true, "litre": true, "liter": true, "l": true, "ml": true, "m": true, "km": true,
	"mile": true, "unit": true, "item": true, "piece": true, "bottle": true, "sack": true, "dozen": true, "ticket": true, "seat": true,
	"night": true, "room": true, "bag": true, "box": true, "case": true}

// moneyRate reads the rate after an amount of money: "/kg", " a week",
// " per night", " each", " pp", " pcm".
var moneyRate = regexp.MustCompile(`^(?:/ ?([a-z]+)|\s(?:a|an|per) ([a-z]+)|\s(each|pp|pcm|pw|pa)\b)`)

// quantitiesIn are the amounts with a unit that s (lower case) says.
func quantitiesIn(s string) []quantity {
	var out []quantity
	for _, ix := range quantityRe.FindAllStringSubmatchIndex(s, -1) {
		cur, num, unit := sub(s, ix, 1), sub(s, ix, 2), sub(s, ix, 3)
		if u, ok := unitWords[unit]; ok {
			unit = u
		}
		if cur != "" {
			unit = cur
		}
		if unit == "" || !(len(unit) <= 3 || cur != "" || unitWords[sub(s, ix, 3)] != "") {
			continue
		}
		q := quantity{number: strings.ReplaceAll(num, ",", ""), unit: unit}
		if cur != "" {
			if m := moneyRate.FindStringSubmatch(s[ix[5]:]); m != nil {
				q.per = m[1] + m[2] + m[3]
			}
		}
		out = append(out, q)
	}
	return out
}

// sub is submatch i of the match ix in s ("" when it took no part).
func sub(s string, ix []int, i int) string {
	if ix[2*i] < 0 {
		return ""
	}
	return s[ix[2*i]:ix[2*i+1]]
}

// movedQuantity is u's new value when u set one named thing to one
// amount with a unit without saying what it was.
func movedQuantity(u Update) (quantity, bool) {
	if len(u.New) != 1 || len(u.Old) != 0 || len(u.Subject) == 0 || len(u.Subject) > 2 {
		return quantity{}, false
	}
	qs := quantitiesIn(u.New[0])
	if len(qs) != 1 || len(u.Subject) == 2 && qs[0].per == "" {
		return quantity{}, false // two words name a rate's thing ("the block rate to $149/night"), no other amount's
	}
	// The amount alone ("30s"), or an amount of money opening a short
	// value: "£1,010 a month", "£89.37 in credit", "£14 each".
	n := len(lex.Words(u.New[0]))
	money := strings.ContainsAny(qs[0].unit, "$€£") && strings.IndexAny(u.New[0], "$€£") == 0
	if n > 2 && !(money && len(strings.Fields(u.New[0])) <= 4) {
		return quantity{}, false
	}
	return qs[0], true
}

// MovedQuantity reports whether u set one named thing to an amount with a
// unit without saying what it was ("bump the timeout to 30s").
func MovedQuantity(u Update) bool {
	_, ok := movedQuantity(u)
	return ok
}

// SaysOtherQuantity reports whether text (lower case) has a sentence
// naming the thing u changed with another amount of the unit u set it
// in: "our timeout for the ledger call is set to 10s" after "bump the
// timeout to 30s".
func SaysOtherQuantity(u Update, text string) bool {
	nw, ok := movedQuantity(u)
	if !ok {
		return false
	}
	other := func(per bool) func(string) bool {
		return func(s string) bool {
			for _, q := range quantitiesIn(s) {
				if q.sameUnit(nw) && q.number != nw.number && (!per || q.per == nw.per) {
					return true
				}
			}
			return false
		}
	}
	if len(u.Subject) == 1 {
		return sentenceNaming(text, u.Subject[0], other(false))
	}
	// A rate of a thing named in two words ("upped the block rate to
	// $149/night") is said of it by the word naming the thing, with the
	// same rate: "a block for us, … $139/night".
	for _, w := range u.Subject {
		if len(w) >= 4 && !rateNouns[w] && sentenceNaming(text, w, other(true)) {
			return true
		}
	}
	return false
}

// rateNouns name a price, not what it is the price of.
var rateNouns = set(`rate price cost fee charge`)
