package worker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/derive/extractive"
	"github.com/contextd/contextd/derive/llmsum"
	"github.com/contextd/contextd/derive/llmsum/llmtest"
	"github.com/contextd/contextd/jobs/budget"
	"github.com/contextd/contextd/memory"
)

// The LLM path of the profile: one merge call per debounced change, with
// the agent's prompt override; a reply without a profile leaves the
// previous profile in place and is reported.
func TestProfilerLLMMerge(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	srv := llmtest.New(t, llmtest.Sequence(
		llmtest.Reply{Content: `{"entities":[{"name":"Casa Amora","type":"place","details":"hotel in Lisbon"}],"user_preferences":["vegetarian","boutique hotels"],"topics":["travel"],"open_questions":[]}`},
		llmtest.Reply{Content: `Sorry, I cannot help with that.`},
	))
	merger := llmsum.New(srv.Model(t, "m"), llmsum.Options{Fallback: extractive.New(), ModelName: "m", Timeout: 10 * time.Second})
	now := time.Unix(1000, 0)
	p := &Profiler{Store: st, Merger: merger, Model: "m", Cooldown: time.Minute, Now: func() time.Time { return now },
		Prompt: func(agent string) string {
			return "OVERRIDE for " + agent + ": profile {existing_profile} chat {chat_summary}"
		}}
	key := memory.ChatKey{Tenant: "t", ChatID: "c1"}
	if _, err := st.Append(ctx, memory.AppendRequest{Chat: key, UserID: "alice", Agent: "travel", Messages: []memory.Message{
		{Role: memory.RoleUser, Content: "I am vegetarian and I like boutique hotels."}, {Role: memory.RoleAssistant, Content: "Noted."},
		{Role: memory.RoleUser, Content: "Book Casa Amora."}}}); err != nil {
		t.Fatal(err)
	}
	extend := func(cursor, to int64) {
		t.Helper()
		if _, err := memory.AppendSummary(ctx, st, key, cursor, memory.SummaryRecord{Summary: memory.Summary{CoveredFromSeq: 1, CoveredToSeq: to,
			UserPreferences: []string{"vegetarian"}, Entities: []memory.Entity{{Name: "Casa Amora", Type: "place"}}}}); err != nil {
			t.Fatal(err)
		}
	}
	extend(0, 2)
	if n, err := p.Pass(ctx, false); err != nil || n != 1 {
		t.Fatalf("pass: %d %v", n, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].User(), "OVERRIDE for travel: profile") || !strings.Contains(reqs[0].User(), `"vegetarian"`) {
		t.Fatalf("want one call with the agent's override carrying the chat summary: %d calls, %q", len(reqs), reqs[0].User())
	}
	got, _, _ := st.Profile(ctx, "t", "alice")
	prefs := got.Profile.UserPreferences
	if len(prefs) != 2 || got.Profile.Model != "m" {
		t.Fatalf("profile after the LLM merge: %+v", got.Profile)
	}
	for _, it := range prefs {
		if it.Text == "vegetarian" && (len(it.Sources) != 1 || it.Sources[0].ChatID != "c1") {
			t.Fatalf("vegetarian sources: %+v", it.Sources)
		}
	}
	// Two more changes inside the cooldown: no call until it passes, then one.
	extend(2, 3)
	if n, _ := p.Pass(ctx, false); n != 0 || len(srv.Requests()) != 1 {
		t.Fatalf("inside the cooldown: %d merges, %d calls", n, len(srv.Requests()))
	}
	now = now.Add(2 * time.Minute)
	if _, err := p.Pass(ctx, false); err != nil || len(srv.Requests()) != 2 {
		t.Fatalf("after the cooldown: %d calls, %v", len(srv.Requests()), err)
	}
	// That second reply held no profile: the previous one stands, reported.
	again, _, _ := st.Profile(ctx, "t", "alice")
	if len(again.Profile.UserPreferences) != 2 {
		t.Fatalf("a bad reply changed the profile: %+v", again.Profile)
	}
	if d := p.LastDegraded("t", "alice"); len(d) != 1 || d[0] != DegradedProfileInvalid {
		t.Fatalf("degraded = %v, want %s", d, DegradedProfileInvalid)
	}
	if work, _ := st.Pending(ctx, memory.MergeProfile, 10); len(work) != 0 {
		t.Fatalf("a bad reply must not be retried forever: %d chats left", len(work))
	}
}

// The profiler spends its merges from the tenants' daily budget (the
// worker's, shared with the summaries), and once the budget is spent it
// merges without the model, saying so.
func TestProfilerSpendsTheBudget(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Content: `{"entities":[],"user_preferences":["vegetarian"],"topics":["travel"],"open_questions":[]}`,
		PromptTokens: 300, CompletionTokens: 20}))
	merger := llmsum.New(srv.Model(t, "m"), llmsum.Options{ModelName: "m", MaxRetries: -1, Timeout: 5 * time.Second})
	var tokens int
	b := &budget.Daily{Limit: 500, OnSpend: func(_ string, in, out int) { tokens += in + out }}
	p := &Profiler{Store: st, Merger: merger, Model: "m", Budget: b, Cooldown: time.Nanosecond}
	key := memory.ChatKey{Tenant: "t", ChatID: "c1"}
	if _, err := st.Append(ctx, memory.AppendRequest{Chat: key, UserID: "alice", Messages: topicTurns(5)}); err != nil {
		t.Fatal(err)
	}
	cursor := int64(0)
	for _, to := range []int64{2, 3, 4} {
		if _, err := memory.AppendSummary(ctx, st, key, cursor, memory.SummaryRecord{Summary: memory.Summary{CoveredFromSeq: 1, CoveredToSeq: to,
			UserPreferences: []string{fmt.Sprint("likes ", to)}}}); err != nil {
			t.Fatal(err)
		}
		cursor = to
		if _, err := p.Pass(ctx, true); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d merge calls, want 2 (320 + 320 tokens pass the 500 budget)", n)
	}
	if tokens != 640 || b.UsedToday("t") != 640 {
		t.Errorf("counted %d tokens (budget: %d), want 640", tokens, b.UsedToday("t"))
	}
	if d := p.LastDegraded("t", "alice"); !slices.Contains(d, DegradedBudgetExhausted) {
		t.Errorf("degraded %v, want %s", d, DegradedBudgetExhausted)
	}
	got, _, _ := st.Profile(ctx, "t", "alice")
	if !slices.ContainsFunc(got.Profile.UserPreferences, func(it memory.ProfileItem) bool { return it.Text == "likes 4" }) {
		t.Errorf("the change after the budget was not merged: %+v", got.Profile.UserPreferences)
	}
}
