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

// chosenWord is what choice returns, kept per hit (Retriever.choices).
type chosenWord struct {
	what string
	ok   bool
}

func readChoice(content string) chosenWord {
	what, ok := choice(content)
	return chosenWord{what, ok}
}

// addChosen adds, for each retrieved turn that makes a choice, the turn
// within chosenReach before it that first named what it chose, unless
// that turn is there already. A chat's windows are read in one call.
func (r *Retriever) addChosen(ctx context.Context, src Neighbors, req Request, hits []Turn, excluded func(string, int64) bool) ([]Turn, error) {
	choices := map[string][]chosenHit{} // chat -> its turns that choose
	for i, h := range hits {
		if !isTurn(h) || h.Seq <= 1 {
			continue
		}
		if c := r.choices.get(req.Tenant, h, readChoice); c.ok {
			choices[h.ChatID] = append(choices[h.ChatID], chosenHit{i, c.what})
		}
	}
	if len(choices) == 0 {
		return hits, nil
	}
	have := turnsIn(hits)
	for _, chat := range slices.Sorted(maps.Keys(choices)) {
		var seqs []int64
		for _, c := range choices[chat] {
			for s := max(1, hits[c.i].Seq-chosenReach); s < hits[c.i].Seq; s++ {
				seqs = append(seqs, s)
			}
		}
		slices.Sort(seqs)
		msgs, err := src.MessagesBySeq(ctx, memory.ChatKey{Tenant: req.Tenant, ChatID: chat}, slices.Compact(seqs))
		if errors.Is(err, memory.ErrNotFound) {
			continue // chat deleted meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("retrieve: the option chosen in chat %s: %w", chat, err)
		}
		slices.SortFunc(msgs, func(a, b memory.Message) int { return cmp.Compare(a.Seq, b.Seq) })
		for _, c := range choices[chat] {
			h := hits[c.i]
			m, ok := firstNaming(msgs, h.Seq, c.what)
			if k := (turnRef{chat, m.Seq}); ok && !have[k] && !excluded(chat, m.Seq) && req.inTime(m.CreatedAt) {
				have[k] = true
				hits = append(hits, Turn{ChatID: chat, Seq: m.Seq, Role: string(m.Role), Content: m.Content,
					CreatedAt: m.CreatedAt, Score: h.Score, Neighbor: true})
			}
		}
	}
	return hits, nil
}

// chosenHit is a retrieved turn (its index in the hits) that chose what.
type chosenHit struct {
	i    int
	what string
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
