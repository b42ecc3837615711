package extractive

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/memory"
)

// Entity types the extractive summarizer assigns.
const (
	TypePerson       = "person"
	TypeOrganization = "organization"
	TypePlace        = "place"
	TypeEmail        = "email"
	TypeURL          = "url"
	TypeDate         = "date"
	TypeAmount       = "amount"   // money
	TypeQuantity     = "quantity" // number with a unit
	TypeVersion      = "version"  // product/version strings
	TypeName         = "name"     // a proper name of unknown kind
	TypeCode         = "code"     // an identifier in code: KeyError, NullPointerException
)

const months = `(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)`

// patterns are tried in order; an earlier match claims its span so that,
// e.g., the digits of a date are not also a quantity.
//
// need is a byte set of which the sentence must hold one for the pattern to
// match at all (every alternative of the pattern requires one): most
// sentences hold no digit, '@' or "://", and the check skips running the
// regular expression on them (the backtracker was a tenth of the CPU of a
// busy server).
//
// may, when set, is a finer pre-check: false when the pattern cannot
// match (scan.go).
var patterns = []struct {
	typ  string
	need string
	may  func(string) bool
	re   *regexp.Regexp
}{
	// A booking reference or ticket code ("FLX-4K7P2", "AB12CD",
	// "TAT0613-7") is one name, digits and dashes included: cut at its
	// first digit or its last dash it is junk.
	{TypeCode, digits, nil, regexp.MustCompile(`\b[A-Z]{2,}[A-Z0-9]*(?:-[A-Z0-9]{2,})+(?:-[0-9])?\b|\b[A-Z]{2,}[0-9][A-Z0-9]{2,}(?:-[A-Z0-9]+)*\b`)},
	{TypeEmail, "@", nil, regexp.MustCompile(`\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}\b`)},
	{TypeURL, ":", nil, regexp.MustCompile(`\bhttps?://[^\s<>"'()]+[^\s<>"'().,;:!?]`)},
	{TypeDate, digits, mayHoldDate, regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b` + months + `\.? \d{1,2}(?:st|nd|rd|th)?(?:,? \d{4})?\b|\b\d{1,2}(?:st|nd|rd|th)? (?:of )?` + months + `(?: \d{4})?\b`)},
	{TypeAmount, digits, mayHoldAmount, regexp.MustCompile(`[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:k|K|m|M|bn|million|billion|thousand)\b)?|\b\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|GBP|CHF|JPY|dollars?|euros?|pounds?)\b`)},
	{TypeVersion, digits, mayHoldVersion, regexp.MustCompile(`\b[A-Z][A-Za-z0-9+#\-]*\s(?:v|version\s)?\d+(?:\.\d+){1,2}\b|\bv\d+(?:\.\d+)+\b|\b\d+\.\d+\.\d+\b`)},
	{TypeQuantity, digits, mayHoldQuantity, regexp.MustCompile(`\b\d+(?:[.,]\d+)?\s?(?:%|percent\b|[KMGT]i?B\b|ms\b|seconds?\b|minutes?\b|hours?\b|days?\b|weeks?\b|months?\b|years?\b|km\b|miles?\b|kg\b|lbs?\b|users?\b|requests?\b|tokens?\b|items?\b|people\b|nights?\b)`)},
}

const digits = "0123456789"

