package extractive

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// techChat is a maths chat whose replies are mostly LaTeX, code and tables.
func techChat() []memory.Message {
	return msgs(1,
		"user", "Can you solve the equation tan 2x = 1 for x in [0, 2π)? I prefer exact answers, not decimals.",
		"assistant", "Sure. Use the identity:\n\\[ \\tan 2x = \\frac{2\\tan x}{1-\\tan^2 x} \\]\nSetting $\\tan 2x = 1$ gives $2x = \\frac{\\pi}{4} + k\\pi$.\n| k | x |\n|---|---|\n| 0 | π/8 |\nThe solutions are $\\frac{\\pi}{8}, \\frac{5\\pi}{8}$.",
		"user", "Great. Now the equation sin x cos x = 1/4, same interval?",
		"assistant", "Write $\\sin x \\cos x = \\frac{1}{2}\\sin 2x$:\n```python\nimport numpy as np\nprint(np.sin(xs)*np.cos(xs))\n```\nThe solution set is $\\frac{\\pi}{12}, \\frac{5\\pi}{12}$.",
		"user", "For the Euler method let's use step size h = 0.5 on y' = -2y.",
		"assistant", "With $h = 0.5$, $y_{n+1} = y_n + h(-2y_n) = 0$, so the solution collapses to zero after one step.",
		"user", "That is unstable. Use h = 0.25 instead. Which step size keeps the method stable?",
	)
}

var markupRe = regexp.MustCompile(`\\[a-z]+|\$|\x60|\|`)

func TestTechnicalChatCarriesMeaning(t *testing.T) {
	s := summarize(t, nil, techChat(), 400)
	for _, bad := range []string{"frac", "sin", "cos", "tan", "pi"} {
		if contains(s.Topics, bad) && !contains(s.Topics, "equation") {
			t.Errorf("markup topic %q in %q", bad, s.Topics)
		}
		for _, tp := range s.Topics {
			if tp == bad {
				t.Errorf("markup topic %q in %q", bad, s.Topics)
			}
		}
	}
	if !contains(s.Topics, "equation") {
		t.Errorf("the user's own words are not the topics: %q", s.Topics)
	}
	if markupRe.MatchString(s.Narrative) || strings.Contains(s.Narrative, "Assistant:") || strings.Contains(s.Narrative, "User:") {
		t.Errorf("narrative holds markup or role labels: %q", s.Narrative)
	}
	for _, e := range s.Entities {
		if markupRe.MatchString(e.Name) || e.Type == TypeAmount {
			t.Errorf("entity %+v", e)
		}
	}
	// The decision list keeps the current value only.
	if !contains(s.Decisions, "h = 0.25") || contains(s.Decisions, "h = 0.5") {
		t.Errorf("decisions %q", s.Decisions)
	}
	if !contains(s.UserPreferences, "prefers exact answers") || !contains(s.OpenQuestions, "Which step size keeps the method stable?") {
		t.Errorf("preferences %q, open questions %q", s.UserPreferences, s.OpenQuestions)
	}
}

// namedChat is a conversation between two people stored as user and
// assistant turns with "Name: " prefixes (the LoCoMo shape).
func namedChat() []memory.Message {
	return msgs(1,
		"user", "Joanna: Hey Nate! Long time no see! How have you been?",
		"assistant", "Nate: Wow, Joanna! I adopted a puppy last week and named him Max. He loves the park near Lake Merritt.",
		"user", "Joanna: Yeah Nate, that's awesome! I finished my screenplay last month and I sent it to a festival in Portland.",
		"assistant", "Nate: Congrats, Joanna! My sister lives in Portland, she could go to the festival with you.",
		"user", "Joanna: I'm vegetarian. Let's meet at the vegan place on Friday. Glad you enjoyed it, Nate!",
	)
}

