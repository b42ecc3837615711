package facts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/memory/internal/prose/prosetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenFacts are the facts and open questions of each chat.
func goldenFacts(t *testing.T, chats [][]memory.Message) []byte {
	t.Helper()
	type chatFacts struct {
		Facts     []memory.Fact
		Questions []Question
	}
	var out []chatFacts
	for _, turns := range chats {
		fs, qs := ExtractAll(turns)
		out = append(out, chatFacts{fs, qs})
		if !reflect.DeepEqual(fs, Extract(turns)) || !reflect.DeepEqual(qs, Unanswered(turns)) {
			t.Fatalf("ExtractAll differs from Extract and Unanswered on %q…", turns[0].Content)
		}
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

func TestExtractGoldenBench(t *testing.T) {
	checkGolden(t, "bench.json", goldenFacts(t, prosetest.BenchChats(16, 40)))
}

func TestExtractGoldenLong(t *testing.T) {
	checkGolden(t, "long.json", goldenFacts(t, prosetest.LongChats()))
}

// The LoCoMo conversations stay outside the repository: only the hash of
// their facts is kept.
func TestExtractGoldenLoCoMo(t *testing.T) {
	sum := sha256.Sum256(goldenFacts(t, prosetest.LoCoMo(t)))
	checkGolden(t, "locomo.sha256", []byte(hex.EncodeToString(sum[:])+"\n"))
}