var (
	orgWords     = toSet(`inc inc. corp corp. corporation ltd ltd. llc gmbh ag plc company co co. university college bank labs lab group foundation institute agency team systems technologies software partners ministry department union council trust society association federation clinic hospital`)
	placeWords   = toSet(`street st avenue ave road rd city county river lake mountain mount airport park station square bridge island valley beach hotel`)
	personTitle  = toSet(`mr mrs ms miss dr prof sir madam`)
	personBefore = toSet(`with met meet meeting call called email emailed ask asked tell told named colleague manager boss wife husband friend brother sister mother father son daughter cc ping pinged`)
	personAfter  = toSet(`said says told asks asked thinks wants wrote replied agreed suggested is`)
	placeBefore  = toSet(`in near to from visit visiting visited flying fly travel traveling travelling trip`)
	spokenTo     = toSet(`talking talked talk spoke speak speaking chatting chatted chat said say mentioned explained texted texting`) // not "listening to" (a band) nor "replied to" (a firm)
	orgBefore    = toSet(`company client customer vendor joined employer startup firm`)
	// fromPlace: "from" names a place after going or being somewhere
	// ("moved from Berlin", "I'm from Leeds"), not after a thing.
	fromPlace = toSet(`moved move moving came come comes coming flew fly flying drove drive driving travelled traveled travelling traveling
returned return returning back home i'm im am is are was were originally far away miles km`)
	// choosing: "with" after a verb of choosing names what was chosen.
	choosing = toSet(`go goes going went gone stick sticking stuck stay staying stayed`)
	// dealing: "insured with PetPlan", "booked with Hertz", "banks with
	// Monzo": a business dealt with, not a person met.
	dealing = toSet(`insured insure booked book banks bank banking registered signed contract subscribed`)
	// thingCalled: "its called Masseria Ulivo Bianco", "an app called
	// Tandem": a thing's name, not a person's.
	thingCalled = toSet(`it its it's place app shop company agency house villa thing one restaurant cafe pub hotel site website`)
	// nonNames are capitalised words that begin sentences or are otherwise
	// not names by themselves.
	nonNames = toSet(`i i'm i've i'd i'll the a an this that these those we you he she it they my our your his her their hi hello hey thanks thank please yes no ok okay sure great good so but and or if then when what why how who where which also can could would should will shall may might do does did is are was were let let's here there just now well also after before today tomorrow yesterday monday tuesday wednesday thursday friday saturday sunday january february march april may june july august september october november december user assistant note update done sorry oh ah
	with at in on for from to by about during since until into over under between through of via per without within like as than
	wow woah whoa yeah yep yup nope haha lol omg glad sounds definitely totally absolutely exactly congrats congratulations cool nice awesome amazing
	wonderful lovely great love loving agreed agree true right indeed anyway btw same sweet dear cheers bye goodbye welcome
	instead maybe perhaps however actually still even only
	honestly frankly basically seriously literally apparently hopefully luckily unfortunately fortunately obviously clearly personally ideally otherwise meanwhile
	mon tue tues wed thu thur thurs fri sat sun jan feb mar apr jun jul aug sep sept oct nov dec
	mondays tuesdays wednesdays thursdays fridays saturdays sundays`)

	// dropTypes are matched only to claim their span (the digits of an
	// amount are not a quantity) and never listed as entities: an amount,
	// a link, a date or a quantity ("11 km", "62.8 kg") is a detail of
	// something, not a thing of its own.
	dropTypes = map[string]bool{TypeAmount: true, TypeURL: true, TypeDate: true, TypeQuantity: true}

	// leadVerbs start a command or a report ("Book Casa Amora", "Reserved
	// Shigetsu"): capitalised because they open the sentence, never part
	// of the name that follows. Inflected forms are found by verbBase.
	leadVerbs = toSet(`book reserve add call email text send check buy get find cancel confirm try use visit see go take
make plan schedule move change switch remove drop order pick choose skip keep ask tell show compare review install update
open close rent hire pay ship deploy run fix set contact meet message ping invite join list note save print write
research look search ask compare cancel rebook upgrade downgrade swap replace start stop finish submit sign register
drive fly walk grab paste copy forward attach share upload download post reply`)

	// codeName is an identifier in code that names an error: CamelCase
	// ending in Error, Exception or Warning, never a person.
	codeName = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*[a-z0-9](?:Error|Exception|Warning|Exit|Interrupt)$`)
)

type found struct {
	ent   memory.Entity
	start int // byte offset in the sentence, for stable ordering
}

// findEntities extracts entities from one sentence. proper are the spans
// of its runs of capitalised words (properNames: candidate names); count
// reports how many times each lowercased single-word name occurs in the
// whole batch, so that a context-free capitalised word is kept only when
// it recurs.
func findEntities(sentence string, proper [][2]int, count map[string]int) []found {
	var out []found
	claimed := make([]bool, len(sentence)+1)
	claim := func(a, b int) bool {
		for i := a; i < b; i++ {
			if claimed[i] {
				return false
			}
		}
		for i := a; i < b; i++ {
			claimed[i] = true
		}
		return true
	}
	// A short sentence is the details of each of its entities: joined once.
	var whole string
	details := func(a, b int) string {
		if len(sentence) > maxDetails {
			return detailsAround(sentence, a, b)
		}
		if whole == "" {
			whole = detailsAround(sentence, a, b)
		}
		return whole
	}
	for _, p := range patterns {
		if !strings.ContainsAny(sentence, p.need) || (p.may != nil && !p.may(sentence)) {
			continue
		}
		for _, m := range p.re.FindAllStringIndex(sentence, -1) {
			if inToken(sentence, m[0], m[1]) || !claim(m[0], m[1]) || dropTypes[p.typ] || p.typ == TypeVersion && ledByNonName(sentence[m[0]:m[1]]) {
				continue
			}
			out = append(out, found{memory.Entity{Name: strings.TrimSpace(sentence[m[0]:m[1]]), Type: p.typ, Details: details(m[0], m[1])}, m[0]})
		}
	}
	for _, m := range proper {
		a, b, verbed, ok := nameSpan(sentence, m)
		if ok && b < len(sentence) && isDigit(sentence[b]) {
			// The last word runs into a number ("Backblaze B2", "Storage
			// Box BX11", "PAPA70", "Harrow HA1 2RH"): it is a code or a
			// model, not part of the name, and cut it would name nothing
			// ("Backblaze B"). The words before it are the name.
			a, b, ok = beforeLastWord(sentence, a, b)
		}
		if !ok || vocative(sentence, a, b) {
			continue
		}
		fields := strings.Fields(sentence[a:b])
		name := strings.Join(fields, " ")
		if inToken(sentence, a, b) || namesNothing(name, fields) || !claim(a, b) {
			continue
		}
		typ := nameType(sentence, a, b, fields)
		if len(fields) == 1 && codeName.MatchString(strings.Trim(name, ".,")) {
			typ = TypeCode
		}
		if typ == TypePerson && acronymsOnly(fields) {
			typ = TypeName // "Water is with EPAL", "ask the OT": an organisation or a role, no person's name
		}
		if typ == "" {
			// A lone capitalised word with no context: keep it only when
			// it is not the sentence's first word and recurs in the batch.
			if len(fields) == 1 && !verbed && (a == 0 || afterColon(sentence, a) || afterQuote(sentence, a) || count[strings.ToLower(name)] < 2) {
				continue
			}
			typ = TypeName
		}
		out = append(out, found{memory.Entity{Name: name, Type: typ, Details: details(a, b)}, a})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// nameSpan is the span of the proper-name run m once the words around it
// that are no part of a name are dropped: leading words capitalised only
// because they start the sentence or are pronouns or greetings, and
// trailing connectors. verbed: a leading verb was dropped ("Book
// Shigetsu"). ok is false when nothing is left.
func nameSpan(sentence string, m [2]int) (a, b int, verbed, ok bool) {
	toks := spaceFields(sentence, m[0], m[1])
	for len(toks) > 0 && tokIn(measures, sentence, toks[0]) && afterNumber(sentence, toks[0][0]) {
		toks = toks[1:] // "5 GHz Wi-Fi": the unit of a number before the name ("MB Way" is a name)
	}
	for len(toks) > 0 && (tokIn(nonNames, sentence, toks[0]) || leadVerb(sentence, toks[0])) {
		verbed = verbed || !tokIn(nonNames, sentence, toks[0])
		toks = toks[1:]
	}
	for len(toks) > 0 && (tokIn(nonNames, sentence, toks[len(toks)-1]) || tokIn(connectors, sentence, toks[len(toks)-1]) ||
		len(toks) > 1 && commonAcronym(sentence[toks[len(toks)-1][0]:toks[len(toks)-1][1]])) {
		toks = toks[:len(toks)-1] // "the GLS IBAN", "OPNsense DHCP": the kind of thing the name's
	}
	if len(toks) == 0 {
		return 0, 0, false, false
	}
	return toks[0][0], toks[len(toks)-1][1], verbed, true
}

// beforeLastWord is the span a..b without its last word (and the space
// before it); ok is false when it was the only one.
func beforeLastWord(sentence string, a, b int) (int, int, bool) {
	i := strings.LastIndexAny(sentence[a:b], " \t\n")
	if i < 0 {
		return 0, 0, false
	}
	b = a + i
	for b > a && isSpace(sentence[b-1]) {
		b--
	}
	return a, b, b > a
}

// namesNothing: one letter ("vitamin B 12", "plan B"), or a bare place or
// organisation word ("Mount a tmpfs", "Bank"), is the kind of a name, not
// one; a common word in capitals is emphasis ("hip is bruised, NOT
// broken").
func namesNothing(name string, fields []string) bool {
	if utf8.RuneCountInString(strings.Trim(name, ".,")) < 2 {
		return true
	}
	low := strings.TrimSuffix(strings.ToLower(name), ".")
	return len(fields) == 1 && (placeWords[low] || orgWords[low] || unitWords[low] || measures[low] || personTitle[low] || partWords[low] || demonyms[low] || commonAcronyms[low] && name == strings.ToUpper(name) ||
		name == strings.ToUpper(name) && lex.IsRankStopword(low)) || shouted(fields) || commonWordsOnly(fields)
}

// acronymsOnly: every word is in capitals (two letters or more): an
// organisation's or a role's abbreviation, never a person's name.
func acronymsOnly(fields []string) bool {
	for _, f := range fields {
		f = strings.Trim(f, ".,")
		if utf8.RuneCountInString(f) < 2 || f != strings.ToUpper(f) || f == strings.ToLower(f) {
			return false
		}
	}
	return true
}

// commonWordsOnly: a run of capitalised words each of which names a kind
// ("German VAT", "PDF URL"), with a common acronym among them.
func commonWordsOnly(fields []string) bool {
	acronym := false
	for _, f := range fields {
		low := strings.ToLower(strings.Trim(f, ".,"))
		switch {
		case commonAcronyms[low] && f == strings.ToUpper(f):
			acronym = true
		case demonyms[low] || nonNames[low]:
		default:
			return false
		}
	}
	return acronym && len(fields) > 1
}

// A title alone ("Dr", "Mrs": personTitle), the word for a numbered part
// whose number or letter is not part of the name ("Table 2", "Unit 4A",
// "Section 3.1") and a demonym ("Irish spelling", "in German first") name
// no one and nothing: the kind of a name, or a language or a people, not
// an entity of the chat.
var (
	partWords = toSet(`table figure fig section appendix chapter page unit group step option phase stage part item flat room floor block gate platform terminal`)
	demonyms  = toSet(`english british irish scottish welsh american canadian australian european german french spanish italian dutch
	portuguese polish swedish danish norwegian finnish greek turkish russian ukrainian chinese japanese korean indian brazilian mexican
	austrian swiss belgian czech hungarian romanian`)
)

// commonAcronyms are abbreviations of common words, in capitals as any
// acronym is: a file format, a unit, a time zone, a currency, a
// statistic, an office word ("send the PDF", "95% CI", "VAT ID", "SE =
// 0.31"). Each names a kind of thing, not one of the chat's people,
// places, organisations, products or codes; a name's own acronym ("the
// NHS") is not among them.
var commonAcronyms = toSet(`pdf csv json xml html url usb api ssh tls ssl dns vpn ip id pin db sql cpu gpu ram ssd hdd os ui ux tv pc faq
	am pm utc gmt bst cet cest est pst eta kb mb gb tb eur gbp usd chf
	vat po cc bcc fyi asap rsvp dm ps ceo cfo cto hq kpi roi fte sd se ci icc ols anova df gp gf
	iban bic vin pic ttl dhcp lan wan nas sku dob diy mot`)

// commonAcronym: w (a word as written) is an abbreviation of common words
// in capitals ("IBAN", "DHCP").
func commonAcronym(w string) bool {
	w = strings.Trim(w, ",.&-")
	return w != "" && w == strings.ToUpper(w) && commonAcronyms[strings.ToLower(w)]
}

// inToken: sentence[a:b] is part of a longer token, joined to it by a
// hyphen, or by a hyphen or a dot before a digit: "Mango" of the password
// "kettle-Mango-88", "K-" of "K-5521", "192.168.178" of the address
// 192.168.178.23 name nothing of their own. A dash after a name
// ("California- a gorgeous sunset") is punctuation.
func inToken(sentence string, a, b int) bool {
	name := strings.TrimRight(sentence[a:b], " -")
	if a > 0 && sentence[a-1] == '-' {
		return true
	}
	b = a + len(name)
	return b+1 < len(sentence) && (sentence[b] == '-' || sentence[b] == '.') && sentence[b+1] >= '0' && sentence[b+1] <= '9'
}

// afterColon: the word at a follows a colon, where a capital starts a
// line's value ("Action: Allow."), not a name.
func afterColon(sentence string, a int) bool {
	return strings.HasSuffix(strings.TrimRight(sentence[:a], " "), ":")
}

// afterQuote: the word at a opens a quotation, where a capital starts the
// quoted sentence or title ("Write in the methods: "Missing autonomy
// items …"", "tick "Limit to one use per customer"", "Yours sincerely"),
// not a name.
func afterQuote(sentence string, a int) bool {
	r, _ := utf8.DecodeLastRuneInString(sentence[:a])
	return r == '"' || r == '“' || r == '‘' || r == '\'' && (a == 1 || sentence[a-2] == ' ')
}

// unitWords are a company's units, named by what they do ("Finance agreed,
// the new code is WB-2310"): a part of whoever is speaking, not a name.
// measures are units of measure written with capitals ("in KiB/s", "40
// Mbit", "a 4 TB disk"): no name.
var measures = toSet(`kib mib gib tib kb mb gb tb pb kbit mbit gbit kbps mbps gbps kw kwh mw mwh mah hz khz mhz ghz dpi ppi fps rpm db`)

var unitWords = toSet(`finance legal hr it marketing sales ops operations security procurement accounts accounting payroll admin support engineering product design facilities compliance management`)

// shouted: words in capitals for emphasis ("GIG CONFIRMED", "LETS GOOOO"),
// not an acronym: two or more words of letters in capitals, one of six
// letters or more, or one word of seven, or a letter held three times.
func shouted(fields []string) bool {
	longest := 0
	for _, f := range fields {
		f = strings.Trim(f, ".,!?&-'")
		if f == "" || strings.ToUpper(f) != f || strings.ToLower(f) == f || strings.ContainsAny(f, "0123456789") {
			return false
		}
		longest = max(longest, utf8.RuneCountInString(f))
		for i := 2; i < len(f); i++ {
			if f[i] == f[i-1] && f[i] == f[i-2] {
				return true
			}
		}
	}
	return len(fields) >= 2 && longest >= 6 || longest >= 7
}

// ledByNonName reports whether a version match's product word is one
// that is never a name ("Is 3.2 safe?"): the match is no product.
func ledByNonName(m string) bool {
	w, _, ok := strings.Cut(m, " ")
	return ok && nonNames[strings.ToLower(w)]
}

// leadVerb reports whether the token t opens the sentence (after words
// that are never names) and is a verb of leadVerbs in any form: "Book",
// "Reserved", "Booking" there start a command or a report, not a name.
func leadVerb(sentence string, t [2]int) bool {
	for _, w := range words(sentence[:t[0]]) {
		if !nonNames[w] && !enumerator.MatchString(w) {
			return false
		}
	}
	w := strings.ToLower(strings.Trim(sentence[t[0]:t[1]], ",.&-"))
	return leadVerbs[verbBase(w)]
}

// enumerator is a list item's label, lower-cased without its punctuation:
// "(b) Find the time …", "2. Book …", "Q5: Find …" still open with the
// verb.
var enumerator = regexp.MustCompile(`^(?:[a-z]|[ivx]{1,4}|q?\d{1,3})$`)

// verbBase folds a verb's inflections to the base leadVerbs holds:
// "reserved" → "reserve", "booked" → "book", "books" → "book",
// "booking" → "book"; a word it does not know is returned as it is.
func verbBase(w string) string {
	if leadVerbs[w] {
		return w
	}
	for _, suf := range []string{"ing", "ed", "es", "s"} {
		stem, ok := strings.CutSuffix(w, suf)
		if !ok || len(stem) < 2 {
			continue
		}
		for _, c := range []string{stem, stem + "e", dedouble(stem)} {
			if leadVerbs[c] {
				return c
			}
		}
	}
	return w
}

// dedouble undoes a doubled final consonant: "stopp" → "stop".
func dedouble(s string) string {
	if n := len(s); n > 2 && s[n-1] == s[n-2] {
		return s[:n-1]
	}
	return s
}

// vocative reports whether the name at [a,b) calls someone out ("Wow,
// John!", "Yeah Maria, …", "…, Caroline!"): that says nothing about them.
func vocative(sentence string, a, b int) bool {
	if salutation(sentence, a) {
		return true // "Dear Parents and Carers,"
	}
	name := strings.TrimRight(sentence[a:b], ",.!?")
	b = a + len(name)
	after := strings.TrimSpace(sentence[b:])
	before := strings.TrimSpace(sentence[:a])
	if after == "" || strings.ContainsAny(after[:1], ",!?") {
		lead := true
		for _, w := range words(before) {
			lead = lead && nonNames[w]
		}
		if lead {
			return true
		}
	}
	return strings.HasSuffix(before, ",") && (after == "" || after == "!" || after == "?" || after == ".")

}

// salutation: the name at a is in the letter's opening "Dear …," (up to
// its first comma).
func salutation(sentence string, a int) bool {
	if len(sentence) < 5 || !strings.EqualFold(sentence[:5], "dear ") {
		return false
	}
	end := strings.IndexByte(sentence, ',')
	return end < 0 || a < end
}

var connectors = toSet(`of dos das da della del des de di du la les le aux au à van von der and &`)

// tokIn reports whether the token t of sentence, trimmed of ",.&-" and
// lowercased, is in set (lowered without allocating when it is short
// ASCII: it runs for every capitalised word).
// afterNumber: the word at a follows a number ("5 GHz", "40Mbit").
func afterNumber(sentence string, a int) bool {
	before := strings.TrimRight(sentence[:a], " ")
	return before != "" && isDigit(before[len(before)-1])
}

func tokIn(set map[string]bool, sentence string, t [2]int) bool {
	a, b := t[0], t[1]
	trim := func(c byte) bool { return c == ',' || c == '.' || c == '&' || c == '-' }
	for a < b && trim(sentence[a]) {
		a++
	}
	for b > a && trim(sentence[b-1]) {
		b--
	}
	w := sentence[a:b]
	var buf [24]byte
	if len(w) > len(buf) {
		return set[strings.ToLower(w)]
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= 0x80 {
			return set[strings.ToLower(w)]
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return set[string(buf[:len(w)])]
}

// quoted: sentence[a:b] is written in quotes.
func quoted(sentence string, a, b int) bool {
	open, _ := utf8.DecodeLastRuneInString(sentence[:a])
	end, _ := utf8.DecodeRuneInString(sentence[b:])
	return strings.ContainsRune(`'"‘“`, open) && strings.ContainsRune(`'"’”`, end)
}

