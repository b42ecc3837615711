package llmsum

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/derive/extractive"
	"github.com/contextd/contextd/derive/llmsum/llmtest"
	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

func turns(from, to int) []memory.Message {
	var out []memory.Message
	for i := from; i <= to; i++ {
		role := memory.RoleUser
		if i%2 == 0 {
			role = memory.RoleAssistant
		}
		out = append(out, memory.Message{Seq: int64(i), Role: role, Content: fmt.Sprintf("turn-%03d talks about the quarterly budget review and item %d.", i, i)})
	}
	return out
}

func newSum(t *testing.T, srv *llmtest.Server, o Options) *Summarizer {
	t.Helper()
	return newSumFor(t, "openai", srv, o)
}

// newSumFor builds the summarizer on provider's model pointed at srv
// (llmtest.New for openai, llmtest.NewOllama for ollama).
func newSumFor(t *testing.T, provider string, srv *llmtest.Server, o Options) *Summarizer {
	t.Helper()
	if o.Backoff == 0 {
		o.Backoff = time.Millisecond
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	if o.ModelName == "" {
		o.ModelName = "test-model"
	}
	// Through NewModel, as cmd/contextd builds it: replies asked in schema.
	m, err := NewModel(ModelOptions{Provider: provider, Model: "test-model", BaseURL: srv.URL}, "")
	if err != nil {
		t.Fatal(err)
	}
	return New(m, o)
}

func TestFirstSummaryUsesCompression(t *testing.T) {
	srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Content: goodJSON, PromptTokens: 123, CompletionTokens: 45}))
	s := newSum(t, srv, Options{})
	res, err := s.Summarize(context.Background(), memory.SummarizeRequest{Turns: turns(1, 6), Structured: true})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || res.Calls != 1 {
		t.Fatalf("%d requests, %d calls", len(reqs), res.Calls)
	}
	r := reqs[0]
	if name, schema := r.Schema(); r.System() != DefaultPrompts().System || name != ReplySummary || schema == nil {
		t.Errorf("system/schema wrong: schema %q %s", name, schema)
	}
	if !strings.HasPrefix(r.User(), "Summarise this conversation.") || !strings.Contains(r.User(), "[1] user: turn-001") || !strings.Contains(r.User(), "[6] assistant: turn-006") {
		t.Errorf("user prompt %q", r.User())
	}
	sum := res.Summary
	if sum.CoveredFromSeq != 1 || sum.CoveredToSeq != 6 || sum.Model != "test-model" || sum.PromptVersion != DefaultPrompts().Version() {
		t.Errorf("metadata %+v", sum)
	}
	if sum.Narrative != "The user planned a trip to Lisbon." || len(sum.Entities) != 1 || len(res.Degraded) != 0 {
		t.Errorf("summary %+v degraded %v", sum, res.Degraded)
	}
	if res.InputTokens != 123 || res.OutputTokens != 45 {
		t.Errorf("tokens %d/%d, want the server's usage", res.InputTokens, res.OutputTokens)
	}
}

func TestExtensionSendsOnlyNewTurnsAndExistingSummary(t *testing.T) {
	srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Content: goodJSON}))
	s := newSum(t, srv, Options{})
	prev := memory.Summary{Narrative: "PREVIOUS-NARRATIVE about turns one to twenty.", Decisions: []string{"keep the old decision"}, CoveredFromSeq: 1, CoveredToSeq: 20}
	res, err := s.Summarize(context.Background(), memory.SummarizeRequest{Prev: &prev, Turns: turns(21, 25), Structured: true})
	if err != nil {
		t.Fatal(err)
	}
	u := srv.Requests()[0].User()
	if !strings.Contains(u, "PREVIOUS-NARRATIVE") || !strings.Contains(u, "keep the old decision") || !strings.HasPrefix(u, "Current summary:") {
		t.Errorf("existing summary not in extension prompt: %q", u)
	}
	for i := 1; i <= 20; i++ {
		if strings.Contains(u, fmt.Sprintf("turn-%03d", i)) {
			t.Fatalf("old turn %d sent to the LLM", i)
		}
	}
	for i := 21; i <= 25; i++ {
		if !strings.Contains(u, fmt.Sprintf("turn-%03d", i)) {
			t.Fatalf("new turn %d missing", i)
		}
	}
	if res.Summary.CoveredFromSeq != 1 || res.Summary.CoveredToSeq != 25 {
		t.Errorf("covered %d..%d", res.Summary.CoveredFromSeq, res.Summary.CoveredToSeq)
	}
	// Counted locally when the server reports no usage.
	if res.InputTokens < tokens.Count(u) || res.OutputTokens != tokens.Count(goodJSON) {
		t.Errorf("tokens %d/%d", res.InputTokens, res.OutputTokens)
	}
}

