package extractive

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// sentenceEnd splits after ., ! or ? followed by white space, and at line
// breaks; good enough for chat turns, and deterministic.
var sentenceEnd = regexp.MustCompile(`([.!?]+)["')\]]*\s+|\n+`)

// splitSentences cuts text into trimmed, non-empty sentences.
func splitSentences(text string) []string {
	var out []string
	last := 0
	for _, m := range sentenceEnd.FindAllStringSubmatchIndex(text, -1) {
		end := m[1]
		if m[2] >= 0 {
			end = m[3] // keep the punctuation, drop the space
		}
		if s := strings.TrimSpace(text[last:end]); s != "" {
			out = append(out, s)
		}
		last = m[1]
	}
	if s := strings.TrimSpace(text[last:]); s != "" {
		out = append(out, s)
	}
	return out
}

// words returns the lowercased words of s: runs that start with a letter
// or digit and go on with letters, digits, ', _ and - (the regular
// expression [\p{L}\p{N}][\p{L}\p{N}'_\-]*, scanned by hand: it ran on
// every sentence and was a tenth of the summariser's time).
func words(s string) []string {
	var ws []string
	start := -1
	for i, r := range s {
		inner := unicode.IsLetter(r) || unicode.IsNumber(r)
		if start < 0 {
			if inner {
				start = i
			}
			continue
		}
		if !inner && r != '\'' && r != '_' && r != '-' {
			ws = append(ws, strings.ToLower(strings.Trim(s[start:i], "'-_")))
			start = -1
		}
	}
	if start >= 0 {
		ws = append(ws, strings.ToLower(strings.Trim(s[start:], "'-_")))
	}
	return ws
}

// keyword reports whether a lowercased word is worth counting as a topic.
func keyword(w string) bool {
	if utf8.RuneCountInString(w) < 3 || stopwords[w] {
		return false
	}
	for _, r := range w {
		if unicode.IsLetter(r) {
			return !strings.Contains(w, "'")
		}
	}
	return false // numbers only
}

// clip shortens s to at most max bytes at a word boundary, marking the cut.
func clip(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	cut := s[:max]
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	if i := strings.LastIndexByte(cut, ' '); i > max/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}

// normKey is the case-insensitive identity of a list item.
func normKey(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	return strings.TrimRight(s, ".!?…;:, ")
}

var stopwords = toSet(`a about above after again against all almost also although always am an and
another any anybody anyone anything anyway are aren't around as ask asked asking at away back be
because been before being below between both but by can can't cannot could couldn't did didn't do
does doesn't doing don't done down during each either else enough even ever every everything few
for from further get gets getting give given go goes going gone good got great had hadn't has
hasn't have haven't having he he'd he'll he's her here here's hers herself hi hello hey him himself
his how how's however i i'd i'll i'm i've if in into is isn't it it's its itself just know let
let's like likely look lot lots made make makes making many may maybe me might mine more most much
must mustn't my myself need needs never new next no nor not nothing now of off oh ok okay on once
one only or other others otherwise our ours ourselves out over own perhaps please pretty put quite
rather re really right said same say says see seem seems shall shan't she she'd she'll she's
should shouldn't show since so some something sometimes soon still such sure take tell than thank
thanks that that's the their theirs them themselves then there there's these they they'd they'll
they're they've thing things think this those though through thus to today too toward try trying
two under until up upon us use used using very via want wants was wasn't way we we'd we'll we're
we've well went were weren't what what's whatever when when's where where's whether which while who
who's whom whose why why's will with within without won't would wouldn't yeah yes yet you you'd
you'll you're you've your yours yourself yourselves able actually already anyhow got gotta i'll
let's lets mean means okay sounds sure thing yep nope course first last also etc e.g i.e via per
help helps helped call calls can could should would will shall might near far lot bit kind sort prefer like love hate`)

func toSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}
