package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contextd/contextd/memory"
	"gopkg.in/yaml.v3"
)

type zzChat struct {
	ID    string `yaml:"id"`
	Turns []struct {
		Role    string `yaml:"role"`
		Content string `yaml:"content"`
	} `yaml:"turns"`
	Probes []struct {
		Name  string `yaml:"name"`
		Stale []struct {
			Old string `yaml:"old"`
			New string `yaml:"new"`
		} `yaml:"stale"`
	} `yaml:"probes"`
}

func TestZZStale(t *testing.T) {
	var out strings.Builder
	var files []string
	for _, g := range strings.Fields(os.Getenv("ZZGLOB")) {
		fs, _ := filepath.Glob(g)
		files = append(files, fs...)
	}
	tot, marked := 0, 0
	for _, f := range files {
		b, _ := os.ReadFile(f)
		var c zzChat
		if yaml.Unmarshal(b, &c) != nil {
			continue
		}
		var ups []chatUpdate
		for i, tu := range c.Turns {
			ups = append(ups, readUpdate(memory.Message{Seq: int64(i + 1), Role: memory.Role(tu.Role), Content: tu.Content}, ups)...)
		}
		seen := map[string]bool{}
		for _, p := range c.Probes {
			for _, s := range p.Stale {
				if seen[s.Old+s.New] {
					continue
				}
				seen[s.Old+s.New] = true
				oi, ni := -1, -1
				for i, tu := range c.Turns {
					l := strings.ToLower(tu.Content)
					if oi < 0 && strings.Contains(l, strings.ToLower(s.Old)) {
						oi = i
					}
					if strings.Contains(l, strings.ToLower(s.New)) {
						ni = i
					}
				}
				if oi < 0 {
					continue
				}
				r := RAGTurn{Seq: int64(oi + 1), Content: c.Turns[oi].Content}
				markUpdate(ups, &r)
				ok := strings.Contains(strings.ToLower(r.update), strings.ToLower(s.New))
				tot++
				if ok {
					marked++
				}
				fmt.Fprintf(&out, "%v\t%s\t%s\told=%d new=%d\t%q\t%q\tmark=%q\n", ok, filepath.Base(f), p.Name, oi+1, ni+1, s.Old, s.New, r.update)
			}
		}
	}
	fmt.Fprintf(&out, "marked %d of %d\n", marked, tot)
	os.WriteFile(os.Getenv("ZZOUT"), []byte(out.String()), 0o644)
}
