package eval

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// The loss breakdown (Options.Diagnose, `contextd eval beam --diagnose`):
// for every evidence message of every question at every budget, where it
// was lost first — never among the candidates retrieval offered the packer
// (retrieval's fault), offered and not packed (packing's fault), or packed.
// A message never offered is looked for again in a deep retrieval
// (diagnoseDepth hits, no neighbours) to tell at which depth it would have
// come.

// diagnoseDepth is the deep retrieval's size.
const diagnoseDepth = 1000

// depthBuckets bound an evidence message's rank in the deep retrieval.
var depthBuckets = []int{10, 25, 50, 100, 200, 400, 1000}

// Rank classes of the deep-rank table.
var rankClasses = []string{lossPacked, "offered, not packed", lossNotOffered}

// Where an evidence message was lost first.
const (
	lossPacked     = "packed"
	lossHit        = "hit not packed"
	lossNeighbor   = "neighbour not packed"
	lossFact       = "fact not packed"
	lossVerbatim   = "verbatim not packed"
	lossNotOffered = "not retrieved"
)

var lossOutcomes = []string{lossPacked, lossHit, lossNeighbor, lossFact, lossVerbatim, lossNotOffered}

// LossStats is the loss breakdown at one budget.
type LossStats struct {
	n      map[string]int
	byCat  map[string]map[string]int
	byRole map[string]map[string]int
	// depth: by rank class, how many evidence messages ranked in each
	// deep bucket (0: beyond diagnoseDepth).
	depth map[string]map[int]int
	// Of evidence offered as a retrieved turn: its rank among the offered
	// candidates (best first) and its cost, packed or not.
	lostRank, lostCost, packedRank, packedCost []int
	// Tokens of the packed RAG turns: hits (whole), hits shown by a
	// passage, neighbours.
	hitTokens, passageTokens, neighborTokens int
	ragPacked, offered                       int
	questions                                int
}

func newLossStats() *LossStats {
	return &LossStats{n: map[string]int{}, byCat: map[string]map[string]int{}, byRole: map[string]map[string]int{}, depth: map[string]map[int]int{}}
}

func (s *LossStats) count(cat, role, outcome string) {
	s.n[outcome]++
	for _, m := range []struct {
		by  map[string]map[string]int
		key string
	}{{s.byCat, cat}, {s.byRole, role}} {
		if m.by[m.key] == nil {
			m.by[m.key] = map[string]int{}
		}
		m.by[m.key][outcome]++
	}
}