func TestOverriddenPrompts(t *testing.T) {
	srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Content: goodJSON}))
	s := newSum(t, srv, Options{})
	over := ResolvePrompts(memory.Prompts{System: "CUSTOM SYSTEM for the sales agent", Extension: "EXT<<{existing_summary}>> NEW<<{new_messages}>>"}, "Always name the customer.")
	prev := memory.Summary{Narrative: "old", CoveredFromSeq: 1, CoveredToSeq: 2}
	res, err := s.Summarize(context.Background(), memory.SummarizeRequest{Prev: &prev, Turns: turns(3, 4), Prompts: over, Structured: true})
	if err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if !strings.HasPrefix(r.System(), "CUSTOM SYSTEM for the sales agent") || !strings.HasSuffix(r.System(), "Always name the customer.") {
		t.Errorf("system %q", r.System())
	}
	if !strings.HasPrefix(r.User(), "EXT<<{") || !strings.Contains(r.User(), "NEW<<[3] user: turn-003") {
		t.Errorf("user %q", r.User())
	}
	if res.Summary.PromptVersion != over.Version() || res.Summary.PromptVersion == DefaultPrompts().Version() {
		t.Errorf("prompt version %q", res.Summary.PromptVersion)
	}
}

func TestReplies(t *testing.T) {
	prev := memory.Summary{Topics: []string{"prev topic"}, Decisions: []string{"prev decision"}, Narrative: "prev", CoveredFromSeq: 1, CoveredToSeq: 4}
	cases := []struct {
		name         string
		replies      []llmtest.Reply
		opts         Options
		wantDegraded string
		wantCalls    int
		check        func(t *testing.T, s memory.Summary)
	}{
		{"fenced json", []llmtest.Reply{{Content: "```json\n" + goodJSON + "\n```"}}, Options{}, "", 1, func(t *testing.T, s memory.Summary) {
			if s.Decisions[0] != "stay in Alfama" || s.Model != "test-model" {
				t.Errorf("%+v", s)
			}
		}},
		{"leaked template tokens", []llmtest.Reply{{Content: "<|im_start|>assistant\n" + goodJSON + "<|im_end|><|eot_id|>"}}, Options{}, "", 1, func(t *testing.T, s memory.Summary) {
			if s.Topics[0] != "hotel booking" {
				t.Errorf("%+v", s)
			}
		}},
		{"broken json keeps lists, text becomes narrative", []llmtest.Reply{{Content: `<|im_start|>{"topics": ["x"], "narrative": "The team reviewed the budget`}}, Options{}, "summary_narrative_only", 1, func(t *testing.T, s memory.Summary) {
			if s.Topics[0] != "prev topic" || s.Decisions[0] != "prev decision" {
				t.Errorf("previous lists lost: %+v", s)
			}
			if s.Narrative != "The team reviewed the budget" {
				t.Errorf("narrative %q", s.Narrative)
			}
			if s.CoveredToSeq != 8 {
				t.Errorf("covered to %d", s.CoveredToSeq)
			}
		}},
		{"500s fall back to extractive", []llmtest.Reply{{Status: http.StatusInternalServerError}}, Options{MaxRetries: 2}, "llm_unavailable", 3, func(t *testing.T, s memory.Summary) {
			if s.Model != "extractive" || s.CoveredFromSeq != 1 || s.CoveredToSeq != 8 || s.Decisions[0] != "prev decision" {
				t.Errorf("%+v", s)
			}
		}},
		{"500 then success", []llmtest.Reply{{Status: http.StatusInternalServerError}, {Content: goodJSON}}, Options{MaxRetries: 2}, "", 2, func(t *testing.T, s memory.Summary) {
			if s.Model != "test-model" {
				t.Errorf("%+v", s)
			}
		}},
		{"prose reply becomes the narrative", []llmtest.Reply{{Content: "<|im_start|>The user and the assistant reviewed the budget.<|im_end|>"}}, Options{}, "summary_narrative_only", 1, func(t *testing.T, s memory.Summary) {
			if s.Narrative != "The user and the assistant reviewed the budget." || s.Topics[0] != "prev topic" {
				t.Errorf("%+v", s)
			}
		}},
		{"a refused key is not retried", []llmtest.Reply{{Status: http.StatusUnauthorized}}, Options{MaxRetries: 2}, "llm_unavailable", 1, func(t *testing.T, s memory.Summary) {
			if s.Model != "extractive" {
				t.Errorf("%+v", s)
			}
		}},
		{"429 waits its Retry-After", []llmtest.Reply{{Status: http.StatusTooManyRequests, RetryAfter: 1}, {Content: goodJSON}}, Options{MaxRetries: 2, Backoff: time.Millisecond}, "", 2, func(t *testing.T, s memory.Summary) {
			if s.Model != "test-model" {
				t.Errorf("%+v", s)
			}
		}},
		{"slow reply times out", []llmtest.Reply{{Delay: 3 * time.Second, Content: goodJSON}}, Options{MaxRetries: -1, Timeout: 100 * time.Millisecond}, "llm_unavailable", 1, func(t *testing.T, s memory.Summary) {
			if s.Model != "extractive" {
				t.Errorf("%+v", s)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Sequence(c.replies...))
			c.opts.Fallback = extractive.New()
			s := newSum(t, srv, c.opts)
			p := prev.Clone()
			start := time.Now()
			res, err := s.Summarize(context.Background(), memory.SummarizeRequest{Prev: &p, Turns: turns(5, 8), Structured: true})
			if err != nil {
				t.Fatal(err)
			}
			if ra := c.replies[0].RetryAfter; ra > 0 && time.Since(start) < time.Duration(ra)*time.Second {
				t.Errorf("retried after %s; Retry-After said %ds", time.Since(start), ra)
			}
			if (c.wantDegraded == "" && len(res.Degraded) != 0) || (c.wantDegraded != "" && (len(res.Degraded) != 1 || res.Degraded[0] != c.wantDegraded)) {
				t.Errorf("degraded %v, want %q", res.Degraded, c.wantDegraded)
			}
			if res.Calls != c.wantCalls || len(srv.Requests()) != c.wantCalls {
				t.Errorf("calls %d, requests %d, want %d", res.Calls, len(srv.Requests()), c.wantCalls)
			}
			c.check(t, res.Summary)
		})
	}
}

