package tokens

import "testing"

// FuzzCountMatchesCodec: for any input the scanner splits exactly like the
// codec's regexp engine, Count equals the codec's count (cold and through
// the memos), and Truncate equals the codec-based Truncate.
// Seeds: testdata/fuzz/FuzzCountMatchesCodec (every past mismatch is one).
func FuzzCountMatchesCodec(f *testing.F) {
	for _, s := range []string{"", "hello world", "a\n \nb", "x\x7fy", "'ſ", "'LL'Ve", "foo\n    \n    bar",
		"1234567 ٣٤٥", "\u00a0\u3000x", "👩‍👩‍👧 e\u0301", "bad \xff utf8", "!!!\r\n\r\n", "<|endoftext|>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1024 {
			return // the reference is slow on long pieces; they add little
		}
		if !checkSame(t, s) {
			return
		}
		want := codecCount(s) + dels(toValid(s)) // DEL: see dels
		for range 2 {
			if got := Count(s); got != want {
				t.Fatalf("Count(%q) = %d, codec %d", s, got, want)
			}
		}
		for _, max := range []int{1, want / 2, want - 1} {
			checkTruncate(t, s, max)
		}
	})
}

// FuzzCountLines: counting line by line (Count's path for long strings)
// equals counting whole, for any input. The fuzzed string is also repeated
// with each of a few separators, so the cuts fall between different
// neighbours.
func FuzzCountLines(f *testing.F) {
	for _, s := range []string{"a\nb", "a.\n\nb", "x \n\ny", "\n\n\n", "a\n \nb", "a\r\nb", "!!!\n\n#", "a\n\x7fb",
		"x\n\xffy", "\u00a0\nx", "\xe6\x97\nx", "1\n2", "'s\n's", "a\n\u3000b", "a \n\tb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := newCounter()
		for _, sep := range []string{"", "\n", "\n\n", ".\n", " \n", "\r\n"} {
			in := s + sep + s + sep + s
			if got, want := c.countLines(in), c.count(in)+dels(in); got != want {
				t.Fatalf("countLines(%q) = %d, whole %d", in, got, want)
			}
		}
	})
}
