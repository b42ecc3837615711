package worker

import (
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextd/contextd/derive/episodes"
	"github.com/contextd/contextd/derive/extractive"
	"github.com/contextd/contextd/derive/facts"
	"github.com/contextd/contextd/derive/llmsum"
	"github.com/contextd/contextd/derive/llmsum/llmtest"
	"github.com/contextd/contextd/jobs/budget"
	"github.com/contextd/contextd/memory"
)

var subjects = [][]string{
	strings.Fields("lisbon apartment moving flat rent neighbourhood alfama boxes movers lease landlord tram"),
	strings.Fields("garden tomatoes compost seedlings watering soil basil greenhouse harvest mulch pruning"),
	strings.Fields("taxes invoice deduction accountant receipts filing deadline refund income quarterly audit"),
	strings.Fields("recipe oven dough flour pasta sauce simmer garlic onions baking knead"),
}

// topicTurns is a conversation that changes subject every 7..25 turns,
// a minute between turns.
func topicTurns(n int) []memory.Message {
	r := rand.New(rand.NewSource(3))
	t0 := time.Date(2023, 5, 3, 9, 0, 0, 0, time.UTC)
	var out []memory.Message
	for len(out) < n {
		words := subjects[len(out)%len(subjects)]
		if len(out) > 0 {
			words = subjects[r.Intn(len(subjects))]
		}
		for k, run := 0, 7+r.Intn(19); k < run && len(out) < n; k++ {
			var b strings.Builder
			b.WriteString("We talked about the ")
			for j := 0; j < 7; j++ {
				b.WriteString(words[r.Intn(len(words))] + " ")
			}
			b.WriteString("again today.")
			role := memory.RoleUser
			if len(out)%2 == 1 {
				role = memory.RoleAssistant
			}
			out = append(out, memory.Message{Role: role, Content: b.String(), CreatedAt: t0.Add(time.Duration(len(out)) * time.Minute)})
		}
	}
	return out
}

func episodeSettings() Settings {
	s := baseSettings()
	s.Episodes = EpisodeSettings{Enabled: true, Params: episodes.Params{MinTurns: 6, MaxTurns: 20}, Overlap: 2}
	return s
}

