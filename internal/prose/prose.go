// Package prose turns chat turns into the plain sentences the extractive
// memory reads: who spoke, what they said in words (code, LaTeX, tables,
// markup and links taken out), cut into sentences. derive/facts and
// derive/extractive share it so that a fact, a topic and a narrative
// sentence are all drawn from the same clean text.
package prose

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/memory"
)

// Hole marks where Clean took something out that a sentence cannot be
// read without (a formula, a code span, a link): a sentence holding one is
// not prose.
const Hole = "\uFFFC"

// Speaker is who said a turn.
type Speaker struct {
	// Name is the speaker's name ("" when the turn has none): the message's
	// Name, or a "Name: " prefix of its content.
	Name string
	// Person is true when the speaker talks about themself: a user turn, or
	// an assistant turn that carries a "Name: " prefix (a transcript of
	// people talking, where each side is stored under a role).
	Person bool
}

// Turn is a message read as prose.
type Turn struct {
	Speaker Speaker
	// Body is the content without the speaker prefix, not yet cleaned.
	Body string
}

// speakerRe is a "Name: " or "First Last: " prefix.
var speakerRe = regexp.MustCompile(`^\s*([A-Z][\p{L}'’\-]*(?: [A-Z][\p{L}'’\-]*)?):[ \t]+`)

// labels are capitalised words that end in a colon without being a
// speaker: "Decision: cutover on June 15", "Note: ...", an acknowledgement
// opening a reply ("Noted: Brightflow Gas, Friday 13 March"), an email's
// header ("Subject: Invoice 014", "To: ap@…": the "I" of a drafted email
// is not a person named Subject). Role names are
// labels too: "User: hi" has no speaker name, only a raw role label.
var labels = lex.Set(`decision decisions note notes update summary question answer step todo action warning error
example solution result results important reminder plan goal status tip hint ps re fyi tldr edit output input
context task problem issue fix bug q a user assistant system tool agent bot human ai proof definition theorem
lemma hint case option options pros cons source sources reference update edit
food diet schedule budget location address time date dates timeline weather background details detail constraint
constraints requirement requirements goals preference preferences health work family travel price prices cost costs total
next priority deadline agenda feedback correction caveat verdict conclusion recap overview idea ideas suggestion
suggestions reason why how what when where who which update updates news info tip tips bonus side first second third
finally also now later today tomorrow yesterday morning evening tonight day week weekend month year
noted updated done confirmed booked saved sorted fixed changed added removed cancelled canceled swapped switched
understood agreed received scheduled logged recorded ready checked moved rebooked paid sent ok okay yes no sure great
subject from to cc bcc fwd attachment attachments`)

var roleLabels = lex.Set(`user assistant system tool agent bot human ai`)

// Read splits a message into its speaker and its body.
func Read(m memory.Message) Turn {
	body := m.Content
	name := strings.TrimSpace(m.Name)
	prefixed := false
	if loc := speakerRe.FindStringSubmatchIndex(body); loc != nil {
		p := body[loc[2]:loc[3]]
		lp := strings.ToLower(p)
		switch {
		case roleLabels[lp]:
			body = body[loc[1]:] // a raw role label says nothing
		case labels[lp]:
		case name == "" || strings.EqualFold(name, p):
			name, prefixed, body = p, true, body[loc[1]:]
		}
	}
	return Turn{
		Speaker: Speaker{Name: name, Person: m.Role == memory.RoleUser || (m.Role == memory.RoleAssistant && prefixed)},
		Body:    body,
	}
}

// Reading is a turn read once: its message, speaker and body, and the
// prose sentences of its body (Clean, Sentences, IsProse), which facts and
// the summariser read alike.
type Reading struct {
	Msg   memory.Message
	Turn  Turn
	Sents []string
}

// ReadProse reads a turn once for everything that reads its prose.
func ReadProse(m memory.Message) Reading {
	t := Read(m)
	var sents []string
	for _, s := range lex.Sentences(Clean(t.Body)) {
		if IsProse(s) {
			sents = append(sents, s)
		}
	}
	return Reading{Msg: m, Turn: t, Sents: sents}
}

