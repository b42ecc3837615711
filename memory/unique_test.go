package memory

import "testing"

func TestUniqueSentences(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"One. Two.", "One. Two."},
		{"The crew talked. The crew talked. Dana asked.", "The crew talked. Dana asked."},
		{"The crew talked.  the crew   TALKED! Omar fixed it. The crew talked", "The crew talked. Omar fixed it."},
		{"Line one\nLine two", "Line one\nLine two"},
		{"Same?\nSame.", "Same?"},
	} {
		if got := UniqueSentences(c.in); got != c.want {
			t.Errorf("UniqueSentences(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
