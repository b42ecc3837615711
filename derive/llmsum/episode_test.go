package llmsum

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/contextd/contextd/derive/llmsum/llmtest"
	"github.com/contextd/contextd/memory"
)

const episodeJSON = `{"short":"The user planned the Lisbon move for May.","topics":["Lisbon move"],"entities":[{"name":"Lisbon","type":"place","details":"new home"}],"actions_taken":[],"decisions":["move in May"],"open_questions":[],"user_preferences":[],"narrative":"They planned the move."}`

func TestSummarizeEpisodeOneCall(t *testing.T) {
	srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Content: episodeJSON}))
	s := newSum(t, srv, Options{})
	res, err := s.SummarizeEpisode(context.Background(), memory.EpisodeRequest{Context: turns(8, 9), Turns: turns(10, 20)})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || res.Calls != 1 {
		t.Fatalf("%d requests, %d calls; want one call per episode", len(reqs), res.Calls)
	}
	u := reqs[0].User()
	ctxAt, epAt := strings.Index(u, "turn-009"), strings.Index(u, "The episode (turns 10-20)")
	if !strings.HasPrefix(u, "Summarise the episode") || ctxAt < 0 || epAt < ctxAt || !strings.Contains(u, "turn-020") ||
		!strings.Contains(u, "Earlier context (not part of this episode)") {
		t.Errorf("user prompt %q", u)
	}
	if name, _ := reqs[0].Schema(); name != ReplyEpisode {
		t.Errorf("reply schema %q, want %q", name, ReplyEpisode)
	}
	if res.Short != "The user planned the Lisbon move for May." || len(res.Summary.Decisions) != 1 ||
		res.Summary.CoveredFromSeq != 10 || res.Summary.CoveredToSeq != 20 || len(res.Degraded) != 0 {
		t.Errorf("result %+v", res)
	}
	if res.PromptVersion != memory.EpisodePromptVersion(DefaultEpisodePrompt) || res.Model != "test-model" {
		t.Errorf("version %q model %q", res.PromptVersion, res.Model)
	}
}

func TestSummarizeEpisodePromptOverride(t *testing.T) {
	srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Content: episodeJSON}))
	s := newSum(t, srv, Options{})
	res, err := s.SummarizeEpisode(context.Background(), memory.EpisodeRequest{Turns: turns(1, 6), Prompt: "AGENT EPISODE PROMPT\n{transcript}\nEND"})
	if err != nil {
		t.Fatal(err)
	}
	u := srv.Requests()[0].User()
	if !strings.HasPrefix(u, "AGENT EPISODE PROMPT\n") || !strings.HasSuffix(u, "\nEND") || !strings.Contains(u, "turn-006") {
		t.Errorf("override not used: %q", u)
	}
	if res.PromptVersion == memory.EpisodePromptVersion(DefaultEpisodePrompt) {
		t.Error("prompt version does not tell the override from the default")
	}
}

func TestParseEpisodeTolerant(t *testing.T) {
	tests := []struct {
		name, reply, short string
		ok                 bool
	}{
		{"plain", episodeJSON, "The user planned the Lisbon move for May.", true},
		{"fenced with prose", "Sure!\n```json\n" + episodeJSON + "\n```\nDone.", "The user planned the Lisbon move for May.", true},
		{"wrapped", `{"short":"Gist.","summary":{"topics":["a"],"narrative":"n"}}`, "Gist.", true},
		{"no short: from narrative", `{"topics":["a"],"narrative":"First. Second. Third."}`, "First. Second.", true},
		{"short as list", `{"short":["One.","Two."],"topics":["a"]}`, "One. Two.", true},
		{"prose only", "They planned the Lisbon move.", "They planned the Lisbon move.", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			short, _, ok := parseEpisode(tc.reply)
			if short != tc.short || ok != tc.ok {
				t.Errorf("got %q %v, want %q %v", short, ok, tc.short, tc.ok)
			}
		})
	}
}

func TestSummarizeEpisodeLLMDown(t *testing.T) {
	srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Status: http.StatusInternalServerError}))
	s := newSum(t, srv, Options{MaxRetries: -1})
	res, err := s.SummarizeEpisode(context.Background(), memory.EpisodeRequest{Turns: turns(1, 8)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Degraded) != 1 || res.Degraded[0] != DegradedLLMUnavailable || res.Short == "" || res.Model != "extractive" {
		t.Errorf("fallback result %+v", res)
	}
}
