package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

func turns(from, to int64, words int) []Turn {
	var out []Turn
	for s := from; s <= to; s++ {
		role := "user"
		if s%2 == 0 {
			role = "assistant"
		}
		out = append(out, Turn{Seq: s, Role: role, Content: fmt.Sprintf("turn %d %s", s, strings.Repeat("word ", words))})
	}
	return out
}

func sampleSummary() *memory.Summary {
	s := &memory.Summary{
		Topics:          []string{"billing", "migration"},
		Entities:        []memory.Entity{{Name: "Acme Corp", Type: "organization", Details: "the customer"}},
		Decisions:       []string{"move to Postgres"},
		OpenQuestions:   []string{"when is the cutover?"},
		UserPreferences: []string{"prefers short answers"},
		Narrative:       "The user is migrating Acme's billing system to Postgres.",
		CoveredFromSeq:  1, CoveredToSeq: 40,
	}
	s.Normalize()
	return s
}

func TestAssembleOrderAndSections(t *testing.T) {
	in := AssemblyInput{
		Budget: 4000, Strategy: StrategyRAG,
		RAG:          []RAGTurn{{Seq: 3, Role: "user", Content: "my invoice number is 42", Score: 0.9, CreatedAt: time.Date(2024, 5, 8, 13, 56, 0, 0, time.UTC)}},
		Summary:      sampleSummary(),
		Verbatim:     turns(41, 50, 5),
		MustKeepFrom: 41,
	}
	a := Assemble(in)
	iRAG := strings.Index(a.Context, titleRAG)
	iSum := strings.Index(a.Context, titleSummary)
	iRec := strings.Index(a.Context, titleRecent)
	if iRAG < 0 || iSum < 0 || iRec < 0 || !(iRAG < iSum && iSum < iRec) {
		t.Fatalf("sections out of order or missing (rag %d, summary %d, recent %d):\n%s", iRAG, iSum, iRec, a.Context)
	}
	if !strings.Contains(a.Context, "[Wed 8 May 2024 · turn 3]\nuser: my invoice number is 42") {
		t.Errorf("RAG hit lacks its time header:\n%s", a.Context)
	}
	if len(a.Sections.Recent) != 10 || a.Sections.Recent[0].Seq != 41 || a.Sections.Recent[9].Seq != 50 {
		t.Errorf("recent = %v, want seqs 41..50 in order", seqsOf(a.Sections.Recent))
	}
	if a.Sections.Summary == nil || a.Sections.Summary.Narrative == "" {
		t.Errorf("summary missing from sections")
	}
	if got := tokens.Count(a.Context); got != a.Usage.TotalTokens || got > in.Budget {
		t.Errorf("total tokens %d (counted %d) vs budget %d", a.Usage.TotalTokens, got, in.Budget)
	}
	if a.Messages[0].Role != "system" || !strings.Contains(a.Messages[0].Content, "invoice number") || !strings.Contains(a.Messages[0].Content, "Acme") {
		t.Errorf("first message should be the system message with RAG and summary: %+v", a.Messages[0])
	}
	if len(a.Messages) != 11 || a.Messages[10].Content != a.Sections.Recent[9].Content {
		t.Errorf("messages = %d, want system + 10 recent turns", len(a.Messages))
	}
}

func seqsOf(ts []Turn) []int64 {
	var s []int64
	for _, t := range ts {
		s = append(s, t.Seq)
	}
	return s
}

