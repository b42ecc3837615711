package eval

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// outcome is one system's result on one question at one budget.
type outcome struct {
	recall  float64 // share of the evidence turns shown (the text rule, shown.go)
	listed  float64 // share of the evidence turns whose seq is listed (seq-only recall)
	reached float64 // share shown, cited, or cited by an observation shown
	tokens  int
}

// Cell aggregates one system at one budget.
type Cell struct {
	recall, recallAside []float64 // evidence shown: headline categories; the others
	listed              []float64 // seq-only recall, headline categories
	reached             []float64 // headline categories
	allHit              int
	tokens              []int
	retrieval, assembly []time.Duration
	// byCat holds evidence shown, listedByCat seq-only recall, reach
	// evidence reached, contain answer-token containment, per category.
	byCat, listedByCat, reach, contain map[string][]float64
}

func newCell() *Cell {
	return &Cell{byCat: map[string][]float64{}, listedByCat: map[string][]float64{}, reach: map[string][]float64{}, contain: map[string][]float64{}}
}

// add records one question: its evidence shown, listed and reached, its
// answer-token containment (when the answer has content words) and the
// tokens used.
func (c *Cell) add(cat string, headline bool, o outcome, answer []string, text string) {
	c.byCat[cat] = append(c.byCat[cat], o.recall)
	c.listedByCat[cat] = append(c.listedByCat[cat], o.listed)
	c.reach[cat] = append(c.reach[cat], o.reached)
	if x, ok := containment(answer, text); ok {
		c.contain[cat] = append(c.contain[cat], x)
	}
	if headline {
		c.recall = append(c.recall, o.recall)
		c.listed = append(c.listed, o.listed)
		c.reached = append(c.reached, o.reached)
		if o.recall == 1 {
			c.allHit++
		}
	} else {
		c.recallAside = append(c.recallAside, o.recall)
	}
	c.tokens = append(c.tokens, o.tokens)
}

// SectionStats are contextd's sections at one budget: tokens, and how
// often each held an evidence turn (shown in its text by the text rule,
// cited, or an observation citing it in its text).
type SectionStats struct {
	questions int
	total     int
	tokens    map[string]int
	held      map[string]int
}

func (s *SectionStats) add(views []SectionView, ev []int, in *ingested) {
	s.questions++
	for _, v := range views {
		s.tokens[v.Name] += v.Tokens
		s.total += v.Tokens
		shown := in.shown(v.Text, ev)
		for _, q := range v.Cites {
			if k, ok := in.bySeq[q]; ok {
				shown[k] = true
			}
		}
		if len(in.reached(ev, shown, v.Text)) > 0 {
			s.held[v.Name]++
		}
	}
}

// Report is a run's results.
type Report struct {
	Dataset       string
	Budgets       []int
	Systems       []string
	Cells         map[string]map[int]*Cell // system → budget
	Sections      map[int]*SectionStats    // budget → contextd's sections
	Losses        map[int]*LossStats       // budget → where evidence was lost (Options.Diagnose)
	Conversations int
	Turns         int
	// Questions are in the headline categories, QuestionsAside in the
	// others (LoCoMo's adversarial category 5); Skipped had no evidence.
	Questions      int
	QuestionsAside int
	Skipped        int
	// Degraded counts contextd answers that took a fallback (reason → n);
	// a fair run has none.
	Degraded map[string]int
	// Replay is set when contextd summarised with the replay LLM; Cost is
	// what that LLM was asked.
	Replay bool
	Cost   LLMCost

	categories
}

// categories are how the dataset's question categories are written: their
// order, which are headline ones, the headline's label and the others' tag.
type categories struct {
	cats            []string
	headline        func(string) bool
	label, asideTag string
}

func newReport(d dataset, o Options) *Report {
	r := &Report{Dataset: d.name, Budgets: o.Budgets, Cells: map[string]map[int]*Cell{}, Sections: map[int]*SectionStats{},
		Degraded: map[string]int{}, Replay: o.Replay, Cost: LLMCost{Calls: map[string]int{}},
		categories: categories{cats: d.cats, headline: d.headline, label: d.label, asideTag: d.aside}}
	r.Systems = append([]string{sysContextd}, d.systemNames(o)...)
	for _, s := range r.Systems {
		r.Cells[s] = map[int]*Cell{}
		for _, b := range o.Budgets {
			r.Cells[s][b] = newCell()
		}
	}
	for _, b := range o.Budgets {
		r.Sections[b] = &SectionStats{tokens: map[string]int{}, held: map[string]int{}}
	}
	if o.Diagnose {
		r.Losses = map[int]*LossStats{}
		for _, b := range o.Budgets {
			r.Losses[b] = newLossStats()
		}
	}
	return r
}

