package eval

import (
	"bytes"
	"strings"
	"testing"

	"github.com/contextd/contextd/engine"
)

// Each evidence message lands in the first place it was lost: packed,
// offered in one of the packer's forms and not packed, or never offered
// (then bucketed by its rank in the deep retrieval).
func TestDiagnoseLosses(t *testing.T) {
	in := &ingested{bySeq: map[int64]int{}}
	for i := range 7 {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		in.kept = append(in.kept, sampleTurn{id: "m", role: role})
		in.bySeq[int64(i+1)] = i
	}
	res := &engine.ContextResult{Offered: engine.Offered{
		RAG: []engine.RAGTurn{
			{Seq: 1, Tokens: 30},                 // packed hit, rank 1
			{Seq: 2, Tokens: 200},                // hit not packed, rank 2
			{Seq: 3, Neighbor: true, Tokens: 20}, // neighbour not packed
			{Seq: 9, Fact: &engine.FactRef{Seqs: []int64{4}}},
			{ChatID: "other", Seq: 5}, // another chat's seq 5 is not this chat's
		},
		Verbatim: []engine.Turn{{Seq: 6}},
	}}
	res.Sections.RAG = []engine.RAGTurn{{Seq: 1, Tokens: 30}}
	s := newLossStats()
	ev := []int{0, 1, 2, 3, 4, 5, 6} // seqs 1..7
	s.diagnose(res, "ie", ev, map[int]bool{0: true}, in, map[int64]int{5: 150})
	want := map[string]int{lossPacked: 1, lossHit: 1, lossNeighbor: 1, lossFact: 1, lossVerbatim: 1, lossNotOffered: 2}
	for o, n := range want {
		if s.n[o] != n {
			t.Errorf("%s: %d, want %d (all: %v)", o, s.n[o], n, s.n)
		}
	}
	if nr := s.depth[lossNotOffered]; nr[200] != 1 || nr[0] != 1 {
		t.Errorf("depth buckets %v, want seq 5 at <=200 and seq 7 beyond", s.depth)
	}
	if got := s.byRole["assistant"][lossHit]; got != 1 {
		t.Errorf("assistant hits not packed: %d, want 1", got)
	}
	if median(s.lostRank) != 3 || median(s.packedRank) != 1 || s.hitTokens != 30 {
		t.Errorf("lost ranks %v, packed ranks %v, hit tokens %d", s.lostRank, s.packedRank, s.hitTokens)
	}
	r := &Report{Budgets: []int{2000}, Losses: map[int]*LossStats{2000: s}}
	var b bytes.Buffer
	r.writeLosses(&b)
	if !strings.Contains(b.String(), "| 2000 | 7 | 0.143 |") {
		t.Errorf("report:\n%s", b.String())
	}
}
