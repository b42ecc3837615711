package extractive

import (
	"context"
	"encoding/json"
	"flag"
	"testing"
	"time"

	"github.com/contextd/contextd/internal/prose/prosetest"
	"github.com/contextd/contextd/memory"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenSummaries summarises each chat twice: its first summary over the
// first half of its turns, then the second half merged into it (which
// reads answered questions and merges lists).
func goldenSummaries(t *testing.T, chats [][]memory.Message) []byte {
	t.Helper()
	s := New()
	s.now = func() time.Time { return time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC) }
	var out []memory.Summary
	for _, turns := range chats {
		half := len(turns) / 2
		first, err := s.Summarize(context.Background(), memory.SummarizeRequest{Turns: turns[:half], Structured: true})
		if err != nil {
			t.Fatal(err)
		}
		second, err := s.Summarize(context.Background(), memory.SummarizeRequest{Prev: &first.Summary, Turns: turns[half:], Structured: true})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, first.Summary, second.Summary)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func TestSummarizeGoldenBench(t *testing.T) {
	prosetest.CheckGolden(t, "bench.json", goldenSummaries(t, prosetest.BenchChats(16, 40)), *update)
}

func TestSummarizeGoldenLong(t *testing.T) {
	prosetest.CheckGolden(t, "long.json", goldenSummaries(t, prosetest.LongChats()), *update)
}

// The LoCoMo conversations stay outside the repository: only the hash of
// their summaries is kept.
func TestSummarizeGoldenLoCoMo(t *testing.T) {
	prosetest.CheckGoldenHash(t, "locomo.sha256", goldenSummaries(t, prosetest.LoCoMo(t)), *update)
}
