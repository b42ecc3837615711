package lex

import "strings"

// Terms returns the stemmed, stopword-free Runs of text, in order: the
// BM25 terms. Their hashes are what the embedded index stores, so this,
// Stem and the TermStopwords do not change without a rebuild of every
// index.
func Terms(text string) []string {
	ws := Runs(text)
	out := ws[:0]
	for _, w := range ws {
		if termStopwords[w] || (len(w) == 1 && w[0] >= 'a' && w[0] <= 'z') {
			continue
		}
		out = append(out, Stem(w))
	}
	return out
}

// IsTermStopword reports whether the run w (lowercase, not stemmed) is one
// Terms leaves out.
func IsTermStopword(w string) bool { return termStopwords[w] }

// IsRequestTerm reports whether the (stemmed) term t is one a question to
// a conversation memory uses about the conversation itself ("what did we
// discuss across our conversations", "as I mentioned earlier",
// "summarize") or to phrase the request ("list", "describe", "explain",
// "please"). They carry nothing about the turns wanted, and the rarer they
// are in a chat the more IDF weight they get, so they pull in whatever turn
// happens to say "summary" or "items". Words that are often content too
// ("walk", "remind", "order") are not among them. Queries only: documents
// keep them, so no reindex.
func IsRequestTerm(t string) bool { return requestTerms[t] }

// IsContractionHalf reports whether the term t is what Runs leaves of a
// contraction and never a word of its own: "re" of "we're", "ve" of
// "I've", "ll" of "we'll", "isn" of "isn't". Documents keep them (Terms
// does not change without a rebuild of every index); a query leaves them
// out, or "the place we're staying" meets every turn saying "we're".
func IsContractionHalf(t string) bool { return contractionHalves[t] }

var contractionHalves = Set(`re ve ll isn aren wasn weren didn doesn hasn haven hadn couldn wouldn shouldn mustn needn`)

var requestTerms = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`conversation chat discuss discussed discussion mention mentioned talk talked
		brought bring earlier previously recall remember summarize summary throughout across aspects
		items list describe explain tell please`) {
		m[Stem(w)] = true
	}
	return m
}()

// Stem strips common English inflections; deliberately light (no Porter
// rules) so it is predictable: "deployments"->"deployment",
// "queries"->"query", "running"->"run", "configured"->"configur",
// "configuring"->"configur". Words of other languages are mostly left alone
// by the length guards; that is fine for matching because queries and
// documents are stemmed alike.
func Stem(w string) string {
	if !isASCIILower(w) {
		return w
	}
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		w = w[:len(w)-3] + "y"
	case len(w) > 4 && strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	switch {
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		w = undouble(w[:len(w)-3])
	case len(w) > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		w = undouble(w[:len(w)-2])
	}
	// "configure"/"configured"/"configuring" all meet at "configur".
	if len(w) > 4 && strings.HasSuffix(w, "e") && !strings.HasSuffix(w, "ee") {
		w = w[:len(w)-1]
	}
	return w
}

