package rag

import (
	"math/bits"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/memory"
)

// Long turns are indexed in passages so that a question matching one
// paragraph of a long answer finds that paragraph (and the engine can show
// it with an elision mark) instead of a diluted vector of the whole turn.

// DefaultPassageTokens is the size above which a turn is split into
// passages, and the size of a passage, in estimated tokens.
// 160: a passage is a paragraph or two; smaller ones lose the sentence
// around a match, larger ones dilute it (BEAM 100K at 8k with one passage a
// turn: recall 0.807 at 100, 0.804 at 120, 0.789 at 160, 0.765 at 200; at
// 2k, containment fell below a BM25 passage fill under 160).
const DefaultPassageTokens = 160

// bytesPerToken is the estimate behind the passage size: cl100k averages
// about four bytes of English per token (a CJK character, three bytes, is
// about one token, so CJK passages come out a little longer in tokens).
const bytesPerToken = 4

// minPassageBytes keeps a passage able to hold any rune.
const minPassageBytes = 16

// PassageBytes is the passage size in bytes for a size in tokens (<= 0:
// DefaultPassageTokens).
func PassageBytes(tokens int) int {
	if tokens <= 0 {
		tokens = DefaultPassageTokens
	}
	return max(tokens*bytesPerToken, minPassageBytes)
}

// Span is the byte range [From, To) of a text.
type Span struct{ From, To int }

// SplitPassages cuts text into passages of at most maxBytes bytes (at
// least minPassageBytes), preferring, in this order, boundaries between
// paragraphs and fenced code blocks, then between sentences (lines inside
// a code block), then between words, then between runes. A fenced code
// block is only cut when it alone is longer than maxBytes, and then on line
// boundaries first. Passages are balanced: a passage is closed once it
// reaches len(text)/ceil(len(text)/maxBytes) bytes, so a turn just over
// the size does not leave a sliver.
//
// The spans cover text in order with no gap, none is empty, and every
// boundary is a rune boundary. A text of at most maxBytes is one span; an
// empty text none.
func SplitPassages(text string, maxBytes int) []Span {
	if text == "" {
		return nil
	}
	maxBytes = max(maxBytes, minPassageBytes)
	if len(text) <= maxBytes {
		return []Span{{0, len(text)}}
	}
	n := (len(text) + maxBytes - 1) / maxBytes
	s := splitter{text: text, max: maxBytes, target: len(text) / n}
	s.pack(0, len(text), levelBlock, false)
	return s.out
}

// Cut levels, coarsest first.
const (
	levelBlock    = iota // paragraphs and fenced code blocks
	levelSentence        // sentences (text) or lines (code)
	levelWord
	levelRune
)

type splitter struct {
	text        string
	max, target int
	out         []Span
}

// pack emits passages covering [from, to): pieces of the given level are
// gathered while they fit; a piece too long on its own is split at the next
// level.
func (s *splitter) pack(from, to, level int, code bool) {
	start, end := from, from
	for _, pc := range s.pieces(from, to, level, code) {
		if pc.to-start <= s.max && end-start < s.target {
			end = pc.to
			continue
		}
		if end > start {
			s.out = append(s.out, Span{start, end})
			start = end
		}
		if pc.to-pc.from <= s.max {
			end = pc.to
			continue
		}
		s.pack(pc.from, pc.to, level+1, pc.code)
		start, end = pc.to, pc.to
	}
	if end > start {
		s.out = append(s.out, Span{start, end})
	}
}

type piece struct {
	from, to int
	code     bool // a fenced code block (or a part of one)
}

// pieces cuts [from, to) at the level's boundaries; the separator (blank
// lines, spaces) stays with the piece before it.
func (s *splitter) pieces(from, to, level int, code bool) []piece {
	t := s.text[:to]
	var ends []int
	switch {
	case level == levelBlock:
		return blocks(t, from)
	case level == levelSentence && code:
		ends = lineEnds(t, from)
	case level == levelSentence:
		ends = lex.SentenceBreaks(t, from)
	case level == levelWord:
		ends = wordEnds(t, from)
	default:
		ends = runeEnds(t, from)
	}
	out := make([]piece, 0, len(ends))
	prev := from
	for _, e := range ends {
		if e > prev {
			out = append(out, piece{prev, e, code})
			prev = e
		}
	}
	if prev < to {
		out = append(out, piece{prev, to, code})
	}
	return out
}