func allEpisodes(t testing.TB, st memory.EpisodeStore) []memory.Episode {
	t.Helper()
	eps, err := st.Episodes(context.Background(), chatKey, memory.EpisodeQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return eps
}

// checkCoverage: closed episodes own contiguous ranges from seq 1, and
// every turn the root covers is in one, except an open tail shorter than
// episode_max_turns.
func checkCoverage(t testing.TB, eps []memory.Episode, cursor int64, maxTurns int) {
	t.Helper()
	next := int64(1)
	for _, e := range eps {
		if e.FromSeq != next || e.ToSeq < e.FromSeq {
			t.Fatalf("episode %d..%d does not continue at %d", e.FromSeq, e.ToSeq, next)
		}
		next = e.ToSeq + 1
	}
	if tail := cursor - (next - 1); tail >= int64(maxTurns) || tail < 0 && cursor > 0 {
		t.Fatalf("root covers to %d, episodes to %d: open tail %d", cursor, next-1, tail)
	}
}

// TestEpisodesIncremental appends a conversation a few turns at a time and
// lets the worker catch up each time: episodes already closed never change,
// the ranges stay contiguous and cover the root, and the result is what one
// cut over the whole conversation gives.
func TestEpisodesIncremental(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	s := episodeSettings()
	w := newWorker(st, extractive.New(), "w1", func() Settings { return s })
	turns := topicTurns(240)
	var seen []memory.Episode
	for i := 0; i < len(turns); i += 3 {
		if _, err := st.Append(ctx, memory.AppendRequest{Chat: chatKey, Agent: "a", Messages: turns[i:min(i+3, len(turns))]}); err != nil {
			t.Fatal(err)
		}
		if err := w.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		eps := allEpisodes(t, st)
		if len(eps) < len(seen) || len(seen) > 0 && !reflect.DeepEqual(eps[:len(seen)], seen) {
			t.Fatalf("closed episodes changed:\nbefore %v\nafter  %v", seen, eps)
		}
		seen = eps
		checkCoverage(t, eps, cursor(t, st), s.Episodes.Params.MaxTurns)
	}
	if _, _, err := w.Extend(ctx, chatKey, true); err != nil {
		t.Fatal(err)
	}
	if c := cursor(t, st); c != 230 {
		t.Fatalf("cursor %d, want 230", c)
	}
	seen = allEpisodes(t, st)
	stored, _ := st.Messages(ctx, chatKey, 0, 0)
	var want [][2]int64
	for _, sp := range episodes.Cut(nil, stored, 230, s.Episodes.Params) {
		want = append(want, [2]int64{stored[sp.From].Seq, stored[sp.To-1].Seq})
	}
	var got [][2]int64
	shifts := 0
	for _, e := range seen {
		got = append(got, [2]int64{e.FromSeq, e.ToSeq})
		if e.Turns < 20 {
			shifts++
		}
		if e.Short == "" || e.Model != extractive.Name || !e.StartedAt.Equal(stored[e.FromSeq-1].CreatedAt) || !e.EndedAt.Equal(stored[e.ToSeq-1].CreatedAt) {
			t.Errorf("episode %+v", e)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("incremental %v\none cut     %v", got, want)
	}
	if shifts < 5 {
		t.Errorf("only %d episodes ended before the cap: %v", shifts, got)
	}
	head, _ := st.SummaryHead(ctx, chatKey)
	if head == nil || head.CoveredFromSeq != 1 || head.CoveredToSeq != 230 || head.TokenCount > s.MaxTokens || w.Stale("a", head) {
		t.Fatalf("root %+v", head)
	}
}

// recordingEpisodes is an episode summarizer that records its requests.
type recordingEpisodes struct {
	*extractive.Summarizer
	mu   sync.Mutex
	reqs []memory.EpisodeRequest
}

func (r *recordingEpisodes) SummarizeEpisode(ctx context.Context, req memory.EpisodeRequest) (memory.EpisodeResult, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.Summarizer.SummarizeEpisode(ctx, req)
}

// TestEpisodeOverlapNotOwned: the summariser gets the previous episode's
// last episode_overlap turns as context; the episode owns only its own.
func TestEpisodeOverlapNotOwned(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	s := episodeSettings()
	rec := &recordingEpisodes{Summarizer: extractive.New()}
	w := newWorker(st, rec, "w1", func() Settings { return s })
	if _, err := st.Append(ctx, memory.AppendRequest{Chat: chatKey, Agent: "a", Messages: topicTurns(120)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	eps := allEpisodes(t, st)
	if len(eps) < 3 || len(rec.reqs) != len(eps) {
		t.Fatalf("%d episodes, %d summariser calls", len(eps), len(rec.reqs))
	}
	for i, r := range rec.reqs {
		a, b := seqs(r.Turns)
		if a != eps[i].FromSeq || b != eps[i].ToSeq {
			t.Errorf("episode %d summarised turns %d..%d, owns %d..%d", i, a, b, eps[i].FromSeq, eps[i].ToSeq)
		}
		ca, cb := seqs(r.Context)
		switch {
		case i == 0 && len(r.Context) != 0:
			t.Errorf("first episode got context %d..%d", ca, cb)
		case i > 0 && (len(r.Context) != 2 || cb != eps[i-1].ToSeq || ca != eps[i-1].ToSeq-1):
			t.Errorf("episode %d context %d..%d, want the previous episode's last 2 turns", i, ca, cb)
		}
	}
}

// TestEpisodesLLM: one call per episode, with the agent's prompt override,
// and the root written by the LLM from the episodes' summaries with the
// agent's compression prompt (the extension prompt after that); a model
// that fails leaves extractive episodes and says llm_unavailable.
func TestEpisodesLLM(t *testing.T) {
	var down bool
	var mu sync.Mutex
	srv := llmtest.New(t, func(n int, _ llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if down {
			return llmtest.Reply{Status: http.StatusServiceUnavailable}
		}
		return llmtest.Reply{Content: fmt.Sprintf(`{"short":"Episode %d in brief.","topics":["t%d"],"narrative":"n"}`, n, n)}
	})
	prompts := memory.Prompts{Compression: "AGENT COMPRESSION {transcript}", Extension: "AGENT EXTENSION {existing_summary} {new_messages}"}
	sum := llmsum.New(srv.Model(t, "m"), llmsum.Options{ModelName: "m", MaxRetries: -1, Timeout: 5 * time.Second, Fallback: extractive.New()})
	ctx := context.Background()
	st := openStore(t)
	s := episodeSettings()
	s.Prompts = llmsum.ResolvePrompts(prompts, "")
	s.Episodes.Prompt = "AGENT'S OWN EPISODE PROMPT {transcript}"
	w := newWorker(st, sum, "w1", func() Settings { return s })
	if _, err := st.Append(ctx, memory.AppendRequest{Chat: chatKey, Agent: "a", Messages: topicTurns(100)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	eps, all := allEpisodes(t, st), srv.Requests()
	var reqs, roots []llmtest.Request
	for _, r := range all {
		if strings.HasPrefix(r.User(), "AGENT'S OWN EPISODE PROMPT ") {
			reqs = append(reqs, r)
		} else {
			roots = append(roots, r)
		}
	}
	if len(eps) < 3 || len(reqs) != len(eps) {
		t.Fatalf("%d episodes, %d episode calls: want one call per episode", len(eps), len(reqs))
	}
	if len(roots) == 0 || !strings.HasPrefix(roots[0].User(), "AGENT COMPRESSION ") {
		t.Fatalf("root calls %d, first %.80q: want the agent's compression prompt", len(roots), firstUser(roots))
	}
	for _, r := range roots[1:] {
		if !strings.HasPrefix(r.User(), "AGENT EXTENSION ") {
			t.Errorf("later root call without the extension prompt: %.80q", r.User())
		}
	}
	if !strings.Contains(roots[0].User(), "Episode 0 in brief.") || strings.Contains(roots[0].User(), "] user: ") {
		t.Errorf("the first root call should read the episodes' summaries, not turns: %.300q", roots[0].User())
	}
	for i := range reqs {
		if eps[i].Short != fmt.Sprintf("Episode %d in brief.", i) || eps[i].Model != "m" {
			t.Errorf("episode %d: %q by %q", i, eps[i].Short, eps[i].Model)
		}
	}
	if d := w.LastDegraded(chatKey); len(d) != 0 {
		t.Errorf("degraded %v", d)
	}
	head, _ := st.SummaryHead(ctx, chatKey)
	if !slices.Contains(head.Topics, fmt.Sprintf("t%d", len(all)-1)) {
		t.Errorf("root topics %v are not the LLM root call's (t%d)", head.Topics, len(all)-1)
	}

	mu.Lock()
	down = true
	mu.Unlock()
	more := topicTurns(200)[100:]
	if _, err := st.Append(ctx, memory.AppendRequest{Chat: chatKey, Agent: "a", Messages: more}); err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	later := allEpisodes(t, st)
	if len(later) <= len(eps) || later[len(later)-1].Model != extractive.Name || later[len(later)-1].Short == "" {
		t.Fatalf("with the model down: %d episodes, last %+v", len(later), later[len(later)-1])
	}
	if d := w.LastDegraded(chatKey); !slices.Contains(d, llmsum.DegradedLLMUnavailable) {
		t.Errorf("degraded %v, want llm_unavailable", d)
	}
	if head, _ := st.SummaryHead(ctx, chatKey); head == nil || head.Model != extractive.Name {
		t.Errorf("the root extended with the model down is labelled %q, want %q", head.Model, extractive.Name)
	}
	checkCoverage(t, later, cursor(t, st), s.Episodes.Params.MaxTurns)
}

// TestEpisodesDailyBudget: once the tenant's daily LLM budget is spent,
// even within one extension, the next episodes are extractive and say so.
func TestEpisodesDailyBudget(t *testing.T) {
	srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Content: `{"short":"LLM gist.","topics":["x"]}`, PromptTokens: 600, CompletionTokens: 50}))
	sum := llmsum.New(srv.Model(t, "m"), llmsum.Options{ModelName: "m", MaxRetries: -1, Timeout: 5 * time.Second})
	ctx := context.Background()
	st := openStore(t)
	s := episodeSettings()
	w := newWorker(st, sum, "w1", func() Settings { return s })
	w.Budget = &budget.Daily{Limit: 1000}
	if _, err := st.Append(ctx, memory.AppendRequest{Chat: chatKey, Agent: "a", Messages: topicTurns(120)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	eps := allEpisodes(t, st)
	if len(eps) < 4 || len(srv.Requests()) != 2 {
		t.Fatalf("%d episodes, %d LLM calls: want the calls to stop once 1000 tokens are spent", len(eps), len(srv.Requests()))
	}
	for i, e := range eps {
		if want := i < 2; (e.Model == "m") != want {
			t.Errorf("episode %d by %q", i, e.Model)
		}
	}
	if d := w.LastDegraded(chatKey); !slices.Contains(d, DegradedBudgetExhausted) {
		t.Errorf("degraded %v", d)
	}
}

func firstUser(rs []llmtest.Request) string {
	if len(rs) == 0 {
		return ""
	}
	return rs[0].User()
}

// TestFailedFirstRootRetried: when the LLM fails the chat's first root,
// the root folded without it is redone by the LLM at the next trigger once
// the model answers, in this process and in one that starts afresh (no
// cached base): it is not mistaken for the LLM's own root.
func TestFailedFirstRootRetried(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprint("restart=", restart), func(t *testing.T) {
			var mu sync.Mutex
			down := true
			srv := llmtest.New(t, func(n int, r llmtest.Request) llmtest.Reply {
				mu.Lock()
				defer mu.Unlock()
				if down && strings.HasPrefix(r.User(), "ROOT ") {
					return llmtest.Reply{Status: http.StatusServiceUnavailable}
				}
				return llmtest.Reply{Content: fmt.Sprintf(`{"short":"Brief %d.","topics":["llm%d"],"narrative":"n"}`, n, n)}
			})
			sum := llmsum.New(srv.Model(t, "m"), llmsum.Options{ModelName: "m", MaxRetries: -1, Timeout: 5 * time.Second, Fallback: extractive.New()})
			ctx := context.Background()
			st := openStore(t)
			s := episodeSettings()
			s.Prompts = llmsum.ResolvePrompts(memory.Prompts{Compression: "ROOT C {transcript}", Extension: "ROOT E {existing_summary} {new_messages}"}, "")
			w := newWorker(st, sum, "w1", func() Settings { return s })
			if _, err := st.Append(ctx, memory.AppendRequest{Chat: chatKey, Agent: "a", Messages: topicTurns(60)}); err != nil {
				t.Fatal(err)
			}
			if err := w.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			if head, _ := st.SummaryHead(ctx, chatKey); head == nil || head.Model != extractive.Name {
				t.Fatalf("with the root call failing the head is %+v, want the extractive fold", head)
			}
			mu.Lock()
			down = false
			mu.Unlock()
			if restart {
				w = newWorker(st, sum, "w2", func() Settings { return s })
			}
			if _, err := st.Append(ctx, memory.AppendRequest{Chat: chatKey, Agent: "a", Messages: topicTurns(100)[60:]}); err != nil {
				t.Fatal(err)
			}
			if err := w.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			head, _ := st.SummaryHead(ctx, chatKey)
			if head == nil || head.Model != "m" {
				t.Errorf("after the model came back the root is by %q, want the LLM's", head.Model)
			}
		})
	}
}

// TestEveryCallIsCounted: OnJob (the tokens metric) and the daily budget
// count every summariser call's tokens: the episodes' and the root's.
func TestEveryCallIsCounted(t *testing.T) {
	srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Content: `{"short":"Brief.","topics":["x"],"narrative":"n"}`, PromptTokens: 100, CompletionTokens: 10}))
	sum := llmsum.New(srv.Model(t, "m"), llmsum.Options{ModelName: "m", MaxRetries: -1, Timeout: 5 * time.Second, Fallback: extractive.New()})
	ctx := context.Background()
	st := openStore(t)
	s := episodeSettings()
	w := newWorker(st, sum, "w1", func() Settings { return s })
	var counted int
	b := &budget.Daily{OnSpend: func(_ string, in, out int) { counted += in + out }}
	w.Budget = b
	if _, err := st.Append(ctx, memory.AppendRequest{Chat: chatKey, Agent: "a", Messages: topicTurns(100)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	calls := len(srv.Requests())
	if calls < 2 || counted != 110*calls || b.UsedToday(chatKey.Tenant) != int64(110*calls) {
		t.Errorf("%d calls of 110 tokens: counted %d, budget %d", calls, counted, b.UsedToday(chatKey.Tenant))
	}
}

// TestEpisodeQuestionAnsweredAfterIt: an episode that ends on a question
// draws it as open; the turn after the episode answers it, so the stored
// fact is superseded as answered when the episode closes.
func TestEpisodeQuestionAnsweredAfterIt(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	w := newWorker(st, extractive.New(), "w1", episodeSettings)
	w.Episodes.Facts = st
	t0 := time.Date(2023, 5, 3, 9, 0, 0, 0, time.UTC)
	turns := []memory.Message{
		{Role: memory.RoleUser, Content: "How far is Hakone from Tokyo by train?", CreatedAt: t0},
		{Role: memory.RoleAssistant, Content: "About 85 minutes on the Romancecar.", CreatedAt: t0.Add(time.Minute)},
	}
	res, err := st.Append(ctx, memory.AppendRequest{Chat: chatKey, Agent: "a", Messages: turns})
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := st.Messages(ctx, chatKey, 0, 0)
	ep := memory.Episode{FromSeq: 1, ToSeq: 1, Facts: facts.ForChat(chatKey, facts.Extract(stored[:1]))}
	if len(ep.Facts) != 1 || !facts.IsOpenQuestion(ep.Facts[0]) {
		t.Fatalf("episode facts %+v, want the open question", ep.Facts)
	}
	if _, err := st.AddFacts(ctx, chatKey, ep.Facts); err != nil {
		t.Fatal(err)
	}
	if err := w.Episodes.supersede(ctx, res.Chat, []memory.Episode{ep}, stored); err != nil {
		t.Fatal(err)
	}
	fs, _ := st.Facts(ctx, chatKey, memory.FactQuery{IncludeSuperseded: true})
	if len(fs) != 1 || fs[0].SupersededBy != memory.FactAnswered {
		t.Fatalf("facts %+v, want the question superseded as answered", fs)
	}
}

// TestClosedEpisodesKickTheIndexer: closing episodes tells OnDerived (the
// indexer's Kick) before the summary that covers them is written, so a
// request that sees that summary finds the indexer with work pending, not
// idle until its next poll.
func TestClosedEpisodesKickTheIndexer(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	s := episodeSettings()
	w := newWorker(st, extractive.New(), "w1", func() Settings { return s })
	var kicks []int // episodes stored at each kick
	w.OnDerived = func() { kicks = append(kicks, len(allEpisodes(t, st))) }
	if _, err := st.Append(ctx, memory.AppendRequest{Chat: chatKey, Agent: "a", Messages: topicTurns(60)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if len(kicks) == 0 || kicks[0] == 0 {
		t.Fatalf("kicks with episodes stored: %v, want one after the first close", kicks)
	}
	n := len(kicks)
	if err := w.Drain(ctx); err != nil { // nothing new: no kick
		t.Fatal(err)
	}
	if len(kicks) != n {
		t.Errorf("a pass that closed nothing kicked: %v", kicks)
	}
}
