package truncation

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/contextd/contextd/internal/tokens"
)

var bg = context.Background()

func TestParseStrategy(t *testing.T) {
	for in, want := range map[string]Strategy{"": Middle, "hard": Hard, " Middle ": Middle, "LLM": LLM, "semantic": Semantic} {
		got, err := ParseStrategy(in)
		if err != nil || got != want {
			t.Errorf("ParseStrategy(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"head", "summary", "hard-ish"} {
		if _, err := ParseStrategy(in); err == nil {
			t.Errorf("ParseStrategy(%q): want error", in)
		}
	}
}

const family = "👨\u200d👩\u200d👧\u200d👦"

func TestTruncateExact(t *testing.T) {
	words := "aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm nnnn oooo pppp" // 79 chars
	cases := []struct {
		name     string
		in       string
		o        Options
		want     string
		trunc    bool
		strategy Strategy
	}{
		{"no limits", words, Options{Strategy: Hard}, words, false, Hard},
		{"negative limits are none", words, Options{Strategy: Hard, MaxChars: -1, MaxTokens: -5}, words, false, Hard},
		{"default strategy reported", "short", Options{MaxChars: 10}, "short", false, Middle},
		{"hard ascii", "Hello, world", Options{Strategy: Hard, MaxChars: 5}, "Hell…", true, Hard},
		{"hard exactly at limit", "Hello", Options{Strategy: Hard, MaxChars: 5}, "Hello", false, Hard},
		{"hard one over limit", "Hello!", Options{Strategy: Hard, MaxChars: 5}, "Hell…", true, Hard},
		{"hard limit 1", "Hello", Options{Strategy: Hard, MaxChars: 1}, "…", true, Hard},
		{"hard combining marks", "e\u0301e\u0301e\u0301e\u0301", Options{Strategy: Hard, MaxChars: 3}, "e\u0301e\u0301…", true, Hard},
		{"combining marks count as one char", "e\u0301e\u0301e\u0301", Options{Strategy: Hard, MaxChars: 3}, "e\u0301e\u0301e\u0301", false, Hard},
		{"hard ZWJ family", family + family + family, Options{Strategy: Hard, MaxChars: 2}, family + "…", true, Hard},
		{"flags at exact limit", "🇫🇷🇩🇪🇮🇹", Options{Strategy: Hard, MaxChars: 3}, "🇫🇷🇩🇪🇮🇹", false, Hard},
		{"hard flags", "🇫🇷🇩🇪🇮🇹", Options{Strategy: Hard, MaxChars: 2}, "🇫🇷…", true, Hard},
		{"hard CJK", "東京都は日本の首都です", Options{Strategy: Hard, MaxChars: 5}, "東京都は…", true, Hard},
		{"hard invalid UTF-8", "ab\xffcdef", Options{Strategy: Hard, MaxChars: 4}, "ab\uFFFD…", true, Hard},
		{"fitting invalid UTF-8 is sanitized", "ab\xff", Options{Strategy: Hard, MaxChars: 4}, "ab\uFFFD", false, Hard},
		{
			"middle snaps to word boundaries", words, Options{Strategy: Middle, MaxChars: 60},
			"aaaa bbbb cccc dddd\n…[truncated 46 chars]…\nnnnn oooo pppp", true, Middle,
		},
		{
			"middle prefers sentence ends", "One two three. Four five six seven eight nine ten eleven. Twelve.",
			Options{Strategy: Middle, MaxChars: 50},
			"One two three.\n…[truncated 44 chars]…\nTwelve.", true, Middle,
		},
		{"middle too small falls to hard", words, Options{Strategy: Middle, MaxChars: 30}, words[:29] + "…", true, Hard},
		{"unknown strategy uses middle", words, Options{Strategy: "bogus", MaxChars: 60},
			"aaaa bbbb cccc dddd\n…[truncated 46 chars]…\nnnnn oooo pppp", true, Middle},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, info := Truncate(bg, tc.in, tc.o)
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if info.Truncated != tc.trunc || info.Strategy != tc.strategy {
				t.Errorf("info = %+v, want truncated=%v strategy=%s", info, tc.trunc, tc.strategy)
			}
			if info.OriginalChars != clusterCount(sanitize(tc.in)) {
				t.Errorf("OriginalChars = %d", info.OriginalChars)
			}
			checkOutput(t, tc.in, got, info, tc.o)
		})
	}
}

