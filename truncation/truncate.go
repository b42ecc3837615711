// Package truncation shortens one message to a limit in user-perceived
// characters (grapheme clusters) and/or cl100k tokens, with one of four
// strategies: hard (head + "…"), middle (head and tail around a marker),
// llm (a Condenser rewrites it) and semantic (the sentences most similar to
// the query). The llm and semantic strategies fall back to middle when
// their backend is missing or fails, and say so in Info.Fallback. Output is
// always valid UTF-8 and never splits a grapheme cluster of the input.
package truncation

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/contextd/contextd/internal/tokens"
)

// Strategy names a truncation strategy.
type Strategy string

const (
	Hard     Strategy = "hard"
	Middle   Strategy = "middle"
	LLM      Strategy = "llm"
	Semantic Strategy = "semantic"
)

// Default is the strategy of an empty setting.
const Default = Middle

// Fallback reasons reported in Info.Fallback.
const (
	FallbackLLMUnavailable      = "llm_unavailable"
	FallbackLLMFailed           = "llm_failed"
	FallbackLLMTimeout          = "llm_timeout"
	FallbackLLMOverlong         = "llm_overlong"
	FallbackSemanticUnavailable = "semantic_unavailable"
	FallbackSemanticNoQuery     = "semantic_no_query"
	FallbackSemanticFailed      = "semantic_failed"
	FallbackSemanticTimeout     = "semantic_timeout"
	FallbackSemanticNoFit       = "semantic_no_fit"
	FallbackUnknownStrategy     = "unknown_strategy"
)

// Ellipsis ends a hard-truncated text.
const Ellipsis = "…"

// DefaultTimeout bounds a Condenser or Scorer call when ctx has no
// deadline of its own.
const DefaultTimeout = 10 * time.Second

// ParseStrategy parses a strategy name (case-insensitive); "" is Default.
func ParseStrategy(s string) (Strategy, error) {
	switch st := Strategy(strings.ToLower(strings.TrimSpace(s))); st {
	case "":
		return Default, nil
	case Hard, Middle, LLM, Semantic:
		return st, nil
	}
	return "", fmt.Errorf("truncation: unknown strategy %q (want hard, middle, llm or semantic)", s)
}

// ErrUnavailable is what a Condenser or Scorer returns, wrapped, when it
// knows its backend is down and did not call it: the caller reports the
// backend unavailable rather than failed.
var ErrUnavailable = errors.New("truncation: backend unavailable")

// Condenser rewrites text to at most maxChars characters (an LLM).
type Condenser interface {
	Condense(ctx context.Context, text string, maxChars int) (string, error)
}

// Scorer scores each sentence's relevance to query (higher is better);
// the answer has one score per sentence.
type Scorer interface {
	Score(ctx context.Context, query string, sentences []string) ([]float64, error)
}

// Options configure one Truncate call.
type Options struct {
	Strategy Strategy // "" = Default
	// MaxChars is the limit in grapheme clusters; 0 (or less) = none.
	MaxChars int
	// MaxTokens is the limit in tokens (Tokens; cl100k when nil); 0 (or
	// less) = none. When both limits are set, the output meets both.
	MaxTokens int
	Tokens    tokens.Counter
	Query     string    // semantic: what the kept sentences should be about
	Condenser Condenser // llm; nil → middle with FallbackLLMUnavailable
	Scorer    Scorer    // semantic; nil → middle with FallbackSemanticUnavailable
	// Timeout bounds the Condenser/Scorer call when ctx has no deadline;
	// 0 = DefaultTimeout.
	Timeout time.Duration
}

// Info describes what Truncate did.
type Info struct {
	Truncated bool
	// Strategy is the one actually applied: middle after a fallback, hard
	// when the limit is too small for middle's marker. When nothing was
	// truncated it is the requested strategy.
	Strategy Strategy
	// Fallback names why the requested strategy was not used ("" if it was).
	Fallback string
	// OriginalChars is the input's length in grapheme clusters.
	OriginalChars int
}

