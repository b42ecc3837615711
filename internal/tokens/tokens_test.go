package tokens

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCount(t *testing.T) {
	cases := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"tiktoken is great!", 6},
	}
	for _, c := range cases {
		for i := 0; i < 2; i++ { // second round is served by the memo
			if got := Count(c.in); got != c.want {
				t.Errorf("Count(%q) = %d, want %d (round %d)", c.in, got, c.want, i)
			}
		}
	}
	if Count("bad \xff utf8") <= 0 {
		t.Error("invalid UTF-8 must still count")
	}
	long := strings.Repeat("word ", 5000)
	if got := Count(long); got < 4000 || got > 6000 {
		t.Errorf("Count(long) = %d", got)
	}
}

func TestMemoEvicts(t *testing.T) {
	m := &memo{cur: map[string]int{}, prev: map[string]int{}, max: 2, maxBytes: 1 << 10}
	m.put("a", 1)
	m.put("b", 2)
	m.put("c", 3) // rotates: prev={a,b}, cur={c}
	if n, ok := m.get("a"); !ok || n != 1 {
		t.Fatalf("a should survive one rotation")
	}
	m.put("d", 4)
	m.put("e", 5)
	m.put("f", 6)
	if _, ok := m.get("b"); ok {
		t.Fatalf("b should have been evicted")
	}
}

func TestTruncate(t *testing.T) {
	s := "The quick brown fox jumps over the lazy dog. Ünïcödé 日本語 テキスト 👩‍👩‍👧"
	for max := 0; max <= Count(s)+1; max++ {
		out := Truncate(s, max)
		if Count(out) > max || !utf8.ValidString(out) || !strings.HasPrefix(s, out) {
			t.Fatalf("Truncate(%d) = %q (%d tokens)", max, out, Count(out))
		}
	}
}
