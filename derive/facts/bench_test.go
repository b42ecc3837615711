package facts

import (
	"testing"

	"github.com/contextd/contextd/internal/prose/prosetest"
	"github.com/contextd/contextd/memory"
)

// BenchmarkExtractChat draws the facts of one chat of 40 load generator
// turns: what an import's episode costs on the append path.
func BenchmarkExtractChat(b *testing.B) { benchExtract(b, prosetest.BenchChats(16, 40)) }

// BenchmarkExtractLong draws the facts of one chat of long technical turns.
func BenchmarkExtractLong(b *testing.B) { benchExtract(b, prosetest.LongChats()) }

func benchExtract(b *testing.B, chats [][]memory.Message) {
	n := 0
	prosetest.ReportCPU(b, func(i int) { n += len(Extract(chats[i%len(chats)])) })
	if b.N >= len(chats) && n == 0 {
		b.Fatal("no facts drawn")
	}
}
