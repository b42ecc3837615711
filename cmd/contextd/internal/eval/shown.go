package eval

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Evidence shown, by text (the contract's Evaluation section): an evidence
// turn counts as shown when its words are in the context text, not when
// its seq is listed in the answer's sections (a snippet lists the seq too).
//
//   - Both sides have their white space collapsed; case and punctuation
//     are kept (strict on the words).
//   - The turn's text is compared without a leading "Name: " label
//     (LoCoMo's "<speaker>: "), so the context may show it with or without
//     the label, after a role label or not (lenient on the label).
//   - A turn of up to shortTurnChars characters counts only when its whole
//     text occurs in the context.
//   - A longer turn is split into sentences; it counts when at least half
//     of its sentences of minSentenceChars or more occur verbatim. A long
//     turn without such a sentence needs its whole text.
//
// A match must start and end on word boundaries, so a short turn ("Yes.")
// is not found inside a longer word.

// The text rule's thresholds, in characters (runes).
const (
	shortTurnChars   = 400
	minSentenceChars = 20
)

// probe is what the text rule looks for of one turn.
type probe struct {
	whole     string   // the label-less text, white space collapsed
	sentences []string // a long turn's sentences of minSentenceChars+ (nil: whole text needed)
}

// speakerLabel is a leading "Name: " label: one to three words of a name,
// then a colon and a space.
var speakerLabel = regexp.MustCompile(`^[\p{L}][\p{L}\p{N}'’._-]*(?: [\p{L}\p{N}'’._-]+){0,2}: `)

// collapse collapses white space runs to one space and trims the ends.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// newProbe prepares a turn's text for the text rule.
func newProbe(text string) probe {
	whole := collapse(text)
	if loc := speakerLabel.FindStringIndex(whole); loc != nil && loc[1] < len(whole) {
		whole = whole[loc[1]:]
	}
	p := probe{whole: whole}
	if utf8.RuneCountInString(whole) <= shortTurnChars {
		return p
	}
	for _, s := range sentences(whole) { // replay_reply.go's split
		if utf8.RuneCountInString(s) >= minSentenceChars {
			p.sentences = append(p.sentences, s)
		}
	}
	return p
}

// shownIn reports whether the turn is shown in ctx, a context text already
// collapsed.
func (p probe) shownIn(ctx string) bool {
	if p.whole == "" {
		return false
	}
	if p.sentences == nil {
		return containsWords(ctx, p.whole)
	}
	hit := 0
	for _, s := range p.sentences {
		if containsWords(ctx, s) {
			hit++
		}
	}
	return 2*hit >= len(p.sentences)
}

// containsWords reports whether sub occurs in s starting and ending on
// word boundaries (no letter or digit joined to either end).
func containsWords(s, sub string) bool {
	first, _ := utf8.DecodeRuneInString(sub)
	last, _ := utf8.DecodeLastRuneInString(sub)
	for from := 0; from <= len(s)-len(sub); {
		i := strings.Index(s[from:], sub)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(sub)
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if (i == 0 || !(isWordRune(first) && isWordRune(before))) && (end == len(s) || !(isWordRune(last) && isWordRune(after))) {
			return true
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		from = i + n
	}
	return false
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// shownTurns applies the text rule to the evidence turns ev (indices into
// probes) against one context text, collapsed once.
func shownTurns(context string, ev []int, probes func(int) probe) map[int]bool {
	out := map[int]bool{}
	if len(ev) == 0 {
		return out
	}
	ctx := collapse(context)
	for _, e := range ev {
		if probes(e).shownIn(ctx) {
			out[e] = true
		}
	}
	return out
}

// probe is the text rule's probe of a kept turn, made once.
func (in *ingested) probe(k int) probe {
	if in.probes == nil {
		in.probes = map[int]probe{}
	}
	p, ok := in.probes[k]
	if !ok {
		p = newProbe(in.kept[k].text)
		in.probes[k] = p
	}
	return p
}

// shown is the text rule over a context text for the evidence turns ev.
func (in *ingested) shown(context string, ev []int) map[int]bool {
	return shownTurns(context, ev, in.probe)
}
