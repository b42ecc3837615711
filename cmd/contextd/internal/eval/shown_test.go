package eval

import (
	"strings"
	"testing"
	"time"
)

// longTurn is a LoCoMo-style turn over shortTurnChars: four sentences of
// 20+ characters and two short ones that do not count.
var longSentences = []string{
	"I finally went back to the pottery studio on Elm Street last weekend after months away from it, and it felt like coming home.",
	"The instructor showed us how to center the clay on the wheel without letting it wobble at all.",
	"My first bowl collapsed twice, but the third one held its shape and I glazed it a deep ocean blue.",
	"Next month they are opening an evening class for beginners on Thursdays and I think you would really love it.",
}

var longTurn = "Caroline: " + longSentences[0] + " Wow. " + longSentences[1] + " " + longSentences[2] + " Ha! " + longSentences[3]

func TestLongTurnFixture(t *testing.T) {
	p := newProbe(longTurn)
	if len(p.whole) <= shortTurnChars || len(p.sentences) != 4 {
		t.Fatalf("fixture: %d chars, sentences %q: want a long turn with 4 sentences of 20+ chars", len(p.whole), p.sentences)
	}
}

func TestShownTurns(t *testing.T) {
	short := "Caroline: I went to a LGBTQ support group yesterday and it was so powerful."
	cases := []struct {
		name    string
		turn    string
		context string
		want    bool
	}{
		{"short turn whole, as contextd renders it", short,
			"## Relevant earlier turns\n[Mon 8 May 2023]\nuser: Caroline: I went to a LGBTQ support group yesterday and it was so powerful.\nassistant: Melanie: Nice!", true},
		{"short turn without its speaker label", short,
			"user: I went to a LGBTQ support group yesterday and it was so powerful.", true},
		{"short turn under another label", short,
			"[8 May] Caro: I went to a LGBTQ support group yesterday and it was so powerful.", true},
		{"short turn with re-wrapped white space", short,
			"user: Caroline: I went to a LGBTQ support\n  group yesterday and\tit was so powerful.", true},
		{"stored turn with odd white space", "Caroline:  I went to a LGBTQ\nsupport group   yesterday and it was so powerful.",
			"user: Caroline: I went to a LGBTQ support group yesterday and it was so powerful.", true},
		{"short turn cut by a snippet mark", short,
			"user: Caroline: I went to a LGBTQ support group […] it was so powerful.", false},
		{"short turn truncated", short,
			"user: Caroline: I went to a LGBTQ support group yesterday and it", false},
		{"short turn snippet: seq listed, words not all there", short,
			"user: […] LGBTQ support group yesterday […]", false},
		{"a word changed", short,
			"user: Caroline: I went to a LGBTQ support group yesterday and it was so powerful!", false},
		{"case is kept", short,
			"user: caroline: i went to a lgbtq support group yesterday and it was so powerful.", false},
		{"a short turn inside another word does not count", "Mel: at home",
			"user: I did that homework", false},
		{"a short turn on word boundaries counts", "Mel: at home",
			"user: Mel: at home\nassistant: ok", true},
		{"long turn, all sentences", longTurn,
			"user: " + longTurn, true},
		{"long turn, half its 20+ char sentences", longTurn,
			"user: Caroline: " + longSentences[0] + " […] " + longSentences[3], true},
		{"long turn, half its sentences re-wrapped", longTurn,
			"user: " + strings.ReplaceAll(longSentences[1], " ", "\n") + " […] " + longSentences[2], true},
		{"long turn, fewer than half", longTurn,
			"user: Caroline: " + longSentences[0] + " Wow. […] Ha!", false},
		{"long turn, short sentences only do not count", longTurn,
			"user: Wow. Ha! " + longSentences[2][:40], false},
		{"long turn without a 20-char sentence, part shown", strings.Repeat("Ok then. ", 50),
			"user: " + strings.Repeat("Ok then. ", 40), false},
		{"long turn without a 20-char sentence, whole", strings.Repeat("Ok then. ", 50),
			"user: " + strings.Repeat("Ok then. ", 50), true},
		{"empty context", short, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			probes := func(int) probe { return newProbe(c.turn) }
			got := shownTurns(c.context, []int{0}, probes)[0]
			if got != c.want {
				t.Errorf("shown = %v, want %v\nturn    %q\ncontext %q", got, c.want, c.turn, c.context)
			}
		})
	}
}

// Only the evidence turns asked about are tested, each probe made once.
func TestIngestedShown(t *testing.T) {
	in := &ingested{kept: []sampleTurn{
		{id: "D1:1", role: "user", text: "Caroline: I went to a support group yesterday."},
		{id: "D1:2", role: "assistant", text: "Melanie: That sounds wonderful, tell me more."},
		{id: "D1:3", role: "user", text: "Caroline: It was so powerful for me."},
	}}
	ctx := "user: Caroline: I went to a support group yesterday.\nassistant: Melanie: That sounds wonderful, tell me more.\n"
	got := in.shown(ctx, []int{0, 2})
	if !got[0] || got[1] || got[2] || len(got) != 1 {
		t.Errorf("shown = %v, want only turn 0 (turn 1 is shown but not evidence)", got)
	}
	if len(in.probes) != 2 {
		t.Errorf("%d probes made, want 2 (the evidence turns only)", len(in.probes))
	}
}

func TestProbeLabel(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"Caroline: Hello there, friend.", "Hello there, friend."},
		{"Mary Ann Lee: Hello there.", "Hello there."},
		{"How do I sort a slice in Go? Like this: sort.Ints(s).", "How do I sort a slice in Go? Like this: sort.Ints(s)."},
		{"Plain text with no label.", "Plain text with no label."},
	} {
		if got := newProbe(c.text).whole; got != c.want {
			t.Errorf("newProbe(%q).whole = %q, want %q", c.text, got, c.want)
		}
	}
}

// The whole-turn fills print and pay for each turn after its role label,
// and their evidence shown is measured on that text.
func TestBaselineLines(t *testing.T) {
	at := time.Date(2023, 5, 8, 13, 0, 0, 0, time.UTC)
	kept := []sampleTurn{
		{id: "D1:1", role: "user", text: "Caroline: I adopted a kitten named Oscar.", at: at},
		{id: "D1:2", role: "assistant", text: "Melanie: My dog barks at every kitten.", at: at},
	}
	c := turnCorpus(kept)
	if c.lines[0] != "user: Caroline: I adopted a kitten named Oscar." || c.costs[0] != turnCost(c.lines[0]) {
		t.Errorf("line %q cost %d, want the role label and its tokens", c.lines[0], c.costs[0])
	}
	if c.costs[0] <= turnCost(kept[0].text) {
		t.Errorf("cost %d: the role label is not paid for", c.costs[0])
	}
	p := bm25Fill(c.index, c.costs, "kitten Oscar", c.costs[0])
	text := packedText(p, c.lines, c.dates, true)
	if !strings.HasPrefix(text, "[Mon 8 May 2023]\nuser: Caroline: I adopted") {
		t.Errorf("packed text %q", text)
	}
	in := &ingested{kept: kept}
	if got := in.shown(text, []int{0, 1}); !got[0] || got[1] {
		t.Errorf("shown = %v, want turn 0 only", got)
	}
}
