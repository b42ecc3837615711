package eval

import (
	"sort"
	"strings"
	"time"

	"github.com/contextd/contextd/internal/tokens"
)

// The protocol's stopwords for answer-token containment (step 4).
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the of to in on at for and or but is are was were be been being do does did
		what when where who whom which why how with from by as that this these those it its i you he she they we me my
		your his her their our about has have had will would can could any some into than then there here just not no yes`) {
		m[w] = true
	}
	return m
}()

// alnumRuns are the runs of [a-z0-9] of the lower-cased text.
func alnumRuns(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
}

// contentWords are an answer's distinct content words.
func contentWords(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range alnumRuns(s) {
		if !stopwords[w] && !seen[w] {
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
	for _, w := range alnumRuns(text) {
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
func dayHeader(t time.Time) string { return "[" + t.UTC().Format("Mon 2 Jan 2006") + "]" }

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