// undouble drops a doubled final consonant left by -ing/-ed ("runn" -> "run").
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func isASCIILower(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// termStopwords: a small English list, plus the halves Runs leaves of
// contractions ("don't" -> "don", "t") and their apostrophe-less spellings.
var termStopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
		before being below between both but by can could did do does doing down during each few for from further
		had has have having he her here hers herself him himself his how i if in into is it its itself just me
		more most my myself no nor not now of off on once only or other our ours ourselves out over own same she
		should so some such than that the their theirs them themselves then there these they this those through
		to too under until up very was we were what when where which while who whom why will with would you your
		yours yourself yourselves s t don im ive id ill youre thats its let lets ok okay also`) {
		m[w] = true
	}
	return m
}()

// Variants are the stems of the other words of t's family (t a stemmed
// term, as Terms gives): a question says "collection" where the chat said
// "collecting", "delivery" where it said "delivered", "walker" where it
// said "walks". Stem strips inflections only, so the two never met. The
// variants are for queries (a document keeps its own terms: no reindex);
// most name no word of the chat and match nothing. t's base is what is
// left of it without one derivational suffix, and the family is the base
// with each of them ("collection" → "collect", "collector", …).
func Variants(t string) []string {
	var out []string
	EachVariant(t, func(base, suffix string) { out = append(out, base+suffix) })
	return out
}

// EachVariant calls f with each variant of t as a base and a suffix, in
// Variants' order, without building the strings (a query hashes them).
func EachVariant(t string, f func(base, suffix string)) {
	if len(t) < 3 || !isASCIILower(t) || strings.IndexAny(t, "0123456789") >= 0 {
		return
	}
	base := t
	for _, suf := range derivSuffixes {
		if b, ok := strings.CutSuffix(t, suf); ok && len(b) >= minBase(suf) && (suf != "y" || strings.HasSuffix(b, "er")) {
			base = b
			f(b, "")
			if n := len(b); b[n-1] == b[n-2] && !strings.ContainsRune("aeiouy", rune(b[n-1])) {
				f(b[:n-1], "") // "cancellation" → "cancel"
			}
			break // the longest suffix: "confirmation" is "confirm", not "confirmat"
		}
	}
	for _, suf := range derivSuffixes {
		if (suf != "y" || strings.HasSuffix(base, "er")) && !(len(base)+len(suf) == len(t) && strings.HasPrefix(t, base) && strings.HasSuffix(t, suf)) {
			f(base, suf)
		}
	}
	// A noun in -y and its adjective in -ic: "allergies" / "allergic",
	// "economy" / "economic".
	if b, ok := strings.CutSuffix(t, "ic"); ok && len(b) >= 4 {
		f(b, "y")
	} else if b, ok := strings.CutSuffix(t, "y"); ok && len(b) >= 5 && !strings.HasSuffix(b, "l") {
		f(b, "ic")
	}
}

// AsksCurrent reports whether a question asks how things stand now, after
// any change: "in the end", "still", "now", "currently", "latest", "ended
// up", "final", "anymore".
func AsksCurrent(q string) bool {
	low := " " + strings.Join(Fields(q), " ") + " "
	for _, c := range currentCues {
		if strings.Contains(low, c) {
			return true
		}
	}
	return false
}

var currentCues = []string{" in the end ", " end up ", " ended up ", " ending up ", " final ", " finally ", " now ", " still ",
	" currently ", " current ", " latest ", " anymore ", " any more ", " these days ", " at the moment ", " nowadays ",
	" most recent ", " settled on ", " went with ", " going with ", " decided on "}

// EachClipping calls f with each clipped form t may stand for in a chat:
// its prefixes from four letters (five for a term under ten) to three
// short of it. People text the clipped word ("physio", "config", "info",
// "exam") where a question says it whole ("physiotherapist",
// "configuration", "information", "examination"). For queries only; most
// prefixes name no word of the chat and match nothing.
func EachClipping(t string, f func(prefix string)) {
	if len(t) < 8 || !isASCIILower(t) {
		return
	}
	from := 5
	if len(t) >= 10 {
		from = 4
	}
	for n := from; n <= len(t)-3; n++ {
		f(t[:n])
	}
}

// EachAbbreviation calls f with the other spellings of t (a stemmed
// term) that people write for the same word and that neither the stemmer
// nor EachClipping meets: "ref" for "reference", "appt" for
// "appointment", "tmrw" for "tomorrow", "bday" for "birthday", and the
// other way round. For queries only (no reindex).
func EachAbbreviation(t string, f func(form string)) {
	for _, form := range abbreviations[t] {
		f(form)
	}
}

// abbreviations: each line a word and its common written short forms.
var abbreviations = func() map[string][]string {
	m := map[string][]string{}
	for _, line := range strings.Split(`reference ref|appointment appt|tomorrow tmrw tmr tmrow tomoz|birthday bday|telephone tel|number num|message msg|manager mgr|department dept|approximately approx|picture pic|photo pic|document doc|temperature temp|university uni|veterinarian vet|administrator admin|application app|password pwd|account acct|quantity qty|weekend wkend|week wk|hour hr|minute min|second sec|kilometre km|kilometer km|mile mi|kilogram kg|pound lb|because bc cos|tonight tonite|thanks thx ty|please pls plz|medication med meds|prescription script`, "|") {
		ws := strings.Fields(line)
		for _, w := range ws {
			for _, o := range ws {
				if o != w {
					m[Stem(w)] = append(m[Stem(w)], Stem(o))
				}
			}
		}
	}
	return m
}()

// minBase is the shortest base a suffix leaves: "payment" is "pay", but
// "early" is no "ear".
func minBase(suf string) int {
	if suf == "ment" || suf == "ion" || suf == "ation" {
		return 3
	}
	return 4
}

// derivSuffixes turn a word into another of its family, as Stem leaves
// them (a final "e" dropped: "attendance" is "attendanc"); the longer of
// two that end alike first.
var derivSuffixes = []string{"ation", "ion", "ment", "anc", "enc", "er", "or", "al", "ly", "y"}
