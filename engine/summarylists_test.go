package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/contextd/contextd/memory"
)

// The summary in an answer's sections has its lists as [], never null,
// as GET …/summary shows them (docs/openapi.yaml's Summary): whether the
// stored summary left them unset or trimming emptied them.
func TestSectionsSummaryListsAreNeverNull(t *testing.T) {
	sparse := &memory.Summary{Narrative: "We planned the trip to Lisbon and booked the train.", CoveredFromSeq: 1, CoveredToSeq: 20}
	for _, budget := range []int{60, 4000} {
		a := Assemble(AssemblyInput{Budget: budget, Strategy: StrategyRunningSummary, Summary: sparse, Verbatim: turns(21, 24, 5), MustKeepFrom: 21})
		if a.Sections.Summary == nil {
			t.Fatalf("budget %d: no summary shown", budget)
		}
		raw, _ := json.Marshal(a.Sections.Summary)
		if strings.Contains(string(raw), "null") {
			t.Errorf("budget %d: %s", budget, raw)
		}
	}
	if sparse.Topics != nil {
		t.Error("the input summary was changed")
	}
}
