package extractive

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hand-written scanners and cheap pre-checks for the regular expressions
// that ran on every sentence of a batch (Go's backtracker was most of the
// CPU of a busy server's reads). Each scanner matches exactly what its
// expression matched, and each pre-check is false only when its
// expression cannot match; the fuzz tests in scan_test.go hold the
// expressions as oracles.

// isSpace is RE2's \s: ASCII white space without \v.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// isWordByte is RE2's \w on one byte (a byte of a multi-byte rune is not).
func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// properNames returns the spans of what
// `\b[A-Z][\p{L}&\-]*(?:\s+(?:of|dos|das|da|della|del|de|di|du|la|van|von|der|&)?\s*[A-Z][\p{L}&\-]*)*`
// matches: runs of capitalised words, a few lowercase connectors allowed
// inside. Every part is greedy and an iteration either completes or ends
// the run, so the first parse found is the expression's.
func properNames(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); i++ {
		if !isUpper(s[i]) || (i > 0 && isWordByte(s[i-1])) {
			continue
		}
		e := nameWordEnd(s, i+1)
		for {
			next, ok := nextNameWord(s, e)
			if !ok {
				break
			}
			e = next
		}
		out = append(out, [2]int{i, e})
		i = e - 1
	}
	return out
}

// nameWordEnd is where the run of [\p{L}&\-] from i ends.
func nameWordEnd(s string, i int) int {
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == '&' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				i++
				continue
			}
			return i
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsLetter(r) {
			return i
		}
		i += n
	}
	return i
}

// nameConnectors join capitalised words into one name ("Bank of
// America", "Miles & More", "Rua da Reboleira", "Leonardo da Vinci",
// "Terre à Terre", "Café des Amis"). Not "and": "Maren and Duarte",
// "Outlook and Microsoft" are two names; not "do", an English verb before
// a name ("can Tom do Tuesday").
var nameConnectors = []string{"of", "dos", "das", "da", "della", "del", "des", "de", "di", "du", "la", "les", "le", "aux", "au", "à", "van", "von", "der", "&"}

// nextNameWord matches `\s+(?:of|dos|das|da|della|del|des|de|di|du|la|les|le|aux|au|à|van|von|der|&)?\s*[A-Z][\p{L}&\-]*`
// at e and reports where it ends.
func nextNameWord(s string, e int) (int, bool) {
	p := e
	for p < len(s) && isSpace(s[p]) {
		p++
	}
	if p == e || p == len(s) {
		return 0, false
	}
	for _, c := range nameConnectors {
		if strings.HasPrefix(s[p:], c) {
			q := p + len(c)
			for q < len(s) && isSpace(s[q]) {
				q++
			}
			if q < len(s) && isUpper(s[q]) {
				return nameWordEnd(s, q+1), true
			}
		}
	}
	if isUpper(s[p]) {
		return nameWordEnd(s, p+1), true
	}
	return 0, false
}

// spaceFields returns the spans of the runs of non-\s bytes in s[a:b]
// (what `\S+` matches there).
func spaceFields(s string, a, b int) [][2]int {
	var out [][2]int
	start := -1
	for i := a; i < b; i++ {
		switch {
		case isSpace(s[i]) && start >= 0:
			out = append(out, [2]int{start, i})
			start = -1
		case !isSpace(s[i]) && start < 0:
			start = i
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, b})
	}
	return out
}

// clauses calls f with the pieces of s between the matches of
// `[,;:()]|\s[-–—]\s` (regexp.Split(s, -1)): a bigram never spans a comma.
func clauses(s string, f func(string)) {
	beg := 0
	for i := 0; i < len(s); i++ {
		w := 0
		switch c := s[i]; {
		case c == ',' || c == ';' || c == ':' || c == '(' || c == ')':
			w = 1
		case isSpace(c):
			if d := dashLen(s, i+1); d > 0 && i+1+d < len(s) && isSpace(s[i+1+d]) {
				w = 2 + d
			}
		}
		if w > 0 {
			f(s[beg:i])
			beg = i + w
			i += w - 1
		}
	}
	f(s[beg:])
}

// dashLen is the length of a -, – or — at s[i:], 0 when there is none.
func dashLen(s string, i int) int {
	switch {
	case i >= len(s):
		return 0
	case s[i] == '-':
		return 1
	case strings.HasPrefix(s[i:], "–"), strings.HasPrefix(s[i:], "—"):
		return 3
	}
	return 0
}

