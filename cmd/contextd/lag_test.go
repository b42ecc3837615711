package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

type lagContext struct {
	Context  string   `json:"context"`
	Degraded []string `json:"degraded"`
}

// Lag is visible, through the binary with a scripted LLM: right after the
// summary covers a chat, a context for a question the vault episode
// answers either holds the episode's fact or names the lag
// (index_behind); within 10 s it holds it, and the episode and fact
// backlogs are 0. (The worker kicks the indexer when it closes episodes:
// before, they waited for the indexer's poll, and the context said
// nothing.)
func TestLagIsVisibleThroughBinary(t *testing.T) {
	llm := newScriptedLLM(t, 0)
	s := startBinary(t, llmPathConfig(llm.srv.URL, sqliteStorage))
	s.must(201, "POST", "/v1/chats/lag/messages", map[string]any{"user_id": "alice", "agent": "historian", "messages": projectTurns(64)}, nil)
	var sum summaryAnswer
	for deadline := time.Now().Add(60 * time.Second); sum.Summary == nil || sum.Summary.CoveredToSeq < 60; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the summary does not cover the chat after 60s")
		}
		s.must(200, "GET", "/v1/chats/lag/summary", nil, &sum)
	}
	ask := map[string]any{"chat_id": "lag", "agent": "historian", "strategy": "rag_augmented", "budget_tokens": 600,
		"query": "What did the crew name the new vault?"}
	var c lagContext
	s.must(200, "POST", "/v1/context", ask, &c)
	t.Logf("right after the summary: name shown %v, degraded %v", strings.Contains(c.Context, "Bluebird"), c.Degraded)
	if !strings.Contains(c.Context, "Bluebird") && !slices.Contains(c.Degraded, "index_behind") {
		t.Errorf("right after the summary: neither the vault's name nor index_behind (degraded %v):\n%s", c.Degraded, c.Context)
	}
	waitFor(t, 10*time.Second, "the context to hold the vault's name", func() bool {
		s.must(200, "POST", "/v1/context", ask, &c)
		return strings.Contains(c.Context, "Bluebird")
	})
	if slices.Contains(c.Degraded, "index_behind") {
		t.Errorf("caught up, still degraded %v", c.Degraded)
	}
	waitFor(t, 10*time.Second, "the episode and fact backlogs to drain", func() bool {
		_, m := s.do("GET", "/metrics", nil, nil)
		return strings.Contains(string(m), "\ncontextd_backlog_unindexed_episodes 0\n") &&
			strings.Contains(string(m), "\ncontextd_backlog_unindexed_facts 0\n")
	})
}
