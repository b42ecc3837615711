package truncation

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

var unicodeTexts = []string{
	strings.Repeat("e\u0301a\u0300\u0323 ", 30),
	strings.Repeat("👨\u200d👩\u200d👧\u200d👦 family 👍🏽. ", 8),
	strings.Repeat("🇫🇷🇩🇪🇯🇵", 20) + "🇮",
	strings.Repeat("東京都は日本の首都です。", 10),
	strings.Repeat("한국어 \u1100\u1161\u11a8 text.\r\n", 10),
	"\u0301leading orphan mark, then ❤\ufe0f and 🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F." + strings.Repeat(" pad", 20),
	"bad \xff\xfe bytes \xe2\x82 everywhere " + strings.Repeat("x\xc3", 30),
}

// Every limit from 1 to past the length, for hard and middle: the output
// fits and is built from whole clusters.
func TestEveryCharLimit(t *testing.T) {
	for _, text := range unicodeTexts {
		n := clusterCount(sanitize(text))
		for limit := 1; limit <= n+1; limit++ {
			for _, st := range []Strategy{Hard, Middle} {
				o := Options{Strategy: st, MaxChars: limit}
				out, info := Truncate(context.Background(), text, o)
				if info.Truncated != (limit < n) {
					t.Fatalf("%q limit %d: truncated=%v", text, limit, info.Truncated)
				}
				checkOutput(t, text, out, info, o)
			}
		}
	}
}

type lengthScorer struct{}

// Score prefers sentences sharing runes with the query, then shorter ones.
func (lengthScorer) Score(_ context.Context, query string, sentences []string) ([]float64, error) {
	out := make([]float64, len(sentences))
	for i, s := range sentences {
		for _, r := range query {
			if strings.ContainsRune(s, r) {
				out[i]++
			}
		}
		out[i] -= float64(len(s)) / 1000
	}
	return out, nil
}

func FuzzTruncate(f *testing.F) {
	for i, text := range unicodeTexts {
		f.Add(text, uint8(i), uint16(10+7*i), uint16(0), "e")
	}
	f.Add(prose, uint8(1), uint16(0), uint16(30), "cache")
	f.Add(prose, uint8(3), uint16(120), uint16(40), "latency")
	f.Add("a.\n\u0301b. c", uint8(3), uint16(4), uint16(0), "b")
	f.Fuzz(func(t *testing.T, text string, strategy uint8, maxChars, maxTokens uint16, query string) {
		if len(text) > 4000 {
			return
		}
		o := Options{
			Strategy:  []Strategy{Hard, Middle, LLM, Semantic}[strategy%4],
			MaxChars:  int(maxChars % 300),
			MaxTokens: int(maxTokens % 200),
			Query:     query,
			Scorer:    lengthScorer{},
		}
		out, info := Truncate(context.Background(), text, o)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 %q", out)
		}
		if info.OriginalChars != clusterCount(sanitize(text)) {
			t.Fatalf("OriginalChars %d", info.OriginalChars)
		}
		checkOutput(t, text, out, info, o)
	})
}
