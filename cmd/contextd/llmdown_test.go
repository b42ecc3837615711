//go:build unix

package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/derive/llmsum/llmtest"
)

// An LLM that hangs costs a context call with truncation_strategy llm one
// wait of llm.timeout, not one per message to condense (it cost eight
// here, past the request timeout), and later calls none until DownFor has
// passed; the answer says so, and /readyz names the LLM unavailable.
func TestLLMDownOneWaitPerRequest(t *testing.T) {
	llm := llmtest.New(t, llmtest.Always(llmtest.Reply{Content: "late", Delay: 3 * time.Second}))
	s := startBinary(t, fmt.Sprintf(`server:
  addr: "127.0.0.1:0"
  request_timeout: 30s
%s
vector:
  driver: none
llm:
  provider: openai
  model: scripted
  base_url: %q
  api_key: test
  timeout: 300ms
supervisor:
  memory:
    strategy: running_summary
    summary_trigger_turns: 1000
    episodes: false
    truncation_strategy: llm
    truncation_max_chars: 60
`, sqliteStorage, llm.URL))
	var msgs []map[string]any
	for i := range 8 {
		msgs = append(msgs, map[string]any{"role": "user", "content": fmt.Sprintf("Message %d: %s", i, strings.Repeat("a long line about the plan for the launch. ", 20))}) // past a passage: cut
	}
	s.must(201, "POST", "/v1/chats/c1/messages", map[string]any{"messages": msgs}, nil)

	var ans struct {
		Degraded []string `json:"degraded"`
	}
	condenses := func() int {
		n := 0
		for _, r := range llm.Requests() {
			if strings.Contains(r.System(), "Condense") {
				n++
			}
		}
		return n
	}
	s.must(200, "POST", "/v1/context", map[string]any{"chat_id": "c1", "budget_tokens": 4000}, &ans)
	if n := condenses(); n != 1 {
		t.Errorf("one context call asked the hanging LLM to condense %d times, want once", n)
	}
	if !slices.Contains(ans.Degraded, "truncation_llm_timeout") || !slices.Contains(ans.Degraded, "truncation_llm_unavailable") {
		t.Errorf("degraded %v, want the timeout and then the model left alone", ans.Degraded)
	}
	s.must(200, "POST", "/v1/context", map[string]any{"chat_id": "c1", "budget_tokens": 4000}, &ans)
	if n := condenses(); n != 1 || !slices.Contains(ans.Degraded, "truncation_llm_unavailable") {
		t.Errorf("the next call: %d condense calls in all, degraded %v; want no new call", n, ans.Degraded)
	}
	var ready map[string]string
	st, _ := s.do("GET", "/readyz", nil, &ready)
	if ready["llm"] != "unavailable" {
		t.Errorf("/readyz %d %v, want llm unavailable", st, ready)
	}
}

// A retrieved turn cut without the LLM it was to be condensed by says so
// in degraded, as a recent turn does.
func TestRAGTruncationFallbackIsSaid(t *testing.T) {
	llm := llmtest.New(t, llmtest.Always(llmtest.Reply{Status: 500, Error: "down"}))
	s := startBinary(t, fmt.Sprintf(`server:
  addr: "127.0.0.1:0"
%s
llm:
  provider: openai
  model: scripted
  base_url: %q
  api_key: test
  timeout: 2s
supervisor:
  memory:
    strategy: rag_augmented
    summary_recent_turns: 2
    summary_trigger_turns: 1000
    episodes: false
    truncation_strategy: llm
    truncation_max_chars: 100
`, sqliteStorage, llm.URL))
	// Longer than a passage: a shorter turn is never cut.
	msgs := []map[string]any{{"role": "user", "content": "My grandmother Rosalind kept the lighthouse on the northern cape for forty years, " +
		"and every winter she wrote letters to the keepers of the other lighthouses along the coast about the storms. " +
		strings.Repeat("She logged every ship that passed, the wind, the swell and the colour of the sky at dawn. ", 6)}}
	for i := range 7 {
		msgs = append(msgs, map[string]any{"role": "user", "content": fmt.Sprintf("short note %d", i)})
	}
	s.must(201, "POST", "/v1/chats/c1/messages", map[string]any{"messages": msgs}, nil)
	var ans struct {
		Context  string   `json:"context"`
		Degraded []string `json:"degraded"`
	}
	s.must(200, "POST", "/v1/context", map[string]any{"chat_id": "c1", "query": "lighthouse grandmother Rosalind"}, &ans)
	if !strings.Contains(ans.Context, "Rosalind") {
		t.Fatalf("the long turn was not retrieved (the test cannot fail): %q", ans.Context)
	}
	if !slices.ContainsFunc(ans.Degraded, func(d string) bool { return strings.HasPrefix(d, "truncation_llm_") }) {
		t.Errorf("degraded %v: the retrieved turn was cut without the LLM, unsaid", ans.Degraded)
	}
}
