package main

import (
	"context"
	"strings"
	"testing"

	"github.com/contextd/contextd/cmd/contextd/internal/eval"
	"github.com/contextd/contextd/config"
)

// Retrieval alone on the synthetic LoCoMo: each question names its planted
// turn's topic, so the sparse side and the fusion rank it first; recall
// never falls with depth; the report has a row per side.
func TestEvalRetrievalAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	convs, err := eval.LoadLoCoMo(syntheticLoCoMo(t))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := eval.RetrievalLoCoMo(context.Background(), convs, evalSystem(config.Default()), eval.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Questions != 4 {
		t.Fatalf("questions = %d, want the 4 planted ones", rep.Questions)
	}
	for _, side := range []string{eval.SideSparse, eval.SideFused} {
		if at5 := rep.Recall[side][0] / float64(rep.Questions); at5 != 1 {
			t.Errorf("%s recall@5 = %.3f, want 1 (the question names the turn's topic)", side, at5)
		}
	}
	for side, sums := range rep.Recall {
		for i := 1; i < len(sums); i++ {
			if sums[i] < sums[i-1] {
				t.Errorf("%s: recall falls with depth: %v", side, sums)
			}
		}
	}
	var out strings.Builder
	rep.Write(&out)
	for _, want := range []string{"| dense |", "| sparse |", "| fused |", "| fused, no threshold |", "@200"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
