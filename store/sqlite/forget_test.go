package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/contextd/contextd/store/sqlite"
	"github.com/contextd/contextd/store/storetest"
)

// TestForgottenTextLeavesTheTables: after a message is deleted and what was
// derived from it rebuilt, no row of any table holds its text (the summary
// chain's old records included).
func TestForgottenTextLeavesTheTables(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.ForgetAndRebuild(t, s)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	like := "%" + storetest.SecretMark + "%"
	for table, cond := range map[string]string{
		"messages":               `content LIKE ?1 OR name LIKE ?1 OR metadata LIKE ?1`,
		"facts":                  `text LIKE ?1`,
		"conversation_summaries": `summary LIKE ?1`,
		"episodes":               `short LIKE ?1 OR summary LIKE ?1`,
	} {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE `+cond, like).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: %d rows still hold the deleted text", table, n)
		}
	}
	var forgets int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM forgets`).Scan(&forgets); err != nil || forgets != 0 {
		t.Errorf("forget work left: %d, %v", forgets, err)
	}
}