// The budget is never exceeded and every verbatim candidate is either shown
// or reported dropped, whatever the budget.
func TestAssembleBudgetAndAccounting(t *testing.T) {
	verb := turns(21, 60, 20) // 21..30 pending, 31..60 recent window
	var rag []RAGTurn
	for i := 1; i <= 15; i++ {
		rag = append(rag, RAGTurn{Seq: int64(i), Role: "user", Content: strings.Repeat("fact ", 10+i), Score: float32(20 - i)})
	}
	for _, budget := range []int{1, 5, 20, 50, 100, 250, 500, 1000, 2000, 5000, 20000} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			a := Assemble(AssemblyInput{Budget: budget, Strategy: StrategyRAG, RAG: rag, Summary: sampleSummary(), Profile: sampleProfile(5), Verbatim: verb, MustKeepFrom: 31})
			if got := tokens.Count(a.Context); got > budget || got != a.Usage.TotalTokens {
				t.Fatalf("context has %d tokens (usage says %d), budget %d", got, a.Usage.TotalTokens, budget)
			}
			if u := a.Usage; u.RAGTokens+u.ProfileTokens+u.SummaryTokens+u.RecentTokens != u.TotalTokens {
				t.Fatalf("sections %d+%d+%d do not add up to %d", u.RAGTokens, u.SummaryTokens, u.RecentTokens, u.TotalTokens)
			}
			if n := len(a.Sections.Recent) + len(a.DroppedSeqs); n != len(verb) {
				t.Fatalf("shown %d + dropped %d != %d candidates", len(a.Sections.Recent), len(a.DroppedSeqs), len(verb))
			}
			if a.RAGDropped+len(a.Sections.RAG) != len(rag) {
				t.Fatalf("rag shown %d + dropped %d != %d", len(a.Sections.RAG), a.RAGDropped, len(rag))
			}
			// Kept verbatim turns are the newest ones, contiguous.
			for i := 1; i < len(a.Sections.Recent); i++ {
				if a.Sections.Recent[i].Seq != a.Sections.Recent[i-1].Seq+1 {
					t.Fatalf("kept turns not contiguous: %v", seqsOf(a.Sections.Recent))
				}
			}
			if len(a.Sections.Recent) > 0 && a.Sections.Recent[len(a.Sections.Recent)-1].Seq != 60 {
				t.Fatalf("newest turn not kept: %v", seqsOf(a.Sections.Recent))
			}
		})
	}
}

func TestAssembleRAGRankOrderWhenShort(t *testing.T) {
	rag := []RAGTurn{
		{Seq: 9, Role: "user", Content: "best " + strings.Repeat("x ", 30), Score: 3},
		{Seq: 2, Role: "user", Content: "second " + strings.Repeat("y ", 30), Score: 2},
		{Seq: 5, Role: "user", Content: "third " + strings.Repeat("z ", 30), Score: 1},
	}
	a := Assemble(AssemblyInput{Budget: 90, Strategy: StrategyRAG, RAG: rag, Verbatim: nil})
	if len(a.Sections.RAG) == 0 || a.Sections.RAG[0].Seq != 9 {
		t.Fatalf("the best hit must be kept first when the budget is short: %+v", a.Sections.RAG)
	}
	if len(a.Sections.RAG) == 3 {
		t.Fatalf("budget 90 cannot hold three ~35-token hits")
	}
	// Laid out chronologically in the text.
	a = Assemble(AssemblyInput{Budget: 1000, Strategy: StrategyRAG, RAG: rag})
	if i2, i5, i9 := strings.Index(a.Context, "second"), strings.Index(a.Context, "third"), strings.Index(a.Context, "best"); !(i2 < i5 && i5 < i9) {
		t.Errorf("RAG turns not chronological in text:\n%s", a.Context)
	}
}

func TestFitSummaryTrimsOldestFirst(t *testing.T) {
	s := sampleSummary()
	for i := 0; i < 50; i++ {
		s.Topics = append(s.Topics, fmt.Sprintf("topic number %d", i))
	}
	full := tokens.Count(RenderSummary(*s))
	trimmed, text, cut := fitSummary(*s, full/2, tokens.CL100K)
	if !cut || tokens.Count(text) > full/2 {
		t.Fatalf("trimmed to %d tokens, want ≤ %d", tokens.Count(text), full/2)
	}
	if last := trimmed.Topics[len(trimmed.Topics)-1]; last != "topic number 49" {
		t.Errorf("most recent topic should survive, last is %q", last)
	}
	if trimmed.Narrative == "" {
		t.Errorf("narrative should survive list trimming")
	}
	if len(s.Topics) != 52 {
		t.Errorf("input summary mutated")
	}
}

