package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Probe ranks a chat's turns for a query by one side of the hybrid search
// (SideDense, SideSparse, SideFused or SideFusedAll): up to k turn seqs,
// best first, a passage counting for its turn. It measures retrieval alone,
// before any packing under a budget.
type Probe func(ctx context.Context, chat, query string, k int, side string) ([]int64, error)

// The sides a Probe ranks by.
const (
	SideDense  = "dense"  // the embedder alone, every candidate
	SideSparse = "sparse" // BM25 alone
	// SideFused is the hybrid query as /v1/context runs it: dense
	// candidates below the agent's rag_similarity_threshold dropped.
	SideFused = "fused"
	// SideFusedAll fuses with every dense candidate (no threshold).
	SideFusedAll = "fused, no threshold"
)

// RecallKs are the depths RunRetrieval reports evidence recall at.
var RecallKs = []int{5, 10, 20, 50, 100, 200}

var probeSides = []string{SideDense, SideSparse, SideFused, SideFusedAll}

// RetrievalReport is evidence recall@k of the retriever's ranked turns,
// per side, over the headline questions.
type RetrievalReport struct {
	Dataset       string
	Conversations int
	Questions     int
	// Recall[side][i] sums the recall at RecallKs[i] over the questions.
	Recall map[string][]float64
}

// RetrievalBEAM measures retrieval alone on BEAM chats.
func RetrievalBEAM(ctx context.Context, chats []BEAMChat, newSystem NewSystem, o Options) (*RetrievalReport, error) {
	return runRetrieval(ctx, beamDataset, beamSamples(chats), newSystem, o)
}

// RetrievalLoCoMo measures retrieval alone on LoCoMo conversations
// (categories 1-4, as the headline figures).
func RetrievalLoCoMo(ctx context.Context, convs []Conversation, newSystem NewSystem, o Options) (*RetrievalReport, error) {
	samples := make([]*sample, 0, len(convs))
	for _, c := range convs {
		samples = append(samples, locomoSample(c, false))
	}
	return runRetrieval(ctx, locomoDataset, samples, newSystem, o)
}

func runRetrieval(ctx context.Context, d dataset, samples []*sample, newSystem NewSystem, o Options) (*RetrievalReport, error) {
	rep := &RetrievalReport{Dataset: d.name, Recall: map[string][]float64{}}
	for _, side := range probeSides {
		rep.Recall[side] = make([]float64, len(RecallKs))
	}
	for i, s := range samples {
		if err := rep.sample(ctx, d, i, s, newSystem, o); err != nil {
			return nil, fmt.Errorf("%s: %w", s.id, err)
		}
	}
	return rep, nil
}

func (r *RetrievalReport) sample(ctx context.Context, d dataset, i int, s *sample, newSystem NewSystem, o Options) error {
	sys, err := newSystem(ctx, Spec{Dir: fmt.Sprintf("%s/conv-%d", o.TempDir, i)})
	if err != nil {
		return err
	}
	defer sys.Close()
	if sys.Probe == nil {
		return errors.New("the system has no retrieval probe")
	}
	in, err := ingest(ctx, sys, s, nil)
	if err != nil {
		return err
	}
	if err := sys.Drain(ctx); err != nil {
		return fmt.Errorf("drain background work: %w", err)
	}
	r.Conversations++
	depth := RecallKs[len(RecallKs)-1]
	for _, q := range s.questions {
		ev := map[int]bool{}
		for _, id := range q.evidence {
			if k, ok := in.index[id]; ok {
				ev[k] = true
			}
		}
		if len(ev) == 0 || !d.headline(q.cat) {
			continue
		}
		r.Questions++
		for _, side := range probeSides {
			seqs, err := sys.Probe(ctx, s.id, q.text, depth, side)
			if err != nil {
				return fmt.Errorf("probe %s: %w", side, err)
			}
			for ki, k := range RecallKs {
				r.Recall[side][ki] += recallAt(seqs, k, ev, in.bySeq)
			}
		}
	}
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "eval: %s done (%d turns, %d questions)\n", s.id, len(in.kept), len(s.questions))
	}
	return nil
}

// recallAt is the share of the evidence turns among the first k ranked seqs.
func recallAt(seqs []int64, k int, ev map[int]bool, bySeq map[int64]int) float64 {
	hit := map[int]bool{}
	for _, s := range seqs[:min(k, len(seqs))] {
		if t, ok := bySeq[s]; ok && ev[t] {
			hit[t] = true
		}
	}
	return float64(len(hit)) / float64(len(ev))
}

// Write prints the recall@k table.
func (r *RetrievalReport) Write(w io.Writer) {
	fmt.Fprintf(w, "%s retrieval alone: %d conversations, %d questions (evidence recall@k of the ranked turns)\n\n",
		r.Dataset, r.Conversations, r.Questions)
	head := []string{"| side |"}
	for _, k := range RecallKs {
		head = append(head, fmt.Sprintf(" @%d |", k))
	}
	fmt.Fprintln(w, strings.Join(head, ""))
	fmt.Fprintln(w, "|---|"+strings.Repeat("---|", len(RecallKs)))
	for _, side := range probeSides {
		row := []string{"| " + side + " |"}
		for ki := range RecallKs {
			v := 0.0
			if r.Questions > 0 {
				v = r.Recall[side][ki] / float64(r.Questions)
			}
			row = append(row, fmt.Sprintf(" %.3f |", v))
		}
		fmt.Fprintln(w, strings.Join(row, ""))
	}
}
