package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/internal/tokens"
)

// episodeCandidates: an episode (turns 120-141, 3-9 May 2023) ranked first,
// then two long turns from inside it, then a turn from before it.
func episodeCandidates() []RAGTurn {
	may := func(d int) time.Time { return time.Date(2023, 5, d, 10, 0, 0, 0, time.UTC) }
	return []RAGTurn{
		{Seq: 120, Content: "They planned the Lisbon move and booked movers for the 20th.", Score: 0.9,
			CreatedAt: may(9), Episode: &EpisodeRef{ID: "ep-1", FromSeq: 120, ToSeq: 141, StartedAt: may(3), EndedAt: may(9)}},
		{Seq: 125, Role: "user", Content: "movers " + strings.Repeat("details about the flat and the boxes ", 40), Score: 0.8, CreatedAt: may(4)},
		{Seq: 130, Role: "assistant", Content: "booked " + strings.Repeat("the van and the crew for the morning ", 40), Score: 0.7, CreatedAt: may(6)},
		{Seq: 60, Role: "user", Content: "I work as a nurse in Porto.", Score: 0.6, CreatedAt: may(1)},
	}
}

// TestEpisodeInRAGSection: a retrieved episode's short summary sits in the
// RAG section, chronologically among the turns, under its dates and range;
// sections.episodes lists it and usage.episode_tokens counts it.
func TestEpisodeInRAGSection(t *testing.T) {
	a := Assemble(AssemblyInput{Budget: 6000, Strategy: StrategyRAG, RAG: episodeCandidates(), Verbatim: turns(200, 209, 5), MustKeepFrom: 200})
	line := "[3–9 May 2023 · turns 120–141] They planned the Lisbon move and booked movers for the 20th."
	iNurse, iEp, iMovers := strings.Index(a.Context, "a nurse"), strings.Index(a.Context, line), strings.Index(a.Context, "user: movers")
	if iNurse < 0 || iEp < 0 || iMovers < 0 || !(iNurse < iEp && iEp < iMovers) {
		t.Fatalf("want the 1 May turn, then the episode (from 3 May), then the 4 May turn:\n%s", a.Context)
	}
	if len(a.Sections.Episodes) != 1 || len(a.Sections.RAG) != 3 {
		t.Fatalf("sections: %d episodes, %d turns", len(a.Sections.Episodes), len(a.Sections.RAG))
	}
	e := a.Sections.Episodes[0]
	if e.ID != "ep-1" || e.FromSeq != 120 || e.ToSeq != 141 || e.Score != 0.9 || !strings.HasPrefix(e.Short, "They planned") {
		t.Errorf("section episode %+v", e)
	}
	u := a.Usage
	if want := tokens.Count(line) + 1; u.EpisodeTokens != want {
		t.Errorf("episode_tokens %d, want %d", u.EpisodeTokens, want)
	}
	if u.RAGTokens+u.EpisodeTokens+u.SummaryTokens+u.RecentTokens != u.TotalTokens {
		t.Errorf("usage does not add up: %+v", u)
	}
}

// TestEpisodeInPlaceOfItsTurns: at a tight budget the episode's own turns
// do not fit, its short summary does, and stands in for them.
func TestEpisodeInPlaceOfItsTurns(t *testing.T) {
	a := Assemble(AssemblyInput{Budget: 300, Strategy: StrategyRAG, RAG: episodeCandidates(), Verbatim: turns(200, 209, 5), MustKeepFrom: 200})
	if !strings.Contains(a.Context, "[3–9 May 2023 · turns 120–141] They planned") || strings.Contains(a.Context, "user: movers") {
		t.Fatalf("want the episode in place of its long turns:\n%s", a.Context)
	}
	if a.Usage.TotalTokens > 300 {
		t.Fatalf("total %d over budget", a.Usage.TotalTokens)
	}
}

