package prose

import (
	"regexp"
	"testing"
)

// The regular expressions the scanners replaced: the oracles.
var (
	codeSignsRef = regexp.MustCompile(`==|!=|->|=>|:=|&&|\|\||\w\(|[{};<>\\^_|#]`)
	bulletRef    = regexp.MustCompile(`(?m)^[ \t]*(?:[-*+•]|\d{1,3}[.)])[ \t]+`)
)

// scanSeeds are texts near the edges of the scanners.
var scanSeeds = []string{
	"", "Hi. How are you?  Fine!\n\nOK…\"Yes.\" (no.) [a.] ’x.’ ”y!” end",
	"a..b c.!?) d .\n- item\n  * star\n+ plus\n• dot\n12. twelve\n1234. no\n7) seven\n3.no",
	"x == y != z -> a => b := c && d || e f(x) {a}; <b> \\c ^d _e |f #g", "_(a|||b", "a=\n=b",
	"…\xe2\x80 \xe2\x80\xa6\xe2", "\t-\t\n-", "1.\n2.  \n999) x", ".\"\n\"\xe2\x80\x9d \n",
}

func FuzzCodeSigns(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := codeSignsAtLeast2(s), len(codeSignsRef.FindAllString(s, -1)) >= 2; got != want {
			t.Fatalf("codeSignsAtLeast2(%q) = %v, want %v", s, got, want)
		}
	})
}

func FuzzDropBullets(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := dropBullets(s), bulletRef.ReplaceAllString(s, ""); got != want {
			t.Fatalf("dropBullets(%q) = %q, want %q", s, got, want)
		}
	})
}
