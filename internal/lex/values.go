package lex

import (
	"regexp"
	"strings"
)

// Value kinds. A question often asks for a kind of value without a word of
// the turn that holds it: "what's the best number to call Olu on?" is
// answered by "sorry typo, its 07836 551 240 not 204", "the code for the
// key box" by "ok changed it, it's 2803 now". Question answering has long
// matched the kind of answer a question wants to the values a passage
// holds; here each kind is a term of its own on both sides of the lexical
// index (rag.SparseEncoder): a turn holding a phone number carries
// KindPhone, a question asking for one asks for it, and the index weighs
// it by its rarity in the chat as it weighs any word.
//
// The kinds are written with a '#', which no Runs term holds, so they
// meet no word.
const (
	KindPhone   = "#phone"
	KindEmail   = "#email"
	KindHost    = "#host"
	KindCode    = "#code"
	KindMoney   = "#money"
	KindTime    = "#time"
	KindDay     = "#day"
	KindAddress = "#address"
	KindColour  = "#colour"
)

// ValueKinds returns the kinds of value text holds, each once, in a fixed
// order. It reads whole tokens, so a value must be written as people write
// it ("07836 551 240", "£1,895", "Thursdays 18:30", "PP-7731-MH").
func ValueKinds(text string) []string {
	if !mayHoldValue(text) {
		return nil
	}
	toks, ends := valueTokens(text)
	var have [9]bool
	for i := 0; i < len(toks); {
		i += kindsAt(toks, ends, i, &have)
	}
	var out []string
	for k, ok := range have {
		if ok {
			out = append(out, kindNames[k])
		}
	}
	return out
}

var kindNames = [9]string{KindPhone, KindEmail, KindHost, KindCode, KindMoney, KindTime, KindDay, KindAddress, KindColour}

const (
	kPhone = iota
	kEmail
	kHost
	kCode
	kMoney
	kTime
	kDay
	kAddress
	kColour
)

