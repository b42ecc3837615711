package main

import (
	"context"
	"strings"
	"testing"
)

// The backlogs of every derived kind are gauges beside the turns': turns
// whose facts are not drawn yet, then the facts not yet indexed, then none.
func TestBacklogGauges(t *testing.T) {
	app, srv := newApp(t, nil)
	body := `{"user_id":"u","messages":[{"role":"user","content":"I'm vegetarian."},{"role":"user","content":"I live in Lisbon."}]}`
	if st, b := call(t, "POST", srv.URL+"/v1/chats/c1/messages", "", body); st != 201 {
		t.Fatalf("append: %d %s", st, b)
	}
	ctx := context.Background()
	steps := []struct {
		name string
		run  func() error
		want []string
	}{
		{"after the append", nil, []string{"contextd_backlog_undrawn_turns 2", "contextd_backlog_unindexed_facts 0", "contextd_backlog_unindexed_episodes 0", "contextd_backlog_unindexed_turns 2"}},
		{"facts drawn", func() error { _, err := app.Arrivals.DrainOnce(ctx); return err }, []string{"contextd_backlog_undrawn_turns 0", "contextd_backlog_unindexed_facts 2"}},
		{"indexed", func() error { _, err := app.Indexer.DrainOnce(ctx); return err }, []string{"contextd_backlog_unindexed_facts 0", "contextd_backlog_unindexed_turns 0"}},
	}
	for _, st := range steps {
		if st.run != nil {
			if err := st.run(); err != nil {
				t.Fatal(err)
			}
		}
		code, m := call(t, "GET", srv.URL+"/metrics", "", "")
		if code != 200 {
			t.Fatalf("metrics: %d", code)
		}
		for _, w := range st.want {
			if !strings.Contains(m, "\n"+w+"\n") {
				t.Errorf("%s: /metrics lacks %q", st.name, w)
			}
		}
	}
}
