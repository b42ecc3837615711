package tokens

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// benchTexts returns ~30 KB English texts: LoCoMo dialogue turns (when the
// shared file is present) and the Go spec's prose from GOROOT.
func benchTexts(b *testing.B) map[string]string {
	const size = 30 << 10
	out := map[string]string{}
	if turns := locomoTexts(b); turns != nil {
		var sb strings.Builder
		for _, t := range turns {
			if sb.Len() >= size {
				break
			}
			sb.WriteString(t)
			sb.WriteString("\n")
		}
		out["locomo"] = sb.String()
	}
	if raw, err := os.ReadFile(filepath.Join(runtime.GOROOT(), "doc", "go_spec.html")); err == nil {
		text := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(string(raw), "")
		if len(text) > 40<<10+size {
			out["gospec"] = text[40<<10 : 40<<10+size]
		}
	}
	if len(out) == 0 {
		b.Skip("no benchmark text available")
	}
	return out
}

// BenchmarkCount30KB counts a whole ~30 KB text (above memoMaxKey, so the
// whole-string memo is not involved): the old codec path, the new path
// with a cold piece cache, and with a warm one.
func BenchmarkCount30KB(b *testing.B) {
	for name, text := range benchTexts(b) {
		b.Run(name+"/codec", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				codecCount(text)
			}
		})
		b.Run(name+"/cold", func(b *testing.B) {
			rankTable()
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				b.StopTimer()
				c := newCounter()
				b.StartTimer()
				c.count(text)
			}
		})
		b.Run(name+"/warm", func(b *testing.B) {
			c := newCounter()
			c.count(text)
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				c.count(text)
			}
		})
	}
}

// BenchmarkCountTurns counts 2000 LoCoMo turns one by one: the old codec
// path, the new path with empty caches (turns seen for the first time), and
// Count as /v1/context calls it (the first pass fills the memos, later ones
// hit).
func BenchmarkCountTurns(b *testing.B) {
	turns := locomoTexts(b)
	if turns == nil {
		b.Skip("LoCoMo dev set not present")
	}
	turns = turns[:min(len(turns), 2000)]
	n := 0
	for _, t := range turns {
		n += len(t)
	}
	b.Run("codec", func(b *testing.B) {
		b.SetBytes(int64(n))
		for b.Loop() {
			for _, t := range turns {
				codecCount(t)
			}
		}
	})
	b.Run("cold", func(b *testing.B) {
		rankTable()
		b.SetBytes(int64(n))
		for b.Loop() {
			b.StopTimer()
			c := newCounter()
			b.StartTimer()
			for _, t := range turns {
				c.count(t)
			}
		}
	})
	b.Run("Count", func(b *testing.B) {
		b.SetBytes(int64(n))
		for b.Loop() {
			for _, t := range turns {
				Count(t)
			}
		}
	})
	b.Run("Count-parallel", func(b *testing.B) {
		b.SetBytes(int64(n))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				for _, t := range turns {
					Count(t)
				}
			}
		})
	})
}

func BenchmarkTruncate(b *testing.B) {
	for name, text := range benchTexts(b) {
		max := Count(text) / 2
		b.Run(name+"/codec", func(b *testing.B) {
			for b.Loop() {
				codecTruncate(text, max)
			}
		})
		b.Run(name+"/new", func(b *testing.B) {
			for b.Loop() {
				Truncate(text, max)
			}
		})
	}
}
