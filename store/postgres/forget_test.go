package postgres_test

import (
	"context"
	"testing"

	"github.com/contextd/contextd/internal/pgtest"
	"github.com/contextd/contextd/store/storetest"
	"github.com/jackc/pgx/v5"
)

// TestForgottenTextLeavesTheTables: after a message is deleted and what was
// derived from it rebuilt, no row of any table holds its text (the summary
// chain's old records included).
func TestForgottenTextLeavesTheTables(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	storetest.ForgetAndRebuild(t, open(t, dsn))
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	like := "%" + storetest.SecretMark + "%"
	for table, cond := range map[string]string{
		"messages":               `content LIKE $1 OR name LIKE $1 OR metadata::text LIKE $1`,
		"facts":                  `text LIKE $1`,
		"conversation_summaries": `summary::text LIKE $1`,
		"episodes":               `short LIKE $1 OR summary::text LIKE $1`,
	} {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE `+cond, like).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: %d rows still hold the deleted text", table, n)
		}
	}
	var forgets int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM forgets`).Scan(&forgets); err != nil || forgets != 0 {
		t.Errorf("forget work left: %d, %v", forgets, err)
	}
}