func TestToolTurnsBecomeLabelledAssistantMessages(t *testing.T) {
	a := Assemble(AssemblyInput{Budget: 500, Verbatim: []Turn{{Seq: 1, Role: "tool", Name: "search", Content: "3 results"}}})
	if len(a.Messages) != 1 || a.Messages[0].Role != "assistant" || a.Messages[0].Content != "[tool search] 3 results" {
		t.Fatalf("messages = %+v", a.Messages)
	}
}

// BenchmarkAssembleRAG4000 packs ~60 fresh retrieved turns, a summary and a
// recent window into 4000 tokens — the load test's typical answer.
func BenchmarkAssembleRAG4000(b *testing.B) {
	verb := turns(191, 200, 25)
	sum := sampleSummary()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		var rag []RAGTurn
		for j := 0; j < 200; j++ { // distinct text per op: no memo hits
			rag = append(rag, RAGTurn{Seq: int64(j), Role: "user", Content: fmt.Sprintf("op %d hit %d about the deployment of service %d in region eu-west", i, j, j%7), Score: float32(200 - j), CreatedAt: time.Date(2024, 5, 1+j%20, 10, 0, 0, 0, time.UTC)})
		}
		Assemble(AssemblyInput{Budget: 4000, Strategy: StrategyRAG, RAG: rag, Summary: sum, Verbatim: verb, MustKeepFrom: 191})
	}
}

// When the summary lags, uncovered (pending) turns come before RAG hits, so
// the context has no gap; otherwise RAG hits may outrank them.
func TestPendingBeforeRAGOnlyWhenSummaryLags(t *testing.T) {
	verb := turns(11, 30, 10) // 11..20 pending, 21..30 recent
	var rag []RAGTurn
	for i := 1; i <= 200; i++ {
		rag = append(rag, RAGTurn{ChatID: "other", Seq: int64(i), Role: "user", Content: strings.Repeat("fact ", 12), Score: float32(100 - i)})
	}
	shownPending := func(a Assembled) int {
		n := 0
		for _, t := range a.Sections.Recent {
			if t.Seq <= 20 {
				n++
			}
		}
		return n
	}
	in := AssemblyInput{Budget: 1000, Strategy: StrategyRAG, RAG: rag, Verbatim: verb, MustKeepFrom: 21}
	calm := Assemble(in)
	in.SummaryLags = true
	lagging := Assemble(in)
	if shownPending(lagging) <= shownPending(calm) {
		t.Fatalf("pending shown: lagging %d, calm %d; want more when the summary lags", shownPending(lagging), shownPending(calm))
	}
	for _, a := range []Assembled{calm, lagging} {
		if a.Usage.TotalTokens > 1000 {
			t.Fatalf("over budget: %d", a.Usage.TotalTokens)
		}
	}
}

// A turn's name is shown in the text as written and carried in messages[]
// in the form OpenAI's name field accepts.
func TestNamesInTextAndMessages(t *testing.T) {
	in := AssemblyInput{Budget: 1000, Strategy: StrategyRunningSummary, MustKeepFrom: 1, Verbatim: []Turn{
		{Seq: 1, Role: "assistant", Name: "Research Agent", Content: "found three papers"},
		{Seq: 2, Role: "user", Name: "alice", Content: "thanks"},
		{Seq: 3, Role: "user", Content: "no name"},
		{Seq: 4, Role: "assistant", Name: "Agent ✨ Ω/β #7" + strings.Repeat("x", 80), Content: "odd name"},
	}}
	a := Assemble(in)
	if !strings.Contains(a.Context, "assistant (Research Agent): found three papers") || !strings.Contains(a.Context, "user (alice): thanks") {
		t.Fatalf("names missing from the text:\n%s", a.Context)
	}
	want := []string{"Research_Agent", "alice", "", ""}
	for i, m := range a.Messages {
		if i < 3 && m.Name != want[i] {
			t.Errorf("message %d name %q, want %q", i, m.Name, want[i])
		}
	}
	odd := a.Messages[3].Name
	if ok, _ := regexp.MatchString(`^[a-zA-Z0-9_-]{1,64}$`, odd); !ok || !strings.HasPrefix(odd, "Agent_7") {
		t.Errorf("odd name %q does not fit OpenAI's pattern", odd)
	}
}

