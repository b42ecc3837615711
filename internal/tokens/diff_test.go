package tokens

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2/syntax"
)

// TestClasses checks the scanner's character classes against regexp2's for
// every rune: the sets of the generated engine (same encoded form as
// codec/regexp.gen.go), its ASCII bitmaps, and the tables it uses inline.
func TestClasses(t *testing.T) {
	notNLLN := syntax.NewCharSetRuntime("\x01\x02\x00\x00\x00\x02\x00\x00\x00\n\n\r\r\x01L\x01N") // [^\r\n\p{L}\p{N}]
	notSLN := syntax.NewCharSetRuntime("\x01\x00\x00\x00\x00\x03\x00\x00\x00\x01 \x01L\x01N")     // [^\s\p{L}\p{N}]
	inBitmap := func(r rune, lo, hi uint64) bool {
		if r < 64 {
			return lo&(1<<uint(r)) != 0
		}
		return hi&(1<<uint(r-64)) != 0
	}
	bad := 0
	for r := rune(0); r <= unicode.MaxRune && bad < 10; r++ {
		c := classOf(r)
		if r == 0x7f { // the generated bitmaps leave DEL out of both sets
			if c != clDEL || !notNLLN.CharIn(r) || !notSLN.CharIn(r) ||
				inBitmap(r, 0xfc00ffffffffdbff, 0x78000001f8000001) || inBitmap(r, 0xfc00fffeffffc1ff, 0x78000001f8000001) {
				t.Errorf("DEL: class %b; the engine's bitmaps changed, revisit codecQuirks", c)
			}
			continue
		}
		isL, isN, isS := unicode.In(r, unicode.L), unicode.In(r, unicode.N), unicode.IsSpace(r)
		nl := r == '\r' || r == '\n'
		set1, set3 := notNLLN.CharIn(r), notSLN.CharIn(r)
		if r < 128 {
			set1 = inBitmap(r, 0xfc00ffffffffdbff, 0x78000001f8000001)
			set3 = inBitmap(r, 0xfc00fffeffffc1ff, 0x78000001f8000001)
			if set1 != notNLLN.CharIn(r) || set3 != notSLN.CharIn(r) {
				t.Errorf("rune %U: generated bitmaps disagree with the sets", r)
				bad++
			}
		}
		if (c&clL != 0) != isL || (c&clN != 0) != isN || (c&clS != 0) != isS || (c&clNL != 0) != nl ||
			set1 != (c&(clL|clN|clNL) == 0) || set3 != (c&(clL|clN|clS) == 0) {
			t.Errorf("rune %U: class %b; L=%v N=%v S=%v set1=%v set3=%v", r, c, isL, isN, isS, set1, set3)
			bad++
		}
	}
}

// each calls fn with every token of m and its rank.
func (m *rankMap) each(fn func(tok string, rank uint32)) {
	for _, e := range m.slots {
		if e != 0 {
			off, n := int(e&(1<<24-1)), int(e>>24&0xff)
			fn(m.all[off:off+n], uint32(e>>32))
		}
	}
}

func TestRankTable(t *testing.T) {
	ref()
	rank := rankTable()
	for _, s := range []string{"hello", " world", "\n", "!", " the", "'s", "ing"} {
		ids, _, err := refCodec.Encode(s)
		if err != nil || len(ids) != 1 {
			continue // not a single token: nothing to compare
		}
		if r, ok := rank.get(s); !ok || uint(r) != ids[0] {
			t.Errorf("rank[%q] = %d, %v; codec id %d", s, r, ok, ids[0])
		}
	}
	seen := 0
	rank.each(func(s string, r uint32) {
		seen++
		// Every token is found under its own rank: the probing holds.
		if got, ok := rank.get(s); !ok || got != r {
			t.Errorf("get(%q) = %d, %v; the table holds it with rank %d", s, got, ok, r)
		}
		if r%997 != 0 { // a sample: decoding all takes a while
			return
		}
		if d, err := refCodec.Decode([]uint{uint(r)}); err != nil || d != s {
			t.Errorf("rank %d decodes to %q, %v; table has %q", r, d, err, s)
		}
	})
	if seen != 100256 {
		t.Errorf("rank table has %d entries, want 100256", seen)
	}
	for _, s := range []string{"", " contextd's rank table", "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09"} {
		if r, ok := rank.get(s); ok {
			t.Errorf("get(%q) = %d: not a token", s, r)
		}
	}
}

