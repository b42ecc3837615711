package worker

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/derive/episodes"
	"github.com/contextd/contextd/derive/extractive"
	"github.com/contextd/contextd/derive/llmsum"
	"github.com/contextd/contextd/derive/llmsum/llmtest"
	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// scriptedTurns is a deterministic conversation: short user turns, longer
// assistant turns, as in real chats.
func scriptedTurns(n int) []memory.Message { return scriptedTurnsSized(n, 1) }

// scriptedTurnsSized is scriptedTurns with turns div times shorter.
func scriptedTurnsSized(n, div int) []memory.Message {
	r := rand.New(rand.NewSource(7))
	vocab := strings.Fields(`the deployment pipeline database migration invoice customer Berlin office
budget review latency dashboard alert on-call rotation release notes contract renewal
pricing tier onboarding flow search ranking cache eviction backup policy quarterly report
we should check whether it works after Monday and then send the summary to Maria`)
	sentence := func(words int) string {
		w := make([]string, words)
		for i := range w {
			w[i] = vocab[r.Intn(len(vocab))]
		}
		return strings.ToUpper(w[0][:1]) + strings.Join(w, " ")[1:] + "."
	}
	var out []memory.Message
	for i := 0; i < n; i++ {
		role, words := memory.RoleUser, (12+r.Intn(25))/div
		if i%2 == 1 {
			role, words = memory.RoleAssistant, (30+r.Intn(90))/div
		}
		words = max(words, 3)
		var b strings.Builder
		for words > 0 {
			k := min(words, 8+r.Intn(10))
			b.WriteString(sentence(k) + " ")
			words -= k
		}
		out = append(out, memory.Message{Role: role, Content: strings.TrimSpace(b.String())})
	}
	return out
}

type costFigures struct {
	convTokens, inputTokens, calls, summarised, episodes int
	rootCalls                                            int // calls that were not an episode's
}

// costRun is one scripted conversation's settings.
type costRun struct {
	turns    int
	episodes bool
	every    int // summary_extend_every_episodes (0: 1)
	div      int // turns this many times shorter (0: 1)
}

// runConversation appends the conversation two turns at a time, letting the
// worker catch up after each append (as Run would), with the real LLM
// summarizer against a scripted OpenAI-compatible server that echoes a small
// JSON summary.
func runConversation(tb testing.TB, n int) costFigures {
	tb.Helper()
	return runConversationWith(tb, n, false)
}

// runConversationWith runs it with memory.episodes on or off.
func runConversationWith(tb testing.TB, n int, withEpisodes bool) costFigures {
	tb.Helper()
	return runCost(tb, costRun{turns: n, episodes: withEpisodes})
}

