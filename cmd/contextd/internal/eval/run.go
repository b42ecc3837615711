package eval

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/contextd/contextd/engine"
)

// System is a fresh contextd for one conversation: the service, and Drain,
// which finishes the background work (indexing, summaries, episodes, the
// profile) a running server would have done by the time the question is
// asked.
type System struct {
	Service *engine.Service
	Drain   func(ctx context.Context) error
	Close   func()
	// Probe ranks turns by retrieval alone (RetrievalBEAM,
	// RetrievalLoCoMo); nil when the system has no index.
	Probe Probe
	// Retriever is the service's retrieval, for the loss breakdown's deep
	// retrieval (nil: the system has no index).
	Retriever engine.Retriever
}

// Spec is what a fresh system is built from.
type Spec struct {
	Dir string
	// LLMBaseURL, when set, is the OpenAI-compatible endpoint the system
	// summarises with (the replay LLM; model "replay"); "" = no LLM.
	LLMBaseURL string
}

// NewSystem builds a System.
type NewSystem func(ctx context.Context, spec Spec) (*System, error)

// Options configure a run.
type Options struct {
	Budgets  []int
	Strategy string // default rag_augmented
	TempDir  string
	Progress io.Writer // nil: quiet
	// Replay summarises with the replay LLM (LoCoMo only) and adds the
	// BM25 fill over turns and observations.
	Replay bool
	// Sections reads an answer's sections (nil: DefaultSections).
	Sections Sectioner
	// PassageTokens sizes the passages of BEAM's passage baseline (0:
	// DefaultPassageTokens).
	PassageTokens int
	// Diagnose adds the loss breakdown: where each evidence message was
	// lost first (never retrieved, retrieved and not packed, packed).
	Diagnose bool
}

// System names in reports.
const (
	sysContextd    = "contextd"
	sysRecency     = "recency"
	sysBM25        = "bm25-fill"
	sysBM25Dated   = "bm25-fill+dates"
	sysBM25Obs     = "bm25-fill+obs+dates"
	sysBM25Passage = "bm25-passages"
)

// sample is one conversation, whatever the dataset.
type sample struct {
	id        string
	turns     []sampleTurn
	questions []sampleQuestion
	obs       []Observation  // evidence by turn id (LoCoMo)
	newReplay func() *Replay // nil: no LLM
}

type sampleTurn struct {
	id, role, text string
	at             time.Time
}

type sampleQuestion struct {
	text, answer string
	evidence     []string // turn ids
	cat          string
}

// baseline is one LLM-free system: a corpus packed by BM25 or recency.
type baseline struct {
	name   string
	corpus *corpus
	dated  bool
	recent bool
}

// dataset is how a benchmark's samples are run and reported.
type dataset struct {
	name      string
	cats      []string // category columns, in order
	headline  func(cat string) bool
	label     string // the headline categories' label ("1-4", "all")
	aside     string // the other categories' label ("5"; "" = none)
	baselines func(s *sample, kept []sampleTurn, o Options) []baseline
}

// ingested is what the harness knows of a sample once contextd holds it.
type ingested struct {
	kept   []sampleTurn   // the turns stored (a repeated id is stored once)
	index  map[string]int // turn id → kept index
	bySeq  map[int64]int  // seq → kept index
	obsFor map[int][]string
	probes map[int]probe // the text rule's probes, made as asked (shown.go)
}

func run(ctx context.Context, d dataset, samples []*sample, newSystem NewSystem, o Options) (*Report, error) {
	if o.Strategy == "" {
		o.Strategy = string(engine.StrategyRAG)
	}
	if o.Sections == nil {
		o.Sections = DefaultSections
	}
	rep := newReport(d, o)
	for i, s := range samples {
		if err := runSample(ctx, d, i, s, newSystem, o, rep); err != nil {
			return nil, fmt.Errorf("%s: %w", s.id, err)
		}
	}
	return rep, nil
}

func runSample(ctx context.Context, d dataset, i int, s *sample, newSystem NewSystem, o Options, rep *Report) error {
	spec := Spec{Dir: fmt.Sprintf("%s/conv-%d", o.TempDir, i)}
	var replay *Replay
	if s.newReplay != nil {
		replay = s.newReplay()
		defer replay.Close()
		spec.LLMBaseURL = replay.URL()
	}
	sys, err := newSystem(ctx, spec)
	if err != nil {
		return err
	}
	defer sys.Close()
	in, err := ingest(ctx, sys, s, replay)
	if err != nil {
		return err
	}
	if err := sys.Drain(ctx); err != nil {
		return fmt.Errorf("drain background work: %w", err)
	}
	rep.Conversations++
	rep.Turns += len(in.kept)
	if replay != nil {
		rep.addCost(replay.Cost())
	}
	bases := d.baselines(s, in.kept, o)
	for qi, q := range s.questions {
		var ev []int
		for _, id := range q.evidence {
			if k, ok := in.index[id]; ok {
				ev = append(ev, k)
			}
		}
		if len(ev) == 0 {
			rep.Skipped++
			continue
		}
		if err := rep.ask(ctx, sys, s.id, q, ev, in, bases, o); err != nil {
			return fmt.Errorf("question %d: %w", qi, err)
		}
	}
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "eval: %s done (%d turns, %d questions)\n", s.id, len(in.kept), len(s.questions))
	}
	return nil
}

