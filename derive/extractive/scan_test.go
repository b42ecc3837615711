package extractive

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The regular expressions the scanners replaced: the oracles.
var (
	properRef = regexp.MustCompile(`\b[A-Z][\p{L}&\-]*(?:\s+(?:of|dos|das|da|della|del|des|de|di|du|la|les|le|aux|au|à|van|von|der|&)?\s*[A-Z][\p{L}&\-]*)*`)
	tokRef    = regexp.MustCompile(`\S+`)
	clauseRef = regexp.MustCompile(`[,;:()]|\s[-–—]\s`)
)

var scanSeeds = []string{
	"", "Maria Silva met Bank of America and AT & T in New York, then Ludwig van der Berg, Anna deRosa and Jo derA.",
	"a flat on Rua da Reboleira, Leonardo da Vinci, Maria dos Santos, Casa del Mar, Palazzo della Ragione, Anna di Stefano, Can Tom do Tuesday?",
	"Éclair Ünal _Bob xBob 9Bob Bob-Smith O'Neil Acme&Co Smith   \t\nJones Smith and\nJones Smith ofX de",
	"a, b; c: d (e) f - g – h — i -j k- \t—\tl", "Deployed v1.2.3 on 2025-03-14, 3/4/25, March 3rd, 3 of May 2024 and June 1, 2024.",
	"$4,170.50 USD 12 dollars 3.5 GB 12ms 4 seconds 10 users 7 people 99% 1.2.3ms 5. ms 8KiB 3 TB",
	"I fixed it. We've already deployed. we have   just set up the ſent Kelvin K. All set! i'm done-ish. \xff iwe we'", "WE SENT", "I", "we",
}

func FuzzProperNames(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want [][2]int
		for _, m := range properRef.FindAllStringIndex(s, -1) {
			want = append(want, [2]int{m[0], m[1]})
		}
		if got := properNames(s); !slices.Equal(got, want) {
			t.Fatalf("properNames(%q) = %v, want %v", s, got, want)
		}
	})
}

func FuzzSpaceFields(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add(s, 0, len(s))
	}
	f.Fuzz(func(t *testing.T, s string, a, b int) {
		if a < 0 || b > len(s) || a > b {
			return
		}
		var want [][2]int
		for _, m := range tokRef.FindAllStringIndex(s[a:b], -1) {
			want = append(want, [2]int{a + m[0], a + m[1]})
		}
		if got := spaceFields(s, a, b); !slices.Equal(got, want) {
			t.Fatalf("spaceFields(%q, %d, %d) = %v, want %v", s, a, b, got, want)
		}
	})
}

func FuzzClauses(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got []string
		clauses(s, func(c string) { got = append(got, c) })
		if want := clauseRef.Split(s, -1); !slices.Equal(got, want) {
			t.Fatalf("clauses(%q) = %q, want %q", s, got, want)
		}
	})
}

// FuzzPreChecks: a pre-check says no only when its expression finds
// nothing.
func FuzzPreChecks(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range patterns {
			if p.may != nil && !p.may(s) && p.re.MatchString(s) {
				t.Fatalf("%s pre-check refuses %q, which the pattern matches (%q)", p.typ, s, p.re.FindString(s))
			}
		}
		if !mayBeAction(s) && actionRe.MatchString(s) {
			t.Fatalf("action pre-check refuses %q, which actionRe matches (%q)", s, actionRe.FindString(s))
		}
	})
}

// FuzzClauseWords: the words of a sentence are the words of its clauses,
// which analyse relies on to read each sentence's words once.
func FuzzClauseWords(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got []string
		clauses(s, func(c string) { got = append(got, words(c)...) })
		if want := words(s); !slices.Equal(got, want) {
			t.Fatalf("words of the clauses of %q = %q, want %q", s, got, want)
		}
	})
}

func FuzzFirstLastWords(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add(s, 2)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 1 || n > 4 {
			return
		}
		ws := words(s)
		if got, want := firstWords(s, n), ws[:min(n, len(ws))]; !slices.Equal(got, want) {
			t.Fatalf("firstWords(%q, %d) = %q, want %q", s, n, got, want)
		}
		if got, want := lastWords(s, n), ws[max(0, len(ws)-n):]; !slices.Equal(got, want) {
			t.Fatalf("lastWords(%q, %d) = %q, want %q", s, n, got, want)
		}
	})
}

func FuzzTokIn(f *testing.F) {
	for _, s := range []string{"The", "Of,", "-&and.", "I'M", "Ünal", "\xffthe", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := nonNames[strings.ToLower(strings.Trim(s, ",.&-"))]
		if got := tokIn(nonNames, s, [2]int{0, len(s)}); got != want {
			t.Fatalf("tokIn(nonNames, %q) = %v, want %v", s, got, want)
		}
		if got, want := tokIn(connectors, s, [2]int{0, len(s)}), connectors[strings.ToLower(strings.Trim(s, ",.&-"))]; got != want {
			t.Fatalf("tokIn(connectors, %q) = %v, want %v", s, got, want)
		}
	})
}