func runCost(tb testing.TB, run costRun) costFigures {
	tb.Helper()
	ctx := context.Background()
	srv := llmtest.New(tb, func(i int, _ llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: fmt.Sprintf(`{"topics":["deployment","budget"],"entities":[{"name":"Maria","type":"person","details":"gets the summary"}],"actions_taken":[],"decisions":["release on Monday"],"open_questions":[],"user_preferences":[],"narrative":"The team discussed releases and budgets (part %d)."}`, i)}
	})
	sum := llmsum.New(srv.Model(tb, "m"), llmsum.Options{Fallback: extractive.New(), ModelName: "m", Timeout: 10 * time.Second})
	st := openStore(tb)
	set := Settings{RecentTurns: 10, TriggerTurns: 10, TriggerTokens: 2000, MaxTokens: 800, Structured: true, Persist: true, Enabled: true,
		Prompts: llmsum.ResolvePrompts(memory.Prompts{}, "")}
	if run.episodes {
		set.Episodes = EpisodeSettings{Enabled: true, Params: episodes.Params{MinTurns: 6, MaxTurns: 40, Gap: 2 * time.Hour}, Overlap: 2,
			ExtendEvery: run.every}
	}
	w := newWorker(st, sum, "bench", func() Settings { return set })
	turns := scriptedTurnsSized(run.turns, max(run.div, 1))
	var fig costFigures
	for i := 0; i < len(turns); i += 2 {
		batch := turns[i:min(i+2, len(turns))]
		if _, err := st.Append(ctx, memory.AppendRequest{Chat: chatKey, Agent: "a", Messages: batch}); err != nil {
			tb.Fatal(err)
		}
		if err := w.Drain(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	for _, t := range turns {
		fig.convTokens += tokens.Count(t.Content)
	}
	for _, r := range srv.Requests() {
		fig.inputTokens += tokens.Count(r.System()) + tokens.Count(r.User())
		if !strings.Contains(r.User(), "The episode (turns ") {
			fig.rootCalls++
		}
	}
	fig.calls = len(srv.Requests())
	c, err := st.Chat(ctx, chatKey)
	if err != nil {
		tb.Fatal(err)
	}
	fig.summarised = int(c.SummaryCursor)
	eps, err := st.Episodes(ctx, chatKey, memory.EpisodeQuery{})
	if err != nil {
		tb.Fatal(err)
	}
	fig.episodes = len(eps)
	return fig
}

// TestSummaryInputCost checks the incremental design's cost property: the
// summarizer reads each turn about once, so its total input stays within 2x
// the conversation, and the number of LLM calls grows linearly.
func TestSummaryInputCost(t *testing.T) {
	if testing.Short() {
		t.Skip("1000-turn conversation")
	}
	fig := runConversation(t, 1000)
	ratio := float64(fig.inputTokens) / float64(fig.convTokens)
	t.Logf("conversation %d tokens, summarizer input %d tokens (%.2fx), %d calls, cursor %d",
		fig.convTokens, fig.inputTokens, ratio, fig.calls, fig.summarised)
	if ratio > 2 {
		t.Errorf("summarizer input is %.2fx the conversation, want <= 2x", ratio)
	}
	if fig.summarised != 990 {
		t.Errorf("cursor %d, want 990 (all but the recent window)", fig.summarised)
	}
	// Linear: about one call per TriggerTurns turns, never more.
	if fig.calls > 990/10+1 || fig.calls < 990/20 {
		t.Errorf("%d calls for 990 summarised turns", fig.calls)
	}
}

func BenchmarkSummaryCost1000Turns(b *testing.B) {
	var fig costFigures
	for i := 0; i < b.N; i++ {
		fig = runConversation(b, 1000)
	}
	b.ReportMetric(float64(fig.inputTokens)/float64(fig.convTokens), "input/conv")
	b.ReportMetric(float64(fig.calls), "llm_calls")
	b.ReportMetric(float64(fig.convTokens), "conv_tokens")
	b.ReportMetric(float64(fig.inputTokens), "input_tokens")
}

// TestSummaryInputCostEpisodes: with episodes on, the summariser reads each
// turn once inside its episode (plus the overlap) and the LLM root is
// extended from the episodes' summaries as they close (here one at a time:
// two turns per append), so the input stays within 2x the conversation and
// the calls are the episodes plus a root call per episode and the first.
func TestSummaryInputCostEpisodes(t *testing.T) {
	if testing.Short() {
		t.Skip("1000-turn conversation")
	}
	base := runConversation(t, 1000)
	fig := runConversationWith(t, 1000, true)
	ratio := float64(fig.inputTokens) / float64(fig.convTokens)
	t.Logf("conversation %d tokens; with episodes: input %d tokens (%.2fx), %d calls, %d episodes, cursor %d; without: %.2fx, %d calls",
		fig.convTokens, fig.inputTokens, ratio, fig.calls, fig.episodes, fig.summarised,
		float64(base.inputTokens)/float64(base.convTokens), base.calls)
	if ratio > 2 {
		t.Errorf("summarizer input is %.2fx the conversation, want <= 2x", ratio)
	}
	if fig.rootCalls < fig.episodes/3 || fig.rootCalls > fig.episodes+1 || fig.episodes < 990/40 {
		t.Errorf("%d calls for %d episodes over %d summarised turns", fig.calls, fig.episodes, fig.summarised)
	}
	if fig.summarised != 990 {
		t.Errorf("cursor %d, want 990", fig.summarised)
	}
}

// TestRootExtendEvery: the root is extended once ExtendEvery episodes
// closed, while the credit (twice the turns' tokens less what the episodes
// sent) covers the call: with turns a quarter of the size the episode
// calls' prompts eat most of it (1.8x the conversation on their own), and
// the root waits for several episodes. The summariser's input stays within
// 2x the conversation either way.
func TestRootExtendEvery(t *testing.T) {
	if testing.Short() {
		t.Skip("600-turn conversations")
	}
	for _, c := range []struct {
		name               string
		run                costRun
		minRoots, maxRoots func(episodes int) int
	}{
		{"every episode", costRun{turns: 600, episodes: true, every: 1},
			func(e int) int { return e }, func(e int) int { return e + 1 }},
		{"every 3 episodes", costRun{turns: 600, episodes: true, every: 3},
			func(e int) int { return e / 3 }, func(e int) int { return e/3 + 1 }},
		{"short turns: the credit waits", costRun{turns: 600, episodes: true, every: 1, div: 4},
			func(int) int { return 1 }, func(e int) int { return e / 2 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			fig := runCost(t, c.run)
			ratio := float64(fig.inputTokens) / float64(fig.convTokens)
			t.Logf("%d episodes, %d root calls, input %.2fx a %d-token conversation", fig.episodes, fig.rootCalls, ratio, fig.convTokens)
			if fig.rootCalls < c.minRoots(fig.episodes) || fig.rootCalls > c.maxRoots(fig.episodes) {
				t.Errorf("%d root calls for %d episodes, want %d..%d", fig.rootCalls, fig.episodes, c.minRoots(fig.episodes), c.maxRoots(fig.episodes))
			}
			if ratio > 2 {
				t.Errorf("summariser input %.2fx the conversation, want <= 2x", ratio)
			}
		})
	}
}
