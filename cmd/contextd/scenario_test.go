package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/cmd/contextd/internal/eval"
)

// TestScenarioSuite runs the embedded scenario chats (eval/scenarios/*.yaml)
// through the real binary over HTTP, on the embedded default with no LLM,
// and asserts the context text a model reads: every count of the report is
// 0 and every must_contain string is present (see `contextd eval
// scenarios` for the same run as a report). It runs in well under a
// minute, -short or not.
func TestScenarioSuite(t *testing.T) {
	scs, err := eval.LoadScenarios()
	if err != nil {
		t.Fatal(err)
	}
	s := startBinary(t, embeddedConfig)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	rep := eval.RunScenarios(ctx, s.base, scs, eval.ScenarioOptions{})
	var b strings.Builder
	rep.Write(&b, 5)
	t.Logf("scenario suite ran in %s%s", time.Since(start).Round(time.Millisecond), b.String())
	if errs := rep.Errors(); len(errs) > 0 {
		t.Fatalf("scenarios failed to run: %v", errs)
	}
	if len(rep.Chats) != len(scs) {
		t.Fatalf("%d chats run of %d", len(rep.Chats), len(scs))
	}
	v := rep.Counts()
	// The text's faithfulness holds by construction: 0, and so do stale
	// values. What retrieval finds at the probes' budgets is 0 too: every
	// must_contain string present (a long turn's second matching passage,
	// the refund log's error line, was the last one missing).
	for _, c := range []struct {
		what    string
		n, most int
	}{
		{"turns missing while the chat fits", v.Missing, 0},
		{"non-consecutive turns shown adjacent", v.Adjacent, 0},
		{"turns under 600 characters cut", v.Cut, 0},
		{"\"Unanswered question\" facts for answered questions", v.Junk, 0},
		{"stale values unmarked", v.Stale, 0},
		{"must_contain strings absent", v.MustContain, 0},
	} {
		if c.n > c.most {
			t.Errorf("%s: %d (want at most %d)", c.what, c.n, c.most)
		}
	}
}
