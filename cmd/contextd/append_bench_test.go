package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/contextd/contextd/internal/loadgen"
)

// benchFactLines are statements the facts extractor draws a fact from;
// one turn in five carries one, so the benchmark pays for facts as a chat
// that talks about its user does.
var benchFactLines = []string{
	"I'm vegetarian.", "I prefer window seats on long flights.", "We decided to ship the beta on Friday.",
	"I live in Lisbon.", "I don't eat shellfish.", "I'm allergic to penicillin.", "I work as a data engineer.",
}

// benchAppendBodies are the bodies that append a turns-turn chat in
// batches of batch, each turn from the load generator's corpus.
func benchAppendBodies(turns, batch int) [][]byte {
	c := loadgen.Corpus{Seed: 7}
	var bodies [][]byte
	for from := 0; from < turns; from += batch {
		type msg struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		}
		var msgs []msg
		for t := from; t < min(from+batch, turns); t++ {
			text := c.Turn(1, t)
			if t%5 == 0 {
				text = benchFactLines[(t/5)%len(benchFactLines)] + " " + text
			}
			msgs = append(msgs, msg{Role: c.Role(t), Content: text})
		}
		b, _ := json.Marshal(map[string]any{"user_id": "bench-user", "messages": msgs})
		bodies = append(bodies, b)
	}
	return bodies
}

// BenchmarkAppendChat1500 appends a 1,500-turn chat in batches of 100
// through the HTTP API of a contextd on the embedded default (SQLite and
// the embedded index in a temp dir, background workers running, as serve
// runs them), one new chat per iteration, and reports turns/s of the
// appends. `make bench-append` runs it against a base commit alternately.
func BenchmarkAppendChat1500(b *testing.B) {
	cfg := tempConfig(b)
	app, err := build(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer app.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := app.StartWorkers(ctx)
	defer func() { cancel(); <-done }()
	srv := httptest.NewServer(app.Handler)
	defer srv.Close()
	bodies := benchAppendBodies(1500, 100)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		url := fmt.Sprintf("%s/v1/chats/bench-%d/messages", srv.URL, i)
		for _, body := range bodies {
			resp, err := http.Post(url, "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				b.Fatalf("append: HTTP %d", resp.StatusCode)
			}
		}
	}
	b.ReportMetric(float64(1500*b.N)/b.Elapsed().Seconds(), "turns/s")
}
