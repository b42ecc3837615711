package lex

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	cases := []struct {
		in   string
		max  int
		want string
	}{
		{"short enough", 20, "short enough"},
		{"First sentence here. Second sentence is long.", 30, "First sentence here."},
		{"one clause, and then another very long clause", 30, "one clause, and then…"},
		{"words only without any breaks at all", 20, "words only…"},
		{"Already cut…", 12, "Already…"},
		{"Wait...... what happened there", 15, "Wait… what…"},
		{"Supercalifragilistic", 10, "Superca…"},
	}
	for _, c := range cases {
		if got := Clip(c.in, c.max); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

func FuzzClip(f *testing.F) {
	for _, s := range []string{"Hello there. General Kenobi!", "a, b; c: d — e", "ééééééé ééé", "x", "……… …"} {
		f.Add(s, 10)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		if !utf8.ValidString(s) || max < 4 || max > 400 {
			return
		}
		got := Clip(s, max)
		norm := Tidy(s)
		switch {
		case len(got) > max:
			t.Fatalf("Clip(%q, %d) = %q: %d bytes", s, max, got, len(got))
		case !utf8.ValidString(got):
			t.Fatalf("invalid utf-8 %q", got)
		case strings.Contains(got, "……"):
			t.Fatalf("ellipsis pile-up %q", got)
		}
		if len(norm) <= max {
			if got != norm {
				t.Fatalf("Clip cut a text that fits: %q -> %q", s, got)
			}
			return
		}
		// A cut keeps a prefix of the text, ending at a word end.
		body := strings.TrimSuffix(got, "…")
		if !strings.HasPrefix(norm, body) {
			t.Fatalf("Clip(%q) = %q is not a prefix", s, got)
		}
		// The rest starts at a boundary when its first rune (not byte: "—"
		// is three) is a space or a clause mark.
		if rest := norm[len(body):]; len(strings.Fields(norm)[0])+len("…") <= max && body != "" && rest != "" && !startsAtBoundary(rest) && !strings.HasSuffix(body, "—") {
			t.Fatalf("Clip(%q, %d) = %q cuts inside a word", s, max, got)
		}
	})
}

func startsAtBoundary(rest string) bool {
	r, _ := utf8.DecodeRuneInString(rest)
	return strings.ContainsRune(" ,;:—…", r)
}
