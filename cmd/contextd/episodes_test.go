package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/derive/llmsum/llmtest"
	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// bluefinShort is what the scripted LLM says about the episode holding
// turn 40: none of that episode's turns says it in these words.
const bluefinShort = "The user picked the teal sea kayak nicknamed Bluefin for the Algarve coastal trip."

var longChatSubjects = [][]string{
	strings.Fields("apartment lease movers boxes landlord deposit neighbourhood tram keys"),
	strings.Fields("garden tomatoes compost seedlings watering basil greenhouse harvest mulch"),
	strings.Fields("taxes invoice deduction accountant receipts filing refund income audit"),
	strings.Fields("recipe oven dough flour pasta sauce garlic onions baking"),
	strings.Fields("guitar chords practice amplifier strings tuning metronome scales rhythm"),
}

var boatWords = strings.Fields("boat hull paddle craft cockpit spray deck length stable rudder")

// longChat is a 5,000-turn conversation changing subject every 12..30
// turns; turns 30..50 are about choosing a boat, in other words than the
// scripted summary's.
func longChat(n int) []memory.Message {
	r := rand.New(rand.NewSource(11))
	t0 := time.Date(2023, 5, 3, 9, 0, 0, 0, time.UTC)
	var out []memory.Message
	subject := 0
	left := 29
	for len(out) < n {
		seq := len(out) + 1
		words := longChatSubjects[subject]
		if seq >= 30 && seq <= 50 {
			words = boatWords
		}
		var b strings.Builder
		b.WriteString("So about the ")
		for j := 0; j < 8; j++ {
			b.WriteString(words[r.Intn(len(words))] + " ")
		}
		b.WriteString("we went over that.")
		role := memory.RoleUser
		if seq%2 == 0 {
			role = memory.RoleAssistant
		}
		out = append(out, memory.Message{Role: role, Content: b.String(), CreatedAt: t0.Add(time.Duration(seq) * 10 * time.Minute)})
		if seq == 50 {
			left = 0
		}
		if left--; left <= 0 {
			subject, left = r.Intn(len(longChatSubjects)), 12+r.Intn(19)
		}
	}
	return out
}

var episodeRangeRe = regexp.MustCompile(`The episode \(turns (\d+)-(\d+)\)`)