// nameType guesses what kind of thing a capitalised name is from words in
// the name and around it; "" when nothing hints.
func nameType(sentence string, a, b int, fields []string) string {
	last := strings.ToLower(strings.Trim(fields[len(fields)-1], ".,"))
	if orgWords[last] {
		return TypeOrganization
	}
	if placeWords[last] {
		return TypePlace
	}
	if quoted(sentence, a, b) {
		return "" // "renamed the tab from 'draft' to 'FINAL'": a label, whatever "to" says
	}
	before := lastWords(sentence[:a], 2)
	after := firstWords(sentence[b:], 2)
	prev, prev2 := "", ""
	if n := len(before); n > 0 {
		prev = before[n-1]
		if n > 1 {
			prev2 = before[n-2]
		}
	}
	next := ""
	if len(after) > 0 {
		next = after[0]
	}
	switch {
	case personTitle[prev]:
		return TypePerson
	case orgBefore[prev], prev == "at" && (prev2 == "works" || prev2 == "work" || prev2 == "working"), prev == "for" && (prev2 == "work" || prev2 == "works" || prev2 == "working"):
		return TypeOrganization
	case prev == "to" && spokenTo[prev2]:
		return TypePerson // "i was talking to Sandra": one speaks to a person, not a place
	case prev == "from" && !fromPlace[prev2]:
		return "" // "a skip from Hollins Hire": a supplier as often as a place
	case placeBefore[prev]:
		return TypePlace
	case prev == "with" && choosing[prev2]:
		return "" // "we go with Oakline": a choice, not a person
	case prev == "with" && dealing[prev2], prev == "called" && thingCalled[prev2]:
		return "" // a business or a thing, not a person
	case personBefore[prev]:
		return TypePerson
	case personAfter[next] && next != "is":
		return TypePerson
	case next == "is" && len(after) > 1 && (after[1] == "my" || after[1] == "our"):
		return TypePerson
	}
	return ""
}

