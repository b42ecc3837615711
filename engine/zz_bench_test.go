package engine

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/contextd/contextd/memory"
)

func BenchmarkZZUpdates(b *testing.B) {
	var chats [][][2]string
	bs, _ := os.ReadFile("/tmp/all-turns2.json")
	json.Unmarshal(bs, &chats)
	n := 0
	for _, c := range chats {
		n += len(c)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, turns := range chats {
			var ups []chatUpdate
			for i, u := range turns {
				ups = append(ups, readUpdate(memory.Message{Seq: int64(i + 1), Role: memory.Role(u[0]), Content: u[1]}, ups)...)
			}
			for i, u := range turns {
				r := RAGTurn{Seq: int64(i + 1), Content: u[1]}
				markUpdate(ups, &r)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/turn")
}