// TestFitSummaryBatchesLikeOneByOne holds fitSummary's batched trimming to
// the one-item-per-count loop it replaced (kept below as the oracle): the
// same items kept, the same text, on summaries of many shapes and caps.
func TestFitSummaryBatchesLikeOneByOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	words := strings.Fields("postgres billing migration lisbon hotel refund the a of café 42 2023-05-01 naïve ✓ api/v1 user's dinner (draft) — ok")
	phrase := func() string {
		n := 1 + rng.IntN(12)
		ws := make([]string, n)
		for i := range ws {
			ws[i] = words[rng.IntN(len(words))]
		}
		return strings.Join(ws, " ")
	}
	list := func() []string {
		out := make([]string, rng.IntN(30))
		for i := range out {
			out[i] = phrase()
		}
		return out
	}
	for i := 0; i < 300; i++ {
		s := memory.Summary{Topics: list(), ActionsTaken: list(), Decisions: list(), OpenQuestions: list(), UserPreferences: list()}
		for j := rng.IntN(20); j > 0; j-- {
			s.Entities = append(s.Entities, memory.Entity{Name: phrase(), Type: words[rng.IntN(len(words))], Details: phrase()})
		}
		if rng.IntN(4) > 0 {
			s.Narrative = phrase() + ". " + phrase() + "."
		}
		full := tokens.Count(RenderSummary(s))
		max := 1 + rng.IntN(full+10)
		got, gotText, gotCut := fitSummary(s, max, tokens.CL100K)
		want, wantText, wantCut := fitSummaryOneByOne(s, max, tokens.CL100K)
		if gotText != wantText || gotCut != wantCut || !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d (cap %d of %d): batched\n%q\none by one\n%q", i, max, full, gotText, wantText)
		}
	}
}

// fitSummaryOneByOne is fitSummary as it was: one item dropped per count
// of the whole text (the oracle of TestFitSummaryBatchesLikeOneByOne).
func fitSummaryOneByOne(s memory.Summary, maxTokens int, tok tokens.Counter) (memory.Summary, string, bool) {
	if maxTokens <= 0 {
		return s, "", true
	}
	text := RenderSummary(s)
	if tok.Count(text) <= maxTokens {
		return s, text, false
	}
	t := s.Clone() // trimmed below; the caller's lists stay whole
	for tok.Count(text) > maxTokens {
		// Trim the longest list by one item from its oldest end.
		lists := []*[]string{&t.Topics, &t.ActionsTaken, &t.Decisions, &t.OpenQuestions, &t.UserPreferences}
		longest, n := -1, 0
		for i, l := range lists {
			if len(*l) > n {
				longest, n = i, len(*l)
			}
		}
		switch {
		case len(t.Entities) > n:
			t.Entities = t.Entities[1:]
		case longest >= 0 && n > 0:
			*lists[longest] = (*lists[longest])[1:]
		case t.Narrative != "":
			// Keep the narrative's most recent part.
			over := tok.Count(text) - maxTokens
			r := []rune(t.Narrative)
			cut := (over + 1) * 4
			if cut >= len(r) {
				t.Narrative = ""
			} else {
				t.Narrative = "…" + string(r[cut:])
			}
		default:
			return t, "", true
		}
		text = RenderSummary(t)
	}
	t.Normalize()
	return t, text, true
}

