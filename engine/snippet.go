package engine

import (
	"sort"
	"strings"

	"github.com/contextd/contextd/rag"
)

// snippetTokens is the most shown of a retrieved turn beyond the best
// rag_k hits (and of every neighbour), in estimated tokens: a long turn,
// or its passage, is cut to its window that best matches the query
// (rag.WindowQuery.SentenceWindow: whole sentences). The best hits are shown as retrieved; the
// fill beyond them shows the gist of more turns, not the whole of fewer.
// 64: BEAM 100K recall / containment 2k 0.577/0.699 -> 0.598/0.698, 8k
// 0.789/0.836 -> 0.838/0.834 (56: 0.609/0.696, 0.852/0.829; 80 for every
// hit: 0.606/0.690, 0.814/0.832); LoCoMo a little up at every budget.
const snippetTokens = 64

// neighborSnippetTokens is the most shown of a neighbour (the turn next to
// a hit, shown as context for it): enough to show what was asked.
const neighborSnippetTokens = 32

// wholeTurnBytes: a turn shorter than a passage (the unit retrieval
// matches) is shown whole or not at all. A 144-character answer cut to its
// first sentence loses the sentence the question needed, and a model
// cannot tell what was left out of a short turn.
var wholeTurnBytes = rag.PassageBytes(0)

// snippet is what is shown of retrieved turn t (content: its text once
// filtered) and where that is in the turn: its matching passage, or the
// whole turn, cut to its best window of at most maxBytes. A turn shown
// whole returns nil refs.
func snippet(content string, t rag.Turn, q rag.WindowQuery, maxBytes int) (string, []PassageRef) {
	if len(t.Passages) > 1 { // several passages: shown as retrieved
		return content, passageRefs(t)
	}
	text, base, total := content, 0, len(content)
	if len(t.Passages) == 1 {
		pa := t.Passages[0]
		text, base, total = pa.Text, pa.From, t.TurnBytes
	}
	if len(t.Passages) == 0 && len(text) <= wholeTurnBytes {
		return content, nil // shorter than a passage: whole or not at all
	}
	w := q.SentenceWindow(text, maxBytes)
	if w.From == 0 && w.To == len(text) && len(t.Passages) == 0 {
		return content, nil // a short turn, whole
	}
	from, to := base+w.From, base+w.To
	var b strings.Builder
	if from > 0 {
		b.WriteString(rag.Elision + "\n")
	}
	b.WriteString(strings.TrimSpace(text[w.From:w.To]))
	if to < total {
		b.WriteString("\n" + rag.Elision)
	}
	return b.String(), []PassageRef{{From: from, To: to, Len: total}}
}

// snippetFloor is at most the tokens of content's rendering as ragTurns
// shows it cut to maxBytes (snippet, then the agent's truncation when it
// is shown whole), for any query: the fewest pieces (pieceMarks) of any
// window the query could choose (rag.SentenceWindows), its elision marks,
// and the role's. The packer values a candidate it has not cut yet by
// this floor. marks is scratch.
func snippetFloor(content string, t rag.Turn, maxBytes int, marks *[]int) int {
	if len(t.Passages) > 1 {
		return 1 + pieceFloor(content)
	}
	text, base, total := content, 0, len(content)
	if len(t.Passages) == 1 {
		pa := t.Passages[0]
		text, base, total = pa.Text, pa.From, t.TurnBytes
	}
	if len(t.Passages) == 0 && len(text) <= wholeTurnBytes {
		return 1 + pieceFloor(content) // shown whole, and never cut
	}
	*marks = pieceMarks(text, (*marks)[:0])
	least := -1
	rag.SentenceWindows(text, maxBytes, func(w rag.Span) {
		n := 1 // the turn whole: the agent's truncation may still cut it
		if w.From != 0 || w.To != len(text) || len(t.Passages) != 0 {
			n = sort.SearchInts(*marks, w.To) - sort.SearchInts(*marks, w.From)
			if base+w.From > 0 {
				n++
			}
			if base+w.To < total {
				n++
			}
		}
		if least < 0 || n < least {
			least = n
		}
	})
	return 1 + max(least, 0)
}

// Byte classes for pieceMarks.
const (
	clOther  = iota // other ASCII: punctuation, controls
	clLetter        // ASCII letter
	clDigit
	clSpace // ' ', '\t', '\n', '\r'
	clSkip  // DEL, which the cl100k codec skips without a token; an apostrophe (o200k joins "'s" to its word); non-ASCII
)

var pieceClass = func() (t [256]uint8) {
	for b := range t {
		switch {
		case b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z':
			t[b] = clLetter
		case b >= '0' && b <= '9':
			t[b] = clDigit
		case b == ' ' || b == '\t' || b == '\n' || b == '\r':
			t[b] = clSpace
		case b == 0x7f || b == '\'' || b >= 0x80:
			t[b] = clSkip
		}
	}
	return t
}()

// pieceMarks appends to out offsets of s that each begin a different
// piece of any tokenizer that splits text as cl100k and o200k do before
// merging (no piece holds non-space on both sides of a space, letters and
// digits together, a letter or digit followed by punctuation, or
// punctuation followed by a digit), so s has at least as many tokens as
// marks, and so has any span of s as marks inside it: the first byte of
// each field (a run of non-space holding more than DEL) and each forced
// break inside one (a letter or digit then other ASCII, other ASCII
// then a digit, a letter then a digit, a digit then a letter).
func pieceMarks(s string, out []int) []int {
	pieceScan(s, &out)
	return out
}

// pieceScan counts the marks of s (pieceMarks), appending them to *out
// when out is not nil.
func pieceScan(s string, out *[]int) int {
	n, counted, prev := 0, false, uint8(clSpace)
	for i := 0; i < len(s); i++ {
		c := pieceClass[s[i]]
		mark := false
		switch {
		case c == clSpace:
			counted = false
		case !counted && (c != clSkip || s[i] >= 0x80):
			mark, counted = true, true
		case counted && forcedBreak(prev, c):
			mark = true
		}
		if mark {
			n++
			if out != nil {
				*out = append(*out, i)
			}
		}
		prev = c
	}
	return n
}

// forcedBreak: no piece holds a byte of class a followed by one of b.
func forcedBreak(a, b uint8) bool {
	switch a {
	case clLetter:
		return b == clOther || b == clDigit
	case clDigit:
		return b == clOther || b == clLetter
	case clOther:
		return b == clDigit
	}
	return false
}

// pieceFloor is len(pieceMarks(s)), without the slice.
func pieceFloor(s string) int { return pieceScan(s, nil) }