func TestNamedSpeakersWithoutRoleLabels(t *testing.T) {
	s := summarize(t, nil, namedChat(), 0)
	for _, label := range []string{"User:", "Assistant:", "Nate:", "Joanna:"} {
		if strings.Contains(s.Narrative, label) {
			t.Errorf("narrative has raw label %q: %q", label, s.Narrative)
		}
	}
	if !strings.Contains(s.Narrative, "Nate") && !strings.Contains(s.Narrative, "Joanna") {
		t.Errorf("narrative names nobody: %q", s.Narrative)
	}
	for _, e := range s.Entities {
		switch strings.ToLower(e.Name) {
		case "nate", "joanna", "wow", "yeah nate", "congrats":
			t.Errorf("speaker or greeting as entity: %+v", e)
		}
	}
	if _, ok := entity(s.Entities, "Portland"); !ok {
		t.Errorf("Portland missing from %+v", s.Entities)
	}
	if !contains(s.UserPreferences, "Joanna is vegetarian") || !contains(s.UserPreferences, "Nate's sister lives in Portland") {
		t.Errorf("preferences %q", s.UserPreferences)
	}
	if !contains(s.Decisions, "meet at the vegan place on Friday") {
		t.Errorf("decisions %q", s.Decisions)
	}
}

func TestEpisodeShortNeverEmpty(t *testing.T) {
	cases := []struct {
		name  string
		turns []memory.Message
		want  string
	}{
		{"one small-talk turn", msgs(1, "user", "Audrey: Yup, ttyl!"), `Audrey said: "Yup, ttyl!"`},
		{"code only", msgs(1, "user", "```go\nfunc main() {}\n```", "assistant", "```\nok\n```"), "The user shared code."},
		{"formula only", msgs(1, "assistant", `\[ x^2 \]`), "The assistant shared formulas."},
		{"link only", msgs(1, "user", "https://example.com/a"), "The user shared a link."},
		{"key sentences", namedChat(), "Nate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := New().SummarizeEpisode(context.Background(), memory.EpisodeRequest{Turns: c.turns})
			if err != nil {
				t.Fatal(err)
			}
			if res.Short == "" || !strings.Contains(res.Short, c.want) {
				t.Fatalf("short %q, want %q", res.Short, c.want)
			}
		})
	}
}

func TestTrimmingCutsAtBoundaries(t *testing.T) {
	long := strings.Repeat("The migration of the orders database to the new cluster went smoothly and everyone was relieved afterwards ", 8)
	var prev *memory.Summary
	for i := 0; i < 12; i++ {
		s := summarize(t, prev, msgs(int64(2*i+1), "user", long+"Really.", "assistant", long+"Indeed..."), 80)
		prev = &s
		for _, text := range []string{s.Narrative, s.Short()} {
			if strings.Contains(text, "……") || strings.Contains(text, "...") {
				t.Fatalf("ellipsis pile-up in %q", text)
			}
			if !cutAtWord(text, long) {
				t.Fatalf("cut inside a word: %q", text)
			}
		}
		if tokens.Summary(s) > 80 {
			t.Fatalf("%d tokens over the cap", tokens.Summary(s))
		}
	}
}

// cutAtWord reports whether every word of text is a whole word of src
// (text may add speaker words and quotes).
func cutAtWord(text, src string) bool {
	known := map[string]bool{"the": true, "user": true, "assistant": true, "said": true, "really": true, "indeed": true}
	for _, w := range words(src) {
		known[w] = true
	}
	for _, w := range words(text) {
		if !known[w] {
			return false
		}
	}
	return true
}

// The preferences list holds what the user is and likes, states of their
// relations included ("Nate's sister lives in Portland"), not what
// happened to them ("my car failed its MOT" is a fact, no preference).
func TestPreferencesHoldNoEvents(t *testing.T) {
	s := summarize(t, nil, msgs(1,
		"user", "my car failed its MOT, garage has it till monday.",
		"user", "my dad can lend the transit, i'll drive that instead.",
		"user", "my sister lives in Portland.",
		"user", "my son can't eat nuts.",
		"user", "I'm vegetarian."), 0)
	for _, p := range s.UserPreferences {
		if strings.Contains(p, "MOT") || strings.Contains(p, "transit") {
			t.Errorf("an event among the preferences: %q", s.UserPreferences)
		}
	}
	if !contains(s.UserPreferences, "sister lives in Portland") || !contains(s.UserPreferences, "vegetarian") || !contains(s.UserPreferences, "eat nuts") {
		t.Errorf("preferences %q", s.UserPreferences)
	}
}
