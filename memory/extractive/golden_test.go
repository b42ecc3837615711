package extractive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/memory/internal/prose/prosetest"
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

// checkGolden compares got with the golden file (rewritten with -update).
// The golden files were computed on the regular-expression code before the
// hand-written scanners replaced it: a speed-up must not change a byte.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("%s differs at line %d:\n got %s\nwant %s", name, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%s differs: %d lines, want %d", name, len(gl), len(wl))
	}
}

func TestSummarizeGoldenBench(t *testing.T) {
	checkGolden(t, "bench.json", goldenSummaries(t, prosetest.BenchChats(16, 40)))
}

func TestSummarizeGoldenLong(t *testing.T) {
	checkGolden(t, "long.json", goldenSummaries(t, prosetest.LongChats()))
}

// The LoCoMo conversations stay outside the repository: only the hash of
// their summaries is kept.
func TestSummarizeGoldenLoCoMo(t *testing.T) {
	sum := sha256.Sum256(goldenSummaries(t, prosetest.LoCoMo(t)))
	checkGolden(t, "locomo.sha256", []byte(hex.EncodeToString(sum[:])+"\n"))
}
