package facts

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
	"gopkg.in/yaml.v3"
)

func TestZZDump(t *testing.T) {
	for _, f := range splitArgs(os.Getenv("ZZCHATS")) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			ID    string
			Turns []struct {
				Role    string
				Name    string
				Content string
			}
		}
		if err := yaml.Unmarshal(b, &c); err != nil {
			continue
		}
		var ms []memory.Message
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i, tn := range c.Turns {
			ms = append(ms, memory.Message{Seq: int64(i + 1), Role: memory.Role(tn.Role), Name: tn.Name, Content: tn.Content, CreatedAt: t0.Add(time.Duration(i) * time.Minute)})
		}
		for _, fa := range Extract(ms) {
			fmt.Printf("%s\t%s\t%v\t%s\n", c.ID, fa.Kind, fa.Seqs, fa.Text)
		}
	}
}

func splitArgs(s string) []string {
	var out []string
	for _, x := range splitSpace(s) {
		out = append(out, x)
	}
	return out
}

func splitSpace(s string) []string {
	var out []string
	cur := ""
	for _, r := range s {
		if r == ' ' {
			if cur != "" {
				out = append(out, cur)
			}
			cur = ""
			continue
		}
		cur += string(r)
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}