// deepRanks ranks, for each evidence seq, the first hit of a deep
// retrieval that shows or cites it (1-based; absent: not found). The
// recent window (the offered verbatim turns) is excluded as the engine
// excludes it.
func deepRanks(ctx context.Context, sys *System, chat, query string, offered engine.Offered) (map[int64]int, error) {
	if sys.Retriever == nil {
		return nil, nil
	}
	var from int64
	for _, t := range offered.Verbatim {
		if from == 0 || t.Seq < from {
			from = t.Seq
		}
	}
	hits, err := sys.Retriever.Retrieve(ctx, rag.Request{Tenant: "eval", ChatID: chat, UserID: "eval-user", Query: query,
		K: diagnoseDepth, Scope: rag.ScopeChat, ExcludeFromSeq: from})
	if err != nil {
		return nil, fmt.Errorf("deep retrieval: %w", err)
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	out := map[int64]int{}
	for i, h := range hits {
		seqs := []int64{h.Seq}
		switch h.Kind {
		case memory.KindFact:
			seqs = h.Fact.Seqs
		case memory.KindEpisode:
			seqs = nil
		}
		for _, s := range seqs {
			if _, ok := out[s]; !ok {
				out[s] = i + 1
			}
		}
	}
	return out, nil
}

// diagnose records where each evidence message of one answer was lost.
func (s *LossStats) diagnose(res *engine.ContextResult, cat string, ev []int, reach map[int]bool, in *ingested, deep map[int64]int) {
	s.questions++
	s.offered += len(res.Offered.RAG)
	s.ragPacked += len(res.Sections.RAG) + len(res.Sections.Facts) + len(res.Sections.Episodes)
	for _, r := range res.Sections.RAG {
		switch {
		case r.Neighbor:
			s.neighborTokens += r.Tokens
		case len(r.Passages) > 0:
			s.passageTokens += r.Tokens
		default:
			s.hitTokens += r.Tokens
		}
	}
	seqOf := map[int]int64{}
	for seq, k := range in.bySeq {
		seqOf[k] = seq
	}
	// Every candidate with the cost it would have shown at (the packer
	// cuts a retrieved turn only when it may show it).
	offered := engine.Offered{RAG: res.Offered.ShapedRAG(), Verbatim: res.Offered.Verbatim}
	for _, e := range ev {
		seq := seqOf[e]
		outcome, rank, cost := offeredAs(offered, seq)
		if reach[e] {
			if rank > 0 {
				s.packedRank, s.packedCost = append(s.packedRank, rank), append(s.packedCost, cost)
			}
			outcome = lossPacked
		} else if outcome == lossHit || outcome == lossNeighbor {
			s.lostRank, s.lostCost = append(s.lostRank, rank), append(s.lostCost, cost)
		}
		class := rankClasses[1]
		if outcome == lossPacked || outcome == lossNotOffered {
			class = outcome
		}
		if s.depth[class] == nil {
			s.depth[class] = map[int]int{}
		}
		s.depth[class][depthBucket(deep[seq])]++
		s.count(cat, in.kept[e].role, outcome)
	}
}

// offeredAs is how seq was offered: as a retrieved turn (its rank, best
// first, and cost), a neighbour, a fact citing it, a verbatim turn, or
// not at all.
func offeredAs(o engine.Offered, seq int64) (string, int, int) {
	fact := false
	for i, r := range o.RAG {
		switch {
		case r.ChatID != "":
		case r.Fact != nil:
			for _, s := range r.Fact.Seqs {
				fact = fact || s == seq
			}
		case r.Episode == nil && r.Seq == seq && r.Neighbor:
			return lossNeighbor, i + 1, r.Tokens
		case r.Episode == nil && r.Seq == seq:
			return lossHit, i + 1, r.Tokens
		}
	}
	if fact {
		return lossFact, 0, 0
	}
	for _, t := range o.Verbatim {
		if t.Seq == seq {
			return lossVerbatim, 0, 0
		}
	}
	return lossNotOffered, 0, 0
}

func depthBucket(rank int) int {
	for _, b := range depthBuckets {
		if rank > 0 && rank <= b {
			return b
		}
	}
	return 0
}

// writeLosses prints the loss breakdown.
func (r *Report) writeLosses(w io.Writer) {
	if len(r.Losses) == 0 {
		return
	}
	fmt.Fprintln(w, "\nWhere evidence is lost first (share of evidence messages): packed; offered to the packer and not packed (as a retrieved turn or passage, a neighbour, a fact citing it, a verbatim turn); never retrieved")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| budget | messages | %s |\n|---:|---:|%s\n", strings.Join(lossOutcomes, " | "), strings.Repeat("---:|", len(lossOutcomes)))
	for _, b := range r.Budgets {
		s := r.Losses[b]
		total := 0
		for _, n := range s.n {
			total += n
		}
		fmt.Fprintf(w, "| %d | %d | %s |\n", b, total, shares(s.n, total))
	}
	for _, by := range []struct {
		title string
		of    func(*LossStats) map[string]map[string]int
	}{{"ability", func(s *LossStats) map[string]map[string]int { return s.byCat }}, {"role", func(s *LossStats) map[string]map[string]int { return s.byRole }}} {
		fmt.Fprintf(w, "\nBy %s\n\n| budget | %s | messages | %s |\n|---:|---|---:|%s\n", by.title, by.title, strings.Join(lossOutcomes, " | "), strings.Repeat("---:|", len(lossOutcomes)))
		for _, b := range r.Budgets {
			m := by.of(r.Losses[b])
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				total := 0
				for _, n := range m[k] {
					total += n
				}
				fmt.Fprintf(w, "| %d | %s | %d | %s |\n", b, k, total, shares(m[k], total))
			}
		}
	}
	fmt.Fprintln(w, "\nEvidence messages by their rank in a deep retrieval (1,000 hits, no neighbours; neighbours and facts are not ranked)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| budget | outcome | ≤10 | ≤25 | ≤50 | ≤100 | ≤200 | ≤400 | ≤1000 | deeper |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, b := range r.Budgets {
		for _, c := range rankClasses {
			d := r.Losses[b].depth[c]
			cells := make([]string, 0, len(depthBuckets)+1)
			for _, k := range append(append([]int(nil), depthBuckets...), 0) {
				cells = append(cells, fmt.Sprint(d[k]))
			}
			fmt.Fprintf(w, "| %d | %s | %s |\n", b, c, strings.Join(cells, " | "))
		}
	}
	fmt.Fprintln(w, "\nPer answer: candidates offered, RAG items packed; evidence offered as a retrieved turn: rank among the candidates (best first) and tokens, lost or packed; RAG tokens packed by kind")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| budget | candidates offered | RAG items packed | lost rank p50 | lost tokens p50 | packed rank p50 | packed tokens p50 | whole-turn tokens | passage or snippet tokens | neighbour tokens |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, b := range r.Budgets {
		s := r.Losses[b]
		q := float64(max(s.questions, 1))
		fmt.Fprintf(w, "| %d | %.0f | %.1f | %d | %d | %d | %d | %.0f | %.0f | %.0f |\n", b, float64(s.offered)/q, float64(s.ragPacked)/q,
			median(s.lostRank), median(s.lostCost), median(s.packedRank), median(s.packedCost),
			float64(s.hitTokens)/q, float64(s.passageTokens)/q, float64(s.neighborTokens)/q)
	}
}

func shares(n map[string]int, total int) string {
	cells := make([]string, 0, len(lossOutcomes))
	for _, o := range lossOutcomes {
		cells = append(cells, fmt.Sprintf("%.3f", float64(n[o])/float64(max(total, 1))))
	}
	return strings.Join(cells, " | ")
}

func median(xs []int) int {
	if len(xs) == 0 {
		return 0
	}
	s := append([]int(nil), xs...)
	sort.Ints(s)
	return s[len(s)/2]
}