// Retrieved turns are laid out in blocks of consecutive turns, each under
// a header with its day and turn numbers: turns 11 and 20 are never
// printed one after the other, as if one answered the other.
func TestRAGBlocksNeverStitchTurns(t *testing.T) {
	day := time.Date(2026, 10, 3, 9, 0, 0, 0, time.UTC)
	in := AssemblyInput{Budget: 2000, Strategy: StrategyRAG, MustKeepFrom: 41, Verbatim: turns(41, 44, 3),
		RAG: []RAGTurn{
			{Seq: 11, Role: "user", Content: "Is the JR Pass still worth it after the price increase?", Score: 0.9, CreatedAt: day},
			{Seq: 20, Role: "assistant", Content: "Payment for Hanare Yanaka captured: 900 EUR.", Score: 0.8, CreatedAt: day},
			{Seq: 12, Role: "assistant", Content: "Only if you take two long trips.", Score: 0.7, CreatedAt: day, Neighbor: true},
			{Seq: 5, Role: "user", Content: "Other chat turn.", Score: 0.6, CreatedAt: day, ChatID: "other"},
		}}
	a := Assemble(in)
	for _, want := range []string{
		"[Sat 3 October 2026 · turns 11–12]\nuser: Is the JR Pass still worth it after the price increase?\nassistant: Only if you take two long trips.\n[Sat 3 October 2026 · turn 20]\nassistant: Payment for Hanare Yanaka captured: 900 EUR.",
		"[chat other · Sat 3 October 2026 · turn 5]\nuser: Other chat turn.",
	} {
		if !strings.Contains(a.Context, want) {
			t.Errorf("context lacks %q:\n%s", want, a.Context)
		}
	}
}

// A retrieved fact brings its source turns when they are candidates: the
// words said are taken first, the paraphrase too when it fits (printed
// on its own line just above the block that holds its turn).
func TestFactShowsItsSourceTurnFirst(t *testing.T) {
	at := time.Date(2026, 5, 8, 10, 0, 0, 0, time.UTC)
	rag := []RAGTurn{
		{Seq: 3, Role: "user", Content: "Melanie went to a pottery class on 7 May 2026.", Score: 3, CreatedAt: at,
			Fact: &FactRef{ID: "f1", Seqs: []int64{3}, ValidAt: at}},
		{Seq: 20, Role: "user", Content: "something else entirely " + strings.Repeat("filler ", 12), Score: 2, CreatedAt: at},
		{Seq: 3, Role: "user", Content: "I went to a pottery class yesterday, it was so calming!", Score: 1, CreatedAt: at},
	}
	for _, tc := range []struct {
		name       string
		budget     int
		turn, fact bool
	}{
		{"room for both", 400, true, true},
		{"room for the turn only", 38, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Assemble(AssemblyInput{Budget: tc.budget, Strategy: StrategyRAG, RAG: rag})
			if got := strings.Contains(a.Context, "pottery class yesterday"); got != tc.turn {
				t.Errorf("source turn shown %v, want %v:\n%s", got, tc.turn, a.Context)
			}
			if got := strings.Contains(a.Context, "on 7 May 2026"); got != tc.fact {
				t.Errorf("fact shown %v, want %v:\n%s", got, tc.fact, a.Context)
			}
		})
	}
}

