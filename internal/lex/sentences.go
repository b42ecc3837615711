package lex

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentences cuts text into trimmed, non-empty sentences: after ., !, ? or
// … (with the closing quotes or brackets that follow) followed by white
// space, and at line breaks (sentenceEnds). How prose is read (facts, the
// extractive summary); passage windows cut at SentenceBreaks.
func Sentences(text string) []string {
	var out []string
	last := 0
	sentenceEnds(text, func(end, next int) {
		if abbreviated(text[last:end], text[end:next], text[next:]) {
			return // "neighbour jean at no. 16 has a spare key", "with Dr. Okonkwo": one sentence
		}
		if s := strings.TrimSpace(text[last:end]); s != "" {
			out = append(out, s)
		}
		last = next
	})
	if s := strings.TrimSpace(text[last:]); s != "" {
		out = append(out, s)
	}
	return out
}

// abbreviated: sentence ends in an abbreviation the rest of the text goes
// on from, on the same line: a number's ("no.", "nr.", "tel.", "approx.")
// before a digit, a title ("Dr.", "Mr.", "Mrs.", "Ms.", "St.") before a
// capital.
func abbreviated(sentence, gap, rest string) bool {
	if rest == "" || !strings.HasSuffix(sentence, ".") || strings.Contains(gap, "\n") {
		return false
	}
	i := strings.LastIndexAny(sentence[:len(sentence)-1], " \t\n(")
	word := strings.ToLower(sentence[i+1 : len(sentence)-1])
	switch c := rest[0]; {
	case c >= '0' && c <= '9':
		return word == "no" || word == "nr" || word == "tel" || word == "approx"
	case c >= 'A' && c <= 'Z':
		return word == "dr" || word == "mr" || word == "mrs" || word == "ms" || word == "st"
	}
	return false
}

// A hand-written scanner for the regular expression that ran on every
// sentence of every turn (Go's backtracker was most of the CPU of a busy
// server). It matches exactly what its regular expression matched; the
// fuzz test in sentences_test.go holds the expression as its oracle.

// isSpace is RE2's \s: ASCII white space without \v.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// threeByte reports whether s[i:] starts with the three-byte rune
// E2 b1 b2 (…, ’, ”). An E2 byte always starts a rune, as the regular
// expression decodes text, so a byte scanner sees the runes it sees.
func threeByte(s string, i int, b1, b2 byte) bool {
	return i+2 < len(s) && s[i] == 0xE2 && s[i+1] == b1 && s[i+2] == b2
}

// sentencePunct is the length of a [.!?…] at s[i:], 0 when there is none.
func sentencePunct(s string, i int) int {
	switch {
	case s[i] == '.' || s[i] == '!' || s[i] == '?':
		return 1
	case threeByte(s, i, 0x80, 0xA6): // …
		return 3
	}
	return 0
}

// closer is the length of a ["'’”)\]] at s[i:], 0 when there is none.
func closer(s string, i int) int {
	switch {
	case s[i] == '"' || s[i] == '\'' || s[i] == ')' || s[i] == ']':
		return 1
	case threeByte(s, i, 0x80, 0x99) || threeByte(s, i, 0x80, 0x9D): // ’ ”
		return 3
	}
	return 0
}

// sentenceEnds calls f for each match of `([.!?…]+["'’”)\]]*)\s+|\n+` in
// text, left to right: end is where the group ends (the match's end when
// the line-break alternative matched), next where the match ends.
//
// The first alternative can match only where a run of [.!?…] starts, and
// then only at that run's first sign (a later sign has the same closers
// and spaces after it); its parts are greedy and never need to give back.
func sentenceEnds(text string, f func(end, next int)) {
	for i := 0; i < len(text); {
		if sentencePunct(text, i) > 0 {
			g := i
			for g < len(text) && sentencePunct(text, g) > 0 {
				g += sentencePunct(text, g)
			}
			for g < len(text) && closer(text, g) > 0 {
				g += closer(text, g)
			}
			k := g
			for k < len(text) && isSpace(text[k]) {
				k++
			}
			if k > g {
				f(g, k)
			}
			i = k
			continue
		}
		if text[i] == '\n' {
			k := i
			for k < len(text) && text[k] == '\n' {
				k++
			}
			f(k, k)
			i = k
			continue
		}
		i++
	}
}

