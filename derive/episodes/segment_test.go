package episodes

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/derive/extractive"
	"github.com/contextd/contextd/memory"
)

var topicWords = map[string][]string{
	"lisbon":  strings.Fields("lisbon apartment moving flat rent neighbourhood alfama boxes movers lease landlord tram"),
	"garden":  strings.Fields("garden tomatoes compost seedlings watering soil basil greenhouse harvest mulch pruning"),
	"taxes":   strings.Fields("taxes invoice deduction accountant receipts filing deadline refund income quarterly audit"),
	"cooking": strings.Fields("recipe oven dough flour pasta sauce simmer garlic onions baking knead"),
}

var t0 = time.Date(2023, 5, 3, 9, 0, 0, 0, time.UTC)

// chat builds turns: spec is a list of (topic, count) blocks; turns are a
// minute apart and mix a few topic words with filler.
func chat(spec ...any) []memory.Message {
	r := rand.New(rand.NewSource(1))
	var out []memory.Message
	for i := 0; i+1 < len(spec); i += 2 {
		words := topicWords[spec[i].(string)]
		for k := 0; k < spec[i+1].(int); k++ {
			var b strings.Builder
			b.WriteString("I think the ")
			for j := 0; j < 6; j++ {
				b.WriteString(words[r.Intn(len(words))] + " ")
			}
			b.WriteString("is what we should look at.")
			seq := int64(len(out) + 1)
			out = append(out, memory.Message{Seq: seq, Role: memory.RoleUser, Content: b.String(),
				CreatedAt: t0.Add(time.Duration(seq) * time.Minute)})
		}
	}
	return out
}

func ranges(turns []memory.Message, spans []Span) [][2]int64 {
	out := [][2]int64{}
	for _, s := range spans {
		out = append(out, [2]int64{turns[s.From].Seq, turns[s.To-1].Seq})
	}
	return out
}