var (
	captionRe   = regexp.MustCompile(`\[shares? [^\]\n]*\]`)
	fenceRe     = regexp.MustCompile("(?s)(?:```|~~~).*?(?:```|~~~|$)")
	displayRe   = regexp.MustCompile(`(?s)\\\[.*?\\\]|\$\$.*?\$\$|\\\(.*?\\\)|\\begin\{[^}]*\}.*?\\end\{[^}]*\}`)
	inlineMath  = regexp.MustCompile(`\$[^$\n]+?\$`)
	inlineCode  = regexp.MustCompile("`[^`\n]*`")
	latexCmd    = regexp.MustCompile(`\\[A-Za-z]+(?:\{[^{}]*\})*`)
	tableLine   = regexp.MustCompile(`(?m)^[ \t]*\|.*$|^[ \t]*[-:| ]*\|[-:| ]*$`)
	htmlTag     = regexp.MustCompile(`</?[A-Za-z][^<>\n]*>`)
	imageRe     = regexp.MustCompile(`!\[[^\]\n]*\]\([^)\n]*\)`)
	mdLink      = regexp.MustCompile(`\[([^\]\n]+)\]\([^)\n]*\)`)
	urlRe       = regexp.MustCompile(`\b(?:https?|ftp)://\S+|\bwww\.\S+`)
	headingRe   = regexp.MustCompile(`(?m)^[ \t]{0,3}(?:#{1,6}|>+)[ \t]+`)
	emphasisRe  = regexp.MustCompile(`\*\*|__|~~`)
	simpleMath  = regexp.MustCompile(`^[A-Za-z0-9 .,=+\-]+$`)
	simpleIdent = regexp.MustCompile(`^[\w.\-/]{1,40}$`)
	spacesRe    = regexp.MustCompile(`[ \t]{2,}`)
)

