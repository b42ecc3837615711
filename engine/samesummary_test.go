package engine

import (
	"testing"

	"github.com/contextd/contextd/memory"
)

// sameSummary says whether the summary shown is the stored one as a
// reader sees it (summary_trimmed is its negation): what RenderSummary
// shows, compared in place.
func TestSameSummary(t *testing.T) {
	base := func() *memory.Summary {
		return &memory.Summary{Topics: []string{"trip"}, Entities: []memory.Entity{{Name: "Porto", Type: "place", Details: "the city"}},
			Decisions: []string{"Book the flat"}, Narrative: "They planned a trip.", CoveredToSeq: 9}
	}
	for _, tc := range []struct {
		name   string
		change func(*memory.Summary)
		same   bool
	}{
		{"unchanged", func(*memory.Summary) {}, true},
		{"an empty list as nil", func(s *memory.Summary) { s.OpenQuestions = []string{} }, true},
		{"bookkeeping only", func(s *memory.Summary) { s.CoveredToSeq, s.Model = 12, "x" }, true},
		{"an item trimmed", func(s *memory.Summary) { s.Decisions = nil }, false},
		{"a detail changed", func(s *memory.Summary) { s.Entities[0].Details = "" }, false},
		{"an entity dropped", func(s *memory.Summary) { s.Entities = nil }, false},
		{"the narrative cut", func(s *memory.Summary) { s.Narrative = "They planned" }, false},
	} {
		s := base()
		tc.change(s)
		if got := sameSummary(s, base()); got != tc.same {
			t.Errorf("%s: sameSummary = %v, want %v", tc.name, got, tc.same)
		}
		if want := RenderSummary(*s) == RenderSummary(*base()); tc.same != want {
			t.Errorf("%s: the table disagrees with RenderSummary", tc.name)
		}
	}
	if sameSummary(nil, base()) || !sameSummary(nil, nil) {
		t.Error("nil summaries")
	}
}