const prose = "The migration to PostgreSQL finished on Tuesday. Latency dropped by forty percent! " +
	"Nobody expected the cache to matter that much. Naïve estimates were wrong; the café demo used 東京 data. " +
	"Next steps: add replicas, tune autovacuum, and write the runbook. Questions remain about backups? " +
	"Finally, the team celebrated with 🎉 and 👩\u200d💻 stickers.\n"

func TestTruncateTokens(t *testing.T) {
	long := strings.Repeat(prose, 20)
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"hard tokens", Options{Strategy: Hard, MaxTokens: 10}},
		{"hard tokens large", Options{Strategy: Hard, MaxTokens: 700}},
		{"hard both, chars bind", Options{Strategy: Hard, MaxTokens: 500, MaxChars: 100}},
		{"hard both, tokens bind", Options{Strategy: Hard, MaxTokens: 20, MaxChars: 1000}},
		{"middle tokens", Options{Strategy: Middle, MaxTokens: 60}},
		{"middle tokens large", Options{Strategy: Middle, MaxTokens: 1500}},
		{"middle both", Options{Strategy: Middle, MaxTokens: 80, MaxChars: 200}},
		{"middle tokens too small", Options{Strategy: Middle, MaxTokens: 15}},
		{"hard 1 token", Options{Strategy: Hard, MaxTokens: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, info := Truncate(bg, long, tc.o)
			if !info.Truncated {
				t.Fatal("not truncated")
			}
			checkOutput(t, long, got, info, tc.o)
			if info.Strategy == Hard {
				// Maximal: one more cluster would break a limit.
				head := strings.TrimSuffix(got, Ellipsis)
				b := boundaries(long)
				k := clusterCount(head)
				tr := newTruncator(long, tc.o)
				if k+1 < len(b) && tr.fits(long[:b[k+1]]+Ellipsis) {
					t.Errorf("hard head of %d clusters is not maximal", k)
				}
			}
			if info.Strategy == Middle && tc.o.MaxTokens >= 60 {
				// Near the limit, not wastefully short.
				if n := tokens.Count(got); n < tc.o.MaxTokens*7/10 && (tc.o.MaxChars == 0 || clusterCount(got) < tc.o.MaxChars*7/10) {
					t.Errorf("middle output uses only %d tokens of %d", n, tc.o.MaxTokens)
				}
			}
		})
	}
	// A text whose bytes fit the token limit is never counted or cut.
	if got, info := Truncate(bg, "short text", Options{MaxTokens: 100}); got != "short text" || info.Truncated {
		t.Errorf("short text: %q %+v", got, info)
	}
}

func TestMiddleShape(t *testing.T) {
	long := strings.Repeat(prose, 5)
	for _, limit := range []int{60, 100, 333, 1000} {
		got, info := Truncate(bg, long, Options{Strategy: Middle, MaxChars: limit})
		checkOutput(t, long, got, info, Options{MaxChars: limit})
		head, tail, ok := splitMiddle(long, got)
		if !ok {
			t.Fatalf("limit %d: not head+marker+tail: %q", limit, got)
		}
		h, tl := clusterCount(head), clusterCount(tail)
		if h+tl == 0 || float64(h)/float64(h+tl) < 0.45 || float64(h)/float64(h+tl) > 0.75 {
			t.Errorf("limit %d: head %d / tail %d is not roughly 60/40", limit, h, tl)
		}
		if clusterCount(got) < limit*3/4 {
			t.Errorf("limit %d: output only %d chars", limit, clusterCount(got))
		}
	}
}

var markerRE = regexp.MustCompile(`\n…\[truncated (\d+) chars\]…\n`)