func TestNoFallbackReturnsError(t *testing.T) {
	srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Status: 503}))
	s := newSum(t, srv, Options{MaxRetries: -1})
	if _, err := s.Summarize(context.Background(), memory.SummarizeRequest{Turns: turns(1, 2), Structured: true}); err == nil {
		t.Fatal("want error without a fallback")
	}
}

func TestNilModelUsesFallback(t *testing.T) {
	s := New(nil, Options{Fallback: extractive.New()})
	res, err := s.Summarize(context.Background(), memory.SummarizeRequest{Turns: turns(1, 2), Structured: true})
	if err != nil || res.Summary.Model != "extractive" || len(res.Degraded) != 1 || res.Degraded[0] != DegradedLLMUnavailable {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestCancelledContextIsNotFallback(t *testing.T) {
	srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Delay: 3 * time.Second, Content: goodJSON}))
	s := newSum(t, srv, Options{Fallback: extractive.New()})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Summarize(ctx, memory.SummarizeRequest{Turns: turns(1, 2), Structured: true}); err == nil {
		t.Fatal("a cancelled caller must get an error, not a fallback summary")
	}
}

func TestChunkedFolding(t *testing.T) {
	// Each reply echoes a small summary naming the last turn it saw.
	srv := llmtest.New(t, func(n int, r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: fmt.Sprintf(`{"topics":["budget"],"narrative":"chunk %d done"}`, n)}
	})
	budget := 400
	s := newSum(t, srv, Options{InputBudgetTokens: budget})
	all := turns(1, 60)
	res, err := s.Summarize(context.Background(), memory.SummarizeRequest{Turns: all, Structured: true})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) < 3 || res.Calls != len(reqs) {
		t.Fatalf("%d requests, %d calls: expected several chunks", len(reqs), res.Calls)
	}
	seen := map[int]int{}
	for i, r := range reqs {
		in := tokens.Count(r.System()) + tokens.Count(r.User())
		if in > budget+20 { // +20: newline separators are estimated
			t.Errorf("call %d has %d input tokens, budget %d", i, in, budget)
		}
		if i == 0 && !strings.HasPrefix(r.User(), "Summarise") {
			t.Errorf("first chunk must use the compression prompt")
		}
		if i > 0 && !strings.Contains(r.User(), fmt.Sprintf("chunk %d done", i-1)) {
			t.Errorf("chunk %d does not extend the previous result", i)
		}
		for _, tt := range all {
			if strings.Contains(r.User(), fmt.Sprintf("turn-%03d ", tt.Seq)) {
				seen[int(tt.Seq)]++
			}
		}
	}
	for i := 1; i <= 60; i++ {
		if seen[i] != 1 {
			t.Fatalf("turn %d sent %d times", i, seen[i])
		}
	}
	if res.Summary.CoveredFromSeq != 1 || res.Summary.CoveredToSeq != 60 || res.Summary.Narrative != fmt.Sprintf("chunk %d done", len(reqs)-1) {
		t.Errorf("%+v", res.Summary)
	}
}