// A fact dated inside a block of consecutive turns follows the block: it
// never splits one block into two under two headers.
func TestFactNeverSplitsABlock(t *testing.T) {
	at := time.Date(2026, 6, 1, 19, 0, 0, 0, time.UTC)
	var b strings.Builder
	writeRAGSection(&b, []*RAGTurn{
		{Seq: 17, Role: "user", Content: "flix it is", CreatedAt: at},
		{Seq: 18, Role: "user", Content: "my cousin jana lives in hamburg", CreatedAt: at,
			Fact: &FactRef{ID: "f", Seqs: []int64{18}, ValidAt: at}},
		{Seq: 18, Role: "user", Content: "also my cousin jana lives in hamburg, altona", CreatedAt: at},
		{Seq: 19, Role: "user", Content: "that would b amazing", CreatedAt: at},
		{Seq: 30, Role: "user", Content: "later", CreatedAt: at},
	})
	want := titleRAG + `
[Mon 1 June 2026 · turns 17–19]
user: flix it is
user: also my cousin jana lives in hamburg, altona
user: that would b amazing
[1 June 2026] my cousin jana lives in hamburg (turn 18)
[Mon 1 June 2026 · turn 30]
user: later`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A ranked budget cuts a lazy retrieved turn only when the packer may show
// it: of 200 long candidates, a budget that holds a few dozen cuts far
// fewer than all, and packs them exactly as when every one is given cut.
func TestLazyTurnsCutOnlyWhenReached(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	words := strings.Fields("the cedar boards for the shed were ordered on Monday and the roof is green")
	var whole []RAGTurn
	for i := range 200 {
		var b strings.Builder
		for w := range 20 + r.IntN(40) {
			if w > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		whole = append(whole, RAGTurn{Seq: int64(10 + 3*i), Role: "user", Content: b.String() + ".", Score: float32(1000 - i),
			Neighbor: i%3 == 1, CreatedAt: time.Date(2024, 5, 1+i%20, 0, 0, 0, 0, time.UTC)})
	}
	in := AssemblyInput{Budget: 1500, Strategy: StrategyRAG, Ranked: true, Query: "cedar shed", RAG: whole,
		Verbatim: turns(1000, 1003, 5), MustKeepFrom: 1000}
	want := Assemble(in)
	in.RAG = make([]RAGTurn, len(whole))
	for i, w := range whole {
		in.RAG[i] = RAGTurn{Seq: w.Seq, Role: w.Role, Score: w.Score, Neighbor: w.Neighbor, CreatedAt: w.CreatedAt,
			lazy: int32(i + 1), floor: pieceFloor(renderTurn(Turn{Role: w.Role, Content: w.Content}))}
	}
	cut := 0
	in.Shape = func(r *RAGTurn) {
		cut++
		r.Content, r.lazy = whole[r.lazy-1].Content, 0
	}
	got := Assemble(in)
	if got.Context != want.Context {
		t.Fatalf("lazy turns packed otherwise:\n%s\n-- given cut:\n%s", got.Context, want.Context)
	}
	shown := len(got.Sections.RAG)
	if shown == 0 || shown > 60 {
		t.Fatalf("%d turns shown: the budget should hold a few dozen", shown)
	}
	if cut > 2*shown+10 {
		t.Errorf("%d of %d lazy turns cut to show %d: candidates the budget never reaches are cut", cut, len(whole), shown)
	}
}

// With hits in the recent window beyond the floor (a ranked budget
// retrieves there, and the tail takes such a turn back from the hits when
// it reaches it, refunding the hit): lazy turns are packed as when given
// cut, over random budgets, lengths and scores.
func TestLazyTurnsWithHitsInTheWindow(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 4))
	words := strings.Fields("the cedar boards for the shed were ordered on Monday, and the roof is green (about $1,200).")
	text := func(n int) string {
		var b strings.Builder
		for w := range n {
			if w > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[r.IntN(len(words))])
		}
		return b.String()
	}
	for c := range 400 {
		verb := turns(100, 111, 2+r.IntN(30))
		var whole []RAGTurn
		for i := range 40 + r.IntN(60) {
			seq := int64(10 + 3*i)
			if i%5 == 0 { // a turn of the window beyond the floor of 4
				seq = 100 + int64(r.IntN(8))
			}
			whole = append(whole, RAGTurn{Seq: seq, Role: "user", Content: text(3 + r.IntN(60)), Score: r.Float32(),
				Neighbor: i%3 == 1, CreatedAt: time.Date(2024, 5, 1+i%20, 0, 0, 0, 0, time.UTC)})
		}
		in := AssemblyInput{Budget: 150 + r.IntN(2500), Strategy: StrategyRAG, Ranked: true, Query: "cedar shed roof", RAG: whole,
			Verbatim: verb, MustKeepFrom: 100, FloorTurns: 4}
		want := Assemble(in)
		in.RAG = make([]RAGTurn, len(whole))
		for i, w := range whole {
			in.RAG[i] = RAGTurn{Seq: w.Seq, Role: w.Role, Score: w.Score, Neighbor: w.Neighbor, CreatedAt: w.CreatedAt,
				lazy: int32(i + 1), floor: pieceFloor(renderTurn(Turn{Role: w.Role, Content: w.Content}))}
		}
		in.Shape = func(r *RAGTurn) { r.Content, r.lazy = whole[r.lazy-1].Content, 0 }
		if got := Assemble(in); got.Context != want.Context {
			t.Fatalf("case %d: lazy turns packed otherwise:\n%s\n-- given cut:\n%s", c, got.Context, want.Context)
		}
	}
}

