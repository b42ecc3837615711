package eval

import (
	"sort"
	"strings"
	"time"

	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/internal/tokens"
)

// contentWords are an answer's distinct content words: the protocol's
// answer tokens (lex.ASCIIRuns) without its stopwords (step 4).
func contentWords(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range lex.ASCIIRuns(s) {
		if !lex.IsContainmentStopword(w) && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// containment is the share of the answer's content words found anywhere in
// the context text; ok is false when the answer has none (skipped).
func containment(answer []string, text string) (float64, bool) {
	if len(answer) == 0 {
		return 0, false
	}
	have := map[string]bool{}
	for _, w := range lex.ASCIIRuns(text) {
		have[w] = true
	}
	n := 0
	for _, w := range answer {
		if have[w] {
			n++
		}
	}
	return float64(n) / float64(len(answer)), true
}

// dayHeader is the header contextd shows once per day of retrieved turns.
func dayHeader(t time.Time) string { return "[" + t.UTC().Format(engine.DayLayout) + "]" }

// packedText lays a baseline's turns out chronologically, optionally under
// one date header per day, as contextd lays out its retrieved turns.
func packedText(p packed, texts []string, dates []time.Time, headers bool) string {
	idx := append([]int(nil), p.turns...)
	sort.Ints(idx)
	var b strings.Builder
	last := ""
	for _, i := range idx {
		if headers {
			if h := dayHeader(dates[i]); h != last {
				b.WriteString(h + "\n")
				last = h
			}
		}
		b.WriteString(texts[i] + "\n")
	}
	return b.String()
}

// bm25FillDated is BM25 fill that pays for a date header per day, as
// contextd does: the fair baseline for containment, since a header can
// hold an answer's words (temporal questions).
func bm25FillDated(m *bm25, costs []int, dates []time.Time, query string, budget int) packed {
	var p packed
	paid := map[string]bool{}
	for _, i := range m.rank(query) {
		h := dayHeader(dates[i])
		c := costs[i]
		if !paid[h] {
			c += tokens.Count(h) + 1
		}
		if p.tokens+c > budget {
			continue
		}
		p.tokens += c
		paid[h] = true
		p.turns = append(p.turns, i)
	}
	return p
}
