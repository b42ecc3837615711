package engine

import (
	"context"
	"testing"
	"time"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/internal/pgtest"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/memory/postgres"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// BenchmarkContext200Postgres: /v1/context assembly for a 200-turn chat
// against Postgres, without HTTP (target p95 ≤ 5 ms).
func BenchmarkContext200Postgres(b *testing.B) {
	ctx := context.Background()
	st, err := postgres.Open(ctx, pgtest.DSN(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	s := &Service{Config: config.Default(), Store: st}
	appendN(b, s, "c1", 1, 200, 20)
	fs := &fakeSummaries{store: st, upTo: 190}
	if _, _, err := fs.Extend(ctx, memory.ChatKey{Tenant: "default", ChatID: "c1"}, true); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := s.Context(ctx, "default", ContextInput{ChatID: "c1", Query: "topic 3", Strategy: StrategyRunningSummary}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	reportPercentiles(b, lat)
}