// Truncate returns text cut to the limits of o, and what it did. Text that
// already fits is returned as is (invalid UTF-8 bytes become U+FFFD).
func Truncate(ctx context.Context, text string, o Options) (string, Info) {
	text = sanitize(text)
	t := newTruncator(text, o)
	info := Info{Strategy: o.Strategy, OriginalChars: t.n()}
	if info.Strategy == "" {
		info.Strategy = Default
	}
	if !t.over() {
		return text, info
	}
	info.Truncated = true
	switch info.Strategy {
	case Hard:
		return t.hard(), info
	case Middle:
	case LLM:
		out, fb := t.llm(ctx)
		if fb == "" {
			return out, info
		}
		info.Fallback = fb
	case Semantic:
		out, fb := t.semantic(ctx)
		if fb == "" {
			return out, info
		}
		info.Fallback = fb
	default:
		info.Fallback = FallbackUnknownStrategy
	}
	out, st := t.middle()
	info.Strategy = st
	return out, info
}

// truncator holds one text, its cluster boundaries and the limits.
type truncator struct {
	tok       tokens.Counter // the agent's tokenizer (Options.Tokens)
	text      string
	b         []int // cluster boundaries, see boundaries
	maxChars  int
	maxTokens int
	o         Options
}

func newTruncator(text string, o Options) *truncator {
	tok := o.Tokens
	if tok == nil {
		tok = tokens.CL100K
	}
	return &truncator{tok: tok, text: text, b: boundaries(text), maxChars: max(o.MaxChars, 0), maxTokens: max(o.MaxTokens, 0), o: o}
}

// n is the number of clusters of the text.
func (t *truncator) n() int { return len(t.b) - 1 }

// over reports whether the whole text breaks a limit. The token count, the
// costly part, is skipped when the char limit already decides or the text
// has fewer bytes than the token limit (a token is at least one byte).
func (t *truncator) over() bool {
	if t.maxChars > 0 && t.n() > t.maxChars {
		return true
	}
	return t.maxTokens > 0 && len(t.text) > t.maxTokens && countUpTo(t.tok, t.text, t.maxTokens) > t.maxTokens
}

// countChunk is the size countUpTo counts at a time.
const countChunk = 4096

// countUpTo returns the token count of s when it is at most limit, and some
// number above limit otherwise, counting chunk by chunk so that a long text
// over a small limit is not counted in full. Chunks are cut only where
// cl100k's pre-tokenizer always splits (see safeSplit), so the chunk counts
// add up to the count of s.
func countUpTo(tok tokens.Counter, s string, limit int) int {
	n := 0
	for len(s) > 0 && n <= limit {
		cut := safeSplit(s, countChunk)
		n += tok.Count(s[:cut])
		s = s[cut:]
	}
	return n
}