func TestNarrativeOnlyMode(t *testing.T) {
	srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Content: "The team reviewed the quarterly budget."}))
	s := newSum(t, srv, Options{})
	res, err := s.Summarize(context.Background(), memory.SummarizeRequest{Turns: turns(1, 4), Structured: false})
	if err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Structured() || !strings.Contains(r.System(), "narrative only") {
		t.Errorf("json=%v system=%q", r.Structured(), r.System())
	}
	if res.Summary.Narrative != "The team reviewed the quarterly budget." || len(res.Degraded) != 0 {
		t.Errorf("%+v %v", res.Summary, res.Degraded)
	}
}

func TestRefreshWithoutNewTurns(t *testing.T) {
	srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Content: goodJSON}))
	s := newSum(t, srv, Options{})
	prev := memory.Summary{Narrative: "old words", CoveredFromSeq: 1, CoveredToSeq: 9, PromptVersion: "p-old"}
	res, err := s.Summarize(context.Background(), memory.SummarizeRequest{Prev: &prev, Structured: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.Requests()) != 1 || !strings.Contains(srv.Requests()[0].User(), "old words") {
		t.Fatal("refresh must rewrite the existing summary")
	}
	if res.Summary.CoveredToSeq != 9 || res.Summary.PromptVersion != DefaultPrompts().Version() {
		t.Errorf("%+v", res.Summary)
	}
}

func TestMaxTokensRespected(t *testing.T) {
	long := `{"decisions":[` + strings.TrimSuffix(strings.Repeat(`"a fairly long decision about the quarterly budget review",`, 20), ",") + `],"narrative":"` + strings.Repeat("Budget talk continued. ", 50) + `"}`
	srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Content: long}))
	s := newSum(t, srv, Options{})
	res, err := s.Summarize(context.Background(), memory.SummarizeRequest{Turns: turns(1, 4), Structured: true, MaxTokens: 150})
	if err != nil {
		t.Fatal(err)
	}
	if n := tokens.Summary(res.Summary); n > 150 {
		t.Fatalf("%d tokens, cap 150", n)
	}
}

func TestResolvePrompts(t *testing.T) {
	d := DefaultPrompts()
	cases := []struct {
		name  string
		over  memory.Prompts
		extra string
		want  memory.Prompts
	}{
		{"defaults", memory.Prompts{}, "", d},
		{"one override", memory.Prompts{Compression: "C {transcript}"}, "", memory.Prompts{System: d.System, Compression: "C {transcript}", Extension: d.Extension}},
		{"blank counts as unset", memory.Prompts{System: "  "}, "", d},
		{"extra instructions", memory.Prompts{System: "S"}, "Be brief.", memory.Prompts{System: "S\n\nAdditional instructions:\nBe brief.", Compression: d.Compression, Extension: d.Extension}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ResolvePrompts(c.over, c.extra); got != c.want {
				t.Errorf("got %+v", got)
			}
		})
	}
	for _, need := range []string{PlaceholderTranscript} {
		if !strings.Contains(d.Compression, need) {
			t.Errorf("default compression lacks %s", need)
		}
	}
	for _, need := range []string{PlaceholderExistingSummary, PlaceholderNewMessages} {
		if !strings.Contains(d.Extension, need) {
			t.Errorf("default extension lacks %s", need)
		}
	}
}

