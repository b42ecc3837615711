package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms/openai"

	"github.com/contextd/contextd/derive/llmsum"
	"github.com/contextd/contextd/memory"
)

// smallConv is a two-session conversation with observations on some turns
// (one citing two turns) and session summaries; Ana is the user.
func smallConv() Conversation {
	d1 := time.Date(2023, 5, 8, 13, 0, 0, 0, time.UTC)
	d2 := d1.AddDate(0, 0, 20)
	turn := func(s, n int, who, text string) DialTurn {
		return DialTurn{Speaker: who, DiaID: fmt.Sprintf("D%d:%d", s, n), Text: text}
	}
	return Conversation{SampleID: "small", SpeakerA: "Ana", SpeakerB: "Ben",
		Sessions: []Session{
			{N: 1, Date: d1, Turns: []DialTurn{
				turn(1, 1, "Ana", "I started pottery classes on Tuesdays."),
				turn(1, 2, "Ben", "Nice! I ran a half marathon last Sunday."),
				turn(1, 3, "Ana", "Thanks!"),
				turn(1, 4, "Ben", "My sister Mia moved to Lyon for work."),
			}},
			{N: 2, Date: d2, Turns: []DialTurn{
				turn(2, 1, "Ana", "Thanks!"),
				turn(2, 2, "Ana", "I love hiking in the Alps every summer, it clears my head completely."),
				turn(2, 3, "Ben", "I plan to adopt a rescue dog next month."),
			}},
		},
		Observations: []Observation{
			{Session: 1, Speaker: "Ana", Text: "Ana takes pottery classes on Tuesdays.", Evidence: []string{"D1:1"}},
			{Session: 1, Speaker: "Ben", Text: "Ben ran a half marathon.", Evidence: []string{"D1:2"}},
			{Session: 1, Speaker: "Ben", Text: "Ben's sister Mia moved to Lyon.", Evidence: []string{"D1:4", "D1:2"}},
			{Session: 2, Speaker: "Ana", Text: "Ana loves hiking in the Alps.", Evidence: []string{"D2:2"}},
			{Session: 2, Speaker: "Ben", Text: "Ben plans to adopt a rescue dog.", Evidence: []string{"D2:3"}},
		},
		SessionSummaries: map[int]string{
			1: "Ana told Ben about her pottery classes. Ben said his sister Mia moved to Lyon.",
			2: "Ana spoke of hiking in the Alps. Ben plans to adopt a dog.",
		},
	}
}

// startReplay registers seqs 1..7 in conversation order.
func startReplay(t *testing.T) *Replay {
	t.Helper()
	r := NewReplay(smallConv())
	t.Cleanup(r.Close)
	for i, id := range []string{"D1:1", "D1:2", "D1:3", "D1:4", "D2:1", "D2:2", "D2:3"} {
		r.Register(id, int64(i+1))
	}
	return r
}

