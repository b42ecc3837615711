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

type quantity struct{ number, unit string }

// quantitiesIn are the amounts with a unit that s (lower case) says.
func quantitiesIn(s string) []quantity {
	var out []quantity
	for _, m := range quantityRe.FindAllStringSubmatch(s, -1) {
		unit := m[3]
		if u, ok := unitWords[unit]; ok {
			unit = u
		}
		if m[1] != "" {
			unit = m[1]
		}
		if unit != "" && (len(unit) <= 3 || m[1] != "" || unitWords[m[3]] != "") {
			out = append(out, quantity{strings.ReplaceAll(m[2], ",", ""), unit})
		}
	}
	return out
}

// movedQuantity is u's new value when u set one named thing to one
// amount with a unit without saying what it was.
func movedQuantity(u Update) (quantity, bool) {
	if len(u.New) != 1 || len(u.Old) != 0 || len(u.Subject) != 1 {
		return quantity{}, false
	}
	qs := quantitiesIn(u.New[0])
	if len(qs) != 1 {
		return quantity{}, false
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
	return sentenceNaming(text, u.Subject[0], func(s string) bool {
		for _, q := range quantitiesIn(s) {
			if q.unit == nw.unit && q.number != nw.number {
				return true
			}
		}
		return false
	})
}
