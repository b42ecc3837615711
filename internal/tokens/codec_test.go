package tokens

import (
	"slices"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
	"github.com/tiktoken-go/tokenizer"
)

// The reference implementations the fast path is checked against.

// cl100kPattern is the split pattern of codec.NewCl100kBase.
const cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

var (
	refOnce  sync.Once
	refCodec tokenizer.Codec
	// genRe is the engine the codec runs (MustCompile picks the engine
	// regexp2cg generated for this pattern); interpRe is regexp2's
	// backtracking interpreter for the same pattern.
	genRe, interpRe *regexp2.Regexp
)

func ref() {
	refOnce.Do(func() {
		c, err := tokenizer.Get(tokenizer.Cl100kBase)
		if err != nil {
			panic(err)
		}
		refCodec = c
		genRe = regexp2.MustCompile(cl100kPattern, regexp2.None)
		interpRe, err = regexp2.Compile(cl100kPattern, regexp2.None)
		if err != nil {
			panic(err)
		}
	})
}

// codecCount is the old Count path: the codec's own regexp + BPE.
func codecCount(s string) int {
	ref()
	n, err := refCodec.Count(toValid(s))
	if err != nil {
		panic(err)
	}
	return n
}

// codecTruncate is the old Truncate, on the codec's Encode/Decode.
func codecTruncate(s string, max int) string {
	ref()
	if max <= 0 {
		return ""
	}
	if codecCount(s) <= max {
		return s
	}
	ids, _, err := refCodec.Encode(toValid(s))
	if err != nil || len(ids) <= max {
		return s
	}
	out, err := refCodec.Decode(ids[:max])
	if err != nil {
		return ""
	}
	for len(out) > 0 && !utf8.ValidString(out) {
		out = out[:len(out)-1]
	}
	for codecCount(out) > max && len(out) > 0 {
		_, size := utf8.DecodeLastRuneInString(out)
		out = out[:len(out)-size]
	}
	return out
}

func regexSplit(re *regexp2.Regexp, s string) []string {
	var out []string
	m, err := re.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		panic(err)
	}
	return out
}

func scanSplit(s string, quirks bool) []string {
	var out []string
	for i := 0; i < len(s); {
		start, end := nextPiece(s, i, quirks)
		if end > start {
			out = append(out, s[start:end])
		}
		i = end
	}
	return out
}

// checkSame fails t unless the fast path agrees with the codec on s: the
// same pieces as the codec's regexp engine, and the same count.
func checkSame(t testing.TB, s string) bool {
	t.Helper()
	ref()
	v := toValid(s)
	want := regexSplit(genRe, v)
	if got := scanSplit(v, codecQuirks); !slices.Equal(got, want) {
		t.Errorf("split(%q)\n got %q\nwant %q", s, got, want)
		return false
	}
	if got, want := get().count(s), codecCount(s); got != want {
		t.Errorf("count(%q) = %d, codec %d", s, got, want)
		return false
	}
	return true
}
