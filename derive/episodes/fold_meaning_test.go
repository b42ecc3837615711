package episodes

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/contextd/contextd/derive/extractive"
	"github.com/contextd/contextd/memory"
)

// TestFoldOfExtractiveGists folds the extractive summaries of episodes
// between two named people under a tight cap: the root's narrative names
// the speakers without raw role labels, piles up no ellipses and cuts no
// word.
func TestFoldOfExtractiveGists(t *testing.T) {
	var root memory.Summary
	src := map[string]bool{}
	for ep := 0; ep < 10; ep++ {
		var turns []memory.Message
		for i := 0; i < 6; i++ {
			who, role := "Joanna", memory.RoleUser
			if i%2 == 1 {
				who, role = "Nate", memory.RoleAssistant
			}
			text := fmt.Sprintf("%s: I spent week %d restoring the old sailing boat in the harbour with my cousin, and the varnish finally dried after many long afternoons of careful sanding...", who, ep)
			for _, w := range strings.Fields(strings.ToLower(text)) {
				src[strings.Trim(w, ",.:…")] = true
			}
			turns = append(turns, memory.Message{Seq: int64(ep*6 + i + 1), Role: role, Content: text})
		}
		res, err := extractive.New().SummarizeEpisode(context.Background(), memory.EpisodeRequest{Turns: turns})
		if err != nil {
			t.Fatal(err)
		}
		root = Fold(root, res.Summary, res.Short, 150)
	}
	n := root.Narrative
	for _, bad := range []string{"User:", "Assistant:", "Joanna:", "Nate:", "……", "..."} {
		if strings.Contains(n, bad) {
			t.Errorf("narrative holds %q: %q", bad, n)
		}
	}
	if !strings.Contains(n, "Joanna") && !strings.Contains(n, "Nate") {
		t.Errorf("narrative names nobody: %q", n)
	}
	for _, w := range strings.Fields(strings.ToLower(n)) {
		w = strings.Trim(w, `,.:…"!?`)
		switch w {
		case "", "said", "their", "has", "spends", "joanna", "nate", "joanna's", "nate's":
			continue
		}
		if !src[w] {
			t.Errorf("word %q of the narrative is not a word of the turns (a cut?): %q", w, n)
		}
	}
}