// splitMiddle finds a decomposition out = head + marker(N) + tail where
// head and tail are a prefix and a suffix of in cut at cluster boundaries
// and N is the number of clusters between them.
func splitMiddle(in, out string) (string, string, bool) {
	in = sanitize(in)
	b := boundaries(in)
	isB := map[int]bool{}
	for _, x := range b {
		isB[x] = true
	}
	for _, loc := range markerRE.FindAllStringSubmatchIndex(out, -1) {
		head, tail := out[:loc[0]], out[loc[1]:]
		if !strings.HasPrefix(in, head) || !strings.HasSuffix(in, tail) ||
			!isB[len(head)] || !isB[len(in)-len(tail)] || len(head) > len(in)-len(tail) {
			continue
		}
		n, _ := strconv.Atoi(out[loc[2]:loc[3]])
		if n == clusterCount(in[len(head):len(in)-len(tail)]) {
			return head, tail, true
		}
	}
	return "", "", false
}

// checkOutput asserts what holds for every Truncate result: valid UTF-8,
// within the limits, and made of whole clusters of the input plus the
// strategy's own marks.
func checkOutput(t *testing.T, in, out string, info Info, o Options) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("invalid UTF-8 output %q", out)
	}
	in = sanitize(in)
	if !info.Truncated {
		if out != in {
			t.Fatalf("not truncated but changed: %q", out)
		}
		return
	}
	if o.MaxChars > 0 && clusterCount(out) > o.MaxChars {
		t.Fatalf("%d chars > limit %d: %q", clusterCount(out), o.MaxChars, out)
	}
	if o.MaxTokens > 0 && tokens.Count(out) > o.MaxTokens {
		t.Fatalf("%d tokens > limit %d: %q", tokens.Count(out), o.MaxTokens, out)
	}
	switch info.Strategy {
	case Hard:
		head, ok := strings.CutSuffix(out, Ellipsis)
		if out == "" {
			head, ok = "", true
		}
		if !ok || !strings.HasPrefix(in, head) || !onBoundary(in, len(head)) {
			t.Fatalf("hard output %q is not a cluster prefix + ellipsis", out)
		}
	case Middle:
		if _, _, ok := splitMiddle(in, out); !ok {
			t.Fatalf("middle output %q is not head + marker + tail", out)
		}
	case Semantic:
		if !clusterSubsequence(in, out) {
			t.Fatalf("semantic output %q is not a subsequence of the input's clusters", out)
		}
	}
}

func onBoundary(s string, off int) bool {
	for _, b := range boundaries(s) {
		if b == off {
			return true
		}
	}
	return false
}

// clusterSubsequence: out's clusters, ignoring the separator's, appear in
// in's clusters in order.
func clusterSubsequence(in, out string) bool {
	ic := clusters(in)
	j := 0
	for _, c := range clusters(out) {
		if c == " " || c == "…" {
			continue
		}
		for j < len(ic) && ic[j] != c {
			j++
		}
		if j == len(ic) {
			return false
		}
		j++
	}
	return true
}

// Fakes.

type condenser struct {
	out   string
	err   error
	block chan struct{} // non-nil: ignore ctx and wait for it
	calls int
	max   int
}

func (c *condenser) Condense(ctx context.Context, text string, maxChars int) (string, error) {
	c.calls++
	c.max = maxChars
	if c.block != nil {
		<-c.block
	}
	return c.out, c.err
}

type ctxCondenser struct{}

func (ctxCondenser) Condense(ctx context.Context, _ string, _ int) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

