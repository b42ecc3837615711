package prose

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/memory"
)

// Subject is how a statement names a speaker: their name, else "the
// user" or "the assistant" by role.
func Subject(sp Speaker, role memory.Role) string {
	switch {
	case sp.Name != "":
		return sp.Name
	case role == memory.RoleAssistant:
		return "the assistant"
	}
	return "the user"
}

var (
	firstPerson = regexp.MustCompile(`(?i)\b(?:i|i'm|i've|i'll|i'd|my)\b`)
	tokenRe     = regexp.MustCompile(`[\p{L}\p{N}']+|[^\p{L}\p{N}']+`)
)

// FirstPerson reports whether s speaks as "I" or "my".
func FirstPerson(s string) bool { return firstPerson.MatchString(s) }

// IrregularPast are past tenses that do not end in "-ed".
var IrregularPast = lex.Set(`went got took made ran met won lost bought brought built caught chose came did drew drove ate fell
felt found flew forgot gave grew had heard held kept knew led left lent let lit meant paid put quit read rode rang rose
said saw sold sent set shook shot sang sank sat slept spent spoke stood stole swam taught told thought threw understood
woke wore wrote began become became broke fought hung hid hit hurt withdrew`)

// ThirdPerson rewrites the speaker's "I" as subject, with the verb that
// follows agreeing ("I love" → "Caroline loves", "I'm" → "Caroline is");
// "my" becomes "subject's" the first time and "their" after, "me"
// becomes the subject, "myself" "themselves", "mine" "theirs".
func ThirdPerson(s, subject string) string {
	toks := tokenRe.FindAllString(s, -1)
	named := false
	for i, t := range toks {
		switch strings.ToLower(t) {
		case "i":
			toks[i] = subject
			named = true
			agree(toks, i+1)
		case "i'm":
			toks[i], named = subject+" is", true
		case "i've":
			toks[i], named = subject+" has", true
		case "i'll":
			toks[i], named = subject+" will", true
		case "i'd":
			toks[i], named = subject+" would", true
		case "my":
			if named {
				toks[i] = "their"
			} else {
				toks[i], named = subject+"'s", true
			}
		case "me":
			toks[i] = subject
		case "myself":
			toks[i] = "themselves"
		case "mine":
			toks[i] = "theirs"
		}
	}
	return strings.Join(toks, "")
}

// agree puts the verb after "I" (at toks[from:], adverbs skipped) in the
// third person singular.
func agree(toks []string, from int) {
	for i := from; i < len(toks); i++ {
		t := toks[i]
		if strings.TrimSpace(t) == "" {
			continue
		}
		if !isWord(t) {
			return // "I, too, …": no verb follows
		}
		lw := strings.ToLower(t)
		if adverbs[lw] {
			continue
		}
		toks[i] = conjugate(lw)
		return
	}
}

func isWord(t string) bool {
	return tokenRe.MatchString(t) && !strings.ContainsAny(t[:1], " ,.;:!?\"()-")
}

var adverbs = lex.Set(`really also just recently finally actually still totally absolutely now currently already even
definitely truly usually always often sometimes personally kinda officially lately then never rarely seriously
honestly only mostly originally eventually gradually slowly probably certainly`)

var thirdForms = map[string]string{
	"am": "is", "was": "was", "were": "was", "have": "has", "haven't": "hasn't", "do": "does", "don't": "doesn't",
	"go": "goes", "aren't": "isn't", "wasn't": "wasn't", "weren't": "wasn't",
}

var unchanged = lex.Set(`can can't cannot could couldn't will won't would wouldn't shall should shouldn't may might must
mustn't did didn't had hadn't`)

// presentEd are present tenses that end in "-ed" ("I need" is not past).
var presentEd = lex.Set(`need feed bleed breed speed proceed succeed exceed heed seed shed embed shred`)

// conjugate returns the third person singular of a verb that follows "I".
func conjugate(v string) string {
	if f, ok := thirdForms[v]; ok {
		return f
	}
	switch {
	case unchanged[v], IrregularPast[v], strings.HasSuffix(v, "ed") && !presentEd[v], strings.Contains(v, "'"):
		return v
	case strings.HasSuffix(v, "y") && len(v) > 2 && !strings.ContainsAny(v[len(v)-2:len(v)-1], "aeiou"):
		return v[:len(v)-1] + "ies"
	case strings.HasSuffix(v, "s"), strings.HasSuffix(v, "sh"), strings.HasSuffix(v, "ch"), strings.HasSuffix(v, "x"), strings.HasSuffix(v, "z"), strings.HasSuffix(v, "o"):
		return v + "es"
	}
	return v + "s"
}

// SentenceCase upper-cases the first letter of s.
func SentenceCase(s string) string {
	if s == "" {
		return s
	}
	// The first rune, not the first byte: "👍 I'll …" upper-cased by its
	// first byte was invalid UTF-8, and a store refuses such a fact.
	r, n := utf8.DecodeRuneInString(s)
	if u := unicode.ToUpper(r); u != r && r != utf8.RuneError {
		return string(u) + s[n:]
	}
	return s
}
