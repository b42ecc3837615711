package tokens

import (
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
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
	sh := &memoShard{cur: map[uint64]memoEntry{}, prev: map[uint64]memoEntry{}, max: 2}
	for i := range 3 { // the third rotates: prev={0,1}, cur={2}
		sh.putLocked(uint64(i), memoEntry{check: uint64(100 + i), n: i})
	}
	if e, ok := sh.prev[0]; !ok || e.check != 100 {
		t.Fatalf("the first entry should survive one rotation")
	}
	for i := range 3 {
		sh.putLocked(uint64(10+i), memoEntry{check: uint64(110 + i), n: i})
	}
	if _, ok := sh.cur[1]; ok {
		t.Fatalf("the second entry should have been evicted")
	}
	if _, ok := sh.prev[1]; ok {
		t.Fatalf("the second entry should have been evicted")
	}
}

// TestMemoChecksTheString: a hit is a hit on the same string, never on
// another one with the same first hash.
func TestMemoChecksTheString(t *testing.T) {
	m := newMemo()
	m.put("hello world", 2)
	if n, ok := m.get("hello world"); !ok || n != 2 {
		t.Fatalf("get = %d, %v", n, ok)
	}
	sh, h := m.shard("hello world")
	sh.cur[h] = memoEntry{check: maphash.String(m.check, "another string"), n: 9} // as a collision would
	if _, ok := m.get("hello world"); ok {
		t.Fatal("a colliding entry must be a miss")
	}
	sh.prev[h], sh.cur = sh.cur[h], map[uint64]memoEntry{} // in the older generation too
	if _, ok := m.get("hello world"); ok {
		t.Fatal("a colliding entry in the older generation must be a miss")
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

// TestConcurrent hammers the shared memos from several goroutines (run with
// -race); every count must still equal the codec's.
func TestConcurrent(t *testing.T) {
	texts := corpus()[:400]
	want := make([]int, len(texts))
	for i, s := range texts {
		want[i] = codecCount(s)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 3 {
				for i := range texts {
					j := (i*7 + g*13 + round) % len(texts)
					if got := Count(texts[j]); got != want[j] {
						errs <- fmt.Sprintf("Count(%q) = %d, want %d", texts[j], got, want[j])
						return
					}
					if got := Truncate(texts[j], want[j]/2); Count(got) > want[j]/2 {
						errs <- fmt.Sprintf("Truncate(%q) over budget", texts[j])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestCaches(t *testing.T) {
	c := newCounter()
	for _, p := range []string{" the", "ſ", "zzqx", " unbelievably", strings.Repeat("ab", 40)} {
		want := codecCount(p)
		for range 2 { // second round is served by a cache
			if got := c.pieceCount(p); got != want {
				t.Errorf("pieceCount(%q) = %d, want %d", p, got, want)
			}
		}
	}
	// A slot collision replaces the entry; a different key never hits it.
	k1 := shortKey("abc")
	c.short.put(k1, 3)
	if n, ok := c.short.get(shortKey("abd")); ok {
		t.Errorf("shortCache hit for a different key: %d", n)
	}
	if n, ok := c.short.get(k1); !ok || n != 3 {
		t.Errorf("shortCache get = %d, %v", n, ok)
	}
}
