package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/contextd/contextd/config"
)

// Right after a bulk import (no background worker running), the first
// context of a chat whose extractive summary lags carries a summary and no
// summary_stale; with an LLM configured the summary stays in the
// background and the answer says summary_stale.
func TestFirstAnswerAfterImportHasFreshExtractiveSummary(t *testing.T) {
	for _, tc := range []struct {
		name      string
		llm       bool
		wantFresh bool
	}{{"extractive", false, true}, {"llm", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			_, srv := newApp(t, func(c *config.Config) {
				if tc.llm {
					// Never called: the worker is not running and the
					// request path must not call an LLM.
					c.LLM = config.LLM{Provider: "openai", Model: "m", BaseURL: "http://127.0.0.1:1/v1"}
				}
			})
			var msgs []string
			// 1,700 tokens: past the 700-token budget, so the summary
			// stands in for the older turns (a chat that fits is shown whole).
			for i := 1; i <= 120; i++ {
				msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"turn %d about the Lisbon trip and hotel %d"}`, i, i))
			}
			if code, body := call(t, "POST", srv.URL+"/v1/chats/imp/messages", "", `{"messages":[`+strings.Join(msgs, ",")+`]}`); code != 201 {
				t.Fatalf("import: %d %s", code, body)
			}
			code, body := call(t, "POST", srv.URL+"/v1/context", "", `{"chat_id":"imp","budget_tokens":700,"strategy":"running_summary"}`)
			if code != 200 {
				t.Fatalf("context: %d %s", code, body)
			}
			var res struct {
				Sections struct {
					Summary *struct {
						CoveredToSeq int64 `json:"covered_to_seq"`
					} `json:"summary"`
				} `json:"sections"`
				Usage struct {
					SummarizedTurns int64 `json:"summarised_turns"`
					DroppedTurns    int64 `json:"dropped_turns"`
				} `json:"usage"`
				Degraded []string `json:"degraded"`
			}
			if err := json.Unmarshal([]byte(body), &res); err != nil {
				t.Fatal(err)
			}
			stale := strings.Contains(strings.Join(res.Degraded, ","), "summary_stale")
			if tc.wantFresh {
				if stale || res.Sections.Summary == nil || res.Sections.Summary.CoveredToSeq != 110 || res.Usage.SummarizedTurns != 110 {
					t.Fatalf("want a summary covering 1..110 and no summary_stale: %s", body)
				}
				return
			}
			if !stale || res.Sections.Summary != nil {
				t.Fatalf("with an LLM the summary stays in the background: %s", body)
			}
		})
	}
}
