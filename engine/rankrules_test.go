package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// rankedHits are n short retrieved turns matching a query better and
// better, oldest first, each a sentence of its own.
func rankedHits(n int) []RAGTurn {
	var out []RAGTurn
	for i := range n {
		out = append(out, RAGTurn{Seq: int64(10 + 2*i), Role: "user", Score: float32(1 / (1 + 0.02*float64(i))),
			Content:   fmt.Sprintf("Hit %d says the long run is on Saturday at 8am and the tempo on Thursday.", i),
			CreatedAt: time.Date(2026, 3, 1+i, 9, 0, 0, 0, time.UTC)})
	}
	return out
}

// A standing instruction ("always give paces in min/km") governs the
// answer whatever it asks, yet matches the question less than a dozen
// hits: valued by relevance it went unshown under them. It is shown
// first, within an eighth of the budget; one that does not fit there
// competes as any hit does.
func TestStandingTurnShownFirst(t *testing.T) {
	standing := RAGTurn{Seq: 3, Role: "user", Score: 0.5, standing: true, CreatedAt: time.Date(2026, 2, 23, 9, 0, 0, 0, time.UTC),
		Content: "Please always give paces in min/km, never miles, I get confused."}
	for _, c := range []struct {
		name   string
		budget int
		words  int // of the standing turn's extra text
		shown  bool
	}{
		{"short, small budget", 400, 0, true},
		{"short, larger budget", 900, 0, true},
		{"longer than an eighth of the budget", 400, 60, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := standing
			st.Content += strings.Repeat(" More about why.", c.words)
			in := AssemblyInput{Budget: c.budget, Strategy: StrategyRAG, Ranked: true, Query: "write me a recovery week plan",
				RAG: append(rankedHits(60), st), Verbatim: turns(100, 103, 5), MustKeepFrom: 100}
			a := Assemble(in)
			if got := strings.Contains(a.Context, "never miles"); got != c.shown {
				t.Fatalf("standing turn shown = %v, want %v:\n%s", got, c.shown, a.Context)
			}
			in.RAG[len(in.RAG)-1].standing = false
			if strings.Contains(Assemble(in).Context, "never miles") && c.shown {
				t.Fatalf("without the mark the hits should crowd it out: the test no longer tests the rule")
			}
		})
	}
}

// A standing turn too long for its share of the budget is stood in for
// by its instruction's sentence (its fact), shown in the turn's place; a
// budget the whole turn fits shows the turn and not the fact beside it.
func TestStandingInstructionStoodInFor(t *testing.T) {
	at := time.Date(2026, 2, 23, 9, 0, 0, 0, time.UTC)
	turn := RAGTurn{Seq: 3, Role: "user", Score: 0.5, standing: true, CreatedAt: at,
		Content: "Great. One thing first: please only contact me by email, marta@posteo.nl. I work shifts in a hospital and can't take calls," +
			" the ward is loud and my phone stays in the locker for twelve hours. Never call me, even if it's urgent, just email."}
	fact := RAGTurn{Seq: 3, Score: 0.5, standsFor: 3, CreatedAt: at, Content: "Standing instruction: Never call me, even if it's urgent, just email.",
		Fact: &FactRef{ID: "f1", Seqs: []int64{3}, ValidAt: at}}
	for _, c := range []struct {
		name           string
		budget, hits   int
		turnShown      bool
		standInShown   bool
		withoutStandIn bool // the instruction shown without the stand-in
	}{
		{"small budget: the sentence", 400, 60, false, true, false},
		{"large budget: the turn", 3000, 60, true, false, true},
		{"the turn earning its place later replaces the sentence", 520, 3, true, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := AssemblyInput{Budget: c.budget, Strategy: StrategyRAG, Ranked: true, Query: "can we phone the customer?",
				RAG: append(rankedHits(c.hits), turn, fact), Verbatim: turns(100, 103, 5), MustKeepFrom: 100}
			a := Assemble(in)
			if got := strings.Contains(a.Context, "I work shifts"); got != c.turnShown {
				t.Fatalf("turn shown = %v, want %v:\n%s", got, c.turnShown, a.Context)
			}
			if got := strings.Contains(a.Context, "Standing instruction: Never call me"); got != c.standInShown {
				t.Fatalf("stand-in shown = %v, want %v:\n%s", got, c.standInShown, a.Context)
			}
			if a.Usage.TotalTokens > c.budget {
				t.Fatalf("used %d of %d", a.Usage.TotalTokens, c.budget)
			}
			in.RAG = in.RAG[:len(in.RAG)-1]
			if got := strings.Contains(Assemble(in).Context, "Never call me"); got != c.withoutStandIn {
				t.Fatalf("without the stand-in the instruction shown = %v, want %v", got, c.withoutStandIn)
			}
		})
	}
}

