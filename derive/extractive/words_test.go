package extractive

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

var wordReRef = regexp.MustCompile(`[\p{L}\p{N}][\p{L}\p{N}'_\-]*`)

func wordsRef(s string) []string {
	ws := wordReRef.FindAllString(s, -1)
	for i, w := range ws {
		ws[i] = strings.ToLower(strings.Trim(w, "'-_"))
	}
	return ws
}

func FuzzWordsMatchesRegexp(f *testing.F) {
	for _, s := range []string{"", "Hello, world!", "it's a co-op_x -- 'quoted' 3.14 Zürich 東京 \xff bad", "a-'_b", "--x", "ab\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := words(s), wordsRef(s)
		if len(got) == 0 && len(want) == 0 {
			return
		}
		if !slices.Equal(got, want) {
			t.Fatalf("words(%q) = %q, want %q", s, got, want)
		}
	})
}