// TestAccountingWithEpisodesEveryBudget: at every budget, with episodes
// among the candidates, the context fits, usage adds up, every verbatim
// candidate is shown or dropped and every retrieved item shown or counted.
func TestAccountingWithEpisodesEveryBudget(t *testing.T) {
	verb := turns(100, 139, 12)
	for budget := 20; budget <= 3000; budget += 7 {
		for _, strat := range []Strategy{StrategyRunningSummary, StrategyRAG} {
			in := AssemblyInput{Budget: budget, Strategy: strat, RAG: episodeCandidates(), Summary: sampleSummary(),
				Verbatim: verb, MustKeepFrom: 130, SummaryLags: budget%2 == 0}
			a := Assemble(in)
			u := a.Usage
			msg := fmt.Sprintf("budget %d %s", budget, strat)
			if got := tokens.Count(a.Context); got > budget || got != u.TotalTokens {
				t.Fatalf("%s: context %d tokens, usage %d", msg, got, u.TotalTokens)
			}
			if u.RAGTokens+u.EpisodeTokens+u.SummaryTokens+u.RecentTokens != u.TotalTokens {
				t.Fatalf("%s: usage does not add up: %+v", msg, u)
			}
			if len(a.Sections.Recent)+len(a.DroppedSeqs) != len(verb) {
				t.Fatalf("%s: %d shown + %d dropped != %d turns", msg, len(a.Sections.Recent), len(a.DroppedSeqs), len(verb))
			}
			if len(a.Sections.RAG)+len(a.Sections.Episodes)+a.RAGDropped != len(in.RAG) {
				t.Fatalf("%s: rag %d + episodes %d + dropped %d != %d", msg, len(a.Sections.RAG), len(a.Sections.Episodes), a.RAGDropped, len(in.RAG))
			}
		}
	}
}

// TestEpisodeNotRepeatingItsTurns: an episode ranked below one of its own
// turns that is shown adds little and is left out (counted as dropped).
func TestEpisodeNotRepeatingItsTurns(t *testing.T) {
	c := episodeCandidates()
	c[1].Content = "movers come on the 20th"
	in := AssemblyInput{Budget: 4000, Strategy: StrategyRAG, RAG: []RAGTurn{c[1], c[0], c[3]}, Verbatim: turns(200, 209, 5), MustKeepFrom: 200}
	a := Assemble(in)
	if len(a.Sections.Episodes) != 0 || len(a.Sections.RAG) != 2 || a.RAGDropped != 1 || strings.Contains(a.Context, "turns 120–141") {
		t.Errorf("episodes %v, turns %d, dropped %d:\n%s", a.Sections.Episodes, len(a.Sections.RAG), a.RAGDropped, a.Context)
	}
}

// TestLLMEpisodeKeptBesideItsTurns: an episode summary written by an LLM
// says what its turns may not, so it stays even when one of its turns,
// ranked above it (a drilled turn), is shown; an extractive one stands
// aside for its turns (TestEpisodeNotRepeatingItsTurns).
func TestLLMEpisodeKeptBesideItsTurns(t *testing.T) {
	c := episodeCandidates()
	c[1].Content = "movers come on the 20th"
	c[0].Content = "The crew christened the vault Bluebird."
	for _, llm := range []bool{true, false} {
		in := AssemblyInput{Budget: 1000, Strategy: StrategyRAG, RAG: []RAGTurn{c[1], c[0], c[3]}, Verbatim: turns(200, 209, 5),
			MustKeepFrom: 200, LLMEpisodes: llm}
		a := Assemble(in)
		kept := len(a.Sections.Episodes) == 1 && strings.Contains(a.Context, "Bluebird")
		if kept != llm || len(a.Sections.RAG) != 2 {
			t.Errorf("LLM episodes %v: episode kept %v (want %v), %d turns:\n%s", llm, kept, llm, len(a.Sections.RAG), a.Context)
		}
	}
}

// TestEpisodeQuotingShownTurnsLeftOut: an extractive episode line ranked
// above its own turns stays while it says what they do not, and is left
// out (its tokens given back) once every turn it quotes is shown beside
// it: the line would only repeat them.
func TestEpisodeQuotingShownTurnsLeftOut(t *testing.T) {
	for _, tc := range []struct {
		name  string
		quote string
		want  bool // the episode line shown
	}{
		{"quotes a shown turn", `The user said: "Home carers: the agency is Brightwater Home Care."`, false},
		{"quotes a turn not shown", `The user said: "Coordinator is Sue, 0113 496 0725."`, true},
		{"quotes nothing", "They planned the Lisbon move and booked movers for the 20th.", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := episodeCandidates()
			c[0].Content = tc.quote
			c[1].Content = "Home carers: the agency is Brightwater Home Care. They come twice a day."
			a := Assemble(AssemblyInput{Budget: 4000, Strategy: StrategyRAG, RAG: []RAGTurn{c[0], c[1], c[3]}, Verbatim: turns(200, 209, 5), MustKeepFrom: 200})
			if shown := strings.Contains(a.Context, "turns 120–141]"); shown != tc.want || !strings.Contains(a.Context, "They come twice a day") {
				t.Fatalf("episode shown %v, want %v:\n%s", shown, tc.want, a.Context)
			}
			if len(a.Sections.Episodes)+len(a.Sections.RAG)+a.RAGDropped != 3 {
				t.Errorf("sections %d + %d, dropped %d", len(a.Sections.Episodes), len(a.Sections.RAG), a.RAGDropped)
			}
		})
	}
}