// corpus returns generated text of every kind the brief lists.
func corpus() []string {
	var out []string
	add := func(s ...string) { out = append(out, s...) }
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }

	// English prose.
	words := strings.Fields(`the a of and to in is was that it he she for on with as his her
		they at be this from I have or by one had not but what all were when we there can an
		your which their said if do will each about how up out them then many some so these
		would other into has more two like him see time could no make than first been its who
		now people my made over did down only way find use may water long little very after
		words called just where most know Caroline Melanie LGBTQ counseling adoption sunrise
		paint support group yesterday conversation remember birthday photography unbelievably
		extraordinary antidisestablishmentarianism naïve café résumé Zürich São coöperate`)
	seps := []string{" ", " ", " ", " ", ", ", "; ", ": ", " - ", " — ", " (", ") ", "\" ", " \""}
	ends := []string{". ", "! ", "? ", "...\n", ".\n\n", "?!\n", ".\r\n", ". \n", ".  \n\n", "\n"}
	for range 300 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			n := 3 + rng.IntN(15)
			for i := range n {
				w := pick(words)
				if i == 0 {
					w = strings.ToUpper(w[:1]) + w[1:]
				}
				if rng.IntN(12) == 0 {
					w += pick([]string{"'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "’s", "n't", "'S", "'LL"})
				}
				b.WriteString(w)
				if i < n-1 {
					b.WriteString(pick(seps))
				}
			}
			b.WriteString(pick(ends))
		}
		add(b.String())
	}

	// Contractions in every case, with different neighbours.
	for _, c := range []string{"s", "t", "re", "ve", "m", "ll", "d", "ſ", "x", "r", "v", "l", "e"} {
		for mask := 0; mask < 1<<len(c); mask++ {
			var v strings.Builder
			for i, r := range c {
				if mask&(1<<i) != 0 {
					r = unicode.ToUpper(r)
				}
				v.WriteRune(r)
			}
			for _, ap := range []string{"'", "’", "‘", "ʼ", "`", "´", "''", " '"} {
				for _, pre := range []string{"", "it", "I", " ", "x ", "1", "!", "\n"} {
					for _, post := range []string{"", " ", "ay", "\n", "!", "1", "'s"} {
						add(pre + ap + v.String() + post)
					}
				}
			}
		}
	}

	// Numbers of all lengths, alone and in context.
	for n := 1; n <= 24; n++ {
		d := strings.Repeat("1234567890", 3)[:n]
		add(d, " "+d, "a"+d, d+"a", "-"+d, "$"+d+".99", d+","+d, "v"+d+"."+d, "x "+d+" y", "٣"+d+"²½")
	}

	// Whitespace runs of every kind, up to length 3, in context.
	ws := []string{" ", "\t", "\n", "\r", "\u00a0", "\u3000", "\u0085", "\u2028", "\v", "\f", "\u1680"}
	var runs []string
	var gen func(prefix string, depth int)
	gen = func(prefix string, depth int) {
		if prefix != "" {
			runs = append(runs, prefix)
		}
		if depth == 3 {
			return
		}
		for _, w := range ws {
			gen(prefix+w, depth+1)
		}
	}
	gen("", 0)
	for _, r := range runs {
		add("a"+r+"b", "a"+r, r+"1", r+"!", ".\n"+r+"x")
	}
	add("foo\n    \n    bar", "x  \n\n  y", "line  \nnext", "a\r\n\r\n\r\nb", "\n\n\n", "   ", " \n \n ", "\t\t\tx")

	// Punctuation runs, then newlines.
	for _, p := range []string{"!", "...", "---", "/*", "*/", "?!", "«»", "“”", "…", "¿", "##", "<|endoftext|>", "@@", "=>", "''"} {
		for _, nl := range []string{"", "\n", "\r\n", "\n\n", "\r\r", " \n", "\n "} {
			add(p+nl, " "+p+nl+"x", "a"+p+nl+"b", "1"+p+nl)
		}
	}

	// Code and JSON.
	add("func main() {\n\tfmt.Println(\"hello, world\")\n\tfor i := 0; i < 10; i++ {\n\t\tx += i*2\n\t}\n}\n",
		"def f(x):\n    if x > 0:\n        return x ** 2  # square\n    \n    return -x\n",
		"const a = {b: [1, 2, 3], 'c': \"d\"};\r\n// comment\r\nif (a.b?.length >= 2) { console.log(`${a}`); }",
		"SELECT id, name FROM users WHERE age >= 18 AND name LIKE '%son' ORDER BY id DESC;",
		"<div class=\"x\">&nbsp;Hello&amp;bye</div>\n<br/>", "#!/bin/sh\nset -eu\necho \"$HOME\" | grep -q root && exit 0\n")
	for range 50 {
		v := map[string]any{}
		for range 1 + rng.IntN(6) {
			v[pick(words)] = []any{rng.IntN(1 << 20), rng.Float64() * 1000, pick(words) + " " + pick(words), rng.IntN(2) == 0, nil}
		}
		b, _ := json.Marshal(v)
		add(string(b))
		b, _ = json.MarshalIndent(v, "", "  ")
		add(string(b))
	}

	// Other scripts and symbols.
	add("你好，世界！今天天气很好。", "日本語のテキスト、カタカナ・ひらがな。", "한국어 문장입니다.",
		"👩‍👩‍👧 family 👍🏽 🇫🇷🇩🇪 ❤️‍🔥", "e\u0301 cafe\u0301 \u0301x n\u0303o", "Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǫ̗",
		"مرحبا بالعالم 123 ١٢٣٤", "שלום עולם!", "\u200f\u200eRTL\u202emixed", "ǅungla ǲ ᾈ", "Ⅻ ⅻ ① ²³ ¼",
		"\ufeffBOM", "\x00\x01\x1f\x7f", "\U0001F600\U0001F600x", "ß ẞ ﬁ ŉ", "İstanbul ıi")
	// Invalid UTF-8.
	add("bad \xff utf8", "\xc3", "\xe6\x97", "\xf0\x9f\x98", "a\x80\x80b", "\xed\xa0\x80", "'\xffs", "\xff\n\xff ")
	return out
}

