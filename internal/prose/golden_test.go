package prose

import (
	"encoding/json"
	"flag"
	"testing"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/internal/prose/prosetest"
	"github.com/contextd/contextd/memory"
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
			for _, s := range lex.Sentences(c) {
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

func TestReadGoldenBench(t *testing.T) {
	prosetest.CheckGoldenHash(t, "bench.sha256", goldenRead(t, prosetest.BenchChats(16, 40)), *update)
}

func TestReadGoldenLong(t *testing.T) {
	prosetest.CheckGoldenHash(t, "long.sha256", goldenRead(t, prosetest.LongChats()), *update)
}

func TestReadGoldenLoCoMo(t *testing.T) {
	prosetest.CheckGoldenHash(t, "locomo.sha256", goldenRead(t, prosetest.LoCoMo(t)), *update)
}