// blocks cuts t[from:] into paragraphs (ending after a run of blank lines)
// and fenced code blocks (``` or ~~~, closed by a fence of the same
// character at least as long, or by the end of the text).
func blocks(t string, from int) []piece {
	var out []piece
	start, pos := from, from
	var fence string // the open fence, "" outside a code block
	flush := func(end int, code bool) {
		if end > start {
			out = append(out, piece{start, end, code})
			start = end
		}
	}
	for pos < len(t) {
		lineEnd := strings.IndexByte(t[pos:], '\n')
		next := len(t)
		if lineEnd >= 0 {
			next = pos + lineEnd + 1
		}
		line := t[pos:next]
		switch {
		case fence != "":
			if f := fenceOf(line); f != "" && f[0] == fence[0] && len(f) >= len(fence) && strings.TrimSpace(line[strings.Index(line, f)+len(f):]) == "" {
				fence = ""
				next = skipBlank(t, next)
				pos = next
				flush(next, true)
				continue
			}
		case fenceOf(line) != "":
			flush(pos, false) // the paragraph before the fence
			fence = fenceOf(line)
		case strings.TrimSpace(line) == "":
			next = skipBlank(t, next)
			pos = next
			flush(next, false)
			continue
		}
		pos = next
	}
	flush(len(t), fence != "")
	return out
}