func model(t *testing.T, r *Replay) *openai.LLM {
	t.Helper()
	m, err := openai.New(openai.WithBaseURL(r.URL()), openai.WithToken("replay"), openai.WithModel("replay"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func msg(seq int64, role, content string) memory.Message {
	return memory.Message{Seq: seq, Role: memory.Role(role), Content: content}
}

// An episode over turns 1-2 (turn 3 given as earlier context would not
// count) is answered with the observations of those turns only, through
// contextd's real summariser.
func TestReplayEpisodeThroughLLMSum(t *testing.T) {
	r := startReplay(t)
	s := llmsum.New(model(t, r), llmsum.Options{MaxRetries: -1})
	res, err := s.SummarizeEpisode(context.Background(), memory.EpisodeRequest{
		Context: []memory.Message{msg(4, "assistant", "Ben: My sister Mia moved to Lyon for work.")},
		Turns:   []memory.Message{msg(5, "user", "Ana: Thanks!"), msg(6, "user", "Ana: I love hiking in the Alps every summer, it clears my head completely.")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Degraded) > 0 {
		t.Fatalf("degraded %v", res.Degraded)
	}
	all := res.Short + " " + summaryText(&res.Summary)
	if !strings.Contains(all, "Ana loves hiking in the Alps.") {
		t.Errorf("episode lacks its turn's observation: %q", all)
	}
	for _, absent := range []string{"Mia", "pottery", "rescue dog"} {
		if strings.Contains(all, absent) {
			t.Errorf("episode holds %q, from a turn not in it: %q", absent, all)
		}
	}
	if res.Short != "Ana spoke of hiking in the Alps." {
		t.Errorf("short = %q, want the matching session-summary sentence", res.Short)
	}
	if got := r.Cost(); got.Calls[kindEpisode] != 1 || got.TurnsSent != 3 {
		t.Errorf("cost = %+v, want one episode call and 3 turns sent (context included)", got)
	}
}

// chat posts one request the way an OpenAI client does and returns the
// reply's content.
func chat(t *testing.T, r *Replay, system, user string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": "replay", "messages": []map[string]string{
		{"role": "system", "content": system}, {"role": "user", "content": user}}})
	resp, err := http.Post(r.URL()+"/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Choices) == 0 {
		t.Fatalf("status %d, decode %v", resp.StatusCode, err)
	}
	return out.Choices[0].Message.Content
}

// With the contract's "[seq] role (name): content" lines, facts carry the
// seqs of their evidence turns that the episode holds, and never others.
func TestReplayEpisodeFactsCiteOnlySentSeqs(t *testing.T) {
	r := startReplay(t)
	user := strings.Replace(llmsum.DefaultEpisodePrompt, llmsum.PlaceholderTranscript, strings.Join([]string{
		"Earlier context (not part of this episode):",
		"[1] user: Ana: I started pottery classes on Tuesdays.",
		"",
		"The episode (turns 2-4):",
		"[2] assistant (Ben): Ben: Nice! I ran a half marathon last Sunday.",
		"[3] user: Ana: Thanks!",
		"[4] assistant: Ben: My sister Mia moved to Lyon for wo", // cut short
	}, "\n"), 1)
	var reply struct {
		Short     string
		Narrative string
		Facts     []replyFact
	}
	if err := json.Unmarshal([]byte(chat(t, r, "You summarise one episode of a conversation.", user)), &reply); err != nil {
		t.Fatal(err)
	}
	want := map[string][]int64{"Ben ran a half marathon.": {2}, "Ben's sister Mia moved to Lyon.": {4, 2}}
	if len(reply.Facts) != len(want) {
		t.Fatalf("facts = %+v, want %v", reply.Facts, want)
	}
	for _, f := range reply.Facts {
		if fmt.Sprint(f.Seqs) != fmt.Sprint(want[f.Text]) {
			t.Errorf("fact %q seqs %v, want %v", f.Text, f.Seqs, want[f.Text])
		}
	}
	if strings.Contains(reply.Narrative, "pottery") {
		t.Errorf("narrative holds the earlier context's observation: %q", reply.Narrative)
	}
}

// Running-summary compression and extension, through contextd's real
// summariser with the default prompts: the extension keeps the summary it
// was given and adds the new turns' observations.
func TestReplayRunningSummary(t *testing.T) {
	r := startReplay(t)
	s := llmsum.New(model(t, r), llmsum.Options{MaxRetries: -1})
	ctx := context.Background()
	first, err := s.Summarize(ctx, memory.SummarizeRequest{Structured: true, Turns: []memory.Message{
		msg(1, "user", "Ana: I started pottery classes on Tuesdays."), msg(2, "assistant", "Ben: Nice! I ran a half marathon last Sunday.")}})
	if err != nil || len(first.Degraded) > 0 {
		t.Fatalf("compression: %v %v", err, first.Degraded)
	}
	prev := first.Summary
	next, err := s.Summarize(ctx, memory.SummarizeRequest{Structured: true, Prev: &prev, Turns: []memory.Message{
		msg(7, "assistant", "Ben: I plan to adopt a rescue dog next month.")}})
	if err != nil || len(next.Degraded) > 0 {
		t.Fatalf("extension: %v %v", err, next.Degraded)
	}
	text := summaryText(&next.Summary)
	for _, want := range []string{"Ana takes pottery classes on Tuesdays.", "Ben ran a half marathon.", "Ben plans to adopt a rescue dog."} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Alps") || strings.Contains(text, "Mia") {
		t.Errorf("summary holds observations of turns never sent:\n%s", text)
	}
	if c := r.Cost().Calls; c[kindCompression] != 1 || c[kindExtension] != 1 {
		t.Errorf("calls = %v, want one compression and one extension", c)
	}
}

// A profile merge keeps the profile given and adds the user's (Ana's)
// observations the chat summary states, not Ben's.
func TestReplayProfileMerge(t *testing.T) {
	r := startReplay(t)
	s := llmsum.New(model(t, r), llmsum.Options{MaxRetries: -1})
	existing := memory.Profile{Topics: []memory.ProfileItem{{Text: "Ana takes pottery classes on Tuesdays."}}}
	chatSum := memory.Summary{Narrative: "Ana loves hiking in the Alps. Ben plans to adopt a rescue dog."}
	res, err := s.MergeProfile(context.Background(), "", existing, chatSum)
	got := res.Summary
	if err != nil {
		t.Fatal(err)
	}
	text := summaryText(&got)
	if !strings.Contains(text, "Ana takes pottery classes") || !strings.Contains(text, "Ana loves hiking in the Alps.") {
		t.Errorf("profile = %q, want the old item and Ana's new preference", text)
	}
	if strings.Contains(text, "rescue dog") {
		t.Errorf("profile holds Ben's observation: %q", text)
	}
	if got.UserPreferences == nil || got.UserPreferences[0] != "Ana loves hiking in the Alps." {
		t.Errorf("preferences = %v", got.UserPreferences)
	}
	if r.Cost().Calls[kindProfile] != 1 {
		t.Errorf("calls = %v", r.Cost().Calls)
	}
}

func TestClassify(t *testing.T) {
	p := llmsum.DefaultPrompts()
	cases := []struct {
		name, system, user string
		turns              int
		prior              bool
		want               string
	}{
		{"episode", "You summarise one episode", llmsum.DefaultEpisodePrompt, 3, false, kindEpisode},
		{"episode by shape only", "sys", `Reply {"short":"", "narrative":""}`, 3, false, kindEpisode},
		{"compression", p.System, p.Compression, 3, false, kindCompression},
		{"extension", p.System, p.Extension, 3, true, kindExtension},
		{"refresh", p.System, p.Extension, 0, true, kindExtension},
		{"extension by summary object", p.System, "Summarise:\n{}", 2, true, kindExtension},
		{"profile", "You keep a profile of a user", llmsum.DefaultProfilePrompt, 0, false, kindProfile},
		{"unknown", "Translate this", "bonjour", 0, false, kindUnknown},
	}
	for _, c := range cases {
		if got := classify(c.system, c.user, c.turns, c.prior); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

// identify places turns by seq prefix, by text (whole, cut short, under
// role labels), resolves repeated texts by order, and marks context.
func TestIdentify(t *testing.T) {
	r := startReplay(t)
	cases := []struct {
		name, text string
		want       string // turn indices, context marked with c
	}{
		{"plain lines", "user: Ana: I started pottery classes on Tuesdays.\nassistant: Ben: Nice! I ran a half marathon last Sunday.", "[0 1]"},
		{"seq prefix wins over repeated text", "[5] user: Ana: Thanks!", "[4]"},
		{"repeated text follows order", "assistant: Ben: My sister Mia moved to Lyon for work.\nuser: Ana: Thanks!", "[3 4]"},
		{"cut short", "user (Ana): Ana: I love hiking in the Alps every sum…", "[5]"},
		{"too short to place", "user: Ana: I lo", "[]"},
		{"earlier context", "Earlier context (not part of this episode):\nuser: Ana: I started pottery classes on Tuesdays.\n\nThe episode (turns 2-2):\nassistant: Ben: Nice! I ran a half marathon last Sunday.", "[0c 1]"},
		{"outside the episode range", "The episode (turns 6-7):\n[4] assistant: Ben: My sister Mia moved to Lyon for work.\n[6] user: Ana: I love hiking in the Alps every summer, it clears my head completely.", "[3c 5]"},
		{"summary JSON is not a turn", `{"narrative":"Ana: I started pottery classes on Tuesdays. and more"}`, "[]"},
	}
	for _, c := range cases {
		got, _ := r.m.identify(c.text)
		var parts []string
		for _, g := range got {
			s := fmt.Sprint(g.turn)
			if g.context {
				s += "c"
			}
			parts = append(parts, s)
		}
		if s := "[" + strings.Join(parts, " ") + "]"; s != c.want {
			t.Errorf("%s: got %s, want %s", c.name, s, c.want)
		}
	}
}

// Never invent: every string of every reply is the dataset's (an
// observation, a session-summary sentence, a speaker's name, "person").
func TestReplayNeverInvents(t *testing.T) {
	r := startReplay(t)
	c := smallConv()
	known := map[string]bool{"person": true, "Ana": true, "Ben": true}
	for _, o := range c.Observations {
		known[o.Text] = true
	}
	for _, s := range c.SessionSummaries {
		for _, x := range sentences(s) {
			known[x] = true
		}
	}
	transcript := "[1] user: Ana: I started pottery classes on Tuesdays.\n[2] assistant: Ben: Nice! I ran a half marathon last Sunday.\n[6] user: Ana: I love hiking in the Alps every summer, it clears my head completely."
	for _, user := range []string{
		strings.Replace(llmsum.DefaultEpisodePrompt, llmsum.PlaceholderTranscript, transcript, 1),
		strings.Replace(llmsum.DefaultPrompts().Compression, llmsum.PlaceholderTranscript, transcript, 1),
	} {
		var v any
		if err := json.Unmarshal([]byte(chat(t, r, "sys", user)), &v); err != nil {
			t.Fatal(err)
		}
		var walk func(any)
		walk = func(v any) {
			switch x := v.(type) {
			case string:
				if x != "" && !known[x] && !composedOf(x, known) {
					t.Errorf("reply string %q is not the dataset's", x)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			case map[string]any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(v)
	}
}

// composedOf reports whether s is known strings joined by spaces (a
// narrative of observations, a short of two sentences).
func composedOf(s string, known map[string]bool) bool {
	if s == "" {
		return true
	}
	for k := range known {
		if strings.HasPrefix(s, k) && (len(s) == len(k) || s[len(k)] == ' ' && composedOf(s[len(k)+1:], known)) {
			return true
		}
	}
	return false
}

func TestSentences(t *testing.T) {
	got := sentences("First one. Second one! Third? \"Quoted.\" Last")
	want := []string{"First one.", "Second one!", "Third?", "\"Quoted.\"", "Last"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
