package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/contextd/contextd/memory"
)

func TestZZMarks(t *testing.T) {
	var chats [][][2]string
	b, _ := os.ReadFile("/tmp/all-turns2.json")
	json.Unmarshal(b, &chats)
	f, _ := os.Create(os.Getenv("ZZOUT"))
	defer f.Close()
	for ci, turns := range chats {
		var ups []chatUpdate
		for i, u := range turns {
			ups = append(ups, readUpdate(memory.Message{Seq: int64(i + 1), Role: memory.Role(u[0]), Content: u[1]}, ups)...)
		}
		for i, u := range turns {
			r := RAGTurn{Seq: int64(i + 1), Content: u[1]}
			markUpdate(ups, &r)
			if r.update != "" {
				fmt.Fprintf(f, "M %d/%d | %.150s\n    %s\n", ci, i+1, strings.ReplaceAll(u[1], "\n", " "), strings.ReplaceAll(r.update, "\n", "\n    "))
			}
		}
	}
}
