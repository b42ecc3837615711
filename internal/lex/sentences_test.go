package lex

import (
	"regexp"
	"slices"
	"testing"
)

// sentenceEndRef is the regular expression the scanner replaced: the oracle.
var sentenceEndRef = regexp.MustCompile(`([.!?…]+["'’”)\]]*)\s+|\n+`)

// sentenceSeeds are texts near the edges of the scanner: runs of signs,
// closers, curly quotes, line breaks, a cut multi-byte rune.
var sentenceSeeds = []string{
	"", "Hi. How are you?  Fine!\n\nOK…\"Yes.\" (no.) [a.] ’x.’ ”y!” end",
	"a..b c.!?) d .\n- item\n12. twelve\n3.no", "…\xe2\x80 \xe2\x80\xa6\xe2", ".\"\n\"\xe2\x80\x9d \n",
}

func FuzzSentenceEnds(f *testing.F) {
	for _, s := range sentenceSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got [][2]int
		sentenceEnds(s, func(end, next int) { got = append(got, [2]int{end, next}) })
		var want [][2]int
		for _, m := range sentenceEndRef.FindAllStringSubmatchIndex(s, -1) {
			end := m[1]
			if m[2] >= 0 {
				end = m[3]
			}
			want = append(want, [2]int{end, m[1]})
		}
		if !slices.Equal(got, want) {
			t.Fatalf("sentenceEnds(%q) = %v, want %v", s, got, want)
		}
	})
}
