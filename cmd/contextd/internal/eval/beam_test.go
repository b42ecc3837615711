package eval

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/internal/tokens"
)

// The fixture (testdata/beam) is synthetic text in BEAM's layout.
func TestLoadBEAM(t *testing.T) {
	chats, err := LoadBEAM("testdata/beam")
	if err != nil {
		t.Fatal(err)
	}
	if len(chats) != 2 || chats[0].ID != "beam-1" || chats[1].ID != "beam-2" {
		t.Fatalf("chats = %d, ids %v", len(chats), ids(chats))
	}
	c := chats[0]
	if len(c.Turns) != 24 || c.Turns[2].ID != 2 || c.Turns[2].Role != "user" || !strings.Contains(c.Turns[2].Content, "April 20") {
		t.Fatalf("turns: %d, third %+v", len(c.Turns), c.Turns[2])
	}
	// Batch dates, a minute apart within the batch.
	if want := time.Date(2024, 3, 15, 9, 1, 0, 0, time.UTC); !c.Turns[1].Time.Equal(want) {
		t.Errorf("turn 1 at %v, want %v", c.Turns[1].Time, want)
	}
	if want := time.Date(2024, 4, 5, 9, 0, 0, 0, time.UTC); !c.Turns[12].Time.Equal(want) {
		t.Errorf("turn 12 at %v, want %v", c.Turns[12].Time, want)
	}
	got := map[string]string{}
	for _, q := range c.Questions {
		got[q.Ability] = fmt.Sprintf("%q %v", q.Answer, q.Evidence)
	}
	want := map[string]string{
		"abstention":             `"There is no information about that." []`,
		"information_extraction": `"April 20" [2]`,
		"knowledge_update":       `"south fence" [2 14]`,
		"preference_following":   `"" [2]`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("questions:\n got %v\nwant %v", got, want)
	}
	// chat_trunecated.json is read when present, as BEAM's own code does.
	if n := len(chats[1].Turns); n != 12 {
		t.Errorf("chat 2: %d turns, want the truncated chat's 12", n)
	}
	one, err := LoadBEAM("testdata/beam/2")
	if err != nil || len(one) != 1 || len(one[0].Questions) != 1 {
		t.Fatalf("one chat dir: %v %+v", err, one)
	}
	if _, err := LoadBEAM("testdata/nothing"); err == nil {
		t.Error("want an error for a directory without chats")
	}
}

func ids(cs []BEAMChat) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func TestPassages(t *testing.T) {
	code := "```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```"
	long := strings.Repeat("This sentence talks about the raised bed and the tomatoes. ", 40)
	text := "Intro paragraph.\n\n" + long + "\n\n" + code + "\n\nClosing words."
	ps := passages(text, 100)
	if len(ps) < 3 {
		t.Fatalf("%d passages, want the long turn split", len(ps))
	}
	codeWhole := false
	for _, p := range ps {
		if n := tokens.Count(p); n > 100 {
			t.Errorf("passage of %d tokens > 100: %q", n, p[:40])
		}
		if strings.Contains(p, "```go") {
			codeWhole = strings.Contains(p, code)
		}
	}
	if !codeWhole {
		t.Error("the short code block was split")
	}
	// Passages cover the text: every word is in one of them, in order.
	if got, want := strings.Fields(strings.Join(ps, " ")), strings.Fields(text); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("passages do not cover the text in order")
	}
	if ps := passages("short turn", 100); len(ps) != 1 || ps[0] != "short turn" {
		t.Errorf("short turn: %q", ps)
	}
}

// Evidence reached: a turn shown, or an observation citing it whose text
// the context holds (re-wrapped or re-cased), never a mere mention.
func TestReached(t *testing.T) {
	in := &ingested{obsFor: map[int][]string{
		0: {normalise("Ana takes pottery classes on Tuesdays.")},
		2: {normalise("Ben's sister Mia moved to Lyon.")},
	}}
	cases := []struct {
		name  string
		shown map[int]bool
		text  string
		want  string
	}{
		{"shown", map[int]bool{1: true}, "", "map[1:true]"},
		{"observation in the text", nil, "[Mon 8 May 2023] ana takes pottery\nclasses on Tuesdays. (turns 1)", "map[0:true]"},
		{"part of an observation is not enough", nil, "Ana takes pottery classes.", "map[]"},
		{"both", map[int]bool{1: true}, "Ben's sister Mia moved to Lyon.", "map[1:true 2:true]"},
	}
	for _, c := range cases {
		if got := fmt.Sprint(in.reached([]int{0, 1, 2}, c.shown, c.text)); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

// The naive RAG over turns and observations places each observation after
// the first turn it cites, and a packed observation reaches its turn.
func TestObservationCorpus(t *testing.T) {
	d := time.Date(2023, 5, 8, 0, 0, 0, 0, time.UTC)
	kept := []sampleTurn{{id: "D1:1", text: "Ana: I started pottery.", at: d}, {id: "D1:2", text: "Ben: cool", at: d}}
	c := observationCorpus(kept, []Observation{{Text: "Ana takes pottery classes.", Evidence: []string{"D1:2", "D1:1"}}})
	if fmt.Sprint(c.turnOf) != "[0 -1 1]" || c.texts[1] != "Ana takes pottery classes." {
		t.Fatalf("corpus turnOf %v texts %q", c.turnOf, c.texts)
	}
	p := bm25FillDated(c.index, c.costs, c.dates, "pottery classes", c.costs[1]+10)
	if len(p.turns) != 1 || p.turns[0] != 1 {
		t.Fatalf("packed %+v, want the observation alone", p)
	}
	in := &ingested{obsFor: map[int][]string{0: {normalise("Ana takes pottery classes.")}}}
	if got := in.reached([]int{0}, nil, packedText(p, c.texts, c.dates, true)); !got[0] {
		t.Error("the packed observation does not reach its turn")
	}
}