// systemNames are the baselines' names, from an empty sample.
func (d dataset) systemNames(o Options) []string {
	var out []string
	for _, b := range d.baselines(&sample{}, nil, o) {
		out = append(out, b.name)
	}
	return out
}

func (r *Report) addCost(c LLMCost) {
	for k, v := range c.Calls {
		r.Cost.Calls[k] += v
	}
	r.Cost.TurnsSent += c.TurnsSent
	r.Cost.Unplaced += c.Unplaced
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func meanInt(xs []int) float64 {
	s := 0
	for _, x := range xs {
		s += x
	}
	if len(xs) == 0 {
		return 0
	}
	return float64(s) / float64(len(xs))
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(p*float64(len(s)-1) + 0.5)
	return s[i]
}

// Recall14 is a system's mean evidence shown (the text rule) on the
// headline categories (LoCoMo's 1-4): the headline figure.
func (r *Report) Recall14(system string, budget int) float64 {
	return mean(r.Cells[system][budget].recall)
}

// SeqRecall14 is a system's mean seq-only recall on the headline
// categories: the evidence whose seq the answer lists, whatever it shows
// of it.
func (r *Report) SeqRecall14(system string, budget int) float64 {
	return mean(r.Cells[system][budget].listed)
}

// Reached is a system's mean evidence reached on the headline categories.
func (r *Report) Reached(system string, budget int) float64 {
	return mean(r.Cells[system][budget].reached)
}

// Containment14 is a system's mean answer-token containment on the
// headline categories.
func (r *Report) Containment14(system string, budget int) float64 {
	var all []float64
	for _, cat := range r.cats {
		if r.headline(cat) {
			all = append(all, r.Cells[system][budget].contain[cat]...)
		}
	}
	return mean(all)
}

// Write prints the report as markdown tables.
func (r *Report) Write(w io.Writer) {
	aside := ""
	if r.asideTag != "" {
		aside = fmt.Sprintf(" + %d (cat %s)", r.QuestionsAside, r.asideTag)
	}
	fmt.Fprintf(w, "%s: %d conversations, %d turns, %d questions (%s)%s, %d skipped (no evidence)\n\n",
		r.Dataset, r.Conversations, r.Turns, r.Questions, r.label, aside, r.Skipped)
	if r.Replay {
		r.writeCost(w)
	}
	r.writeMain(w)
	if len(r.Degraded) > 0 {
		fmt.Fprintf(w, "\ndegraded answers (fallbacks taken): %v\n", r.Degraded)
	}
	r.writeVerdicts(w)
	r.writeCategories(w, "evidence shown (share of the evidence turns whose text is in the context)", func(c *Cell) map[string][]float64 { return c.byCat })
	r.writeCategories(w, "seq-only recall (share of the evidence turns whose seq the sections list)", func(c *Cell) map[string][]float64 { return c.listedByCat })
	if r.Replay {
		r.writeCategories(w, "evidence reached (shown, or cited by an LLM-written observation or fact in the context)", func(c *Cell) map[string][]float64 { return c.reach })
	}
	r.writeCategories(w, "answer-token containment (share of the gold answer's content words anywhere in the context text)", func(c *Cell) map[string][]float64 { return c.contain })
	r.writeSections(w)
	r.writeLosses(w)
}

func (r *Report) writeCost(w io.Writer) {
	kinds := make([]string, 0, len(r.Cost.Calls))
	total := 0
	for k, n := range r.Cost.Calls {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		total += n
	}
	sort.Strings(kinds)
	ratio := 0.0
	if r.Turns > 0 {
		ratio = float64(r.Cost.TurnsSent) / float64(r.Turns)
	}
	fmt.Fprintf(w, "Replay LLM: %d calls (%s); %d transcript turns sent over %d conversation turns = %.2fx; %d [seq] lines matched no turn\n\n",
		total, strings.Join(kinds, ", "), r.Cost.TurnsSent, r.Turns, ratio, r.Cost.Unplaced)
}

func (r *Report) writeMain(w io.Writer) {
	head := fmt.Sprintf("| budget | system | shown %s | seq-only %s | all-evidence %s |", r.label, r.label, r.label)
	sep := "|---:|---|---:|---:|---:|"
	if r.Replay {
		head += fmt.Sprintf(" reached %s |", r.label)
		sep += "---:|"
	}
	head += fmt.Sprintf(" containment %s |", r.label)
	sep += "---:|"
	if r.asideTag != "" {
		head += fmt.Sprintf(" shown %s |", r.asideTag)
		sep += "---:|"
	}
	fmt.Fprintln(w, head+" tokens used | retrieval p50/p95 | assembly p50/p95 |")
	fmt.Fprintln(w, sep+"---:|---:|---:|")
	for _, b := range r.Budgets {
		for _, s := range r.Systems {
			c := r.Cells[s][b]
			times, asm := "–", "–"
			if s == sysContextd {
				times = fmt.Sprintf("%s / %s", fmtDur(percentile(c.retrieval, .5)), fmtDur(percentile(c.retrieval, .95)))
				asm = fmt.Sprintf("%s / %s", fmtDur(percentile(c.assembly, .5)), fmtDur(percentile(c.assembly, .95)))
			}
			all := 0.0
			if len(c.recall) > 0 {
				all = float64(c.allHit) / float64(len(c.recall))
			}
			row := fmt.Sprintf("| %d | %s | %.3f | %.3f | %.3f |", b, s, mean(c.recall), mean(c.listed), all)
			if r.Replay {
				row += fmt.Sprintf(" %.3f |", mean(c.reached))
			}
			row += fmt.Sprintf(" %.3f |", r.Containment14(s, b))
			if r.asideTag != "" {
				row += fmt.Sprintf(" %.3f |", mean(c.recallAside))
			}
			fmt.Fprintf(w, "%s %.0f | %s | %s |\n", row, meanInt(c.tokens), times, asm)
		}
	}
}

func (r *Report) writeVerdicts(w io.Writer) {
	for _, s := range r.Systems[1:] {
		if s == sysRecency {
			continue
		}
		var rec, con []string
		for _, b := range r.Budgets {
			rec = append(rec, fmt.Sprintf("%d: %+.3f", b, r.Recall14(sysContextd, b)-r.Recall14(s, b)))
			con = append(con, fmt.Sprintf("%d: %+.3f", b, r.Containment14(sysContextd, b)-r.Containment14(s, b)))
		}
		fmt.Fprintf(w, "\ncontextd minus %s by budget: shown %s %s; containment %s %s", s, r.label, strings.Join(rec, ", "), r.label, strings.Join(con, ", "))
	}
	fmt.Fprintln(w)
}

// writeCategories prints one measure per category and over the headline
// categories.
func (r *Report) writeCategories(w io.Writer, title string, of func(*Cell) map[string][]float64) {
	fmt.Fprintf(w, "\nBy category: %s\n\n", title)
	fmt.Fprintf(w, "| budget | system | %s | %s |\n", strings.Join(r.cats, " | "), r.label)
	fmt.Fprintf(w, "|---:|---|%s---:|\n", strings.Repeat("---:|", len(r.cats)))
	for _, b := range r.Budgets {
		for _, s := range r.Systems {
			m := of(r.Cells[s][b])
			var all []float64
			cells := make([]string, 0, len(r.cats)+1)
			for _, cat := range r.cats {
				cells = append(cells, fmtMean(m[cat]))
				if r.headline(cat) {
					all = append(all, m[cat]...)
				}
			}
			fmt.Fprintf(w, "| %d | %s | %s | %s |\n", b, s, strings.Join(cells, " | "), fmtMean(all))
		}
	}
}

func fmtMean(xs []float64) string {
	if len(xs) == 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f", mean(xs))
}

// writeSections prints contextd's token share per section and how often
// each section held an evidence turn.
func (r *Report) writeSections(w io.Writer) {
	fmt.Fprintln(w, "\ncontextd by section: share of the tokens used | share of questions whose evidence the section held (a turn shown, cited, or an observation citing it)")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| budget | %s | %s |\n", strings.Join(sectionNames, " | "), strings.Join(sectionNames, " held | ")+" held")
	fmt.Fprintf(w, "|---:|%s\n", strings.Repeat("---:|", 2*len(sectionNames)))
	for _, b := range r.Budgets {
		s := r.Sections[b]
		var tok, held []string
		for _, n := range sectionNames {
			t, h := 0.0, 0.0
			if s.total > 0 {
				t = float64(s.tokens[n]) / float64(s.total)
			}
			if s.questions > 0 {
				h = float64(s.held[n]) / float64(s.questions)
			}
			tok = append(tok, fmt.Sprintf("%.3f", t))
			held = append(held, fmt.Sprintf("%.3f", h))
		}
		fmt.Fprintf(w, "| %d | %s | %s |\n", b, strings.Join(tok, " | "), strings.Join(held, " | "))
	}
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d.Nanoseconds())/1e3)
	default:
		return fmt.Sprintf("%.2fms", float64(d.Nanoseconds())/1e6)
	}
}
