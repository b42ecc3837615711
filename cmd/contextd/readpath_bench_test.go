//go:build unix

package main

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/telemetry"
)

// BenchmarkContextUnderAppends is `make bench-http`'s /v1/context routes
// in process, without wrk and loopback and their noise: the default wiring
// of `contextd serve`, its corpus (200 chats of 75 turns, seed.py's words,
// 20 users), indexed and summarised, then one context a request on a random
// chat with one of the wrk scripts' queries, and one turn appended to a
// random chat every tenth request, as CHURN=200 does beside ~2,000
// rag_augmented requests a second (the background workers do not run: the
// appended turns wait, as they do for a moment under churn). It reports
// the process's CPU time per request, the GC's included.
func BenchmarkContextUnderAppends(b *testing.B) {
	for _, strategy := range []string{"running_summary", "rag_augmented"} {
		b.Run(strategy, func(b *testing.B) {
			a := benchReadPathApp(b, 200, 75)
			rng := rand.New(rand.NewPCG(1, 2))
			queries := []string{"which hotel did we book in lisbon", "when is the train to sintra", "what was the refund budget",
				"did the postgres migration deploy on friday", "what is the pricing of the contract"}
			ctx := context.Background()
			n := 0
			request := func() {
				if n%10 == 9 {
					c := rng.IntN(200)
					benchAppend(ctx, b, a, c, []engine.InMessage{{Role: "user", Content: seedTurn(rng, 1000+n)}})
				}
				body := fmt.Sprintf(`{"chat_id":"chat-%d","budget_tokens":2000,"strategy":%q,"query":%q}`,
					rng.IntN(200), strategy, queries[rng.IntN(len(queries))])
				req := httptest.NewRequest(http.MethodPost, "/v1/context", strings.NewReader(body))
				req.Host = "localhost" // httptest's example.com is not a name of this server (checkHost)
				req.Header.Set("Content-Type", "application/json")
				w := discardWriter{header: http.Header{}}
				a.Handler.ServeHTTP(&w, req)
				if w.code != http.StatusOK || w.n == 0 {
					b.Fatalf("context: %d, %d bytes", w.code, w.n)
				}
				n++
			}
			for range 2000 { // caches warm, as after wrk's first seconds
				request()
			}
			b.ReportAllocs()
			c0, n0 := processCPU(b), n
			for b.Loop() {
				request()
			}
			b.ReportMetric(float64((processCPU(b)-c0).Microseconds())/float64(n-n0), "cpu-µs/req")
		})
	}
}

// benchReadPathApp is the default wiring with chats chats of turns turns
// (seed.py's corpus), indexed and summarised.
func benchReadPathApp(b *testing.B, chats, turns int) *App {
	b.Helper()
	ctx := context.Background()
	cfg := tempConfig(b)
	tr, _ := telemetry.Setup(ctx, telemetry.Config{}) // off, as serve runs without an endpoint
	a, err := buildTraced(ctx, cfg, slog.New(slog.DiscardHandler), tr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(a.Close)
	rng := rand.New(rand.NewPCG(1, 1))
	for c := range chats {
		msgs := make([]engine.InMessage, turns)
		for t := range msgs {
			msgs[t] = engine.InMessage{Role: []string{"user", "assistant"}[t%2], Content: seedTurn(rng, t)}
		}
		benchAppend(ctx, b, a, c, msgs)
	}
	if err := a.Worker.Drain(ctx); err != nil { // first: it closes the episodes the indexer then takes
		b.Fatal(err)
	}
	for {
		n, err := a.Indexer.DrainOnce(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	return a
}

func benchAppend(ctx context.Context, b *testing.B, a *App, chat int, msgs []engine.InMessage) {
	in := engine.AppendInput{UserID: fmt.Sprintf("user-%d", chat%20), Messages: msgs}
	if _, err := a.Service.Append(ctx, "default", fmt.Sprintf("chat-%d", chat), in); err != nil {
		b.Fatal(err)
	}
}

// seedWords are scripts/bench-http/seed.py's.
var seedWords = strings.Fields(`hotel lisbon train sintra booking invoice refund budget deploy friday postgres qdrant
vegetarian dinner flight meeting report release schedule customer ticket migration
contract pricing design review backlog cache latency profile summary episode`)

// seedTurn is one of seed.py's turns: "turn N: " and 8 to 40 of its words.
func seedTurn(rng *rand.Rand, n int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "turn %d:", n)
	for range 8 + rng.IntN(33) {
		sb.WriteString(" " + seedWords[rng.IntN(len(seedWords))])
	}
	sb.WriteString(".")
	return sb.String()
}

// discardWriter is an http.ResponseWriter that keeps only the status and
// the body's length: net/http's writer does not keep the body either, and
// httptest's recorder would add its copy to the allocations measured.
type discardWriter struct {
	header http.Header
	code   int
	n      int
}

func (w *discardWriter) Header() http.Header { return w.header }

func (w *discardWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(p)
	return len(p), nil
}
