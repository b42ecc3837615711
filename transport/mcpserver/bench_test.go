package mcpserver_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkGetContext compares get_context over MCP with POST /v1/context
// on the same chat and server, reporting p50 and p99 of each (go test
// -bench GetContext -benchtime 2000x ./transport/mcpserver).
func BenchmarkGetContext(b *testing.B) {
	url := newServer(b, nil, false)
	s := connect(b, url, "")
	var msgs []any
	for i := range 200 {
		msgs = append(msgs, map[string]any{"role": []string{"user", "assistant"}[i%2], "content": fmt.Sprintf("turn %d about the Lisbon trip, hotels and trains", i)})
	}
	call(b, s, "add_messages", map[string]any{"chat_id": "bench", "messages": msgs})
	body := `{"chat_id":"bench","query":"which hotel","budget_tokens":2000}`
	run := func(b *testing.B, once func()) {
		durs := make([]time.Duration, 0, b.N)
		for b.Loop() {
			t0 := time.Now()
			once()
			durs = append(durs, time.Since(t0))
		}
		slices.Sort(durs)
		b.ReportMetric(float64(durs[len(durs)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(durs[len(durs)*99/100].Microseconds()), "p99-µs")
	}
	b.Run("http", func(b *testing.B) {
		run(b, func() {
			resp, err := http.Post(url+"/v1/context", "application/json", strings.NewReader(body))
			if err != nil || resp.StatusCode != 200 {
				b.Fatalf("%v %v", resp, err)
			}
			resp.Body.Close()
		})
	})
	b.Run("mcp", func(b *testing.B) {
		args := map[string]any{"chat_id": "bench", "query": "which hotel", "budget_tokens": 2000}
		run(b, func() {
			r, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_context", Arguments: args})
			if err != nil || r.IsError {
				b.Fatalf("%v %v", r, err)
			}
		})
	})
}