// Clean returns text with what is not prose taken out: fenced code,
// display and inline LaTeX, LaTeX commands, tables, HTML tags, images and
// links, and the caption of a shared image ("[shares a photo of …]": not
// the speaker's words); markdown markers are dropped and their text kept. A block taken
// out ends the sentence before it; a span taken out leaves a Hole, except
// a short formula or identifier ("$h = 0.5$", "`make`"), kept as text.
// Runs of ellipses become one "…"; curly quotes become straight ones.
func Clean(text string) string {
	has := func(subs ...string) bool {
		for _, sub := range subs {
			if strings.Contains(text, sub) {
				return true
			}
		}
		return false
	}
	// Each rewrite runs only when its mark is there: most turns are plain
	// prose and skip them all.
	if strings.Contains(text, "\xe2\x80") { // the first two bytes of every curly quote
		text = quotes.Replace(text)
	}
	text = Apostrophes(text)
	if has("[share") {
		text = captionRe.ReplaceAllString(text, " ")
	}
	if has("```", "~~~") {
		text = fenceRe.ReplaceAllString(text, "\n")
	}
	if has(`\`, "$$") {
		text = displayRe.ReplaceAllString(text, "\n")
	}
	if has("|") {
		text = tableLine.ReplaceAllString(text, "")
	}
	if strings.Count(text, "$") >= 2 { // a formula needs two
		text = inlineMath.ReplaceAllStringFunc(text, func(m string) string {
			if in := strings.TrimSpace(m[1 : len(m)-1]); simpleMath.MatchString(in) && strings.ContainsAny(in, "=+-") {
				return in
			}
			return Hole
		})
	}
	if has("`") {
		text = inlineCode.ReplaceAllStringFunc(text, func(m string) string {
			if in := m[1 : len(m)-1]; simpleIdent.MatchString(in) {
				return in
			}
			return Hole
		})
	}
	if has(`\`) {
		text = latexCmd.ReplaceAllString(text, Hole)
	}
	if has("](") {
		text = imageRe.ReplaceAllString(text, "")
		text = mdLink.ReplaceAllString(text, "$1")
	}
	if has("://", "www.") {
		text = urlRe.ReplaceAllString(text, Hole)
	}
	if has("<") {
		text = htmlTag.ReplaceAllString(text, " ")
	}
	if has("#", ">") {
		text = headingRe.ReplaceAllString(text, "")
	}
	text = dropBullets(text)
	if has("**", "__", "~~") {
		text = emphasisRe.ReplaceAllString(text, "")
	}
	if has("...", "…") {
		text = lex.Ellipses(text)
	}
	if has("  ", "\t") {
		text = spacesRe.ReplaceAllString(text, " ")
	}
	return text
}

// bareContractions are the contractions texting writes without their
// apostrophe and that are no other word ("dont", "im", "ive"), by where the
// apostrophe goes back; "ill", "id", "were", "its", "well", "hell", "lets"
// are words of their own and stay as they are.
var bareContractions = func() map[string]int {
	m := map[string]int{}
	for _, w := range strings.Fields(`dont doesnt didnt isnt arent wasnt werent hasnt havent hadnt cant couldnt shouldnt wouldnt wont mustnt neednt`) {
		m[w] = len(w) - 1 // don't
	}
	for _, w := range strings.Fields(`ive youve weve theyve shouldve wouldve couldve youre theyre`) {
		m[w] = len(w) - 2 // i've, you're
	}
	for _, w := range strings.Fields(`im thats whats theres whos hes shes`) {
		m[w] = len(w) - 1 // i'm, that's
	}
	return m
}()

// Apostrophes gives back the apostrophe of a contraction written without
// one, so "i dont eat meat" reads as "i don't eat meat" to the patterns
// that look for a contraction. The rest of the text is unchanged; a text
// without one is returned as is, not copied (this runs on every turn read).
func Apostrophes(text string) string {
	var b []byte
	done := 0 // text[:done] is in b
	for i := 0; i < len(text); {
		if !asciiLetter(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && asciiLetter(text[j]) {
			j++
		}
		whole := (i == 0 || text[i-1] < 0x80 && !isWordByte(text[i-1]) && text[i-1] != '\'') &&
			(j == len(text) || text[j] < 0x80 && !isWordByte(text[j]) && text[j] != '\'')
		if whole && j-i >= 2 && j-i <= 8 {
			if at, ok := bareContractions[lowerASCII(text[i:j])]; ok {
				b = append(append(append(b, text[done:i+at]...), '\''), text[i+at:j]...)
				done = j
			}
		}
		i = j
	}
	if b == nil {
		return text
	}
	return string(append(b, text[done:]...))
}

func asciiLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func lowerASCII(w string) string {
	for k := 0; k < len(w); k++ {
		if w[k] >= 'A' && w[k] <= 'Z' {
			return strings.ToLower(w)
		}
	}
	return w
}

var quotes = strings.NewReplacer("’", "'", "‘", "'", "“", "\"", "”", "\"")

// IsProse reports whether a sentence is written in words: no Hole, at
// least two words of letters, mostly letters and digits, and hardly any
// signs of code or formulas (two are enough: codeSignsAtLeast2).
func IsProse(s string) bool {
	if strings.Contains(s, Hole) {
		return false
	}
	letters, other, wordsOfLetters := 0, 0, 0
	inWord := false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			if !inWord {
				wordsOfLetters++
			}
			inWord = true
			letters++
		case unicode.IsDigit(r):
			letters++
			inWord = false
		case r == '\'' && inWord:
		default:
			inWord = false
			if !unicode.IsSpace(r) {
				other++
			}
		}
	}
	if wordsOfLetters < 2 || letters*10 < (letters+other)*7 {
		return false
	}
	if !strings.ContainsAny(s, "=!-:&|({};<>\\^_#") {
		return true
	}
	return !codeSignsAtLeast2(s)
}

// Kinds of non-prose content, for describing a turn that has no prose.
const (
	KindCode    = "code"
	KindFormula = "formulas"
	KindTable   = "a table"
	KindLink    = "a link"
)

// Shares names what a body holds besides prose, in a fixed order.
func Shares(body string) []string {
	var out []string
	if fenceRe.MatchString(body) || inlineCode.MatchString(body) {
		out = append(out, KindCode)
	}
	if displayRe.MatchString(body) || latexCmd.MatchString(body) || inlineMath.MatchString(body) {
		out = append(out, KindFormula)
	}
	if tableLine.MatchString(body) {
		out = append(out, KindTable)
	}
	if urlRe.MatchString(body) {
		out = append(out, KindLink)
	}
	return out
}