// maxDetails is the longest sentence that is its entities' details whole.
const maxDetails = 120

// detailsAround returns a short phrase of the sentence around [a,b).
func spaceIf(ok bool) string {
	if ok {
		return " "
	}
	return ""
}

func detailsAround(sentence string, a, b int) string {
	const maxLen = maxDetails
	if len(sentence) <= maxLen {
		return strings.Join(strings.Fields(sentence), " ")
	}
	// A window of words around the match.
	before := strings.Fields(sentence[:a])
	after := strings.Fields(sentence[b:])
	if len(before) > 6 {
		before = before[len(before)-6:]
	}
	if len(after) > 8 {
		after = after[:8]
	}
	// Joined with a space only where the sentence has one: the match ends
	// before "'s" in "Marcus's family", not "Marcus 's family".
	phrase := strings.Join(strings.Fields(sentence[a:b]), " ")
	if len(before) > 0 {
		phrase = strings.Join(before, " ") + spaceIf(a > 0 && unicode.IsSpace(rune(sentence[a-1]))) + phrase
	}
	if len(after) > 0 {
		phrase += spaceIf(b < len(sentence) && unicode.IsSpace(rune(sentence[b]))) + strings.Join(after, " ")
	}
	// A window of a sentence says so: "…" where words were left out, so a
	// fragment ("… the bell says Hansen/Meyer, and …") is not read whole.
	if len(before) < len(strings.Fields(sentence[:a])) {
		phrase = "…" + phrase
	}
	if len(after) < len(strings.Fields(sentence[b:])) && !strings.HasSuffix(phrase, "…") {
		phrase = strings.TrimRight(phrase, ",;:") + "…"
	}
	return clip(phrase, maxLen)
}
