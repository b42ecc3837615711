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

// A running summary trimmed for a question drops the items least related
// to it first, not the oldest, and keeps the standing instructions longest
// (they govern every answer); what it keeps is shown in its own order.
// Without a question the oldest go first.
func TestSummaryTrimmedForTheQuestion(t *testing.T) {
	sum := &memory.Summary{CoveredFromSeq: 1, CoveredToSeq: 40,
		UserPreferences: []string{
			"Standing instruction: cc bea on every invoice email pls, bea@ledgerlane.co.uk",
			"Dani prefers uk suppliers, soy or rapeseed wax, never paraffin",
			"Dani likes the sea salt candles best for the winter fairs and the spring markets",
			"Dani would rather the shops take the bookings and payments for the workshops",
		},
		Topics: []string{"olive door", "fig cedar", "hollow oak", "sea salt", "wax"},
	}
	budget := 0
	for b := 40; b < 400; b++ { // the smallest budget that trims the preferences
		a := Assemble(AssemblyInput{Budget: b, Strategy: StrategyRunningSummary, Summary: sum, Verbatim: turns(41, 42, 2), MustKeepFrom: 41})
		if a.Sections.Summary != nil && len(a.Sections.Summary.UserPreferences) == 2 {
			budget = b
			break
		}
	}
	if budget == 0 {
		t.Fatal("no budget trims the preferences to two")
	}
	for _, c := range []struct {
		query      string
		want, gone string
	}{
		{"doing an invoice for a new shop, anything i always want on it?", "cc bea", "sea salt candles"},
		{"", "bookings and payments", "cc bea"},
	} {
		a := Assemble(AssemblyInput{Budget: budget, Strategy: StrategyRunningSummary, Query: c.query, Summary: sum, Verbatim: turns(41, 42, 2), MustKeepFrom: 41})
		if !strings.Contains(a.Context, c.want) || strings.Contains(a.Context, c.gone) {
			t.Errorf("query %q at %d tokens: want %q kept and %q trimmed:\n%s", c.query, budget, c.want, c.gone, a.Context)
		}
	}
}