func TestFillDoesNotReexpand(t *testing.T) {
	got := withPlaceholders("A {existing_summary} B {new_messages}", map[string]string{PlaceholderExistingSummary: "{new_messages}", PlaceholderNewMessages: "x"})
	if got != "A {new_messages} B x" {
		t.Fatalf("%q", got)
	}
	if got := withPlaceholders("no placeholder", map[string]string{PlaceholderTranscript: "T"}); got != "no placeholder\n\nT" {
		t.Fatalf("%q", got)
	}
}

func TestCondenser(t *testing.T) {
	srv := llmtest.New(t, llmtest.Sequence(llmtest.Reply{Content: "<|im_start|>Short version of it.<|im_end|>"}, llmtest.Reply{Content: strings.Repeat("way too long ", 20)}, llmtest.Reply{Status: 500}))
	c := NewCondenser(srv.Model(t, "m"), time.Second, "", nil)
	text := strings.Repeat("A long message about many things. ", 10)
	got, err := c.Condense(context.Background(), text, 40)
	if err != nil || got != "Short version of it." {
		t.Fatalf("%q %v", got, err)
	}
	if !strings.Contains(srv.Requests()[0].System(), "at most 40 characters") || srv.Requests()[0].User() != text {
		t.Errorf("request %+v", srv.Requests()[0])
	}
	got, err = c.Condense(context.Background(), text, 40)
	if err != nil || len([]rune(got)) > 40 {
		t.Fatalf("overshoot not cut: %q %v", got, err)
	}
	if _, err := c.Condense(context.Background(), text, 40); err == nil {
		t.Fatal("want error on 500")
	}
	if got, err := c.Condense(context.Background(), "short", 40); err != nil || got != "short" || len(srv.Requests()) != 3 {
		t.Fatalf("short text must not call the LLM: %q %v", got, err)
	}
	if _, err := NewCondenser(nil, 0, "", nil).Condense(context.Background(), text, 10); err == nil {
		t.Fatal("want error without a model")
	}
}

func TestNewModel(t *testing.T) {
	cases := []struct {
		cfg     ModelOptions
		wantNil bool
		wantErr bool
	}{
		{ModelOptions{Provider: "none"}, true, false},
		{ModelOptions{}, true, false},
		{ModelOptions{Provider: "openai", Model: "gpt-4o-mini", BaseURL: "http://127.0.0.1:1/v1"}, false, false},
		{ModelOptions{Provider: "ollama", Model: "llama3", BaseURL: "http://127.0.0.1:1"}, false, false},
		{ModelOptions{Provider: "anthropic", Model: "claude", APIKey: "k"}, false, false},
		{ModelOptions{Provider: "bogus"}, true, true},
	}
	for _, c := range cases {
		t.Run(c.cfg.Provider, func(t *testing.T) {
			m, err := NewModel(c.cfg, "")
			if (err != nil) != c.wantErr || (m == nil) != c.wantNil {
				t.Fatalf("model %v err %v", m, err)
			}
		})
	}
}

// TestNarrativeSaysEachSentenceOnce: a model that retells the episodes'
// gists, repeats and all, gives a root whose narrative says each once.
func TestNarrativeSaysEachSentenceOnce(t *testing.T) {
	reply := `{"topics":["lockers"],"narrative":"The crew talked about lockers and shifts. The crew talked about lockers and shifts. Dana asked for nights. The crew talked about lockers and shifts."}`
	srv := llmtest.New(t, llmtest.Always(llmtest.Reply{Content: reply}))
	res, err := newSum(t, srv, Options{}).Summarize(context.Background(), memory.SummarizeRequest{Turns: turns(1, 4), Structured: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := "The crew talked about lockers and shifts. Dana asked for nights."; res.Summary.Narrative != want {
		t.Errorf("narrative %q, want %q", res.Summary.Narrative, want)
	}
}
