package worker

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/memory/episodes"
	"github.com/contextd/contextd/memory/extractive"
	"github.com/contextd/contextd/memory/llmsum"
	"github.com/contextd/contextd/memory/llmsum/llmtest"
)

// scriptedTurns is a deterministic conversation: short user turns, longer
// assistant turns, as in real chats.
func scriptedTurns(n int) []memory.Message {
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
		role, words := memory.RoleUser, 12+r.Intn(25)
		if i%2 == 1 {
			role, words = memory.RoleAssistant, 30+r.Intn(90)
		}
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
	ctx := context.Background()
	srv := llmtest.New(tb, func(i int, _ llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: fmt.Sprintf(`{"topics":["deployment","budget"],"entities":[{"name":"Maria","type":"person","details":"gets the summary"}],"actions_taken":[],"decisions":["release on Monday"],"open_questions":[],"user_preferences":[],"narrative":"The team discussed releases and budgets (part %d)."}`, i)}
	})
	sum := llmsum.New(srv.Model(tb, "m"), llmsum.Options{Fallback: extractive.New(), ModelName: "m", Timeout: 10 * time.Second})
	st := openStore(tb)
	set := Settings{RecentTurns: 10, TriggerTurns: 10, TriggerTokens: 2000, MaxTokens: 800, Structured: true, Persist: true, Enabled: true,
		Prompts: llmsum.ResolvePrompts(memory.Prompts{}, "")}
	if withEpisodes {
		set.Episodes = EpisodeSettings{Enabled: true, Params: episodes.Params{MinTurns: 6, MaxTurns: 40, Gap: 2 * time.Hour}, Overlap: 2}
	}
	w := newWorker(st, sum, "bench", func() Settings { return set })
	turns := scriptedTurns(n)
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
	}
	fig.calls = len(srv.Requests())
	c, err := st.Chat(ctx, chatKey)
	if err != nil {
		tb.Fatal(err)
	}
	fig.summarised = int(c.SummaryCursor)
	eps, err := st.Episodes(ctx, chatKey, 0, 0)
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
// turn once inside its episode (plus the overlap) and the LLM root reads the
// episodes' summaries in batches, so the input stays within 2x the
// conversation and the calls are the episodes plus a few root calls.
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
	if fig.calls < fig.episodes+1 || fig.calls > fig.episodes+fig.episodes/4+1 || fig.episodes < 990/40 {
		t.Errorf("%d calls for %d episodes over %d summarised turns", fig.calls, fig.episodes, fig.summarised)
	}
	if fig.summarised != 990 {
		t.Errorf("cursor %d, want 990", fig.summarised)
	}
}
