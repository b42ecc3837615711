package engine

import (
	"context"
	"testing"

	"github.com/contextd/contextd/internal/pgtest"
	"github.com/contextd/contextd/store/postgres"
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
	benchContext200(b, New(testDeps(st)))
}
