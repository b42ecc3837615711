package tokens

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzClipTokens(f *testing.F) {
	f.Add("The cat sat on the mat. Then it left, quietly, for the garden…", 5)
	f.Add("ééé ééé ééé", 2)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if !utf8.ValidString(s) || max < 1 || max > 200 {
			return
		}
		got := Clip(s, max)
		if Count(got) > max && Count(s) > max {
			t.Fatalf("Clip(%q, %d) = %q: %d tokens", s, max, got, Count(got))
		}
		if !utf8.ValidString(got) || strings.Contains(got, "……") && !strings.Contains(s, "……") {
			t.Fatalf("Clip(%q, %d) = %q", s, max, got)
		}
	})
}