// mayHoldDate is false when datePattern cannot match s: each of its
// alternatives needs a digit, a "-" or "/" between digits, or a month's
// first three letters.
func mayHoldDate(s string) bool {
	return digitSepDigit(s, '-') || digitSepDigit(s, '/') || holdsMonth(s)
}

// mayHoldVersion is false when the version pattern cannot match s: each
// alternative holds `\d+\.\d+`.
func mayHoldVersion(s string) bool { return digitSepDigit(s, '.') }

func digitSepDigit(s string, sep byte) bool {
	for i := 1; i+1 < len(s); i++ {
		if s[i] == sep && isDigit(s[i-1]) && isDigit(s[i+1]) {
			return true
		}
	}
	return false
}

var monthPrefixes = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

func holdsMonth(s string) bool {
	for i := 0; i+3 <= len(s); i++ {
		if !isUpper(s[i]) {
			continue
		}
		for _, m := range monthPrefixes {
			if s[i:i+3] == m {
				return true
			}
		}
	}
	return false
}

// mayHoldAmount is false when the amount pattern cannot match s: it needs
// a currency sign or a currency's name.
func mayHoldAmount(s string) bool {
	if strings.ContainsAny(s, "$€£¥") {
		return true
	}
	for _, c := range []string{"USD", "EUR", "GBP", "CHF", "JPY", "dollar", "euro", "pound"} {
		if strings.Contains(s, c) {
			return true
		}
	}
	return false
}

// quantityUnits are the first letters of the units of the quantity
// pattern, as it spells them.
var quantityUnits = []string{"%", "percent", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB", "ms", "second", "minute", "hour", "day", "week", "month", "year", "km", "mile", "kg", "lb", "user", "request", "token", "item", "people", "night"}

// mayHoldQuantity is false when the quantity pattern cannot match s: a
// match is a number (`\d+(?:[.,]\d+)?`), an optional \s and a unit, so
// after some run of digits, dots and commas, and at most one \s, one of
// the units must start.
func mayHoldQuantity(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) || (i > 0 && isDigit(s[i-1])) {
			continue
		}
		j := i
		for j < len(s) && (isDigit(s[j]) || s[j] == '.' || s[j] == ',') {
			j++
		}
		if j < len(s) && isSpace(s[j]) {
			j++
		}
		for _, u := range quantityUnits {
			if strings.HasPrefix(s[j:], u) {
				return true
			}
		}
	}
	return false
}

// mayBeAction is false when actionRe cannot match s: in ASCII text, its
// first alternative needs the word "i" or "we" followed by \s or "'", its
// second one of its words. Any other byte (case folding reaches beyond
// ASCII: "ſ" is an "s") leaves the decision to the expression.
func mayBeAction(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if s[i] >= utf8.RuneSelf {
			return true
		}
		if (c != 'i' && c != 'w') || (i > 0 && isWordByte(s[i-1])) {
			continue
		}
		q := i + 1
		if c == 'w' {
			if q >= len(s) || s[q]|0x20 != 'e' {
				continue
			}
			q++
		}
		if q < len(s) && (isSpace(s[q]) || s[q] == '\'') {
			return true
		}
	}
	l := strings.ToLower(s)
	for _, w := range []string{"done", "deployed", "completed", "finished", "all set"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// wordBreak reports whether the byte c is an ASCII rune that ends a word
// of words() and starts none: where words(s[:i]) and words(s[i:]) (for
// s[i] or s[i-1] such a byte) split words(s) without cutting a word.
func wordBreak(c byte) bool {
	return c < utf8.RuneSelf && !isWordByte(c) && c != '\'' && c != '-'
}

// firstWords is words(s)[:n] (all of them when fewer), reading no further
// into s than it takes.
func firstWords(s string, n int) []string {
	for i := 0; i < len(s); i++ {
		if wordBreak(s[i]) {
			if ws := words(s[:i]); len(ws) >= n {
				return ws[:n]
			}
		}
	}
	ws := words(s)
	return ws[:min(n, len(ws))]
}

// lastWords is the last n words of words(s) (all of them when fewer),
// reading no further back into s than it takes.
func lastWords(s string, n int) []string {
	for i := len(s) - 1; i > 0; i-- {
		if wordBreak(s[i-1]) {
			if ws := words(s[i:]); len(ws) >= n {
				return ws[len(ws)-n:]
			}
		}
	}
	ws := words(s)
	return ws[max(0, len(ws)-n):]
}
