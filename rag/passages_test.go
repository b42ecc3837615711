package rag_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/contextd/contextd/rag"
)

// checkSpans asserts the splitter's invariants: in order, no gap, none
// empty, none over maxBytes, every boundary a rune boundary.
func checkSpans(t *testing.T, text string, maxBytes int, spans []rag.Span) {
	t.Helper()
	if text == "" {
		if len(spans) != 0 {
			t.Fatalf("empty text: %v", spans)
		}
		return
	}
	runeStart := map[int]bool{len(text): true}
	for i := 0; i < len(text); {
		runeStart[i] = true
		_, n := utf8.DecodeRuneInString(text[i:])
		i += n
	}
	limit := max(maxBytes, 16)
	pos := 0
	for i, s := range spans {
		if s.From != pos {
			t.Fatalf("span %d starts at %d, want %d (gap or overlap): %v", i, s.From, pos, spans)
		}
		if s.To <= s.From {
			t.Fatalf("span %d is empty: %v", i, s)
		}
		if s.To-s.From > limit {
			t.Fatalf("span %d has %d bytes, max %d", i, s.To-s.From, limit)
		}
		if !runeStart[s.To] {
			t.Fatalf("span %d ends at %d, inside a rune", i, s.To)
		}
		pos = s.To
	}
	if pos != len(text) {
		t.Fatalf("spans end at %d, text has %d bytes", pos, len(text))
	}
}

func texts(text string, spans []rag.Span) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = text[s.From:s.To]
	}
	return out
}

func TestSplitPassages(t *testing.T) {
	para := func(word string, n int) string { return strings.TrimSpace(strings.Repeat(word+" ", n)) + "." }
	code := "```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```\n"
	for _, tc := range []struct {
		name string
		text string
		max  int
		want []string
	}{
		{"short turn is one passage", "hello there", 100, []string{"hello there"}},
		{"empty", "", 100, nil},
		{"paragraphs", para("alpha", 10) + "\n\n" + para("beta", 10) + "\n\n" + para("gamma", 10),
			70, []string{para("alpha", 10) + "\n\n", para("beta", 10) + "\n\n", para("gamma", 10)}},
		{"sentences of one long paragraph", "One two three four. Five six seven eight! Nine ten eleven twelve?",
			30, []string{"One two three four. ", "Five six seven eight! ", "Nine ten eleven twelve?"}},
		{"code block kept whole", "Intro text here.\n\n" + code + "\nAfter the code.",
			48, []string{"Intro text here.\n\n", code + "\n", "After the code."}},
		{"code block too long: cut on lines", "```\nline one is here\nline two is here\nline three here\n```",
			40, []string{"```\nline one is here\nline two is here\n", "line three here\n```"}},
		{"one long word: cut on runes", strings.Repeat("é", 20), 16,
			[]string{strings.Repeat("é", 7), strings.Repeat("é", 7), strings.Repeat("é", 6)}},
		{"CJK sentences", "今日は晴れです。明日は雨です。明後日は雪です。", 30,
			[]string{"今日は晴れです。", "明日は雨です。", "明後日は雪です。"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spans := rag.SplitPassages(tc.text, tc.max)
			checkSpans(t, tc.text, tc.max, spans)
			got := texts(tc.text, spans)
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Errorf("passages:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// A fenced code block that fits is never cut, wherever it falls.
func TestSplitPassagesKeepsFitCodeBlocks(t *testing.T) {
	code := "```\nx := 1\ny := 2\nz := x + y\n```\n"
	for pre := 0; pre < 40; pre++ {
		text := strings.Repeat("w ", pre) + "\n\n" + code + "\n" + strings.Repeat("v ", 30)
		spans := rag.SplitPassages(text, 64)
		checkSpans(t, text, 64, spans)
		start := strings.Index(text, code)
		for _, s := range spans {
			if s.From > start && s.From < start+len(code) {
				t.Fatalf("pre %d: a passage starts inside the code block: %q", pre, texts(text, spans))
			}
		}
	}
}

// Passages are balanced: a turn just over the size is not cut into a full
// passage and a sliver.
func TestSplitPassagesBalanced(t *testing.T) {
	text := strings.Repeat("word ", 42) // 210 bytes, max 200
	spans := rag.SplitPassages(text, 200)
	checkSpans(t, text, 200, spans)
	if len(spans) != 2 {
		t.Fatalf("passages = %d, want 2", len(spans))
	}
	if a, b := spans[0].To-spans[0].From, spans[1].To-spans[1].From; a < 80 || b < 80 {
		t.Errorf("unbalanced passages: %d and %d bytes", a, b)
	}
}

func FuzzSplitPassages(f *testing.F) {
	f.Add("hello world. this is a test.\n\nnew paragraph", 16)
	f.Add("```\ncode\n```\ntext", 20)
	f.Add("日本語のテキスト。次の文。", 17)
	f.Add("\xff\xfe invalid \xc3", 16)
	f.Add(strings.Repeat("a", 100), 10)
	f.Add("~~~~\n~~~\n````\n\n\n  ", 16)
	f.Fuzz(func(t *testing.T, text string, maxBytes int) {
		maxBytes = maxBytes % 1000
		spans := rag.SplitPassages(text, maxBytes)
		checkSpans(t, text, maxBytes, spans)
	})
}