// A standing instruction's fact says nothing its turn does not but its
// label ("Standing instruction:"): shown with the turn, it took the rule
// list's room twice.
func TestFactLeavesWhenItsTurnIsShown(t *testing.T) {
	at := time.Date(2026, 5, 11, 9, 0, 0, 0, time.UTC)
	turn := RAGTurn{Seq: 4, Role: "user", Score: 0.4, CreatedAt: at,
		Content: "Two rules for the whole project. Always do a dry-run before any real send. And never send anything to the EU-partners segment without written sign-off from Jonas in legal."}
	fact := RAGTurn{Seq: 4, Score: 1, CreatedAt: at, Fact: &FactRef{ID: "f4", Seqs: []int64{4}, ValidAt: at},
		Content: "Standing instruction: Always do a dry-run before any real send. And never send anything to the EU-partners segment without written sign-off from Jonas in legal."}
	other := RAGTurn{Seq: 20, Role: "user", Score: 0.9, CreatedAt: at, Content: "The EU-partners segment is SEG-1109."}
	in := AssemblyInput{Budget: 2000, Strategy: StrategyRAG, Ranked: true, Query: "which segment id is EU-partners?",
		RAG: []RAGTurn{fact, other, turn}, Verbatim: turns(100, 103, 5), MustKeepFrom: 100}
	a := Assemble(in)
	if !strings.Contains(a.Context, "Two rules for the whole project") {
		t.Fatalf("the turn is not shown:\n%s", a.Context)
	}
	if strings.Contains(a.Context, "Standing instruction: Always do a dry-run") {
		t.Fatalf("the fact is shown beside its turn:\n%s", a.Context)
	}
	if len(a.Sections.Facts) != 0 {
		t.Fatalf("facts listed: %+v", a.Sections.Facts)
	}
}

// A hit that is the other half of a better hit's exchange ("The
// reporting job timed out at the default 360 minutes??" → "set
// timeout-minutes: 45") is worth that hit's pair at least, as it would
// be as its neighbour: it is shown before weaker hits. A long one earns
// its room on its own.
func TestAnswerToAMatchedQuestionRanksAsItsPair(t *testing.T) {
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	question := RAGTurn{Seq: 40, Role: "user", Score: 1, CreatedAt: at, Content: "The reporting job timed out at the default 360 minutes??"}
	answer := RAGTurn{Seq: 41, Role: "assistant", Score: 0.3, CreatedAt: at,
		Content: "Something is hanging, not slow. Set `timeout-minutes: 45` on the job so a hang fails fast."}
	var others []RAGTurn
	for i := range 12 {
		others = append(others, RAGTurn{Seq: int64(2 + 2*i), Role: "user", Score: 0.5, CreatedAt: at,
			Content: fmt.Sprintf("Note %d on the reporting tests and the CI platform.", i)})
	}
	for _, c := range []struct {
		name  string
		whole bool
		shown bool
	}{
		{"short answer", true, true},
		{"long answer", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := answer
			a.whole = c.whole
			rs := append([]RAGTurn{question, a}, others...)
			markPairs(rs)
			got := Assemble(AssemblyInput{Budget: 260, Strategy: StrategyRAG, Ranked: true, Query: "workflow job for the reporting tests",
				RAG: rs, Verbatim: turns(100, 103, 3), MustKeepFrom: 100})
			if shown := strings.Contains(got.Context, "timeout-minutes: 45"); shown != c.shown {
				t.Fatalf("answer shown = %v, want %v:\n%s", shown, c.shown, got.Context)
			}
		})
	}
}