// safeSplit returns the first offset ≥ from where s can be cut without
// changing its tokenization: just before a space or after a newline that
// sits between an ASCII letter run and an ASCII letter. cl100k's pattern
// ends a letter run at a space and starts a new piece there (" word"), and a
// newline run never joins the letter after it, so both sides tokenize as in
// the whole. Without such a point it returns len(s).
func safeSplit(s string, from int) int {
	for i := max(from, 1); i+1 < len(s); i++ {
		switch {
		case s[i] == ' ' && isASCIILetter(s[i-1]) && isASCIILetter(s[i+1]):
			return i
		case s[i-1] == '\n' && isASCIILetter(s[i]):
			return i
		}
	}
	return len(s)
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// fits reports whether s meets both limits.
func (t *truncator) fits(s string) bool {
	if t.maxChars > 0 && clusterCount(s) > t.maxChars {
		return false
	}
	return t.maxTokens == 0 || len(s) <= t.maxTokens || t.tok.Count(s) <= t.maxTokens
}

// prefix and suffix return the first / last k clusters.
func (t *truncator) prefix(k int) string { return t.text[:t.b[k]] }
func (t *truncator) suffix(k int) string { return t.text[t.b[t.n()-k]:] }

// hard keeps the longest head that, with the ellipsis, fits.
func (t *truncator) hard() string {
	k := t.n()
	if t.maxChars > 0 {
		k = min(k, t.maxChars-1)
	}
	if t.maxTokens > 0 {
		budget := t.maxTokens - t.tok.Count(Ellipsis)
		if budget < 0 {
			return ""
		}
		k = t.headFit(k, budget)
	}
	// Joining may merge tokens differently: verify, and search down if
	// needed (k = 0, the bare ellipsis, fits by the checks above).
	if !t.fits(t.prefix(k) + Ellipsis) {
		k = searchMax(0, k, func(k int) bool { return t.fits(t.prefix(k) + Ellipsis) })
	} else if t.maxTokens > 0 {
		// A token-boundary cut can leave room for part of the next word
		// (or the ellipsis can merge with trailing punctuation): extend.
		for range maxExtend {
			if k == t.n() || (t.maxChars > 0 && k+1 > t.maxChars-1) || !t.fits(t.prefix(k+1)+Ellipsis) {
				break
			}
			k++
		}
	}
	return t.prefix(k) + Ellipsis
}

// maxExtend bounds hard's cluster-by-cluster extension after a token cut.
const maxExtend = 16

// searchMax returns the largest k in [lo, hi) for which ok holds, given
// ok(lo) and !ok(hi), by bisection (ok is assumed monotone; the result
// satisfies ok either way).
func searchMax(lo, hi int, ok func(int) bool) int {
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// windowBytes is the first guess of how many bytes budget tokens cover;
// it grows when wrong, so it only affects speed.
func windowBytes(budget int) int { return budget*6 + 64 }

// headFit returns the largest k ≤ maxK such that the first k clusters have
// at most budget tokens. It looks only at a window of the text around the
// answer, so its cost follows the budget, not the text's size.
func (t *truncator) headFit(maxK, budget int) int {
	if budget <= 0 || maxK <= 0 {
		return 0
	}
	// middle's character share can exceed the text when tokens, not
	// characters, are what bind.
	maxK = min(maxK, t.n())
	for w := windowBytes(budget); ; w *= 4 {
		k := maxK
		if t.b[k] > w {
			k = sort.SearchInts(t.b, w+1) - 1 // last boundary ≤ w
		}
		p := t.prefix(k)
		if t.tok.Count(p) <= budget {
			if k == maxK {
				return k
			}
			continue
		}
		cut := len(t.tok.Truncate(p, budget))
		kk := sort.SearchInts(t.b, cut+1) - 1
		if t.tok.Count(t.prefix(kk)) > budget {
			kk = searchMax(0, kk, func(i int) bool { return t.tok.Count(t.prefix(i)) <= budget })
		}
		return kk
	}
}

// tailFit returns the largest k ≤ maxK such that the last k clusters have
// at most budget tokens; like headFit it works in a growing window.
func (t *truncator) tailFit(maxK, budget int) int {
	if budget <= 0 || maxK <= 0 {
		return 0
	}
	n := t.n()
	maxK = min(maxK, n)
	for w := windowBytes(budget); ; w *= 4 {
		k := maxK
		if len(t.text)-t.b[n-k] > w {
			k = n - sort.SearchInts(t.b, len(t.text)-w) // first boundary ≥ len-w
		}
		c := t.tok.Count(t.suffix(k))
		if c <= budget {
			if k == maxK {
				return k
			}
			continue
		}
		ok := func(i int) bool { return t.tok.Count(t.suffix(i)) <= budget }
		// First probe at the proportional guess, then bisect its side.
		guess := k * budget / c
		if ok(guess) {
			return searchMax(guess, k, ok)
		}
		return searchMax(0, guess, ok)
	}
}

// marker replaces removed clusters in middle.
func marker(removed int) string {
	return "\n…[truncated " + strconv.Itoa(removed) + " chars]…\n"
}

// headShare is middle's share of the kept text given to the head.
const headShare = 0.6

// middle keeps a head and a tail around a marker. When the limit leaves
// less room for text than the marker itself takes, it uses hard instead.
func (t *truncator) middle() (string, Strategy) {
	n := t.n()
	mk := marker(n) // the most digits the count can need: an upper bound
	headC, tailC := n, n
	if t.maxChars > 0 {
		m := clusterCount(mk)
		avail := t.maxChars - m
		if avail < m {
			return t.hard(), Hard
		}
		headC = int(float64(avail)*headShare + 0.5)
		tailC = avail - headC
	}
	headT, tailT := 0, 0
	if t.maxTokens > 0 {
		m := t.tok.Count(mk)
		avail := t.maxTokens - m
		if avail < m {
			return t.hard(), Hard
		}
		headT = int(float64(avail)*headShare + 0.5)
		tailT = avail - headT
	}
	for range 4 {
		h, tl := headC, tailC
		if t.maxTokens > 0 {
			h = t.headFit(h, headT)
			tl = t.tailFit(tl, tailT)
		}
		if h+tl >= n { // only possible through token rounding
			tl = max(n-h-1, 0)
			h = min(h, n-1-tl)
		}
		h, tl = t.snapHead(h), t.snapTail(n-tl)
		tl = n - tl
		out := t.prefix(h) + marker(n-h-tl) + t.suffix(tl)
		if t.fits(out) {
			return out, Middle
		}
		// Token merges at the joins made it too long: shrink and retry.
		if t.maxTokens > 0 {
			excess := t.tok.Count(out) - t.maxTokens + 1
			headT -= (excess + 1) / 2
			tailT -= (excess + 1) / 2
		}
		headC, tailC = max(h-1, 0), max(tl-1, 0)
	}
	return t.hard(), Hard
}

// snapWindow is how far (in clusters) middle looks for a nicer cut.
func snapWindow(k int) int { return min(k/3, 40) }

func (t *truncator) cluster(i int) string { return t.text[t.b[i]:t.b[i+1]] }

// isTerminal reports whether cluster i ends a sentence (., !, ?, CJK and
// other Sentence_Terminal marks; ellipsis).
func (t *truncator) isTerminal(i int) bool {
	r := firstRune(t.cluster(i))
	return isSentenceTerminal(r)
}

// goodCut reports the quality of cutting before cluster j: 2 after a
// sentence end or newline, 1 after whitespace, 0 otherwise.
func (t *truncator) goodCut(j int) int {
	if j <= 0 || j >= t.n() {
		return 2
	}
	c := t.cluster(j - 1)
	switch {
	case strings.ContainsAny(c, "\n\r\u2028\u2029"):
		return 2
	case isSpaceCluster(c):
		if j >= 2 && t.isTerminal(j-2) {
			return 2
		}
		return 1
	case isCJKTerminal(firstRune(c)):
		return 2
	}
	return 0
}

// snapHead moves a head cut of k clusters back to a sentence end or
// whitespace when one is near, then drops trailing whitespace.
func (t *truncator) snapHead(k int) int {
	best, q := k, t.goodCut(k)
	for j := k - 1; j >= k-snapWindow(k) && q < 2; j-- {
		if g := t.goodCut(j); g > q {
			best, q = j, g
		}
	}
	for best > 0 && isSpaceCluster(t.cluster(best-1)) {
		best--
	}
	return best
}

// snapTail moves a tail start (cluster index s) forward to just after a
// sentence end or whitespace when one is near, then skips whitespace.
func (t *truncator) snapTail(s int) int {
	n := t.n()
	best, q := s, t.goodCut(s)
	for j := s + 1; j <= s+snapWindow(n-s) && j < n && q < 2; j++ {
		if g := t.goodCut(j); g > q {
			best, q = j, g
		}
	}
	for best < n && isSpaceCluster(t.cluster(best)) {
		best++
	}
	return best
}

// withDeadline gives ctx a deadline when it has none.
func (t *truncator) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	d := t.o.Timeout
	if d <= 0 {
		d = DefaultTimeout
	}
	return context.WithTimeout(ctx, d)
}

// call runs f under ctx, returning when ctx ends even if f ignores it (f
// then finishes in the background and its answer is discarded).
func call[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f(ctx)
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// llm asks the Condenser; a non-empty fallback reason means its answer
// was not used.
func (t *truncator) llm(ctx context.Context) (string, string) {
	if t.o.Condenser == nil {
		return "", FallbackLLMUnavailable
	}
	ctx, cancel := t.withDeadline(ctx)
	defer cancel()
	maxChars := t.maxChars
	if maxChars == 0 {
		maxChars = t.maxTokens * 3 // a hint only; the token limit is checked below
	}
	out, err := call(ctx, func(ctx context.Context) (string, error) {
		return t.o.Condenser.Condense(ctx, t.text, maxChars)
	})
	switch {
	case err == nil:
	case errors.Is(err, ErrUnavailable):
		return "", FallbackLLMUnavailable
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded): // ours, or the Condenser's own timeout
		return "", FallbackLLMTimeout
	default:
		return "", FallbackLLMFailed
	}
	out = strings.TrimSpace(sanitize(out))
	if out == "" {
		return "", FallbackLLMFailed
	}
	if !t.fits(out) {
		return "", FallbackLLMOverlong
	}
	return out, ""
}
