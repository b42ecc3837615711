package eval

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/contextd/contextd/engine"
)

// System is a fresh contextd for one conversation: the service, and Drain,
// which finishes the background work (indexing, summaries) a running server
// would have done by the time the question is asked.
type System struct {
	Service *engine.Service
	Drain   func(ctx context.Context) error
	Close   func()
}

// NewSystem builds a System in its own directory.
type NewSystem func(ctx context.Context, dir string) (*System, error)

// Options configure a run.
type Options struct {
	Budgets  []int
	Strategy string // default rag_augmented
	TempDir  string
	Progress io.Writer // nil: quiet
}

const (
	sysContextd  = "contextd"
	sysRecency   = "recency"
	sysBM25      = "bm25-fill"
	sysBM25Dated = "bm25-fill+dates"
)

var systems = []string{sysContextd, sysBM25, sysBM25Dated, sysRecency}

// Cell aggregates one system at one budget.
type Cell struct {
	recall14, recall5   []float64
	allHit14            int
	tokens              []int
	retrieval, assembly []time.Duration
	// byCat holds recall, contain answer-token containment, per category
	// (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop).
	byCat, contain map[int][]float64
}

// Report is a run's results.
type Report struct {
	Budgets       []int
	Cells         map[string]map[int]*Cell // system → budget
	Conversations int
	Turns         int
	Questions14   int
	Questions5    int
	Skipped       int
	// Degraded counts contextd answers that took a fallback (reason → n);
	// a fair run has none.
	Degraded map[string]int
}

func newReport(budgets []int) *Report {
	r := &Report{Budgets: budgets, Cells: map[string]map[int]*Cell{}, Degraded: map[string]int{}}
	for _, s := range systems {
		r.Cells[s] = map[int]*Cell{}
		for _, b := range budgets {
			r.Cells[s][b] = &Cell{byCat: map[int][]float64{}, contain: map[int][]float64{}}
		}
	}
	return r
}

// add records one question: its evidence recall, its answer-token
// containment (when the answer has content words) and the tokens used.
func (c *Cell) add(cat int, recall float64, tok int, answer []string, text string) {
	c.byCat[cat] = append(c.byCat[cat], recall)
	if x, ok := containment(answer, text); ok {
		c.contain[cat] = append(c.contain[cat], x)
	}
	if cat == 5 {
		c.recall5 = append(c.recall5, recall)
	} else {
		c.recall14 = append(c.recall14, recall)
		if recall == 1 {
			c.allHit14++
		}
	}
	c.tokens = append(c.tokens, tok)
}

// Run evaluates every conversation.
func Run(ctx context.Context, convs []Conversation, newSystem NewSystem, o Options) (*Report, error) {
	if o.Strategy == "" {
		o.Strategy = string(engine.StrategyRAG)
	}
	rep := newReport(o.Budgets)
	for ci, conv := range convs {
		if err := runOne(ctx, ci, conv, newSystem, o, rep); err != nil {
			return nil, fmt.Errorf("%s: %w", conv.SampleID, err)
		}
	}
	return rep, nil
}

func runOne(ctx context.Context, ci int, conv Conversation, newSystem NewSystem, o Options, rep *Report) error {
	dir := fmt.Sprintf("%s/conv-%d", o.TempDir, ci)
	sys, err := newSystem(ctx, dir)
	if err != nil {
		return err
	}
	defer sys.Close()
	chatID := conv.SampleID
	tenant := "eval"

	// Ingest turn by turn, in order, through the service's append path.
	seqOf := map[string]int64{}
	var texts []string
	var costs []int
	var seqs []int64
	var dates []time.Time
	for _, s := range conv.Sessions {
		for _, t := range s.Turns {
			role := "user"
			if t.Speaker == conv.SpeakerB {
				role = "assistant"
			}
			when := s.Date
			text := TurnText(t)
			out, err := sys.Service.Append(ctx, tenant, chatID, engine.AppendInput{UserID: "locomo", Messages: []engine.InMessage{{ID: t.DiaID, Role: role, Content: text, CreatedAt: &when}}})
			if err != nil {
				return fmt.Errorf("append %s: %w", t.DiaID, err)
			}
			seq := out.LastSeq
			if len(out.Messages) == 1 {
				seq = out.Messages[0].Seq
			}
			if out.Duplicates > 0 {
				continue // a repeated dia_id: already stored once
			}
			seqOf[t.DiaID] = seq
			texts = append(texts, text)
			dates = append(dates, when)
			costs = append(costs, turnCost(text))
			seqs = append(seqs, seq)
			rep.Turns++
		}
	}
	if err := sys.Drain(ctx); err != nil {
		return fmt.Errorf("drain background work: %w", err)
	}
	rep.Conversations++
	index := newBM25(texts)

	for qi, qa := range conv.QA {
		var ev []int64
		for _, id := range qa.Evidence {
			if s, ok := seqOf[id]; ok {
				ev = append(ev, s)
			}
		}
		if len(ev) == 0 {
			rep.Skipped++
			continue
		}
		if qa.Category == 5 {
			rep.Questions5++
		} else {
			rep.Questions14++
		}
		for _, b := range o.Budgets {
			budget := b
			res, err := sys.Service.Context(ctx, tenant, engine.ContextInput{ChatID: chatID, Query: qa.Question, BudgetTokens: &budget, Strategy: o.Strategy})
			if err != nil {
				return fmt.Errorf("question %d: %w", qi, err)
			}
			shown := map[int64]bool{}
			for _, r := range res.Sections.RAG {
				if r.ChatID == "" {
					shown[r.Seq] = true
				}
			}
			for _, t := range res.Sections.Recent {
				shown[t.Seq] = true
			}
			for _, d := range res.Degraded {
				rep.Degraded[d]++
			}
			answer := contentWords(qa.Answer)
			cell := rep.Cells[sysContextd][b]
			cell.add(qa.Category, recall(ev, shown), res.Usage.TotalTokens, answer, res.Context)
			cell.retrieval = append(cell.retrieval, res.RetrievalTime)
			cell.assembly = append(cell.assembly, res.AssemblyTime)

			for name, p := range map[string]packed{sysRecency: recency(costs, b), sysBM25: bm25Fill(index, costs, qa.Question, b),
				sysBM25Dated: bm25FillDated(index, costs, dates, qa.Question, b)} {
				in := map[int64]bool{}
				for _, i := range p.turns {
					in[seqs[i]] = true
				}
				text := packedText(p, texts, dates, name == sysBM25Dated)
				rep.Cells[name][b].add(qa.Category, recall(ev, in), p.tokens, answer, text)
			}
		}
	}
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "eval: %s done (%d turns, %d questions)\n", conv.SampleID, len(texts), len(conv.QA))
	}
	return nil
}