func TestSplitAndCountMatchCodec(t *testing.T) {
	texts := corpus()
	for _, s := range texts {
		if !checkSame(t, s) && t.Failed() && testing.Short() {
			break
		}
	}
	t.Logf("%d generated strings compared", len(texts))
}

// randomString draws from an alphabet weighted towards the characters the
// pattern treats specially, plus any rune and invalid bytes.
func randomString(rng *rand.Rand, n int) string {
	special := []string{"'", "'", "s", "S", "t", "re", "ve", "LL", "d", "m", "ſ", "e", "l", " ", " ", " ", "\t", "\n",
		"\r", "\r\n", "\u00a0", "\u3000", "\u0085", "\u2028", "!", ".", ",", "-", "/", "1", "23", "٣", "²",
		"a", "Z", "é", "\u0301", "日", "😀", "\u200d", "\xff", "\xe6\x97", "_", "`", "’"}
	var b strings.Builder
	for range n {
		switch rng.IntN(4) {
		case 0:
			r := rune(rng.IntN(0x3000))
			if rng.IntN(4) == 0 {
				r = rune(rng.IntN(unicode.MaxRune + 1))
			}
			b.WriteRune(r)
		default:
			b.WriteString(special[rng.IntN(len(special))])
		}
	}
	return b.String()
}

func TestRandomMatchesCodec(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for i := 0; i < n; i++ {
		if !checkSame(t, randomString(rng, rng.IntN(40))) {
			return
		}
	}
	t.Logf("%d random strings compared", n)
}

// TestEveryRuneInContext puts a sample of all runes (every one below
// U+3400, every 31st above) in contexts that exercise each alternative.
func TestEveryRuneInContext(t *testing.T) {
	var b strings.Builder
	flush := func() bool {
		ok := checkSame(t, b.String())
		b.Reset()
		return ok
	}
	step := rune(1)
	for r := rune(0); r <= unicode.MaxRune; r += step {
		if r >= 0x3400 {
			step = 31
		}
		if !utf8.ValidRune(r) {
			continue
		}
		c := string(r)
		fmt.Fprintf(&b, "a%s %s1 '%s  %sb\n%s!", c, c, c, c, c)
		if b.Len() > 4000 && !flush() {
			return
		}
	}
	flush()
}

