package eval

import (
	"math"
	"sort"
	"time"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/internal/tokens"
)

// packed is a baseline's choice of turns (indices into the conversation).
type packed struct {
	turns  []int
	tokens int
}

// turnCost is what a line costs in a packed context: its text (a turn's
// with its role label) and a newline.
func turnCost(text string) int { return tokens.Count(text) + 1 }

// recency keeps the last turns that fit the budget.
func recency(costs []int, budget int) packed {
	var p packed
	for i := len(costs) - 1; i >= 0; i-- {
		if p.tokens+costs[i] > budget {
			break
		}
		p.tokens += costs[i]
		p.turns = append(p.turns, i)
	}
	return p
}

// bm25 is classic Okapi BM25 (k1 1.5, b 0.75) over the words lexical
// retrieval reads (lex.Runs: lowercase letter and digit runs), with no
// stemming and no stopwords: the plain baseline.
type bm25 struct {
	docs  []map[string]int
	lens  []int
	avg   float64
	df    map[string]int
	k1, b float64
}

func newBM25(texts []string) *bm25 {
	m := &bm25{df: map[string]int{}, k1: 1.5, b: 0.75}
	total := 0
	for _, t := range texts {
		tf := map[string]int{}
		ws := lex.Runs(t)
		for _, w := range ws {
			tf[w]++
		}
		for w := range tf {
			m.df[w]++
		}
		m.docs = append(m.docs, tf)
		m.lens = append(m.lens, len(ws))
		total += len(ws)
	}
	if len(texts) > 0 {
		m.avg = float64(total) / float64(len(texts))
	}
	return m
}

func (m *bm25) rank(query string) []int {
	n := float64(len(m.docs))
	q := map[string]bool{}
	for _, w := range lex.Runs(query) {
		q[w] = true
	}
	scores := make([]float64, len(m.docs))
	for w := range q {
		df := float64(m.df[w])
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for i, d := range m.docs {
			tf := float64(d[w])
			if tf == 0 {
				continue
			}
			scores[i] += idf * tf * (m.k1 + 1) / (tf + m.k1*(1-m.b+m.b*float64(m.lens[i])/m.avg))
		}
	}
	idx := make([]int, 0, len(m.docs))
	for i, s := range scores {
		if s > 0 {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	return idx
}

// bm25Fill packs turns in BM25 order until the budget is full (a turn too
// large for what is left is skipped, so smaller ones can still fill it).
func bm25Fill(m *bm25, costs []int, query string, budget int) packed {
	var p packed
	for _, i := range m.rank(query) {
		if p.tokens+costs[i] > budget {
			continue
		}
		p.tokens += costs[i]
		p.turns = append(p.turns, i)
	}
	return p
}

// corpus is what a baseline packs: documents in chronological order, each
// showing a turn (whole or a passage: turnOf ≥ 0) or not (an observation:
// -1), with its date and cost. texts are what BM25 ranks; lines are what
// the fill prints and pays for: a turn's text after its role label
// ("user: <text>", as contextd renders a turn), an observation as it is.
type corpus struct {
	texts  []string
	lines  []string
	dates  []time.Time
	costs  []int
	turnOf []int
	index  *bm25
}

func (c *corpus) add(role, text string, at time.Time, turn int) {
	line := text
	if role != "" {
		line = role + ": " + text
	}
	c.texts = append(c.texts, text)
	c.lines = append(c.lines, line)
	c.dates = append(c.dates, at)
	c.costs = append(c.costs, turnCost(line))
	c.turnOf = append(c.turnOf, turn)
}

func (c *corpus) indexed() *corpus {
	c.index = newBM25(c.texts)
	return c
}

// turnCorpus is the conversation's turns.
func turnCorpus(kept []sampleTurn) *corpus {
	c := &corpus{}
	for i, t := range kept {
		c.add(t.role, t.text, t.at, i)
	}
	return c.indexed()
}

// observationCorpus is the turns with each observation after the first
// turn it cites, dated as that turn: a naive RAG over the same LLM-made
// memory the replay LLM gives contextd.
func observationCorpus(kept []sampleTurn, obs []Observation) *corpus {
	index := map[string]int{}
	for i, t := range kept {
		index[t.id] = i
	}
	after := map[int][]string{}
	for _, o := range obs {
		first := -1
		for _, id := range o.Evidence {
			if k, ok := index[id]; ok && (first < 0 || k < first) {
				first = k
			}
		}
		if first >= 0 {
			after[first] = append(after[first], o.Text)
		}
	}
	c := &corpus{}
	for i, t := range kept {
		c.add(t.role, t.text, t.at, i)
		for _, o := range after[i] {
			c.add("", o, t.at, -1)
		}
	}
	return c.indexed()
}

// passageCorpus is the turns split into passages of about maxTokens.
func passageCorpus(kept []sampleTurn, maxTokens int) *corpus {
	c := &corpus{}
	for i, t := range kept {
		for _, p := range passages(t.text, maxTokens) {
			c.add(t.role, p, t.at, i)
		}
	}
	return c.indexed()
}