func TestLLM(t *testing.T) {
	text := strings.Repeat(prose, 3)
	block := make(chan struct{})
	defer close(block)
	short, cancel := context.WithTimeout(bg, 30*time.Millisecond)
	defer cancel()
	cases := []struct {
		name     string
		ctx      context.Context
		c        Condenser
		want     string // "" = the middle fallback
		fallback string
	}{
		{"ok", bg, &condenser{out: "  Migration done; latency -40%.  "}, "Migration done; latency -40%.", ""},
		{"nil condenser", bg, nil, "", FallbackLLMUnavailable},
		{"error", bg, &condenser{err: errors.New("boom")}, "", FallbackLLMFailed},
		{"empty", bg, &condenser{out: " \n "}, "", FallbackLLMFailed},
		{"overlong", bg, &condenser{out: strings.Repeat("x", 101)}, "", FallbackLLMOverlong},
		{"exactly at limit", bg, &condenser{out: strings.Repeat("x", 100)}, strings.Repeat("x", 100), ""},
		{"invalid UTF-8 answer sanitized", bg, &condenser{out: "ok\xff"}, "ok\uFFFD", ""},
		{"ignores ctx past deadline", short, &condenser{out: "late", block: block}, "", FallbackLLMTimeout},
		{"honours ctx past deadline", short, ctxCondenser{}, "", FallbackLLMTimeout},
		{"its own timeout", bg, &condenser{err: fmt.Errorf("condense: %w", context.DeadlineExceeded)}, "", FallbackLLMTimeout},
		{"known to be down", bg, &condenser{err: fmt.Errorf("not called: %w", ErrUnavailable)}, "", FallbackLLMUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Strategy: LLM, MaxChars: 100, Condenser: tc.c}
			got, info := Truncate(tc.ctx, text, o)
			if info.Fallback != tc.fallback {
				t.Errorf("fallback = %q, want %q", info.Fallback, tc.fallback)
			}
			if tc.want != "" {
				if got != tc.want || info.Strategy != LLM {
					t.Errorf("got %q (%s), want %q", got, info.Strategy, tc.want)
				}
				return
			}
			if info.Strategy != Middle {
				t.Errorf("strategy = %s, want middle", info.Strategy)
			}
			checkOutput(t, text, got, info, o)
		})
	}
	c := &condenser{out: "short"}
	if _, info := Truncate(bg, text, Options{Strategy: LLM, MaxTokens: 50, Condenser: c}); c.max != 150 || info.Fallback != "" {
		t.Errorf("token-only limit: maxChars hint %d, info %+v", c.max, info)
	}
	c = &condenser{out: "short"}
	if Truncate(bg, "fits", Options{Strategy: LLM, MaxChars: 100, Condenser: c}); c.calls != 0 {
		t.Error("condenser called for a text that fits")
	}
}

// scorer scores a sentence by how many query words it contains.
type scorer struct {
	err    error
	short  bool          // answer one score too few
	block  chan struct{} // ignore ctx and wait
	gotLen int
}

func (s *scorer) Score(ctx context.Context, query string, sentences []string) ([]float64, error) {
	s.gotLen = len(sentences)
	if s.block != nil {
		<-s.block
	}
	if s.err != nil {
		return nil, s.err
	}
	out := make([]float64, len(sentences))
	for i, sent := range sentences {
		for _, w := range strings.Fields(strings.ToLower(query)) {
			if strings.Contains(strings.ToLower(sent), w) {
				out[i]++
			}
		}
	}
	if s.short {
		out = out[1:]
	}
	return out, nil
}

