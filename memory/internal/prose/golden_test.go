package prose

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/memory/internal/prose/prosetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenRead is how each turn reads: speaker, clean body, sentences and
// which of them are prose, what else the body shares.
func goldenRead(t *testing.T, chats [][]memory.Message) []byte {
	t.Helper()
	type sent struct {
		Text  string
		Prose bool
	}
	type turn struct {
		Speaker Speaker
		Clean   string
		Sents   []sent
		Shares  []string
	}
	var out []turn
	for _, chat := range chats {
		for _, m := range chat {
			r := Read(m)
			c := Clean(r.Body)
			tr := turn{Speaker: r.Speaker, Clean: c, Shares: Shares(r.Body)}
			for _, s := range Sentences(c) {
				tr.Sents = append(tr.Sents, sent{s, IsProse(s)})
			}
			out = append(out, tr)
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkGoldenHash compares the hash of got with the golden file (rewritten
// with -update). The golden hashes were computed on the regular-expression
// code before the hand-written scanners replaced it.
func checkGoldenHash(t *testing.T, name string, got []byte) {
	t.Helper()
	sum := sha256.Sum256(got)
	h := hex.EncodeToString(sum[:]) + "\n"
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(h), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if h != string(want) {
		t.Fatalf("%s: the text reads differently (hash %s, want %s)", name, h, want)
	}
}

func TestReadGoldenBench(t *testing.T) {
	checkGoldenHash(t, "bench.sha256", goldenRead(t, prosetest.BenchChats(16, 40)))
}

func TestReadGoldenLong(t *testing.T) {
	checkGoldenHash(t, "long.sha256", goldenRead(t, prosetest.LongChats()))
}

func TestReadGoldenLoCoMo(t *testing.T) {
	checkGoldenHash(t, "locomo.sha256", goldenRead(t, prosetest.LoCoMo(t)))
}