// mayHoldValue is a cheap first look: every kind but a weekday or a host
// needs a digit or an '@', and those two are looked for only when a
// letter run could be one ("…day", "://", ".com").
func mayHoldValue(text string) bool {
	if strings.ContainsAny(text, "0123456789@#") {
		return true
	}
	for _, w := range valueParts { // monday … sunday, tues, thurs, weds ("holiday" too: a look, not a test), a host
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// valueTokens splits on white space and trims the punctuation around a
// token, keeping what is inside it ("£1,895", "18:30", "a@b.co"); ends
// says which tokens end a clause (punctuation trimmed after them, or the
// text's last).
func valueTokens(text string) (toks []string, ends []bool) {
	fs := strings.Fields(text)
	toks, ends = fs[:0], make([]bool, 0, len(fs))
	for _, f := range fs {
		t := strings.TrimLeft(f, "([{\"'`*“‘")
		t = strings.TrimRight(t, ")]}\"'`*,;!?“”‘’.:")
		if t != "" {
			toks = append(toks, t)
			ends = append(ends, len(t) < len(f) && strings.ContainsAny(f[len(f)-1:], ",;!?.:)"))
		}
	}
	if len(ends) > 0 {
		ends[len(ends)-1] = true
	}
	return toks, ends
}

// lowAt is toks[i] in lower case, "" past either end.
func lowAt(toks []string, i int) string {
	if i < 0 || i >= len(toks) {
		return ""
	}
	return strings.ToLower(toks[i])
}

// kindsAt marks the kinds the value at toks[i] is of, and says how many
// tokens it took (a phone number's groups are one value).
func kindsAt(toks []string, ends []bool, i int, have *[9]bool) int {
	t := toks[i]
	low := strings.ToLower(t)
	switch {
	case strings.Contains(t, "://"):
		have[kHost] = true
		return 1
	case strings.Contains(t, "@"):
		if isEmail(t) {
			have[kEmail] = true
		}
		return 1
	case isHostName(low):
		have[kHost] = true
		return 1
	case isHexColour(t):
		have[kColour] = true
		return 1
	}
	// "thu 11 feb", "sun 8th": a short weekday is one before a date, not
	// "sat 4 hours".
	if weekdays[low] || shortWeekdays[low] && isDayNumber(lowAt(toks, i+1)) && (ordinal(lowAt(toks, i+1)) || months[lowAt(toks, i+2)]) {
		have[kDay] = true
	}
	if !strings.ContainsAny(t, "0123456789") {
		if months[low] && low != "may" && i > 0 && isDayNumber(toks[i-1]) {
			have[kDay] = true
		}
		if i > 0 && streetWords[strings.ToLower(t)] && houseNumberBefore(toks, i, t[0] >= 'A' && t[0] <= 'Z') {
			have[kAddress] = true
		}
		return 1
	}
	if n := phoneAt(toks, i); n > 0 {
		have[kPhone] = true
		return n
	}
	switch {
	case isMoney(t) || i+1 < len(toks) && isNumber(t) && currencyWords[strings.ToLower(toks[i+1])]:
		have[kMoney] = true
	case isClock(low) || i+1 < len(toks) && isNumber(t) && (toks[i+1] == "am" || toks[i+1] == "pm"):
		have[kTime] = true
	case isDate(toks, ends, i, low):
		have[kDay] = true
	case isPostcode(toks, i):
		have[kAddress] = true
	case isCode(t) && (!allDigits(t) || standsAlone(toks, ends, i)):
		have[kCode] = true
	}
	return 1
}

// standsAlone: a bare number that counts nothing after it ("it's 2803
// now", "2803 noted", "port 25060, db shop"), not "10000 steps" or "1500
// words" (a plural: what it counts).
func standsAlone(toks []string, ends []bool, i int) bool {
	next := lowAt(toks, i+1)
	return ends[i] || clauseWords[next] || !isLetters(next) || !(len(next) > 3 && next[len(next)-1] == 's' && next[len(next)-2] != 's')
}

func isLetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return w != ""
}

// clauseWords may follow a value that numbers nothing ("it's 2803 now").
var clauseWords = Set(`now and or but then so if pls please btw is was not instead too thanks thx ta`)

func startsDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

func isEmail(t string) bool {
	at := strings.IndexByte(t, '@')
	return at > 0 && strings.Contains(t[at+1:], ".") && !strings.HasSuffix(t, ".")
}

// isHostName: labels joined by dots ending in a common top-level domain
// ("upstash.io", "db-shop-pg.b.db.ondigitalocean.com"), or four numbers (an
// address). A file name ("fly.toml") or a version ("4.2.2") is none.
func isHostName(low string) bool {
	if !strings.Contains(low, ".") {
		return false
	}
	labels := strings.Split(low, ".")
	if len(labels) == 4 && allDigits(labels[0]) && allDigits(labels[1]) && allDigits(labels[2]) && allDigits(strings.Split(labels[3], ":")[0]) {
		return true
	}
	last := strings.Split(labels[len(labels)-1], ":")[0] // a port
	return len(labels) >= 2 && len(labels[0]) >= 2 && topDomains[last]
}

var topDomains = Set(`com io net org dev app co uk de eu ai cloud info biz us fr es it nl`)

// phoneAt: a phone number starts at toks[i]: its digit groups (joined by
// spaces, dashes or dots) hold 9 to 15 digits, and it starts with 0 or +
// (a national or international number), or is grouped 3-3-4. It returns
// the number of tokens the number takes, 0 when none starts there.
func phoneAt(toks []string, i int) int {
	var lens []int // the digit groups' lengths
	j := i
	for digits := 0; j < len(toks) && isDigitGroup(toks[j]) && digits < 16; j++ {
		for _, g := range strings.FieldsFunc(strings.TrimPrefix(toks[j], "+"), func(r rune) bool { return r == '-' || r == '.' }) {
			lens = append(lens, len(g))
			digits += len(g)
		}
	}
	digits := 0
	for k, n := range lens {
		if n < 2 && !(k == 0 && toks[i][0] == '+' || k == 1 && toks[i][0] == '+' && allDigits(toks[i][1:])) {
			// A phone's groups are two digits or more ("0.05 0.01" is
			// none), but for a country code ("+1") and the one-digit
			// prefix after it ("+31 6 4188 2093", "+33 6 12 34 56 78").
			return 0
		}
		digits += n
	}
	if digits < 9 || digits > 15 {
		return 0
	}
	if c := toks[i][0]; c == '0' || c == '+' || len(lens) == 3 && lens[0] == 3 && lens[1] == 3 && lens[2] == 4 {
		return j - i
	}
	return 0
}

// isDigitGroup: digits, maybe joined by dashes or dots, maybe a leading
// '+' ("+44", "551", "555-123-4567").
func isDigitGroup(t string) bool {
	t = strings.TrimPrefix(t, "+")
	if t == "" || !startsDigit(t) {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; !(c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func countDigits(t string) int {
	n := 0
	for i := 0; i < len(t); i++ {
		if t[i] >= '0' && t[i] <= '9' {
			n++
		}
	}
	return n
}

func allDigits(t string) bool {
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}

// isNumber: digits with separators ("1,200", "21.50").
func isNumber(t string) bool {
	return startsDigit(t) && strings.Trim(t, "0123456789.,") == ""
}

// isMoney: a currency sign and an amount ("£1,895", "$30", "€0.12",
// "-£4.50", "£5k", "£21/head"), or an amount in pence ("50p").
func isMoney(t string) bool {
	t = strings.TrimPrefix(t, "-")
	for _, c := range []string{"£", "$", "€", "¥"} {
		if rest, ok := strings.CutPrefix(t, c); ok {
			return startsDigit(rest)
		}
		if rest, ok := strings.CutSuffix(t, c); ok {
			return isNumber(rest)
		}
	}
	if rest, ok := strings.CutSuffix(t, "p"); ok {
		return allDigits(rest) && len(rest) <= 2 // "50p"; "720p" is a video's
	}
	return false
}

var currencyWords = Set(`euro euros eur usd gbp dollars dollar pounds quid bucks chf sek nok dkk pln`)

// isClock: "18:30", "9pm", "10.30am", "5:30-6:15", "10am-8pm".
func isClock(low string) bool {
	for _, part := range strings.FieldsFunc(low, func(r rune) bool { return r == '-' || r == '–' }) {
		p := strings.TrimSuffix(strings.TrimSuffix(part, "am"), "pm")
		ampm := p != part
		h, m, hasM := strings.Cut(strings.Replace(p, ".", ":", 1), ":")
		if !allDigits(h) || len(h) > 2 {
			continue
		}
		if hasM && allDigits(m) && len(m) == 2 && m < "60" && (ampm || len(h) <= 2) && !strings.Contains(p, ".") {
			return true
		}
		if hasM && ampm && allDigits(m) && len(m) == 2 {
			return true // "10.30am"
		}
		if !hasM && ampm && h != "" && h <= "12" || !hasM && ampm && len(h) == 1 {
			return true
		}
	}
	return false
}

// isDate: a day and a month ("21 november", "5 may 2026", "11 feb"), a
// day of the month said as one ("on the 14th", "the 14th, not the
// 12th"), a numeric date with its year ("12/06/2026", "2026-11-02") or
// after a word that dates it ("by 12/06"). Not "the 2 may conflict",
// "the 2nd one", "24/7", "9/10", "3/4 cup".
func isDate(toks []string, ends []bool, i int, low string) bool {
	next, prev := lowAt(toks, i+1), lowAt(toks, i-1)
	switch {
	case isDayNumber(low) && months[next] && (next != "may" || ends[i+1] || isYear(lowAt(toks, i+2))):
		return true
	case months[prev] && prev != "may" && isDayNumber(low):
		return true
	case ordinal(low) && (months[next] || next == "of" || prev == "the" && (ends[i] || clauseWords[next] || dateAfter[next])):
		return true
	case len(low) >= 10 && allDigits(low[:4]) && low[4] == '-' && allDigits(low[5:7]) && low[7] == '-' && allDigits(low[8:10]):
		return true
	}
	d, rest, ok := strings.Cut(low, "/")
	if !ok || !isDayNumber(d) {
		return false
	}
	m, y, hasYear := strings.Cut(rest, "/")
	if !allDigits(m) || len(m) > 2 || m == "0" || m == "00" || len(m) == 2 && m > "12" {
		return false
	}
	return hasYear && (len(y) == 2 || len(y) == 4) && allDigits(y) || datingWords[prev]
}

func isYear(t string) bool { return len(t) == 4 && allDigits(t) && (t[:2] == "19" || t[:2] == "20") }

// dateAfter may follow a day of the month ("on the 14th before us").
var dateAfter = Set(`at before after from until till by for works suits`)

// datingWords before a numeric day/month make it a date ("by 12/06").
var datingWords = Set(`on by from until till before after since due deadline monday tuesday wednesday thursday friday saturday sunday mon tue tues wed weds thu thur thurs fri sat sun`)

// isDayNumber: 1 to 31, maybe with its ordinal ("21", "21st").
func isDayNumber(t string) bool {
	t = strings.ToLower(t)
	for _, s := range []string{"st", "nd", "rd", "th"} {
		t = strings.TrimSuffix(t, s)
	}
	return allDigits(t) && len(t) <= 2 && t != "0" && t != "00" && (len(t) == 1 || t <= "31")
}

func ordinal(low string) bool {
	for _, s := range []string{"st", "nd", "rd", "th"} {
		if n, ok := strings.CutSuffix(low, s); ok {
			return isDayNumber(n)
		}
	}
	return false
}

// isPostcode: a UK postcode's two halves ("HG2 0LS").
func isPostcode(toks []string, i int) bool {
	if i+1 >= len(toks) {
		return false
	}
	a, b := toks[i], toks[i+1]
	if len(a) < 2 || len(a) > 4 || len(b) != 3 || !isUpperAlnum(a) || !isUpperAlnum(b) {
		return false
	}
	return a[0] >= 'A' && a[0] <= 'Z' && b[0] >= '0' && b[0] <= '9' && b[1] >= 'A' && b[2] >= 'A'
}

func isUpperAlnum(t string) bool {
	for i := 0; i < len(t); i++ {
		if c := t[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// isCode: a reference written to be copied — letters and digits mixed,
// with a capital or a dash ("PP-7731-MH", "INC-0048812", "K7QX2M",
// "LARK14"), digit groups joined by dashes ("30-94-57"), or a bare number
// of four to eight digits that is not a year ("2803", "25060"). A
// measurement ("420ms", "2.5mg", "24.5kg") is none.
func isCode(t string) bool {
	if d, ok := strings.CutSuffix(t, "#"); ok && len(d) >= 3 && len(d) <= 8 && allDigits(d) {
		return true // a keypad's code, entered with '#' ("1966#"), whatever its digits
	}
	if allDigits(t) {
		return len(t) >= 4 && len(t) <= 8 && !(len(t) == 4 && (t[:2] == "19" || t[:2] == "20"))
	}
	if len(t) < 4 {
		return false
	}
	letters, digits, upper, dashes := 0, 0, 0, 0
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'A' && c <= 'Z':
			upper++
			letters++
		case c >= 'a' && c <= 'z':
			letters++
		case c == '-':
			dashes++
		case c == '_' || c == '.' || c == '/':
		default:
			return false
		}
	}
	if letters == 0 {
		return dashes >= 2 && digits >= 6 // "30-94-57"
	}
	if digits == 0 || measurement(t) {
		return false
	}
	return upper > 0 || dashes > 0 && digits >= 3
}

// measurement: a number and a short unit ("420ms", "24.5kg", "1080p", "5g").
func measurement(t string) bool {
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.' || t[i] == ',') {
		i++
	}
	return i > 0 && len(t)-i <= 3
}

// houseNumberBefore: a street word ("Close", "Street") comes after a house
// number and one or two names ("14 Larch Close", "Unit 4, Coldharbour
// Yard"). Written in lower case, only an unmistakable street word counts
// ("41 mercer street", not "2 close friends").
func houseNumberBefore(toks []string, i int, capital bool) bool {
	if !capital && !plainStreetWords[strings.ToLower(toks[i])] {
		return false
	}
	for j := i - 1; j >= 0 && j >= i-3; j-- {
		t := toks[j]
		if startsDigit(t) && len(t) <= 4 && (allDigits(t) || allDigits(t[:len(t)-1])) {
			return j < i-1
		}
		if capital && !(t[0] >= 'A' && t[0] <= 'Z') {
			return false
		}
	}
	return false
}

var streetWords = Set(`street st road rd lane ln close avenue ave way yard drive court place crescent terrace gardens square row mews grove walk
	parade quay wharf boulevard blvd parkway esplanade promenade embankment hill highway hwy circus broadway`)

var plainStreetWords = Set(`street st road rd lane avenue ave crescent terrace boulevard blvd`)

var valueParts = func() []string {
	ps := []string{"://"}
	for _, w := range strings.Fields("nday sday iday rday tues thurs weds") {
		ps = append(ps, w, strings.ToUpper(w), strings.ToUpper(w[:1])+w[1:])
	}
	for d := range topDomains {
		ps = append(ps, "."+d)
	}
	return ps
}()

var weekdays = Set(`monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays saturdays sundays tues thurs weds`)

var shortWeekdays = Set(`mon tue wed thu fri sat sun`)

var months = Set(`january february march april may june july august september october november december jan feb mar apr jun jul aug sep sept oct nov dec`)

// AskedKinds returns the kinds of value a question asks for: "what's the
// best number to call Olu on?" a phone number, "when is baba seeing the
// surgeon" a day and a time, "how much do we owe" an amount. The kind is
// asked by the question's own words ("what time", "which night", "when"
// opening it or a clause), not by a word anywhere in it: "how many miles
// were on it when I took it home?" asks for no time. A question asking
// for none returns nil.
func AskedKinds(query string) []string {
	low := " " + strings.Join(strings.Fields(strings.ToLower(query)), " ") + " "
	runs := Runs(query)
	ws := map[string]bool{}
	for _, w := range runs {
		ws[w] = true
	}
	has := func(s ...string) bool {
		for _, x := range s {
			if ws[x] {
				return true
			}
		}
		return false
	}
	var out []string
	phone := has("phone", "mobile", "landline", "whatsapp") || has("number") && has("call", "ring", "text", "reach", "contact")
	someones := !phone && ws["number"] && someonesNumber(runs)
	if phone || someones {
		out = append(out, KindPhone)
	}
	if has("email", "emails", "inbox", "mailbox") || strings.Contains(low, " e-mail ") {
		out = append(out, KindEmail)
	}
	if has("host", "hostname", "url", "endpoint", "domain", "website", "dsn") || strings.Contains(low, " connection string") || strings.Contains(low, " connection details") {
		out = append(out, KindHost)
	}
	if has("code", "codes", "reference", "ref", "pin", "ticket", "booking", "confirmation", "tracking", "serial", "id") || has("number") && !phone {
		// Someone's number may still be a customer number: both kinds.
		out = append(out, KindCode)
	}
	money := has("cost", "costs", "price", "prices", "owe", "fee", "fees", "charged", "budget", "pay", "paying", "paid", "refund", "quote", "rent", "deposit", "total") ||
		has("charge") && !strings.Contains(low, " in charge") || strings.Contains(low, "how much ") && !howMuchOf.MatchString(low)
	if money {
		out = append(out, KindMoney)
	}
	// The regular expressions only where their words are: a query is
	// encoded on every request.
	when := ws["when"] && asksWhen.MatchString(low)
	if when || has("time", "times", "late", "early", "hour", "clock") && asksTime.MatchString(low) {
		out = append(out, KindTime)
	}
	if when || has("deadline") || has("due") && !strings.Contains(low, " due to ") || has("day", "days", "date", "dates", "night", "nights", "evening", "evenings", "morning", "mornings", "afternoon", "afternoons", "weekend", "weekends") && asksDay.MatchString(low) {
		out = append(out, KindDay)
	}
	if has("address", "postcode", "zip") && !has("email") {
		out = append(out, KindAddress)
	}
	if has("hex", "colour", "colours", "color", "colors", "palette") {
		out = append(out, KindColour)
	}
	return out
}

// someonesNumber: the query (its runs, rs) asks for a number as
// someone's ("the vet's number", "her number"): a person's or a
// business's number is the one to ring, where "the PO number" or "the
// chip number" is a code.
func someonesNumber(rs []string) bool {
	for i := 1; i < len(rs); i++ {
		if rs[i] == "number" && (rs[i-1] == "s" || possessives[rs[i-1]]) {
			return true
		}
	}
	return false
}

var possessives = Set(`his her their your ur my our`)

var (
	// asksWhen: "when" opening the question or a clause of it.
	asksWhen = regexp.MustCompile(`(?:^ |[,;?.!] |\b(?:and|so|but|ok|okay|remind me|tell me|know) )when(?:'s| is| are| was| were| do| does| did| will| can| should| shall| would| has| have)?\b`)
	asksTime = regexp.MustCompile(`\b(?:what|which|wat)(?: \w+)? times?\b|\band time\b|\bhow (?:late|early)\b|\bwhat hour\b|o'clock`)
	// howMuchOf: "how much time", "how much longer": no amount of money.
	howMuchOf = regexp.MustCompile(`\bhow much (?:time|longer|later|earlier|space|room|data|memory|ram|disk|storage|water|sleep|weight|work|of|more time|further|notice)\b`)
	asksDay   = regexp.MustCompile(`\b(?:what|which|wat)(?: \w+)? (?:days?|dates?|nights?|evenings?|mornings?|afternoons?|weekends?)\b|\bdue date\b`)
)

// IsWeekday: w (lower case) names a weekday, whole ("wednesday",
// "fridays") or short ("weds", "thu").
func IsWeekday(w string) bool { return weekdays[w] || shortWeekdays[w] }

// IsMonth: w (lower case) names a month, whole or short ("sept").
func IsMonth(w string) bool { return months[w] }

// isHexColour: a colour as designers write it, "#2E4A3F" or "#0af"
// (three letters without a digit are a hashtag: "#bad").
func isHexColour(t string) bool {
	h, ok := strings.CutPrefix(t, "#")
	if !ok || len(h) != 6 && (len(h) != 3 || !strings.ContainsAny(h, "0123456789")) {
		return false
	}
	return strings.Trim(h, "0123456789abcdefABCDEF") == ""
}