// TestFaithfulModeMatchesInterpreter checks the non-quirk mode against
// regexp2's backtracking interpreter, i.e. real regex semantics.
func TestFaithfulModeMatchesInterpreter(t *testing.T) {
	ref()
	texts := corpus()
	rng := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		texts = append(texts, randomString(rng, rng.IntN(40)))
	}
	for _, s := range texts {
		v := toValid(s)
		if got, want := scanSplit(v, false), regexSplit(interpRe, v); !slices.Equal(got, want) {
			t.Fatalf("faithful split(%q)\n got %q\nwant %q", s, got, want)
		}
	}
	// The quirks are real: the codec splits "\n \n" where tiktoken does
	// not, and drops DEL.
	if got := regexSplit(genRe, "a\n \nb"); len(got) != 4 {
		t.Errorf("codec engine split %q: the newline quirk is gone; revisit codecQuirks", got)
	}
	if got := regexSplit(genRe, "a\x7fb"); len(got) != 2 {
		t.Errorf("codec engine split %q: the DEL quirk is gone; revisit codecQuirks", got)
	}
}

func TestTruncateMatchesCodec(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	texts := corpus()
	for i, s := range texts {
		if i%7 != 0 { // a sample keeps the quadratic reference cheap
			continue
		}
		n := codecCount(s)
		for _, max := range []int{0, 1, 2, n / 3, n / 2, n - 1, n, n + 1, rng.IntN(n + 1)} {
			checkTruncate(t, s, max)
		}
	}
}

// checkTruncate: Truncate(s, max) is a prefix of s (after replacing invalid
// UTF-8) within max tokens, and equals the codec-based Truncate, except with
// DEL in s: the codec drops DEL from its tokens, so decoding them does not
// give a prefix, while Truncate keeps DELs (they cost no token).
func checkTruncate(t *testing.T, s string, max int) {
	t.Helper()
	got := Truncate(s, max)
	if max <= 0 {
		if got != "" {
			t.Fatalf("Truncate(%q, %d) = %q, want \"\"", s, max, got)
		}
		return
	}
	if got != s && (!strings.HasPrefix(toValid(s), got) || Count(got) > max) {
		t.Fatalf("Truncate(%q, %d) = %q: %d tokens or not a prefix", s, max, got, Count(got))
	}
	if strings.IndexByte(s, 0x7f) >= 0 {
		// DELs cost a token each here (see dels) and nothing in the codec,
		// whose cut then is no prefix to compare with: require instead
		// that the cut uses nearly all of the budget, unless the next
		// whole rune alone would pass it (a rare rune is up to four
		// byte tokens, and a cut never splits a rune).
		if v := toValid(s); got != v && got != s && Count(got) < max-2 {
			_, size := utf8.DecodeRuneInString(v[len(got):])
			if Count(v[:len(got)+size]) <= max {
				t.Fatalf("Truncate(%q, %d) = %q: only %d tokens", s, max, got, Count(got))
			}
		}
		return
	}
	if want := codecTruncate(s, max); got != want {
		t.Fatalf("Truncate(%q, %d) = %q, codec %q", s, max, got, want)
	}
}

// locomoPath is the shared LoCoMo dev set; read in place, never copied.
const locomoPath = "../../../shared/bench/locomo/locomo-dev.json"

// locomoTexts returns every string in the LoCoMo file (turns, questions,
// summaries), or nil if the file is absent.
func locomoTexts(tb testing.TB) []string {
	b, err := os.ReadFile(locomoPath)
	if err != nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		tb.Fatalf("locomo: %v", err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

func TestLocomoMatchesCodec(t *testing.T) {
	texts := locomoTexts(t)
	if texts == nil {
		t.Skip("LoCoMo dev set not present")
	}
	total := 0
	for _, s := range texts {
		if !checkSame(t, s) {
			return
		}
		total += len(s)
	}
	t.Logf("%d LoCoMo strings (%d bytes) compared", len(texts), total)
}

// TestLongTextsMatchCodec: long multi-line strings, which Count counts line
// by line, count as the codec counts them whole.
func TestLongTextsMatchCodec(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	seps := []string{"\n", "\n\n", ".\n", " \n", "\n ", "\r\n", "!\n\n", "\n\t", "\n\x7f", "\n\xff"}
	n := 300
	if testing.Short() {
		n = 50
	}
	for range n {
		var b strings.Builder
		for b.Len() < linesMin {
			b.WriteString(randomString(rng, rng.IntN(30)))
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		s := b.String()
		if got, want := Count(s), codecCount(s)+dels(toValid(s)); got != want {
			t.Fatalf("Count(%q) = %d, codec %d", s, got, want)
		}
	}
	if texts := locomoTexts(t); len(texts) > 40 {
		s := strings.Join(texts[:40], "\n")
		if got, want := Count(s), codecCount(s)+dels(toValid(s)); got != want {
			t.Fatalf("Count(40 LoCoMo texts) = %d, codec %d", got, want)
		}
	}
}
