package truncation

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func clusters(s string) []string {
	s = sanitize(s)
	b := boundaries(s)
	out := []string{}
	for i := 0; i+1 < len(b); i++ {
		out = append(out, s[b[i]:b[i+1]])
	}
	return out
}

func TestClusters(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", []string{}},
		{"ascii", "ab c", []string{"a", "b", " ", "c"}},
		{"combining accents", "e\u0301a\u0300\u0323", []string{"e\u0301", "a\u0300\u0323"}},
		{"precomposed", "café", []string{"c", "a", "f", "é"}},
		{"CJK", "東京都", []string{"東", "京", "都"}},
		{"ZWJ family", "👨\u200d👩\u200d👧\u200d👦!", []string{"👨\u200d👩\u200d👧\u200d👦", "!"}},
		{"skin tone", "👍🏽👍", []string{"👍🏽", "👍"}},
		{"skin tone in ZWJ sequence", "👩🏽\u200d💻x", []string{"👩🏽\u200d💻", "x"}},
		{"variation selector", "❤\ufe0f☺\ufe0e", []string{"❤\ufe0f", "☺\ufe0e"}},
		{"flag pairs", "🇫🇷🇩🇪🇮", []string{"🇫🇷", "🇩🇪", "🇮"}},
		{"tag flag", "🏴\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007Fa", []string{"🏴\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F", "a"}},
		{"CRLF", "a\r\nb\n\r", []string{"a", "\r\n", "b", "\n", "\r"}},
		{"mark after newline is orphan", "\n\u0301x", []string{"\n", "\u0301", "x"}},
		{"ZWJ between letters does not join", "a\u200db", []string{"a\u200d", "b"}},
		{"Hangul jamo", "\u1100\u1161\u11a8\u1100", []string{"\u1100\u1161\u11a8", "\u1100"}},
		{"Hangul syllables", "한국", []string{"한", "국"}},
		{"spacing mark (Devanagari)", "कि", []string{"कि"}},
		{"control breaks", "a\u00ad\u0301", []string{"a", "\u00ad", "\u0301"}},
		{"invalid bytes become U+FFFD each", "a\xff\xfeb", []string{"a", "\uFFFD", "\uFFFD", "b"}},
		{"truncated rune", "x\xe2\x82", []string{"x", "\uFFFD", "\uFFFD"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := clusters(tc.in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("clusters(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if n := clusterCount(sanitize(tc.in)); n != len(tc.want) {
				t.Errorf("clusterCount = %d, want %d", n, len(tc.want))
			}
			if !utf8.ValidString(strings.Join(got, "")) {
				t.Error("invalid UTF-8 out")
			}
		})
	}
}

// Segmenting from any boundary gives the same clusters as the whole text:
// the property that lets Truncate reassemble pieces without new clusters.
func TestBoundariesAreStable(t *testing.T) {
	s := "Voilà 👨\u200d👩\u200d👧 🇯🇵🇫🇷 e\u0301\u0301 한국\u1100\u1161 x\r\ny"
	b := boundaries(s)
	for i, off := range b {
		sub := boundaries(s[off:])
		for j := range sub {
			if sub[j]+off != b[i+j] {
				t.Fatalf("from %d: boundary %d = %d, want %d", off, j, sub[j]+off, b[i+j])
			}
		}
	}
}