func TestCut(t *testing.T) {
	p := Params{MinTurns: 6, MaxTurns: 40, Gap: 2 * time.Hour}
	withGap := chat("lisbon", 12)
	for i := 4; i < len(withGap); i++ {
		withGap[i].CreatedAt = withGap[i].CreatedAt.Add(3 * time.Hour)
	}
	tests := []struct {
		name  string
		turns []memory.Message
		p     Params
		last  int64
		want  [][2]int64
	}{
		{"topic shift", chat("lisbon", 10, "garden", 10, "taxes", 10), p, 30,
			[][2]int64{{1, 10}, {11, 20}}},
		{"no shift inside a topic", chat("lisbon", 30), p, 30, [][2]int64{}},
		{"gap forces a cut below min", withGap, p, 12, [][2]int64{{1, 4}}},
		{"cap", chat("lisbon", 50), Params{MinTurns: 6, MaxTurns: 20}, 50, [][2]int64{{1, 20}, {21, 40}}},
		{"shift below min is ignored", chat("lisbon", 3, "garden", 20), p, 23, [][2]int64{}},
		{"min may be lowered", chat("lisbon", 3, "garden", 20), Params{MinTurns: 2}, 23, [][2]int64{{1, 3}}},
		{"nothing past last is owned", chat("lisbon", 10, "garden", 10, "taxes", 10), p, 15,
			[][2]int64{{1, 10}}},
		{"boundary undecided until its right windows exist", chat("lisbon", 10, "garden", 5), p, 15,
			[][2]int64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ranges(tc.turns, Cut(nil, tc.turns, tc.last, tc.p))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("episodes %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCutIncremental closes episodes from a cursor as turns arrive, a few
// at a time, and gets exactly the episodes one pass over all turns gives:
// closed episodes are never revisited and the tail waits for its boundary.
func TestCutIncremental(t *testing.T) {
	p := Params{MinTurns: 6, MaxTurns: 25}
	all := chat("lisbon", 14, "garden", 9, "taxes", 30, "cooking", 11, "lisbon", 8)
	for i := 40; i < len(all); i++ {
		all[i].CreatedAt = all[i].CreatedAt.Add(5 * time.Hour)
	}
	const recent = 4
	batch := ranges(all, Cut(nil, all, int64(len(all)-recent), p))

	var got [][2]int64
	cursor := 0 // index of the first turn after the last closed episode
	for n := 3; n <= len(all); n += 3 {
		seen := all[:n]
		prev := seen[max(0, cursor-p.Lookback()):cursor]
		spans := Cut(prev, seen[cursor:], int64(n-recent), p)
		for _, s := range spans {
			got = append(got, [2]int64{seen[cursor+s.From].Seq, seen[cursor+s.To-1].Seq})
		}
		if len(spans) > 0 {
			cursor += spans[len(spans)-1].To
		}
	}
	if len(batch) < 4 {
		t.Fatalf("batch cut only %v", batch)
	}
	if !reflect.DeepEqual(got, batch) {
		t.Errorf("incremental %v\nbatch       %v", got, batch)
	}
	for i := range got {
		if i == 0 && got[0][0] != 1 || i > 0 && got[i][0] != got[i-1][1]+1 {
			t.Fatalf("ranges not contiguous from 1: %v", got)
		}
	}
}

func TestCohesionDipsAtShift(t *testing.T) {
	turns := chat("lisbon", 8, "taxes", 8)
	c := cohesion(turns, 3)
	for j := 2; j < len(c)-1; j++ {
		if j != 8 && c[j] <= c[8] {
			t.Errorf("cohesion at gap %d = %.2f, not above the shift's %.2f", j, c[j], c[8])
		}
	}
	if c[8] > 0.2 {
		t.Errorf("cohesion across the shift %.2f, want near 0", c[8])
	}
}

func TestTermsOf(t *testing.T) {
	got := len(termsOf("The Café in Lisbon, and the café! ok 42nd"))
	if got != 4 { // café lisbon café 42nd
		t.Errorf("%d terms, want 4", got)
	}
}

func BenchmarkCut1000(b *testing.B) {
	var turns []memory.Message
	for len(turns) < 1000 {
		turns = append(turns, chat("lisbon", 17, "garden", 23, "taxes", 31, "cooking", 12)...)
	}
	turns = turns[:1000]
	for i := range turns {
		turns[i].Seq = int64(i + 1)
		turns[i].Content = fmt.Sprintf("%s %s", turns[i].Content, turns[i].Content)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Cut(nil, turns, 1000, Params{})
	}
}

// BenchmarkBuild1000 is episode building as the worker does it without an
// LLM: cut 1,000 turns, summarise each episode extractively, fold it into
// the root.
func BenchmarkBuild1000(b *testing.B) {
	var turns []memory.Message
	for len(turns) < 1000 {
		turns = append(turns, chat("lisbon", 17, "garden", 23, "taxes", 31, "cooking", 12)...)
	}
	turns = turns[:1000]
	for i := range turns {
		turns[i].Seq = int64(i + 1)
	}
	sum := extractive.New()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var root memory.Summary
		for _, sp := range Cut(nil, turns, 1000, Params{}) {
			res, err := sum.SummarizeEpisode(context.Background(), memory.EpisodeRequest{Turns: turns[sp.From:sp.To]})
			if err != nil {
				b.Fatal(err)
			}
			root = Fold(root, res.Summary, res.Short, 800)
		}
	}
}

// BenchmarkRunningSummary1000 is the baseline for BenchmarkBuild1000: the
// extractive running summary over the same turns, extended 10 at a time as
// the worker does without episodes.
func BenchmarkRunningSummary1000(b *testing.B) {
	var turns []memory.Message
	for len(turns) < 1000 {
		turns = append(turns, chat("lisbon", 17, "garden", 23, "taxes", 31, "cooking", 12)...)
	}
	turns = turns[:1000]
	sum := extractive.New()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var prev *memory.Summary
		for j := 0; j < len(turns); j += 10 {
			res, err := sum.Summarize(context.Background(), memory.SummarizeRequest{Prev: prev, Turns: turns[j : j+10], Structured: true, MaxTokens: 800})
			if err != nil {
				b.Fatal(err)
			}
			prev = &res.Summary
		}
	}
}

// TestShortStretchBeforeSilenceJoinsPrevious: "Yup, ttyl!" and a long
// silence do not make an episode of their own (it would have nothing to
// summarise): the stretch joins the episode before it, which ends at the
// silence, whether cut in one go or turn by turn.
func TestShortStretchBeforeSilenceJoinsPrevious(t *testing.T) {
	turns := chat("garden", 12, "taxes", 12)
	bye := memory.Message{Seq: 13, Role: memory.RoleUser, Content: "Audrey: Yup, ttyl!", CreatedAt: turns[11].CreatedAt.Add(time.Minute)}
	turns = append(turns[:12:12], append([]memory.Message{bye}, turns[12:]...)...)
	for i := 13; i < len(turns); i++ {
		turns[i].Seq = int64(i + 1)
		turns[i].CreatedAt = turns[i].CreatedAt.Add(5 * time.Hour)
	}
	p := Params{MinTurns: 4, MaxTurns: 40}
	whole := ranges(turns, Cut(nil, turns, turns[len(turns)-1].Seq, p))
	if len(whole) == 0 || whole[0] != [2]int64{1, 13} {
		t.Fatalf("episodes %v: want the first to end with the goodbye at turn 13", whole)
	}
	var step [][2]int64
	from := 0
	for n := 1; n <= len(turns); n++ {
		spans := Cut(nil, turns[from:n], turns[len(turns)-1].Seq, p)
		for _, sp := range spans {
			step = append(step, [2]int64{turns[from+sp.From].Seq, turns[from+sp.To-1].Seq})
		}
		if len(spans) > 0 {
			from += spans[len(spans)-1].To
		}
	}
	if !reflect.DeepEqual(step[:len(whole)], whole) {
		t.Errorf("turn by turn %v, in one go %v", step, whole)
	}
}