func TestSemantic(t *testing.T) {
	text := "Cats purr. Dogs bark. The sky is blue. Cats sleep a lot. Fish swim."
	cjk := "猫が好きです。犬も好きです。空は青い。猫はよく寝る。"
	block := make(chan struct{})
	defer close(block)
	short, cancel := context.WithTimeout(bg, 30*time.Millisecond)
	defer cancel()
	cases := []struct {
		name     string
		ctx      context.Context
		text     string
		o        Options
		want     string // "" = the middle fallback
		fallback string
	}{
		{"non-adjacent runs", bg, text, Options{MaxChars: 35, Query: "cats", Scorer: &scorer{}}, "Cats purr. … Cats sleep a lot.", ""},
		{"adjacent sentences join", bg, text, Options{MaxChars: 35, Query: "cats dogs", Scorer: &scorer{}}, "Cats purr. Dogs bark.", ""},
		{"fills the rest by score then order", bg, text, Options{MaxChars: 48, Query: "cats", Scorer: &scorer{}}, "Cats purr. Dogs bark. … Cats sleep a lot.", ""},
		{"CJK", bg, cjk, Options{MaxChars: 17, Query: "猫", Scorer: &scorer{}}, "猫が好きです。 … 猫はよく寝る。", ""},
		{"newline sentences", bg, "alpha one\nbeta two\ngamma three\n", Options{MaxChars: 23, Query: "gamma alpha", Scorer: &scorer{}}, "alpha one … gamma three", ""},
		{"tokens", bg, text, Options{MaxTokens: 13, Query: "cats", Scorer: &scorer{}}, "Cats purr. … Cats sleep a lot.", ""},
		{"nil scorer", bg, text, Options{MaxChars: 35, Query: "cats"}, "", FallbackSemanticUnavailable},
		{"empty query", bg, text, Options{MaxChars: 35, Query: "  ", Scorer: &scorer{}}, "", FallbackSemanticNoQuery},
		{"scorer error", bg, text, Options{MaxChars: 35, Query: "cats", Scorer: &scorer{err: errors.New("down")}}, "", FallbackSemanticFailed},
		{"wrong score count", bg, text, Options{MaxChars: 35, Query: "cats", Scorer: &scorer{short: true}}, "", FallbackSemanticFailed},
		{"slow scorer", short, text, Options{MaxChars: 35, Query: "cats", Scorer: &scorer{block: block}}, "", FallbackSemanticTimeout},
		{"no sentence fits", bg, strings.Repeat("word ", 30), Options{MaxChars: 40, Query: "word", Scorer: &scorer{}}, "", FallbackSemanticNoFit},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Strategy = Semantic
			got, info := Truncate(tc.ctx, tc.text, tc.o)
			if info.Fallback != tc.fallback {
				t.Errorf("fallback = %q, want %q", info.Fallback, tc.fallback)
			}
			if tc.want != "" && (got != tc.want || info.Strategy != Semantic) {
				t.Errorf("got %q (%s), want %q", got, info.Strategy, tc.want)
			}
			if tc.want == "" && info.Strategy == Semantic {
				t.Errorf("want a fallback, got semantic %q", got)
			}
			checkOutput(t, tc.text, got, info, tc.o)
		})
	}
}

func TestSemanticSentences(t *testing.T) {
	s := "First one. Second!  Third?\nFourth line\n\nFifth 。六。x.y stays"
	tr := newTruncator(s, Options{})
	var got []string
	for _, sp := range tr.sentences() {
		got = append(got, s[tr.b[sp.from]:tr.b[sp.to]])
	}
	want := []string{"First one. ", "Second!  ", "Third?\n", "Fourth line\n\n", "Fifth 。", "六。", "x.y stays"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sentences = %q, want %q", got, want)
	}
}

// The chunked count must equal the whole count: it relies on where cl100k
// pre-tokenizes.
func TestCountUpToIsExact(t *testing.T) {
	texts := append([]string{strings.Repeat(prose, 40), strings.Repeat("it's a dog's life\n\nOK?! ", 500)}, unicodeTexts...)
	for _, s := range texts {
		s = sanitize(strings.Repeat(s, 3))
		want := tokens.Count(s)
		if got := countUpTo(tokens.CL100K, s, want); got != want {
			t.Errorf("countUpTo = %d, Count = %d for %.40q", got, want, s)
		}
		if got := countUpTo(tokens.CL100K, s, want/3); got <= want/3 {
			t.Errorf("countUpTo(limit %d) = %d, want > limit", want/3, got)
		}
		// Every cut point is exact on its own.
		for from := 0; from < len(s); {
			cut := safeSplit(s, from)
			if cut == len(s) {
				break
			}
			if tokens.Count(s[:cut])+tokens.Count(s[cut:]) != want {
				t.Fatalf("cut at %d (%q|%q) changes the count", cut, s[max(cut-5, 0):cut], s[cut:min(cut+5, len(s))])
			}
			from = cut + len(s)/8
		}
	}
}

// Truncation by tokens counts in the agent's tokenizer.
func TestMaxTokensInTheAgentsTokenizer(t *testing.T) {
	text := strings.Repeat("Мы обсуждали поездку в Лиссабон и бронирование отеля. ", 40)
	for _, tok := range []tokens.Counter{tokens.CL100K, tokens.O200K()} {
		for _, st := range []Strategy{Hard, Middle} {
			out, _ := Truncate(context.Background(), text, Options{Strategy: st, MaxTokens: 30, Tokens: tok})
			if n := tok.Count(out); n > 30 || n < 20 {
				t.Errorf("%s %s: %d tokens, want 20..30", tok.Name(), st, n)
			}
		}
	}
}