// ingest appends the turns in order, one by one, through the service's
// append path, and tells the replay LLM which seq each got.
func ingest(ctx context.Context, sys *System, s *sample, replay *Replay) (*ingested, error) {
	in := &ingested{index: map[string]int{}, bySeq: map[int64]int{}, obsFor: map[int][]string{}}
	for _, t := range s.turns {
		when := t.at
		out, err := sys.Service.Append(ctx, "eval", s.id, engine.AppendInput{UserID: "eval-user",
			Messages: []engine.InMessage{{ID: t.id, Role: t.role, Content: t.text, CreatedAt: &when}}})
		if err != nil {
			return nil, fmt.Errorf("append %s: %w", t.id, err)
		}
		if out.Duplicates > 0 {
			continue // a repeated id: already stored once
		}
		seq := out.LastSeq
		if len(out.Messages) == 1 {
			seq = out.Messages[0].Seq
		}
		in.index[t.id] = len(in.kept)
		in.bySeq[seq] = len(in.kept)
		in.kept = append(in.kept, t)
		if replay != nil {
			replay.Register(t.id, seq)
		}
	}
	for _, ob := range s.obs {
		norm := normalise(ob.Text)
		for _, id := range ob.Evidence {
			if k, ok := in.index[id]; ok {
				in.obsFor[k] = append(in.obsFor[k], norm)
			}
		}
	}
	return in, nil
}

// reached marks the evidence turns shown (by the text rule), cited, or
// cited by an observation whose text the context holds.
func (in *ingested) reached(ev []int, shown map[int]bool, text string) map[int]bool {
	out := map[int]bool{}
	norm := ""
	for _, e := range ev {
		if shown[e] {
			out[e] = true
			continue
		}
		for _, ob := range in.obsFor[e] {
			if norm == "" {
				norm = normalise(text)
			}
			if strings.Contains(norm, ob) {
				out[e] = true
				break
			}
		}
	}
	return out
}

// ask puts one question to contextd and the baselines at every budget.
func (r *Report) ask(ctx context.Context, sys *System, chat string, q sampleQuestion, ev []int, in *ingested, bases []baseline, o Options) error {
	head := r.headline(q.cat)
	if head {
		r.Questions++
	} else {
		r.QuestionsAside++
	}
	answer := contentWords(q.answer)
	var deep map[int64]int // the deep retrieval's ranks, when diagnosing
	for _, b := range o.Budgets {
		budget := b
		res, err := sys.Service.Context(ctx, "eval", engine.ContextInput{ChatID: chat, Query: q.text, BudgetTokens: &budget, Strategy: o.Strategy})
		if err != nil {
			return err
		}
		for _, d := range res.Degraded {
			r.Degraded[d]++
		}
		views := o.Sections(res)
		listed, cited := map[int]bool{}, map[int]bool{}
		for _, v := range views {
			for _, s := range v.Turns {
				if k, ok := in.bySeq[s]; ok {
					listed[k] = true
				}
			}
			for _, s := range v.Cites {
				if k, ok := in.bySeq[s]; ok {
					cited[k] = true
				}
			}
		}
		shown := in.shown(res.Context, ev)
		reach := in.reached(ev, union(shown, cited), res.Context)
		cell := r.Cells[sysContextd][b]
		cell.add(q.cat, head, outcome{share(ev, shown), share(ev, listed), share(ev, reach), res.Usage.TotalTokens}, answer, res.Context)
		cell.retrieval = append(cell.retrieval, res.RetrievalTime)
		cell.assembly = append(cell.assembly, res.AssemblyTime)
		r.Sections[b].add(views, ev, in)
		if l := r.Losses[b]; l != nil {
			if deep == nil {
				if deep, err = deepRanks(ctx, sys, chat, q.text, res.Offered); err != nil {
					return err
				}
			}
			l.diagnose(res, q.cat, ev, reach, in, deep)
		}

		for _, base := range bases {
			var p packed
			switch {
			case base.recent:
				p = recency(base.corpus.costs, b)
			case base.dated:
				p = bm25FillDated(base.corpus.index, base.corpus.costs, base.corpus.dates, q.text, b)
			default:
				p = bm25Fill(base.corpus.index, base.corpus.costs, q.text, b)
			}
			text := packedText(p, base.corpus.lines, base.corpus.dates, base.dated)
			listed := map[int]bool{}
			for _, i := range p.turns {
				if t := base.corpus.turnOf[i]; t >= 0 {
					listed[t] = true
				}
			}
			bshown := in.shown(text, ev)
			breach := in.reached(ev, bshown, text)
			r.Cells[base.name][b].add(q.cat, head, outcome{share(ev, bshown), share(ev, listed), share(ev, breach), p.tokens}, answer, text)
		}
	}
	return nil
}

func union(a, b map[int]bool) map[int]bool {
	out := make(map[int]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// share is the share of the evidence turns in set.
func share(ev []int, set map[int]bool) float64 {
	hit := 0
	for _, e := range ev {
		if set[e] {
			hit++
		}
	}
	return float64(hit) / float64(len(ev))
}

// recall is share over seqs (kept for callers that work in seqs).
func recall(ev []int64, shown map[int64]bool) float64 {
	hit := 0
	for _, s := range ev {
		if shown[s] {
			hit++
		}
	}
	return float64(hit) / float64(len(ev))
}
