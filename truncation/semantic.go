package truncation

import (
	"context"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxMisses ends semantic's greedy fill after this many sentences in a
// row did not fit.
const maxMisses = 32

// Separator joins kept sentences that were not adjacent in the input.
const Separator = " … "

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// isSentenceTerminal: ., !, ?, and the other Sentence_Terminal marks of
// any script, plus the ellipsis.
func isSentenceTerminal(r rune) bool {
	return r == '.' || r == '!' || r == '?' || r == '…' || unicode.Is(unicode.Sentence_Terminal, r)
}

// isCJKTerminal: full-width terminals, which need no following space.
func isCJKTerminal(r rune) bool {
	switch r {
	case '。', '！', '？', '｡', '．':
		return true
	}
	return false
}

// sentence is a span of clusters [from, to) of the text, trailing
// whitespace included.
type sentence struct{ from, to int }

// sentences splits the text after newlines, after a terminal followed by
// whitespace (the whitespace stays with the sentence) and after a CJK
// terminal. Spans cover the text without gaps.
func (t *truncator) sentences() []sentence {
	n := t.n()
	var out []sentence
	start := 0
	for i := 0; i < n; i++ {
		c := t.cluster(i)
		r := firstRune(c)
		end := false
		switch {
		case strings.ContainsAny(c, "\n\r\u2028\u2029"):
			end = true
		case isCJKTerminal(r):
			end = true
		case isSentenceTerminal(r) && i+1 < n && isSpaceCluster(t.cluster(i+1)):
			end = true
		}
		if !end {
			continue
		}
		// The whitespace after the end belongs to this sentence.
		for i+1 < n && isSpaceCluster(t.cluster(i+1)) {
			i++
		}
		out = append(out, sentence{start, i + 1})
		start = i + 1
	}
	if start < n {
		out = append(out, sentence{start, n})
	}
	return out
}

// trimRun returns clusters [from, to) without surrounding whitespace and
// without leading orphan marks (a mark that lost its base at a sentence
// start would otherwise attach to the separator before it).
func (t *truncator) trimRun(from, to int) (int, int) {
	for from < to && (isSpaceCluster(t.cluster(from)) || isExtend(firstRune(t.cluster(from)))) {
		from++
	}
	for to > from && isSpaceCluster(t.cluster(to-1)) {
		to--
	}
	return from, to
}

// semantic keeps the sentences that score highest against the query, in
// their original order, joining non-adjacent runs with Separator. A
// non-empty fallback reason means it could not.
func (t *truncator) semantic(ctx context.Context) (string, string) {
	if t.o.Scorer == nil {
		return "", FallbackSemanticUnavailable
	}
	if strings.TrimSpace(t.o.Query) == "" {
		return "", FallbackSemanticNoQuery
	}
	units, texts := t.units()
	if len(units) == 0 {
		return "", FallbackSemanticNoFit
	}
	ctx, cancel := t.withDeadline(ctx)
	defer cancel()
	scores, err := call(ctx, func(ctx context.Context) ([]float64, error) {
		return t.o.Scorer.Score(ctx, t.o.Query, texts)
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return "", FallbackSemanticTimeout
	case err != nil, len(scores) != len(units):
		return "", FallbackSemanticFailed
	}

	keep, kept := t.pick(units, texts, byScore(scores))
	for len(kept) > 0 {
		out := t.assemble(units, keep)
		if t.fits(out) {
			return out, ""
		}
		last := kept[len(kept)-1] // the lowest-scoring kept unit goes first
		keep[last] = false
		kept = kept[:len(kept)-1]
	}
	return "", FallbackSemanticNoFit
}

// units are the scored units, the non-blank sentences trimmed, and their
// texts.
func (t *truncator) units() ([]sentence, []string) {
	var units []sentence
	var texts []string
	for _, s := range t.sentences() {
		from, to := t.trimRun(s.from, s.to)
		if from < to {
			units = append(units, sentence{from, to})
			texts = append(texts, t.text[t.b[from]:t.b[to]])
		}
	}
	return units, texts
}

// byScore orders the units' indexes best score first (stable; NaN last).
func byScore(scores []float64) []int {
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	score := func(i int) float64 {
		if math.IsNaN(scores[i]) {
			return math.Inf(-1)
		}
		return scores[i]
	}
	sort.SliceStable(order, func(a, b int) bool { return score(order[a]) > score(order[b]) })
	return order
}

// pick keeps units in score order while they fit: keep by unit, kept in
// score order.
func (t *truncator) pick(units []sentence, texts []string, order []int) (keep []bool, kept []int) {
	// Greedy by score with additive upper-bound costs: each unit costs its
	// own length plus one separator. Joining adjacent units and trimming
	// only shorten the result; the final check below covers token merges.
	sepC, sepT := clusterCount(Separator), t.tok.Count(Separator)
	leftC, leftT := t.maxChars+sepC, t.maxTokens+sepT // the first unit needs no separator
	keep = make([]bool, len(units))
	misses := 0
	for _, i := range order {
		if misses >= maxMisses {
			break // the budget is as good as full; spare the token counts
		}
		c, tc := 0, 0
		if t.maxChars > 0 {
			c = units[i].to - units[i].from + sepC
		}
		if c > leftC && t.maxChars > 0 {
			misses++
			continue
		}
		if t.maxTokens > 0 {
			if tc = t.tok.Count(texts[i]) + sepT; tc > leftT {
				misses++
				continue
			}
		}
		leftC, leftT = leftC-c, leftT-tc
		keep[i] = true
		kept = append(kept, i)
		misses = 0
		if (t.maxChars > 0 && leftC <= sepC) || (t.maxTokens > 0 && leftT <= sepT) {
			break
		}
	}
	return keep, kept
}

// assemble joins the kept units in text order: adjacent units as the
// original text between them, runs with Separator.
func (t *truncator) assemble(units []sentence, keep []bool) string {
	var b strings.Builder
	for i := 0; i < len(units); i++ {
		if !keep[i] {
			continue
		}
		j := i
		for j+1 < len(units) && keep[j+1] {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(Separator)
		}
		b.WriteString(t.text[t.b[units[i].from]:t.b[units[j].to]])
		i = j
	}
	return b.String()
}
