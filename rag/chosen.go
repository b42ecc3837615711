package rag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/memory"
)

// A choice brings what was chosen. "ok we're going with the crown then"
// says which option won, not what it is: the turn that put it forward
// ("The Crown at Pangbourne has a function room that fits 55, £40 a
// head …") holds its name in full, its price and its terms. A retrieved
// turn that makes a choice brings the turn, a few before it, that first
// named what it chose, as it brings the answer of a question: an exchange
// is shown whole.

// chosenReach is how far back a choice looks for the turn that put its
// option forward.
const chosenReach = 6

// choiceWords are the words a short choice is made in; choice reads what
// was chosen after them ("going with the crown", "booked seeblick") or
// before "it is" ("ok Eneco it is").
var (
	choiceWords = []string{"going with", "go with", "went with", "gone with", "settled on", "opted for", "it is", "we'll take", "let's do", "lets do"}
	choiceAfter = regexp.MustCompile(`\b(?:going with|go with|went with|gone with|settled on|opted for|we'll take|let'?s do)\s+(?:the\s+)?([a-z][\w'&-]{2,})`)
	notChosen   = regexp.MustCompile(`\b(?:how|what|where|when|why|which|who|whoever|whatever|here|there|this|that|that's|thats|as|so|such|is|was|love|loves|like|likes|think|know|see)\b.* it is`)
	choiceIs    = regexp.MustCompile(`^(?:(?:ok|okay|right|fine|so|great|cool|alright|yes|yep|yeah|then)[,!.]? )*(?:the )?([a-z][\w'&-]{2,})(?: [\w'&-]+)? it is\b`)
)

// choice is the word naming what a short turn chose, if it makes a choice.
func choice(content string) (string, bool) {
	if len(content) > 400 {
		return "", false // a long turn weighs options; a choice is said in a line
	}
	low := strings.ToLower(content)
	if !slices.ContainsFunc(choiceWords, func(w string) bool { return strings.Contains(low, w) }) {
		return "", false
	}
	m := choiceAfter.FindStringSubmatch(low)
	if m == nil {
		if m = choiceIs.FindStringSubmatch(strings.TrimSpace(low)); m != nil && notChosen.MatchString(m[0]) {
			return "", false // "that's how it is", "whatever it is"
		}
	}
	if m == nil || lex.IsRankStopword(m[1]) || lex.IsWeekday(m[1]) || lex.IsMonth(m[1]) || strings.ContainsAny(m[1], "0123456789") {
		return "", false
	}
	return m[1], true
}

// An option chosen by its place ("ok do the second one", "go with
// option 2") names nothing: alone it cannot be read. Its options are
// listed in a turn a few before it ("1) Move your Wi-Fi to channel 11 …
// 2) Move Zigbee to channel 25 …"), and a retrieved turn that chooses by
// place brings the nearest such turn, as a turn choosing by name brings
// the one that named it.

// ordinalChoice reads an option chosen by its place: submatch 1 the
// ordinal word, 2 the option's number.
var ordinalChoice = regexp.MustCompile(`\b(?:do|go with|going with|went with|take|book|pick|choose|want|prefer)\s+(?:the\s+)?(?:(first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:one|option)\b|option\s+([1-4])\b)`)

// notChoosing: the words before a choice's verb negate it ("I don't want
// the second one").
var notChoosing = regexp.MustCompile(`\b(?:don'?t|do not|doesn'?t|not|never|won'?t)\s+(?:\w+\s+)?$`)

var ordinals = map[string]int{"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}

// placeChosen is the place (1–4) of the option a short turn chooses by
// its place, or 0.
func placeChosen(content string) int {
	if len(content) > 400 {
		return 0
	}
	low := strings.ToLower(content)
	if !strings.Contains(low, "one") && !strings.Contains(low, "option") {
		return 0 // the common case, without a regular expression
	}
	if lex.EndsWithQuestion(low) {
		return 0 // "choose the first one?" asks
	}
	loc := ordinalChoice.FindStringSubmatchIndex(low)
	switch {
	case loc == nil || notChoosing.MatchString(low[:loc[0]]):
		return 0
	case loc[2] >= 0:
		return ordinals[low[loc[2]:loc[3]]]
	default:
		return int(low[loc[4]] - '0')
	}
}

// optionMarks find an option's number: opening a line ("1. …", "2) …",
// "3: …"), or in a line with a bracket ("… 1) DJ Sunny 2) dev does it");
// a number closing a sentence ("we paid 1. then 2.") is none.
var optionMarks = [...]*regexp.Regexp{optionMark(1), optionMark(2), optionMark(3), optionMark(4)}

func optionMark(n int) *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`(?m)^\s*\(?%[1]d[.):]\s|(?:^|\s)\(?%[1]d\)\s`, n))
}