// A fact that says nothing its shown source turn does not (the turn's
// words and speaker) is left out, and its room goes to another hit; a
// fact that adds words (a date resolved) is kept beside its turn.
func TestFactRepeatingItsShownTurnIsLeftOut(t *testing.T) {
	at := time.Date(2026, 3, 18, 19, 0, 0, 0, time.UTC)
	rag := []RAGTurn{
		{Seq: 45, Role: "user", Name: "Tomás", Content: `Tomás said: "Dinner is 8pm Thursday now, noted"`, Score: 3, CreatedAt: at,
			Fact: &FactRef{ID: "f1", Seqs: []int64{45}, ValidAt: at}},
		{Seq: 45, Role: "user", Name: "Tomás", Content: "ok so dinner is 8pm Thursday now, noted", Score: 2, CreatedAt: at},
		{Seq: 12, Role: "user", Name: "Ana", Content: "I'll bring the cake for Jonah", Score: 1, CreatedAt: at},
		{Seq: 30, Role: "user", Name: "Ana", Content: `Ana is going to Porto on 13 May 2026.`, Score: 1, CreatedAt: at,
			Fact: &FactRef{ID: "f2", Seqs: []int64{31}, ValidAt: at}},
		{Seq: 31, Role: "user", Name: "Ana", Content: "going to Porto next week!", Score: 1, CreatedAt: at},
	}
	a := Assemble(AssemblyInput{Budget: 400, Strategy: StrategyRAG, RAG: rag})
	if strings.Contains(a.Context, `Tomás said`) {
		t.Errorf("the fact repeating turn 45 is shown:\n%s", a.Context)
	}
	for _, want := range []string{"ok so dinner is 8pm Thursday now", "bring the cake", "on 13 May 2026", "going to Porto next week"} {
		if !strings.Contains(a.Context, want) {
			t.Errorf("context lacks %q:\n%s", want, a.Context)
		}
	}
}

// The floor of newest turns takes at most half a small budget beyond the
// newest turn: four long recent turns at 480 tokens left no room for the
// older turn that answers the question. The newest turn is shown whole
// whatever it costs; at a budget the floor fits in, all four are shown.
func TestFloorTakesAtMostHalfTheBudget(t *testing.T) {
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	verb := turns(100, 103, 100) // ~105 tokens each
	for i := range verb {
		verb[i].CreatedAt = at
	}
	rag := []RAGTurn{{Seq: 20, Role: "user", Content: "I switched banks last week, the Sparkasse account closes at the end of March and " +
		"everything goes to GLS Bank from now on. My IBAN for the invoices is DE12 4306 0967 1187 5543 00, BIC GENODEM1GLS, " +
		"account name Lena Vogt Übersetzungen. Please put it on every invoice from INV-2026-014 on, and tell Nordlicht.", Score: 1, CreatedAt: at}}
	for _, tc := range []struct {
		budget    int
		wantFloor []int64
	}{
		{480, []int64{102, 103}},
		{2000, []int64{100, 101, 102, 103}},
	} {
		a := Assemble(AssemblyInput{Budget: tc.budget, Strategy: StrategyRAG, Ranked: true, Query: "what IBAN goes on my invoices",
			RAG: append([]RAGTurn(nil), rag...), Verbatim: append([]Turn(nil), verb...), MustKeepFrom: 100, FloorTurns: 4})
		if !strings.Contains(a.Context, "DE12 4306 0967 1187 5543 00") {
			t.Errorf("@%d: the answering turn is not shown:\n%s", tc.budget, a.Context)
		}
		for _, s := range tc.wantFloor {
			if !strings.Contains(a.Context, fmt.Sprintf("turn %d ", s)) {
				t.Errorf("@%d: recent turn %d is not shown:\n%s", tc.budget, s, a.Context)
			}
		}
		if a.Usage.TotalTokens > tc.budget {
			t.Errorf("@%d: %d tokens used", tc.budget, a.Usage.TotalTokens)
		}
	}
}
