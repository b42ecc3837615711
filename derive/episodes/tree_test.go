package episodes

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// TestFoldDrift is the summary drift test: the root is capped, an item
// the conversation keeps coming back to (the Lisbon move, first mentioned
// in episode 1) stays in it, while items mentioned once, even later than
// Lisbon's first mention, are trimmed first — and each trimmed item still
// lives in the episode that mentioned it.
func TestFoldDrift(t *testing.T) {
	const maxTokens = 220
	var root memory.Summary
	var children []memory.Summary
	for i := 0; i < 40; i++ {
		child := memory.Summary{
			Topics:    []string{fmt.Sprintf("one-off subject %d", i)},
			Entities:  []memory.Entity{{Name: fmt.Sprintf("Person%d", i), Type: "person"}},
			Decisions: []string{fmt.Sprintf("decision number %d was taken", i)},
			Narrative: fmt.Sprintf("Episode %d went on.", i),
		}
		if i%3 == 1 { // the conversation returns to Lisbon every third episode
			child.Topics = append(child.Topics, "Lisbon move")
			child.Entities = append(child.Entities, memory.Entity{Name: "Lisbon", Type: "place", Details: "where the user moves"})
		}
		children = append(children, child)
		root = Fold(root, child, "", maxTokens)
		if tk := tokens.Summary(root); tk > maxTokens {
			t.Fatalf("after episode %d the root has %d tokens, cap %d", i, tk, maxTokens)
		}
	}
	if !slices.Contains(root.Topics, "Lisbon move") || !slices.ContainsFunc(root.Entities, func(e memory.Entity) bool { return e.Name == "Lisbon" }) {
		t.Errorf("the recurring item was trimmed: topics %v entities %v", root.Topics, root.Entities)
	}
	// Topic 2 was first mentioned after Lisbon but never again: it goes
	// (trimming by first mention would have dropped Lisbon before it).
	for _, gone := range []string{"one-off subject 2", "one-off subject 20"} {
		if slices.Contains(root.Topics, gone) {
			t.Errorf("%q is still in the root: %v", gone, root.Topics)
		}
	}
	if !slices.Contains(root.Topics, "one-off subject 39") {
		t.Errorf("the newest item is missing: %v", root.Topics)
	}
	// Nothing leaves memory: every topic trimmed from the root is in a child.
	for i, c := range children {
		for _, tp := range c.Topics {
			if !slices.Contains(root.Topics, tp) && !strings.HasPrefix(tp, "one-off subject") {
				t.Errorf("child %d topic %q lost", i, tp)
			}
		}
	}
	// The narrative tells the whole chat coarse to fine: how it began, a
	// few of the older gists, and the newest ones all.
	older := 0
	for i := 2; i < 30; i++ {
		if strings.Contains(root.Narrative, fmt.Sprintf("Episode %d ", i)) {
			older++
		}
	}
	if !strings.HasPrefix(root.Narrative, "Episode 0 ") || !strings.HasSuffix(root.Narrative, "Episode 39 went on.") ||
		!strings.Contains(root.Narrative, "Episode 38 ") || older == 0 || older > 6 {
		t.Errorf("narrative is not coarse to fine: %q", root.Narrative)
	}
}

// TestFoldNoRepeatedSentence: gists that repeat one another (a small
// model's, word for word) are folded without saying a sentence twice.
func TestFoldNoRepeatedSentence(t *testing.T) {
	gists := []string{
		"The crew talked about lockers and shifts.",
		"The crew talked about lockers and shifts. Dana asked for the night shift.",
		"The crew talked about lockers and shifts. Omar fixed the rota.",
	}
	var root memory.Summary
	for i := 0; i < 14; i++ {
		root = Fold(root, memory.Summary{Narrative: gists[i%3]}, gists[i%3], 800)
	}
	// Each sentence once (a sentence said again moves to its newest place).
	for _, sent := range []string{"The crew talked about lockers and shifts.", "Dana asked for the night shift.", "Omar fixed the rota."} {
		if n := strings.Count(root.Narrative, sent); n != 1 {
			t.Errorf("%q told %d times in %q", sent, n, root.Narrative)
		}
	}
}