// TestEpisodesLongChat runs a 5,000-turn chat through the whole service
// with the scripted LLM: one call per episode, the episode holding turn 40
// states a fact none of its turns does, the root stays capped and a
// running_summary context still fits its budget.
func TestEpisodesLongChat(t *testing.T) {
	if testing.Short() {
		t.Skip("5,000-turn chat")
	}
	ctx := context.Background()
	var mu sync.Mutex
	episodeCalls, otherCalls := 0, 0
	srv := llmtest.New(t, func(_ int, req llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		m := episodeRangeRe.FindStringSubmatch(req.User())
		if m == nil {
			otherCalls++
			return llmtest.Reply{Content: `{"topics":["misc"],"narrative":"More talk."}`}
		}
		episodeCalls++
		from, _ := strconv.Atoi(m[1])
		to, _ := strconv.Atoi(m[2])
		short := fmt.Sprintf("Turns %d to %d went over everyday plans.", from, to)
		if from <= 40 && 40 <= to {
			short = bluefinShort
		}
		reply, _ := json.Marshal(map[string]any{"short": short, "topics": []string{fmt.Sprintf("plans %d", from)}, "narrative": short})
		return llmtest.Reply{Content: string(reply)}
	})
	const maxRoot = 400
	app, hs := newApp(t, func(c *config.Config) {
		c.LLM = config.LLM{Provider: "openai", Model: "scripted", BaseURL: srv.URL, APIKey: "test", Timeout: 10 * time.Second}
		c.Supervisor.Memory.SummaryMaxTokens = maxRoot
		c.Supervisor.Memory.SummaryCooldown = 0
	})
	turns := longChat(5000)
	for i := 0; i < len(turns); i += 500 {
		var msgs []map[string]any
		for _, m := range turns[i:min(i+500, len(turns))] {
			msgs = append(msgs, map[string]any{"role": m.Role, "content": m.Content, "created_at": m.CreatedAt})
		}
		body, _ := json.Marshal(map[string]any{"messages": msgs})
		if st, b := call(t, "POST", hs.URL+"/v1/chats/long/messages", "", string(body)); st != 201 {
			t.Fatalf("append: %d %s", st, b)
		}
		if err := app.Worker.Drain(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := app.Indexer.DrainOnce(ctx); err != nil {
		t.Fatal(err)
	}
	key := memory.ChatKey{Tenant: memory.DefaultTenant, ChatID: "long"}
	eps, err := app.Store.(memory.EpisodeStore).Episodes(ctx, key, memory.EpisodeQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var fact *memory.Episode
	for i, e := range eps {
		if e.FromSeq <= 40 && 40 <= e.ToSeq {
			fact = &eps[i]
		}
	}
	if fact == nil {
		t.Fatal("no episode holds turn 40")
	}
	mu.Lock()
	t.Logf("%d episodes, %d episode calls, %d other calls", len(eps), episodeCalls, otherCalls)
	// One call per episode; the root calls read the episodes' summaries in
	// batches (one per drained append of 500 turns here, at most).
	if episodeCalls != len(eps) || otherCalls == 0 || otherCalls > 10 {
		t.Errorf("%d episode calls and %d root calls for %d episodes: want one call per episode and a root call per batch", episodeCalls, otherCalls, len(eps))
	}
	mu.Unlock()
	conv, in := 0, 0
	for _, tr := range turns {
		conv += tokens.Count(tr.Content)
	}
	for _, r := range srv.Requests() {
		in += tokens.Count(r.System()) + tokens.Count(r.User())
	}
	t.Logf("summariser input %d tokens for a %d-token conversation (%.2fx); the episode of turn 40 owns %d..%d",
		in, conv, float64(in)/float64(conv), fact.FromSeq, fact.ToSeq)
	if in > 2*conv {
		t.Errorf("summariser input %.2fx the conversation, want <= 2x", float64(in)/float64(conv))
	}
	if fact == nil || fact.Short != bluefinShort || fact.FromSeq < 25 || fact.ToSeq > 60 {
		t.Fatalf("the episode of turn 40: %+v", fact)
	}
	for _, tr := range turns[fact.FromSeq-1 : fact.ToSeq] {
		if strings.Contains(tr.Content, "Bluefin") || strings.Contains(tr.Content, "Algarve") {
			t.Fatalf("turn says the fact itself: %q", tr.Content)
		}
	}

	// A question in the summary's words: the episode's short summary is
	// what answers it, in a rag_augmented context of 1,000 tokens.
	var rx struct {
		Context  string `json:"context"`
		Sections struct {
			Episodes []struct {
				ID      string `json:"id"`
				FromSeq int64  `json:"from_seq"`
				ToSeq   int64  `json:"to_seq"`
				Short   string `json:"short"`
			} `json:"episodes"`
		} `json:"sections"`
		Usage struct {
			TotalTokens   int `json:"total_tokens"`
			EpisodeTokens int `json:"episode_tokens"`
		} `json:"usage"`
	}
	st, b := call(t, "POST", hs.URL+"/v1/context", "", `{"chat_id":"long","strategy":"rag_augmented","budget_tokens":1000,`+
		`"query":"Which sea kayak nicknamed Bluefin did I pick for the Algarve coastal trip?"}`)
	if err := json.Unmarshal([]byte(b), &rx); st != 200 || err != nil {
		t.Fatalf("rag_augmented context: %d %s", st, b)
	}
	found := false
	for _, e := range rx.Sections.Episodes {
		found = found || (e.ID == fact.ID && e.Short == bluefinShort)
	}
	if !found || !strings.Contains(rx.Context, "turns 30–50] "+bluefinShort) || rx.Usage.TotalTokens > 1000 || rx.Usage.EpisodeTokens == 0 {
		t.Errorf("rag_augmented at 1000 tokens lacks the episode's short summary: episodes %+v, usage %+v\n%s", rx.Sections.Episodes, rx.Usage, rx.Context)
	}

	// /v1/search finds it as an episode hit.
	var sr struct {
		Hits []struct {
			Kind      string    `json:"kind"`
			EpisodeID string    `json:"episode_id"`
			FromSeq   int64     `json:"from_seq"`
			ToSeq     int64     `json:"to_seq"`
			StartedAt time.Time `json:"started_at"`
			Content   string    `json:"content"`
		} `json:"hits"`
	}
	st, b = call(t, "POST", hs.URL+"/v1/search", "", `{"chat_id":"long","query":"sea kayak nicknamed Bluefin Algarve coastal trip","k":5}`)
	if err := json.Unmarshal([]byte(b), &sr); st != 200 || err != nil || len(sr.Hits) == 0 {
		t.Fatalf("search: %d %s", st, b)
	}
	if h := sr.Hits[0]; h.Kind != memory.KindEpisode || h.EpisodeID != fact.ID || h.FromSeq != fact.FromSeq || h.ToSeq != fact.ToSeq ||
		h.Content != bluefinShort || !h.StartedAt.Equal(fact.StartedAt) {
		t.Errorf("best search hit %+v, want episode %s", h, fact.ID)
	}

	head, err := app.Store.SummaryHead(ctx, key)
	if err != nil || head == nil || head.TokenCount > maxRoot || head.CoveredToSeq != 5000-int64(app.Config.Supervisor.Memory.SummaryRecentTurns) {
		t.Fatalf("root: %+v %v", head, err)
	}
	var cx struct {
		Sections struct {
			Summary *memory.Summary `json:"summary"`
		} `json:"sections"`
		Usage struct {
			TotalTokens   int `json:"total_tokens"`
			SummaryTokens int `json:"summary_tokens"`
		} `json:"usage"`
	}
	st, b = call(t, "POST", hs.URL+"/v1/context", "", `{"chat_id":"long","strategy":"running_summary","budget_tokens":1000,"query":"what next?"}`)
	if err := json.Unmarshal([]byte(b), &cx); st != 200 || err != nil {
		t.Fatalf("running_summary context: %d %s", st, b)
	}
	if cx.Usage.TotalTokens > 1000 || cx.Sections.Summary == nil || cx.Usage.SummaryTokens == 0 {
		t.Errorf("running_summary at 1000 tokens: total %d, summary tokens %d", cx.Usage.TotalTokens, cx.Usage.SummaryTokens)
	}
}