// fenceOf returns the fence a line opens or closes (``` or ~~~ or longer,
// indented by at most three spaces), or "".
func fenceOf(line string) string {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 || len(trimmed) < 3 || (trimmed[0] != '`' && trimmed[0] != '~') {
		return ""
	}
	n := 0
	for n < len(trimmed) && trimmed[n] == trimmed[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return trimmed[:n]
}

// skipBlank returns the end of the blank lines starting at pos.
func skipBlank(t string, pos int) int {
	for pos < len(t) {
		i := strings.IndexByte(t[pos:], '\n')
		if i < 0 {
			if strings.TrimSpace(t[pos:]) == "" {
				return len(t)
			}
			return pos
		}
		if strings.TrimSpace(t[pos:pos+i]) != "" {
			return pos
		}
		pos += i + 1
	}
	return pos
}

func lineEnds(t string, from int) []int {
	var out []int
	for i := from; i < len(t); i++ {
		if t[i] == '\n' {
			out = append(out, i+1)
		}
	}
	return out
}

// wordEnds are after every run of spaces.
func wordEnds(t string, from int) []int {
	var out []int
	inSpace := false
	for i := from; i < len(t); {
		r, size := utf8.DecodeRuneInString(t[i:])
		if sp := unicode.IsSpace(r); inSpace && !sp {
			out = append(out, i)
			inSpace = false
		} else if sp {
			inSpace = true
		}
		i += size
	}
	return out
}

func runeEnds(t string, from int) []int {
	out := make([]int, 0, len(t)-from)
	for i := from; i < len(t); {
		_, size := utf8.DecodeRuneInString(t[i:])
		i += size
		out = append(out, i)
	}
	return out
}

// WindowQuery is a query's terms (as Terms gives them; the first 64
// count), prepared once for every SentenceWindow of a request. It
// remembers which words it has matched (a request's hits and their
// neighbours repeat most of their words), so it is for one goroutine at a
// time.
type WindowQuery struct {
	bit map[string]uint64
	// heads: the terms' first two bytes (prefixClass pairs, a one-byte
	// term's second its end). Every stem keeps its word's first two bytes
	// (stem's suffix rules leave at least two), so a word whose first two
	// ASCII bytes, lowered, are no term's needs no stemming.
	heads [prefixClasses * prefixClasses / 64]uint64
	// seen: a word as written -> its term's bit, 0 for none (at most
	// maxSeenWords; nil in the zero WindowQuery, which matches nothing).
	seen map[string]uint64
}

// maxSeenWords bounds a WindowQuery's memory of words (a request's
// snippets hold a few thousand distinct words at most).
const maxSeenWords = 1 << 14

// NewWindowQuery prepares terms for SentenceWindow.
func NewWindowQuery(terms []string) WindowQuery {
	q := WindowQuery{bit: make(map[string]uint64, len(terms)), seen: map[string]uint64{}}
	for _, t := range terms {
		if _, ok := q.bit[t]; ok || len(q.bit) == 64 || t == "" {
			continue
		}
		q.bit[t] = 1 << len(q.bit)
		if h, ok := head(t); ok {
			q.heads[h/64] |= 1 << (h % 64)
		}
	}
	return q
}

// prefixClasses: a prefix byte's classes, a-z, 0-9, the end of the word
// and any other (the bitset's size must be a multiple of 64).
const prefixClasses = 40

const endClass = 36

// prefixClass is the class of byte c of a word (lowered if ASCII upper).
func prefixClass(c byte) int {
	switch {
	case c >= 'a' && c <= 'z':
		return int(c - 'a')
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	case c >= '0' && c <= '9':
		return 26 + int(c-'0')
	}
	return endClass + 1
}

// head is the prefix pair of w, and false when its first two bytes are not
// both ASCII (such words are never filtered).
func head(w string) (int, bool) {
	if w == "" || w[0] >= utf8.RuneSelf || len(w) > 1 && w[1] >= utf8.RuneSelf {
		return 0, false
	}
	second := endClass
	if len(w) > 1 {
		second = prefixClass(w[1])
	}
	return prefixClass(w[0])*prefixClasses + second, true
}

// termsIn counts the distinct query terms matched in [from, to); *m is
// the first match at or after from, advanced as windows move right.
func termsIn(matches []termMatch, m *int, from, to int) int {
	for *m < len(matches) && matches[*m].at < from {
		*m++
	}
	var seen uint64
	for j := *m; j < len(matches) && matches[j].at < to; j++ {
		seen |= matches[j].bit
	}
	return bits.OnesCount64(seen)
}

type termMatch struct {
	at  int
	bit uint64
}

// termMatches are the offsets of the words of text whose stem is a wanted
// term (scripts without spaces are not matched: their terms are bigrams).
func termMatches(text string, q WindowQuery) []termMatch {
	var out []termMatch
	start, plain := -1, true
	flush := func(end int) {
		if start < 0 {
			return
		}
		w := text[start:end]
		if h, ok := head(w); ok && q.heads[h/64]&(1<<(h%64)) == 0 {
			start, plain = -1, true // no term starts so: no stem needed
			return
		}
		bit, ok := q.seen[w]
		if !ok {
			bit = q.termBit(w, plain)
			if q.seen != nil && len(q.seen) < maxSeenWords {
				q.seen[w] = bit
			}
		}
		if bit != 0 {
			out = append(out, termMatch{start, bit})
		}
		start, plain = -1, true
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf { // ASCII: no decoding
			k := asciiWord[c]
			if k == 0 {
				if start >= 0 {
					flush(i)
				}
				i++
				continue
			}
			if start < 0 {
				start = i
			}
			if k == wordUpper {
				plain = false
			}
			// The rest of a lowercase run, in a tight loop (most bytes).
			for i++; i < len(text) && text[i] < utf8.RuneSelf && asciiWord[text[i]] == wordLower; i++ {
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if !lex.IsCJK(r) && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)) {
			if start < 0 {
				start = i
			}
			plain = false
		} else if start >= 0 {
			flush(i)
		}
		i += size
	}
	flush(len(text))
	return out
}

// termBit is the bit of the query term word w (plain: lowercase ASCII
// already) stems to, 0 for none.
func (q WindowQuery) termBit(w string, plain bool) uint64 {
	if !plain {
		w = lex.Lower(w)
	}
	if bit, ok := q.bit[lex.Stem(w)]; ok && !lex.IsTermStopword(w) {
		return bit
	}
	return 0
}

// asciiWord classes ASCII bytes for termMatches: a lowercase letter or
// digit, an uppercase letter, or neither (a word's end).
var asciiWord = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			t[c] = wordLower
		case c >= 'A' && c <= 'Z':
			t[c] = wordUpper
		}
	}
	return t
}()

const (
	wordLower = 1 + iota
	wordUpper
)

// windowEnd is where a window starting at from ends: the last sentence end
// within maxBytes, else the last word end, else a rune boundary.
func windowEnd(text string, from, maxBytes int, ends []int) int {
	limit := from + maxBytes
	if limit >= len(text) {
		return len(text)
	}
	i := sort.SearchInts(ends, limit+1) - 1 // the last end <= limit
	if i >= 0 && ends[i] > from {
		return ends[i]
	}
	if sp := strings.LastIndexByte(text[from:limit], ' '); sp > 0 {
		return from + sp + 1
	}
	for limit > from && !utf8.RuneStart(text[limit]) {
		limit--
	}
	return max(limit, from+1)
}

