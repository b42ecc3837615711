package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

func TestWithDatabase(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://u:p@h:5432/old?sslmode=disable", "postgres://u:p@h:5432/new?sslmode=disable"},
		{"postgresql://h/", "postgresql://h/new"},
		{"host=h user=u dbname=old", "host=h user=u dbname=old dbname=new"},
	} {
		got, err := withDatabase(tc.in, "new")
		if err != nil || got != tc.want {
			t.Errorf("withDatabase(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if _, err := pgx.ParseConfig(got); err != nil {
			t.Errorf("%q does not parse: %v", got, err)
		}
		cfg, _ := pgx.ParseConfig(got)
		if cfg != nil && cfg.Database != "new" {
			t.Errorf("%q: database %q", got, cfg.Database)
		}
	}
}

func TestDSNGivesFreshDatabases(t *testing.T) {
	ctx := context.Background()
	a, b := DSN(t), DSN(t)
	if a == b {
		t.Fatalf("two calls gave the same database %s", a)
	}
	conn, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("fresh database has %d tables (%v)", n, err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE t (x int)`); err != nil {
		t.Fatal(err)
	}
}
