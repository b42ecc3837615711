package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/contextd/contextd/internal/pgtest"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/postgres"
	"github.com/contextd/contextd/store/storetest"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func open(tb testing.TB, dsn string) *postgres.Store {
	tb.Helper()
	s, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memory.Backend { return open(t, pgtest.DSN(t)) })
}

// TestMigrateConcurrently starts several "replicas" on one fresh database at
// once: the advisory lock must let exactly one apply each migration.
func TestMigrateConcurrently(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				errs[i] = postgres.Migrate(ctx, dsn)
				return
			}
			s, err := postgres.Open(ctx, dsn)
			if err == nil {
				s.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n, distinct int
	if err := conn.QueryRow(ctx, `SELECT count(*), count(DISTINCT version) FROM schema_migrations`).Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	if n == 0 || n != distinct {
		t.Errorf("schema_migrations has %d rows, %d versions", n, distinct)
	}
	var tables int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'
		AND tablename IN ('chats', 'messages', 'conversation_summaries', 'leases')`).Scan(&tables); err != nil || tables != 4 {
		t.Errorf("found %d of the 4 tables (%v)", tables, err)
	}
}

func TestOpenUnreachable(t *testing.T) {
	ctx := context.Background()
	// Nothing listens on port 1.
	_, err := postgres.Open(ctx, "postgres://nobody@127.0.0.1:1/x?sslmode=disable&connect_timeout=2")
	if !errors.Is(err, memory.ErrUnavailable) {
		t.Errorf("Open of an unreachable server: %v, want ErrUnavailable", err)
	}
	if _, err := postgres.Open(ctx, "postgres://%zz"); err == nil || errors.Is(err, memory.ErrUnavailable) {
		t.Errorf("Open with a malformed DSN: %v, want a plain error", err)
	}
}

func BenchmarkAppendBatch50(b *testing.B) {
	storetest.BenchmarkAppend(b, func(b *testing.B) memory.Backend { return open(b, pgtest.DSN(b)) }, 50)
}

func BenchmarkAppendParallel(b *testing.B) {
	storetest.BenchmarkAppendParallel(b, func(b *testing.B) memory.Backend { return open(b, pgtest.DSN(b)) }, 50, 4)
}