// Between people (every turn the user's), the turn right after a question
// answers it: a weak hit there is worth what it would be as the
// question's pair ("same price to move it?" → "… £335 all in"), and a
// neighbour after a hit asking a question is its pair. A turn after a
// statement gets neither.
func TestAnswerToAQuestionBetweenPeopleRanksAsItsPair(t *testing.T) {
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name  string
		asks  bool
		shown bool
	}{
		{"after a question", true, true},
		{"after a statement", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := []RAGTurn{
				{Seq: 28, Role: "user", Name: "Ada", Score: 1, CreatedAt: at, Content: "skip is still the 3rd tho", whole: true},
				{Seq: 29, Role: "user", Name: "Tunde", Score: 1, CreatedAt: at, Content: "same price to move it", Neighbor: true, whole: true, asks: c.asks},
				{Seq: 30, Role: "user", Name: "Ada", Score: 0.3, CreatedAt: at, Content: "Hollins said £25 to move it to 16 April, so £335 all in", whole: true},
			}
			for i := range 12 {
				rs = append(rs, RAGTurn{Seq: int64(2 + 2*i), Role: "user", Score: 0.5, CreatedAt: at,
					Content: fmt.Sprintf("Quote %d for the kitchen: £%d,000 fitted.", i, 10+i)})
			}
			markPairs(rs)
			got := Assemble(AssemblyInput{Budget: 260, Strategy: StrategyRAG, Ranked: true, Query: "how much is the skip now",
				RAG: rs, Verbatim: turns(100, 103, 3), MustKeepFrom: 100})
			if shown := strings.Contains(got.Context, "£335 all in"); shown != c.shown {
				t.Fatalf("answer shown = %v, want %v:\n%s", shown, c.shown, got.Context)
			}
		})
	}
	hit := RAGTurn{Seq: 56, Role: "user", Score: 1, Content: "can't do Thursday mornings. Sunita?", asks: true}
	for _, c := range []struct {
		name string
		asks bool
	}{{"asking hit", true}, {"stating hit", false}} {
		h := hit
		h.asks = c.asks
		rs := []RAGTurn{h, {Seq: 57, Role: "user", Score: 1, Neighbor: true, Content: "I'll take her, no problem."}}
		markPairs(rs)
		if rs[1].pair != c.asks {
			t.Errorf("%s: neighbour after it marked pair = %v, want %v", c.name, rs[1].pair, c.asks)
		}
	}
}

// A question about how things stand now ("… in the end?") weighs the
// candidates by how late they were said: the turn that settled a choice
// beats the chat's opening turn that matched the topic's words better.
// Any other question weighs them alike.
func TestCurrentQuestionPrefersNewer(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 1, d, 9, 0, 0, 0, time.UTC) }
	rag := []RAGTurn{
		{Seq: 2, Role: "assistant", Score: 1, CreatedAt: day(1),
			Content: "The big bookings go venue first, then caterer, photographer and music, all for the day itself."},
		{Seq: 35, Role: "user", Score: 0.7, CreatedAt: day(28),
			Content: "changed my mind on the photographer, we went with Ollie Brandt, £1,650 all in."},
	}
	for _, c := range []struct {
		query, want, not string
	}{
		{"which photographer is doing the day in the end?", "Ollie Brandt", "venue first"},
		{"which photographer is doing the day?", "venue first", "Ollie Brandt"},
	} {
		a := Assemble(AssemblyInput{Budget: 75, Strategy: StrategyRAG, Ranked: true, Query: c.query,
			RAG: append([]RAGTurn(nil), rag...), Verbatim: turns(100, 101, 1), MustKeepFrom: 100, FloorTurns: 1})
		if !strings.Contains(a.Context, c.want) || strings.Contains(a.Context, c.not) {
			t.Errorf("%q: want %q and not %q in\n%s", c.query, c.want, c.not, a.Context)
		}
	}
}
