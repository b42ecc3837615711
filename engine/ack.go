package engine

import (
	"strings"
	"unicode"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/rag"
)

// An acknowledgement ("👍", "ok thanks", "legend") says nothing of its
// own. Offered as the neighbour of a hit, it costs a line and a header a
// small budget needs for evidence, and it reads as the hit's context
// while it is none — unless it answers a question the hit asked ("shall
// I book it?" → "ok 👍" is the yes). Found as a hit itself, it matched by
// its speaker's name (indexed with what was said: "whats priya's
// forwarding address" met Priya's "perfect", BM25's length norm scoring
// the name of a one-word turn high) or by chance, and at 300 tokens it
// took the room of the turn that gave the address: it is left out too.

// acknowledgement: text of at most three words, each of them one of
// acking, or none at all (emoji, punctuation).
func acknowledgement(text string) bool {
	if len(text) > 80 {
		return false
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	})
	if len(words) > 3 {
		return false
	}
	for _, w := range words {
		if !acking[w] {
			return false
		}
	}
	return true
}

var acking = lex.Set(`ok okay k kk thanks thank you thx ty ta cheers cool great nice sure yes yep yeah ya
legend perfect lol haha np noted done sounds good brilliant amazing awesome fab x xx love it lovely wow omg yay
fair true same agreed deal alright fine gotcha ace`)

// askingHits are the seqs of this chat's retrieved hits that ask a
// question: the acknowledgement after one is its answer.
func askingHits(turns []rag.Turn, ks []keptTurn, chat string) map[int64]bool {
	out := map[int64]bool{}
	for _, k := range ks {
		if t := &turns[k.i]; !t.Neighbor && t.ChatID == chat && strings.Contains(k.content, "?") {
			out[t.Seq] = true
		}
	}
	return out
}