func recall(ev []int64, shown map[int64]bool) float64 {
	hit := 0
	for _, s := range ev {
		if shown[s] {
			hit++
		}
	}
	return float64(hit) / float64(len(ev))
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

// Recall14 is a system's mean evidence recall on categories 1-4.
func (r *Report) Recall14(system string, budget int) float64 {
	return mean(r.Cells[system][budget].recall14)
}

// Write prints the report as a markdown table.
func (r *Report) Write(w io.Writer) {
	fmt.Fprintf(w, "LoCoMo evidence recall: %d conversations, %d turns, %d questions (cat 1-4) + %d (cat 5), %d skipped (no evidence)\n\n",
		r.Conversations, r.Turns, r.Questions14, r.Questions5, r.Skipped)
	fmt.Fprintln(w, "| budget | system | recall 1-4 | all-evidence 1-4 | recall 5 | tokens used | retrieval p50/p95 | assembly p50/p95 |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|")
	for _, b := range r.Budgets {
		for _, s := range systems {
			c := r.Cells[s][b]
			times := "–"
			asm := "–"
			if s == sysContextd {
				times = fmt.Sprintf("%s / %s", fmtDur(percentile(c.retrieval, .5)), fmtDur(percentile(c.retrieval, .95)))
				asm = fmt.Sprintf("%s / %s", fmtDur(percentile(c.assembly, .5)), fmtDur(percentile(c.assembly, .95)))
			}
			all := 0.0
			if len(c.recall14) > 0 {
				all = float64(c.allHit14) / float64(len(c.recall14))
			}
			fmt.Fprintf(w, "| %d | %s | %.3f | %.3f | %.3f | %.0f | %s | %s |\n", b, s, mean(c.recall14), all, mean(c.recall5), meanInt(c.tokens), times, asm)
		}
	}
	if len(r.Degraded) > 0 {
		fmt.Fprintf(w, "\ndegraded answers (fallbacks taken): %v\n", r.Degraded)
	}
	var verdict []string
	for _, b := range r.Budgets {
		d := r.Recall14(sysContextd, b) - r.Recall14(sysBM25, b)
		verdict = append(verdict, fmt.Sprintf("%d: %+.3f", b, d))
	}
	fmt.Fprintf(w, "\ncontextd minus bm25-fill (recall 1-4) by budget: %s\n", strings.Join(verdict, ", "))
	r.writeCategories(w)
}

// writeCategories prints recall and answer-token containment per category
// (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop) and for 1-4.
func (r *Report) writeCategories(w io.Writer) {
	fmt.Fprintln(w, "\nBy category: evidence recall | answer-token containment (share of the gold answer's content words anywhere in the context text)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| budget | system | recall 1 | 2 | 3 | 4 | 1-4 | containment 1 | 2 | 3 | 4 | 1-4 |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, b := range r.Budgets {
		for _, s := range systems {
			c := r.Cells[s][b]
			fmt.Fprintf(w, "| %d | %s | %s | %s |\n", b, s, catRow(c.byCat), catRow(c.contain))
		}
	}
	var verdict []string
	for _, b := range r.Budgets {
		d := r.Containment14(sysContextd, b) - r.Containment14(sysBM25Dated, b)
		verdict = append(verdict, fmt.Sprintf("%d: %+.3f", b, d))
	}
	fmt.Fprintf(w, "\ncontextd minus bm25-fill+dates (containment 1-4) by budget: %s\n", strings.Join(verdict, ", "))
}

func catRow(m map[int][]float64) string {
	var all []float64
	cells := make([]string, 0, 5)
	for cat := 1; cat <= 4; cat++ {
		cells = append(cells, fmt.Sprintf("%.3f", mean(m[cat])))
		all = append(all, m[cat]...)
	}
	return strings.Join(append(cells, fmt.Sprintf("%.3f", mean(all))), " | ")
}

// Containment14 is a system's mean answer-token containment on categories 1-4.
func (r *Report) Containment14(system string, budget int) float64 {
	var all []float64
	for cat := 1; cat <= 4; cat++ {
		all = append(all, r.Cells[system][budget].contain[cat]...)
	}
	return mean(all)
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d.Nanoseconds())/1e3)
	default:
		return fmt.Sprintf("%.2fms", float64(d.Nanoseconds())/1e6)
	}
}
