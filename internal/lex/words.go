package lex

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Words returns the lowercased words of s: runs that start with a letter
// or digit and go on with letters, digits, ', _ or -; the ', _ and - at
// their ends trimmed. (A scanner: it runs on every sentence, often.)
func Words(s string) []string {
	var out []string
	start := -1
	flush := func(end int) {
		if start >= 0 {
			// A word starts with a letter or digit: only its end can hold
			// the ', - and _ that strings.Trim(w, "'-_") would take off.
			for end > start && (s[end-1] == '\'' || s[end-1] == '-' || s[end-1] == '_') {
				end--
			}
			if out == nil {
				out = make([]string, 0, len(s)/6+1)
			}
			out = append(out, strings.ToLower(s[start:end]))
			start = -1
		}
	}
	for i, r := range s {
		var alnum bool
		if r < utf8.RuneSelf {
			alnum = 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
		} else {
			alnum = unicode.IsLetter(r) || unicode.IsNumber(r)
		}
		switch {
		case start < 0 && alnum:
			start = i
		case start >= 0 && !alnum && r != '\'' && r != '_' && r != '-':
			flush(i)
		}
	}
	flush(len(s))
	return out
}

// Keyword reports whether a lowercased word carries content: at least
// three letters long, holding a letter, not a stop word, not chit-chat
// filler ("wow", "awesome").
func Keyword(w string) bool {
	if utf8.RuneCountInString(w) < 3 || notKeywords[w] {
		return false
	}
	for _, r := range w {
		if unicode.IsLetter(r) {
			return !strings.Contains(w, "'")
		}
	}
	return false // numbers only
}

// Keywords returns the content words of s, in order, with repeats.
func Keywords(s string) []string {
	var out []string
	for _, w := range Words(s) {
		if Keyword(w) {
			out = append(out, w)
		}
	}
	return out
}

// filler are words of small talk: they make a sentence sound warm and say
// nothing a memory should keep.
var filler = Set(`wow woah whoa haha hahaha lol omg yay yup ugh hmm awesome amazing cool nice glad
sounds definitely totally absolutely exactly indeed congrats congratulations lovely wonderful fantastic
incredible super stuff guys dear buddy cheers ttyl bye goodbye time fun blast glad happy excited
appreciate appreciated cheering proud inspiring inspired wish hope hoping best
pls plz thx thanx tbh idk imo imho ngl tho thru gonna wanna gotta kinda sorta dunno lemme yeah yep nah`)

var stopwords = Set(`a about above after again against all almost also although always am an and
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

// notKeywords are the stop words and the filler in one set: Keyword runs
// on every word of every sentence, one lookup instead of two.
var notKeywords = func() map[string]bool {
	m := make(map[string]bool, len(stopwords)+len(filler))
	for _, set := range []map[string]bool{stopwords, filler} {
		for w := range set {
			m[w] = true
		}
	}
	return m
}()

// Set is the words of s (split at white space) as a set: how the word
// lists here and in internal/prose are written.
func Set(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}
