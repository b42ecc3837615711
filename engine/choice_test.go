package engine

import (
	"strings"
	"testing"
	"time"
)

// A choice by place ("ok do the second one") is shown with the options
// it chose among, in their own block, though they ranked below turns left
// out (the choice is valued at both costs).
func TestChoiceByPlaceShownWithItsOptions(t *testing.T) {
	day := time.Date(2026, 9, 21, 9, 0, 0, 0, time.UTC)
	options := "3 options: 1) DJ Sunny from the wedding, £300 for 3 hours 2) dev does it, he has the speakers 3) a spotify playlist"
	rag := []RAGTurn{
		{Seq: 32, Role: "user", Name: "Priya", Content: "ok do the second one. ill tell dev no dnb", Score: 1, CreatedAt: day, whole: true, choseFrom: 30},
		{Seq: 30, Role: "user", Name: "Arjun", Content: options, Score: 0.2, CreatedAt: day, Neighbor: true, chosen: true, whole: true},
		{Seq: 12, Role: "user", Content: "music for the party, any ideas? " + strings.Repeat("word ", 40), Score: 0.6, CreatedAt: day, whole: true},
		{Seq: 44, Role: "user", Content: "the hall has a sound system too " + strings.Repeat("word ", 40), Score: 0.5, CreatedAt: day, whole: true},
	}
	for _, tc := range []struct {
		budget      int
		withOptions bool
	}{{budget: 200, withOptions: true}, {budget: 2000, withOptions: true}} {
		in := AssemblyInput{Budget: tc.budget, Strategy: StrategyRAG, MustKeepFrom: 60, Verbatim: turns(60, 61, 3), RAG: append([]RAGTurn(nil), rag...), Ranked: true}
		a := Assemble(in)
		choice, opts := strings.Contains(a.Context, "ok do the second one"), strings.Contains(a.Context, "2) dev does it")
		if choice && !opts {
			t.Errorf("budget %d: the choice shown without its options:\n%s", tc.budget, a.Context)
		}
		if choice != tc.withOptions {
			t.Errorf("budget %d: choice shown %v, want %v:\n%s", tc.budget, choice, tc.withOptions, a.Context)
		}
		if opts && !strings.Contains(a.Context, "· turn 30]\nuser (Arjun): "+options) {
			t.Errorf("budget %d: the options are not in a block of their own:\n%s", tc.budget, a.Context)
		}
		neighboursBesideTurns(t, in, a)
	}
	// Options retrieved bring the choice made among them: they alone do
	// not say which was taken.
	opts := []RAGTurn{
		{Seq: 30, Role: "user", Name: "Arjun", Content: options, Score: 1, CreatedAt: day, whole: true},
		{Seq: 32, Role: "user", Name: "Priya", Content: "ok do the second one. ill tell dev no dnb", Score: 0.1, CreatedAt: day, Neighbor: true, whole: true, choseFrom: 30},
		{Seq: 12, Role: "user", Content: "music for the party, any ideas? " + strings.Repeat("word ", 40), Score: 0.6, CreatedAt: day, whole: true},
		{Seq: 44, Role: "user", Content: "the hall has a sound system too " + strings.Repeat("word ", 40), Score: 0.5, CreatedAt: day, whole: true},
	}
	in := AssemblyInput{Budget: 180, Strategy: StrategyRAG, MustKeepFrom: 60, Verbatim: turns(60, 61, 3), RAG: opts, Ranked: true}
	a := Assemble(in)
	if strings.Contains(a.Context, "2) dev does it") != strings.Contains(a.Context, "ok do the second one") {
		t.Errorf("options and their choice not shown together:\n%s", a.Context)
	}
	if !strings.Contains(a.Context, "ok do the second one") {
		t.Errorf("the options' choice left out:\n%s", a.Context)
	}
	neighboursBesideTurns(t, in, a)
	// A choice by place that is only context around another hit is left
	// out when its options do not fit beside it.
	around := []RAGTurn{
		{Seq: 33, Role: "user", Name: "Tom", Content: "Tom here, my number is 07911 233140 if anyone needs a lift", Score: 1, CreatedAt: day, whole: true},
		{Seq: 32, Role: "user", Name: "Priya", Content: "ok do the second one. ill tell dev no dnb", Score: 1, CreatedAt: day, Neighbor: true, whole: true, choseFrom: 30},
		{Seq: 30, Role: "user", Name: "Arjun", Content: options + strings.Repeat(" and more", 60), Score: 1, CreatedAt: day, Neighbor: true, chosen: true, whole: true},
	}
	in = AssemblyInput{Budget: 120, Strategy: StrategyRAG, MustKeepFrom: 60, Verbatim: turns(60, 61, 3), RAG: around, Ranked: true}
	a = Assemble(in)
	if !strings.Contains(a.Context, "07911 233140") || strings.Contains(a.Context, "ok do the second one") {
		t.Errorf("want the hit without the choice around it, whose options do not fit:\n%s", a.Context)
	}
}

// Two choices may point at one list ("go with option 1", later "ok do the
// second one"): the options count as shown with either.
func TestTwoChoicesOfOneList(t *testing.T) {
	day := time.Date(2026, 9, 21, 9, 0, 0, 0, time.UTC)
	options := "3 options for the music: 1) DJ Sunny, £300 2) dev does it, he has the speakers 3) a spotify playlist"
	rag := []RAGTurn{
		{Seq: 50, Role: "user", Content: "the hall has a sound system too", Score: 1, CreatedAt: day, whole: true},
		{Seq: 40, Role: "user", Content: "ok do the second one", Score: 0.9, CreatedAt: day, Neighbor: true, whole: true, choseFrom: 30},
		{Seq: 41, Role: "user", Content: "dev confirmed, speakers sorted", Score: 0.9, CreatedAt: day, whole: true},
		{Seq: 32, Role: "user", Content: "go with option 1 " + strings.Repeat("word ", 200), Score: 0.01, CreatedAt: day, whole: true, choseFrom: 30},
		{Seq: 30, Role: "user", Content: options, Score: 0.9, CreatedAt: day, Neighbor: true, chosen: true, whole: true},
	}
	in := AssemblyInput{Budget: 300, Strategy: StrategyRAG, MustKeepFrom: 60, Verbatim: turns(60, 61, 3), RAG: rag, Ranked: true}
	a := Assemble(in)
	if strings.Contains(a.Context, "ok do the second one") && !strings.Contains(a.Context, "2) dev does it") {
		t.Errorf("the second choice shown without its options:\n%s", a.Context)
	}
	neighboursBesideTurns(t, in, a)
}