// SentenceBreaks are the byte offsets in t, from from on, where passage
// windows may cut: after a sentence terminator and the spaces following it
// (a Latin terminator needs a space after it, a CJK one does not), and
// after every line break. Unlike Sentences it knows the CJK terminators
// and takes no closing quotes; merging the two would move where passages
// and windows are cut.
func SentenceBreaks(t string, from int) []int {
	var out []int
	start := from // where the sentence being read began
	for i := from; i < len(t); {
		if c := t[i]; c < utf8.RuneSelf && c != '.' && c != '!' && c != '?' && c != '\n' {
			i++ // most bytes: no terminator, no decoding
			continue
		}
		r, size := utf8.DecodeRuneInString(t[i:])
		i += size
		cjk := strings.ContainsRune("。！？", r)
		if !cjk && !strings.ContainsRune(".!?…\n", r) {
			continue
		}
		j := i
		for j < len(t) {
			r2, s2 := utf8.DecodeRuneInString(t[j:])
			if !unicode.IsSpace(r2) {
				break
			}
			j += s2
		}
		if (j > i || cjk || r == '\n' || j == len(t)) && !enumerator(t[start:i]) {
			out = append(out, j)
			i, start = j, j
		}
	}
	return out
}

// enumerator: a list item's label alone ("1.", "2)", "b.", "-"), which
// opens the item after it rather than ending a sentence: a window ending
// on "1." shows the label and none of its item.
func enumerator(s string) bool {
	s = strings.TrimSpace(s)
	switch {
	case s == "" || len(s) > 4:
		return false
	case s == "-" || s == "*" || s == "•":
		return true
	}
	last := s[len(s)-1]
	if last != '.' && last != ')' {
		return false
	}
	body := s[:len(s)-1]
	if len(body) == 1 && body[0] >= 'a' && body[0] <= 'z' {
		return true
	}
	return body != "" && strings.Trim(body, "0123456789") == ""
}

// LastQuestion is text's last sentence, its closing question marks
// kept: what a turn ending with a question asks ("ok whats everyone's new
// address for the deposit form?" of "… sorted. ok whats everyone's …?").
func LastQuestion(text string) string {
	t := strings.TrimRight(text, " \t\n\r")
	return t[strings.LastIndexAny(strings.TrimRight(t, "?"), ".!?\n")+1:]
}

// EndsWithQuestion reports whether text ends with a question: a turn
// asking something, whose next turn answers it. A question mark ends one
// (white space after it aside); so does a short last sentence that asks
// by its first word, as people texting write it without one ("whats the
// house account details again", "anyone got the wifi pw", "is the
// plumber still coming thurs").
func EndsWithQuestion(text string) bool {
	t := strings.TrimRight(text, " \t\n\r")
	if strings.HasSuffix(t, "?") {
		return true
	}
	if t == "" || strings.HasSuffix(t, ".") {
		return false // a sentence closed by a full stop states
	}
	// The last sentence only, found from the end: this runs on every
	// retrieved turn, and a long turn's other sentences ask nothing here.
	last := t[strings.LastIndexAny(t, ".!?\n")+1:]
	return len(last) <= maxAskBytes && asksByItsWords(last)
}

// maxAskBytes bounds the sentence asksByItsWords reads: fourteen words
// are fewer bytes.
const maxAskBytes = 160

// asksByItsWords: a sentence of two to fourteen words opening (after a
// filler such as "ok" or "also") with a question word, or with an
// auxiliary before its subject ("do you", "is the").
func asksByItsWords(sentence string) bool {
	ws := Words(sentence)
	if len(ws) < 2 || len(ws) > 14 {
		return false
	}
	// Words keeps a straight apostrophe inside a word ("what's", "isn't")
	// and splits at a curly one: the openers are spelt without it.
	for i, w := range ws[:min(len(ws), 4)] {
		if strings.IndexByte(w, '\'') >= 0 {
			ws[i] = strings.ReplaceAll(w, "'", "")
		}
	}
	i := 0
	for i < len(ws)-1 && askFillers[ws[i]] {
		i++
	}
	w, next := ws[i], ""
	if i+1 < len(ws) {
		next = ws[i+1]
	}
	switch {
	case whOpeners[w]:
		return next != "a" && next != "an" // "what a day" exclaims
	case auxOpeners[w]:
		return askSubjects[next] || next == "the" && theOpeners[strings.TrimSuffix(w, "nt")]
	case w == "any" || w == "anyone" || w == "anybody":
		return true
	}
	return false
}

var (
	askFillers  = Set(`ok okay so and also btw hey hi um hmm oh sorry quick guys lads all`)
	whOpeners   = Set(`what whats where wheres when whens who whos why how hows which`)
	auxOpeners  = Set(`is isnt are arent was wasnt were werent do does doesnt did didnt can cant could would will wont should shall has have hasnt havent`)
	theOpeners  = Set(`is are was were has does did`) // "is the", "didn't the"
	askSubjects = Set(`you u ya we i they he she it anyone anybody someone somebody there this that everyone`)
)