// optionWords find an option named with its number: "Option 2: …",
// "Version one …".
var optionWords = [...]*regexp.Regexp{optionWord(1, "one"), optionWord(2, "two"), optionWord(3, "three"), optionWord(4, "four")}

func optionWord(n int, word string) *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`(?i)\b(?:option|version|choice) (?:%d|%s)\b`, n, word))
}

// Options offered in a sentence, not numbered: "two options i found.
// Hyperoptic … or Virgin …", "6:30am before work, or lunchtime …, or
// evenings after 6. which is best for him?", "I can either grab a bag at
// the Pet Valu … or at the Ossington one?": an "or" beside a count of
// options, a question asking which, or "either" in a turn that asks.
var (
	proseOr      = regexp.MustCompile(`(?i)\bor\b`)
	proseOptions = regexp.MustCompile(`(?i)\b(?:two|three|2|3) (?:options|choices|versions|slots|ways|possibilities)\b|\bwhich (?:one|is best|works|would you|do you|should)\b`)
	proseEither  = regexp.MustCompile(`(?i)\beither\b`)
)

// listsOptions: content numbers at least n options (two at least), from
// the first on, in order, or offers up to three in prose.
func listsOptions(content string, n int) bool {
	// "either … or" offers when it asks ("… or at the Ossington one?"), not
	// in "I either forgot or lost it".
	if n <= 3 && proseOr.MatchString(content) && (proseOptions.MatchString(content) || proseEither.MatchString(content) && lex.EndsWithQuestion(content)) {
		return true
	}
	for _, marks := range [][4]*regexp.Regexp{optionMarks, optionWords} {
		at, ok := 0, true
		for k := 0; k < max(n, 2) && ok; k++ {
			loc := marks[k].FindStringIndex(content[at:])
			ok = loc != nil
			if ok {
				at += loc[1]
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// chosenWord is what choice returns, kept per hit (Retriever.choices):
// the word naming what a turn chose, or the place of the option it chose.
type chosenWord struct {
	what  string
	place int
	ok    bool
	lists bool // the turn numbers options (two at least)
}

func readChoice(content string) chosenWord {
	if listsOptions(content, 2) {
		return chosenWord{lists: true} // "Option 1: … Option 2: …" offers, whatever it names
	}
	if n := placeChosen(content); n > 0 {
		return chosenWord{place: n, ok: true}
	}
	what, ok := choice(content)
	return chosenWord{what: what, ok: ok}
}

// addChosen adds, for each retrieved turn that makes a choice, the turn
// within chosenReach before it that first named what it chose (or listed
// the options it chose among by place), and for each that offers options,
// the choice made among them after it, unless that turn is there
// already. A chat's windows are read in one call.
func (r *Retriever) addChosen(ctx context.Context, src Neighbors, req Request, hits []Turn, excluded func(string, int64) bool) ([]Turn, error) {
	choices := map[string][]chosenHit{} // chat -> its turns that choose or offer options
	for i, h := range hits {
		if !isTurn(h) {
			continue
		}
		if c := r.choices.get(req.Tenant, h, readChoice); c.ok || c.lists {
			choices[h.ChatID] = append(choices[h.ChatID], chosenHit{i, c.what, c.place, c.lists})
		}
	}
	if len(choices) == 0 {
		return hits, nil
	}
	have := map[turnRef]int{} // a turn retrieved: its index in hits
	for i, h := range hits {
		if isTurn(h) {
			have[turnRef{h.ChatID, h.Seq}] = i
		}
	}
	for _, chat := range slices.Sorted(maps.Keys(choices)) {
		msgs, err := src.MessagesBySeq(ctx, memory.ChatKey{Tenant: req.Tenant, ChatID: chat}, windowsOf(hits, choices[chat]))
		if errors.Is(err, memory.ErrNotFound) {
			continue // chat deleted meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("retrieve: the option chosen in chat %s: %w", chat, err)
		}
		slices.SortFunc(msgs, func(a, b memory.Message) int { return cmp.Compare(a.Seq, b.Seq) })
		for _, c := range choices[chat] {
			if c.lists {
				hits = choiceOfOptions(hits, have, hits[c.i], msgs, req, excluded)
				continue
			}
			hits = chosenOf(hits, have, c, msgs, req, excluded)
		}
	}
	return hits, nil
}

// windowsOf are the seqs a chat's choices are read in: chosenReach
// before a choice, chosenReach after options.
func windowsOf(hits []Turn, cs []chosenHit) []int64 {
	var seqs []int64
	for _, c := range cs {
		from, to := max(1, hits[c.i].Seq-chosenReach), hits[c.i].Seq-1
		if c.lists {
			from, to = hits[c.i].Seq+1, hits[c.i].Seq+chosenReach
		}
		for s := from; s <= to; s++ {
			seqs = append(seqs, s)
		}
	}
	slices.Sort(seqs)
	return slices.Compact(seqs)
}

// chosenOf adds the turn of msgs that put forward what choice c chose:
// the first naming the word chosen, or the last listing the options
// chosen among by place, which is the choice's other half (Chosen; a turn
// naming a word chosen may only mention it).
func chosenOf(hits []Turn, have map[turnRef]int, c chosenHit, msgs []memory.Message, req Request,
	excluded func(string, int64) bool) []Turn {
	h := hits[c.i]
	var m memory.Message
	var ok bool
	if c.place > 0 {
		m, ok = lastListing(msgs, h.Seq, c.place)
	} else {
		m, ok = firstNaming(msgs, h.Seq, c.what)
	}
	if !ok || excluded(h.ChatID, m.Seq) || !req.inTime(m.CreatedAt) {
		return hits
	}
	listed := c.place > 0
	if listed {
		hits[c.i].ChoseFrom = m.Seq
	}
	k := turnRef{h.ChatID, m.Seq}
	if j, in := have[k]; in {
		hits[j].Chosen = hits[j].Chosen || listed && hits[j].Neighbor
		return hits
	}
	have[k] = len(hits)
	return append(hits, Turn{ChatID: h.ChatID, Seq: m.Seq, Role: string(m.Role), Content: m.Content,
		CreatedAt: m.CreatedAt, Score: h.Score, Neighbor: true, Chosen: listed})
}

// chosenHit is a retrieved turn (its index in the hits) that chose what,
// or the option at place, or that lists options (lists).
type chosenHit struct {
	i     int
	what  string
	place int
	lists bool
}

// choiceOfOptions adds the choice by place made among the options hit h
// lists: the first turn of msgs after h choosing by place before another
// lists options, marked as chosen from h. Options are asked as a question
// is, and the choice is their answer.
func choiceOfOptions(hits []Turn, have map[turnRef]int, h Turn, msgs []memory.Message, req Request,
	excluded func(string, int64) bool) []Turn {
	for _, m := range msgs {
		if m.Seq <= h.Seq || m.Seq > h.Seq+chosenReach {
			continue
		}
		place := placeChosen(m.Content)
		if place == 0 {
			if listsOptions(m.Content, 2) {
				break // other options: a choice after them is theirs
			}
			continue
		}
		if !listsOptions(h.Content, place) || excluded(h.ChatID, m.Seq) || !req.inTime(m.CreatedAt) {
			break
		}
		k := turnRef{h.ChatID, m.Seq}
		if j, in := have[k]; in {
			if hits[j].ChoseFrom == 0 {
				hits[j].ChoseFrom = h.Seq
			}
			break
		}
		have[k] = len(hits)
		hits = append(hits, Turn{ChatID: h.ChatID, Seq: m.Seq, Role: string(m.Role), Content: m.Content,
			CreatedAt: m.CreatedAt, Score: h.Score, Neighbor: true, ChoseFrom: h.Seq})
		break
	}
	return hits
}

// lastListing is the newest of msgs (oldest first) within chosenReach
// before seq that lists at least place options: the options a choice by
// place chose among.
func lastListing(msgs []memory.Message, seq int64, place int) (memory.Message, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Seq >= seq-chosenReach && m.Seq < seq && listsOptions(m.Content, place) {
			return m, true
		}
	}
	return memory.Message{}, false
}

// firstNaming is the oldest of msgs (oldest first) within chosenReach
// before seq that names what: the turn that put it forward.
func firstNaming(msgs []memory.Message, seq int64, what string) (memory.Message, bool) {
	for _, m := range msgs {
		if m.Seq >= seq-chosenReach && m.Seq < seq && lex.HasPhrase(strings.ToLower(m.Content), what) {
			return m, true
		}
	}
	return memory.Message{}, false
}