// SentenceWindow is the span of text that best matches the query, made
// of whole sentences: the run of
// sentences of at most maxBytes that holds the most query terms, or, when
// no sentence that short holds one, the single best-matching sentence
// whole, however long (up to 4×maxBytes: a "sentence" longer than that is
// a run-on line or a blob, cut at a word). A model reading a cut sentence
// may read the opposite of what was said; a whole one it can trust.
func (q WindowQuery) SentenceWindow(text string, maxBytes int) Span {
	maxBytes = max(maxBytes, minPassageBytes)
	if len(text) <= maxBytes {
		return Span{0, len(text)}
	}
	matches := termMatches(text, q)
	best, bestScore := Span{}, -1
	m := 0
	sentenceWindows(text, maxBytes, func(w Span) {
		if n := termsIn(matches, &m, w.From, w.To); n > bestScore {
			best, bestScore = w, n
		}
	})
	return best
}

// SentenceWindows calls yield with every span SentenceWindow(text,
// maxBytes) may choose, whatever the query, in order: a caller can bound
// what any query's window shows without matching one. A window inside an
// earlier one is never chosen (it holds no term the earlier one does not,
// and a later window wins only with more), so it is left out: the short
// last sentence of a text is a window of its own only when the window
// before it does not reach the end.
func SentenceWindows(text string, maxBytes int, yield func(Span)) {
	maxBytes = max(maxBytes, minPassageBytes)
	if len(text) <= maxBytes {
		yield(Span{0, len(text)})
		return
	}
	reach := -1
	sentenceWindows(text, maxBytes, func(w Span) {
		if w.To > reach {
			reach = w.To
			yield(w)
		}
	})
}

// sentenceWindows yields the window of whole sentences starting at each
// sentence of text (longer than maxBytes), first to last.
func sentenceWindows(text string, maxBytes int, yield func(Span)) {
	ends := lex.SentenceBreaks(text, 0)
	if len(ends) == 0 || ends[len(ends)-1] != len(text) {
		ends = append(ends, len(text))
	}
	from := 0
	for _, end := range ends {
		yield(Span{from, sentenceWindowEnd(text, from, end, maxBytes, ends)})
		from = end
		if from >= len(text) {
			break
		}
	}
}

// sentenceWindowEnd is where a window of whole sentences starting at from
// ends: the last sentence end within maxBytes, else the end of the first
// sentence (firstEnd) when it is at most 4×maxBytes, else a word end.
func sentenceWindowEnd(text string, from, firstEnd, maxBytes int, ends []int) int {
	if firstEnd-from > maxBytes {
		if firstEnd-from <= 4*maxBytes {
			return firstEnd
		}
		return windowEnd(text, from, 4*maxBytes, nil)
	}
	i := sort.SearchInts(ends, from+maxBytes+1) - 1
	return max(ends[i], firstEnd)
}

// SpokenText is what a turn's point is embedded and encoded from: its
// speaker's name, when it has one, and its text. In a group chat who said
// it is part of what was said ("which shirt size is dan having" asks for
// Dan's "make mine XL not L"); the point's Content stays the turn's text.
func SpokenText(name, content string) string {
	if name == "" {
		return content
	}
	return name + ": " + content
}

// TurnPoints are a turn's points, vectors left to the caller: one for a
// turn of at most passageTokens (<= 0: DefaultPassageTokens), else one per
// passage (SplitPassages), the passage as Content.
func TurnPoints(c memory.Chat, m memory.Message, passageTokens int) []Point {
	base := Point{Tenant: c.Tenant, UserID: c.UserID, ChatID: c.ID, Agent: c.Agent,
		Seq: m.Seq, Role: string(m.Role), CreatedAt: m.CreatedAt, TurnBytes: len(m.Content)}
	spans := SplitPassages(m.Content, PassageBytes(passageTokens))
	if len(spans) <= 1 {
		base.Content, base.PassageTo = m.Content, len(m.Content)
		return []Point{base}
	}
	out := make([]Point, len(spans))
	for i, sp := range spans {
		out[i] = base
		out[i].Passage, out[i].PassageFrom, out[i].PassageTo, out[i].Content = i, sp.From, sp.To, m.Content[sp.From:sp.To]
	}
	return out
}
