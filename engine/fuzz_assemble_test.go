package engine

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

// FuzzAssemble guards the assembler's invariants over arbitrary shapes of
// input: the context never exceeds the budget and its usage adds up; every
// verbatim candidate is shown or reported dropped; every RAG candidate is
// shown or counted dropped; kept verbatim turns are a contiguous newest tail
// whenever the recent window is shown at all; a RAG hit never repeats a
// verbatim turn of the chat. With the turns the summary covers offered
// too (CoveredTo) and the chat whole (WholeChat): the kept verbatim turns
// are one contiguous newest run (never two turns printed adjacent that
// are not consecutive), a chat that fits is shown whole with no summary,
// and every candidate the summary does not cover is shown or dropped.
func FuzzAssemble(f *testing.F) {
	f.Add(4000, uint8(2), uint8(10), uint8(30), uint8(5), uint8(12), uint8(20), true, false, "word", false)
	f.Add(50, uint8(1), uint8(0), uint8(10), uint8(3), uint8(40), uint8(2), true, true, "x y", true)
	f.Add(1, uint8(0), uint8(5), uint8(5), uint8(0), uint8(0), uint8(1), false, false, "", true)
	f.Add(900, uint8(2), uint8(30), uint8(40), uint8(60), uint8(3), uint8(9), true, true, "héllo 世界 ", true)
	f.Add(1000, uint8(2), uint8(0), uint8(12), uint8(30), uint8(8), uint8(6), true, false, "fact word", true)
	f.Fuzz(func(t *testing.T, budget int, strat, pending, window, nRAG, words, ragWords uint8, withSummary, lags bool, text string, ranked bool) {
		if budget <= 0 || budget > 50000 {
			t.Skip()
		}
		strategy := []Strategy{StrategyNone, StrategyRunningSummary, StrategyRAG}[int(strat)%3]
		first := int64(100)
		verb := make([]Turn, 0, int(pending)+int(window))
		for s := first; s < first+int64(pending)+int64(window); s++ {
			role := []string{"user", "assistant", "tool", "system"}[s%4]
			verb = append(verb, Turn{Seq: s, Role: role, Content: fmt.Sprintf("t%d %s", s, strings.Repeat(text+" ", int(words)%50))})
		}
		var rag []RAGTurn
		for i := 0; i < int(nRAG); i++ {
			r := RAGTurn{Seq: int64(1 + i), Role: "user", Content: strings.Repeat("fact ", 1+(int(ragWords)+i)%40),
				Score: float32(nRAG) - float32(i), CreatedAt: time.Date(2024, 1, 1+i%20, 0, 0, 0, 0, time.UTC)}
			switch {
			case i%3 == 2: // every third candidate is a retrieved episode
				r.Episode = &EpisodeRef{ID: fmt.Sprint("e", i), FromSeq: int64(1 + i), ToSeq: int64(3 + i),
					StartedAt: r.CreatedAt, EndedAt: r.CreatedAt.Add(30 * time.Hour)}
			case i%5 == 4: // and some are facts
				r.Fact = &FactRef{ID: fmt.Sprint("f", i), Seqs: []int64{int64(1 + i), int64(2 + i)}, ValidAt: r.CreatedAt}
			case i%4 == 1: // and some are passages of long turns, with another passage as a part
				r.Content, r.Passages = fmt.Sprintf("[…]\nmain%d %s\n[…]", i, r.Content), []PassageRef{{From: 600, To: 900, Len: 2000}}
				part := r
				part.part, part.Score = true, r.Score-float32(ragWords%3)
				part.Content, part.Passages = fmt.Sprintf("[…]\npart%d %s\n[…]", i, strings.Repeat("more ", 1+int(words)%30)), []PassageRef{{From: 1200 - 900*int(ragWords%2), To: 1500 - 900*int(ragWords%2), Len: 2000}}
				other := part // a second part, before or after the first
				other.Score = r.Score - float32(words%4)
				other.Content, other.Passages = fmt.Sprintf("[…]\nother%d %s\n[…]", i, strings.Repeat("else ", 1+int(ragWords)%20)), []PassageRef{{From: 100 + 1500*int(words%2), To: 200 + 1500*int(words%2), Len: 2000}}
				rag = append(rag, r, part, other)
				continue
			case i%6 == 5: // and some are neighbours, context for the hit next to them
				r.Neighbor = true
			case i%7 == 6: // some state standing instructions, shown first, their sentence standing in
				r.standing = true
				body := strings.Repeat(text+" ", 1+int(words)%8)
				if i%2 == 0 { // some turns say their instruction, some are cut without it
					r.Content += " " + body
				}
				in := RAGTurn{Seq: r.Seq, Score: r.Score, CreatedAt: r.CreatedAt, standsFor: r.Seq,
					Content: "Standing instruction: " + body,
					Fact:    &FactRef{ID: fmt.Sprint("s", i), Seqs: []int64{r.Seq}, ValidAt: r.CreatedAt}}
				rag = append(rag, r, in)
				continue
			case i%8 == 7: // some complete a better hit's exchange
				r.whole, r.pairScore = true, r.Score+float32(words%5)
			}
			rag = append(rag, r)
		}
		chooseByPlace(rag, words)
		var sum *memory.Summary
		var prof *memory.Profile
		if withSummary {
			sum = sampleSummary()
			sum.Narrative += " " + strings.Repeat(text+" ", int(words)%30)
		}
		if withSummary && words%2 == 0 {
			prof = sampleProfile(int(ragWords) % 12)
		}
		in := AssemblyInput{Profile: prof, Budget: budget, Strategy: strategy, RAG: rag, Summary: sum, Verbatim: verb,
			MustKeepFrom: first + int64(pending), SummaryLags: lags, Ranked: ranked, Query: text, FloorTurns: int(words) % 6}
		if withSummary && pending > 0 { // some of the older turns are covered by the summary
			in.CoveredTo = first + int64(pending)/2 - 1
		}
		in.WholeChat = ragWords%3 == 0
		a := Assemble(in)
		sameLazy(t, in, a)
		snippetsFallBack(t, in)
		if got := tokens.Count(a.Context); got > budget || got != a.Usage.TotalTokens {
			t.Fatalf("context has %d tokens (usage %d), budget %d", got, a.Usage.TotalTokens, budget)
		}
		if u := a.Usage; u.RAGTokens+u.EpisodeTokens+u.FactTokens+u.ProfileTokens+u.SummaryTokens+u.RecentTokens != u.TotalTokens {
			t.Fatalf("sections %d+%d+%d+%d+%d+%d != total %d", u.RAGTokens, u.EpisodeTokens, u.FactTokens, u.ProfileTokens, u.SummaryTokens, u.RecentTokens, u.TotalTokens)
		}
		covered := 0
		for _, v := range verb {
			if v.Seq <= in.CoveredTo {
				covered++
			}
		}
		if n := len(a.Sections.Recent) + len(a.DroppedSeqs) + covered - int(a.CoveredShown); n != len(verb) {
			t.Fatalf("shown %d + dropped %d + covered unshown %d != %d verbatim candidates", len(a.Sections.Recent), len(a.DroppedSeqs), covered-int(a.CoveredShown), len(verb))
		}
		for i := 1; i < len(a.Sections.Recent); i++ {
			if a.Sections.Recent[i].Seq != a.Sections.Recent[i-1].Seq+1 {
				t.Fatalf("recent turns %d and %d printed adjacent", a.Sections.Recent[i-1].Seq, a.Sections.Recent[i].Seq)
			}
		}
		if in.WholeChat && len(verb) > 0 && len(a.Sections.Recent) == len(verb) && a.Sections.Summary != nil {
			t.Fatalf("the whole chat is shown and summarised too")
		}
		if len(a.Sections.RAG)+a.partsJoined+len(a.Sections.Episodes)+len(a.Sections.Facts)+a.RAGDropped != len(rag) {
			t.Fatalf("rag shown %d + parts joined %d + episodes %d + facts %d + dropped %d != %d", len(a.Sections.RAG), a.partsJoined, len(a.Sections.Episodes), len(a.Sections.Facts), a.RAGDropped, len(rag))
		}
		partsWithTheirTurns(t, rag, a)
		standInsAlone(t, a)
		neighboursBesideTurns(t, in, a)
		for _, f := range a.Sections.Facts {
			if !strings.Contains(a.Context, f.Text) {
				t.Fatalf("fact %s listed but not in the context", f.ID)
			}
		}
		for _, e := range a.Sections.Episodes {
			if !strings.Contains(a.Context, EpisodeHeader(e.StartedAt, e.EndedAt, e.FromSeq, e.ToSeq)+" "+e.Short) {
				t.Fatalf("episode %s listed but not in the context", e.ID)
			}
		}
		shown := map[int64]bool{}
		for _, r := range a.Sections.Recent {
			shown[r.Seq] = true
		}
		for _, r := range a.Sections.RAG {
			if r.ChatID == "" && shown[r.Seq] {
				t.Fatalf("rag hit %d repeats a verbatim turn (neighbor %v) mustkeep %d:\n%s", r.Seq, r.Neighbor, in.MustKeepFrom, a.Context)
			}
		}
		// The recent window part of the kept turns is a contiguous newest tail.
		var win []int64
		for _, r := range a.Sections.Recent {
			if r.Seq >= in.MustKeepFrom {
				win = append(win, r.Seq)
			}
		}
		for i := 1; i < len(win); i++ {
			if win[i] != win[i-1]+1 {
				t.Fatalf("recent window not contiguous: %v", win)
			}
		}
		if len(win) > 0 && win[len(win)-1] != first+int64(pending)+int64(window)-1 {
			t.Fatalf("newest turn not kept: %v", win)
		}
		if (a.Context == "") != (len(a.Messages) == 0) {
			t.Fatalf("context empty=%v but %d messages", a.Context == "", len(a.Messages))
		}
	})
}

// snippetsFallBack: with the best hits able to fall back to a snippet
// when they do not fit whole (RAGTurn.snip, cut by Shape to their first
// third), the budget holds, usage adds up, every candidate is shown or
// counted dropped, and a hit cut so is shown at most once.
func snippetsFallBack(t *testing.T, in AssemblyInput) {
	t.Helper()
	whole := in.RAG
	in.RAG = append([]RAGTurn(nil), whole...)
	for i := range in.RAG {
		if r := &in.RAG[i]; r.Episode == nil && r.Fact == nil && !r.part && !r.Neighbor && len(r.Content) > 12 {
			r.snip = int32(i + 1)
		}
	}
	in.Shape = func(r *RAGTurn) {
		w := whole[r.lazy-1]
		r.Content, r.Tokens, r.lazy = w.Content[:len(w.Content)/3], 0, 0
	}
	a := Assemble(in)
	if got := tokens.Count(a.Context); got > in.Budget || got != a.Usage.TotalTokens {
		t.Fatalf("snippets: context has %d tokens (usage %d), budget %d", got, a.Usage.TotalTokens, in.Budget)
	}
	if u := a.Usage; u.RAGTokens+u.EpisodeTokens+u.FactTokens+u.ProfileTokens+u.SummaryTokens+u.RecentTokens != u.TotalTokens {
		t.Fatalf("snippets: sections do not add up to %d", u.TotalTokens)
	}
	if len(a.Sections.RAG)+a.partsJoined+len(a.Sections.Episodes)+len(a.Sections.Facts)+a.RAGDropped != len(whole) {
		t.Fatalf("snippets: %d shown + %d joined + %d episodes + %d facts + %d dropped != %d", len(a.Sections.RAG), a.partsJoined,
			len(a.Sections.Episodes), len(a.Sections.Facts), a.RAGDropped, len(whole))
	}
	neighboursBesideTurns(t, in, a)
}

// neighboursBesideTurns: a neighbour is shown only next to a turn shown
// (retrieved or recent), or with its partner (a choice by place, the
// options it chose among); never alone as a stray turn.
func neighboursBesideTurns(t *testing.T, in AssemblyInput, a Assembled) {
	t.Helper()
	shown := map[turnKey2]bool{}
	for _, r := range a.Sections.RAG {
		shown[turnKey2{r.ChatID, r.Seq}] = true
	}
	for _, r := range a.Sections.Recent {
		shown[turnKey2{"", r.Seq}] = true
	}
	partners := map[turnKey2][]int64{} // a choice by place and its options: each the other's (a list may have two choices)
	for _, r := range in.RAG {
		if r.choseFrom > 0 {
			partners[turnKey2{r.ChatID, r.choseFrom}] = append(partners[turnKey2{r.ChatID, r.choseFrom}], r.Seq)
			partners[turnKey2{r.ChatID, r.Seq}] = append(partners[turnKey2{r.ChatID, r.Seq}], r.choseFrom)
		}
	}
	for _, r := range a.Sections.RAG {
		k := turnKey2{r.ChatID, r.Seq}
		if slices.ContainsFunc(partners[k], func(c int64) bool { return shown[turnKey2{r.ChatID, c}] }) {
			continue
		}
		if r.Neighbor && !shown[turnKey2{r.ChatID, r.Seq - 1}] && !shown[turnKey2{r.ChatID, r.Seq + 1}] {
			t.Fatalf("neighbour %d shown alone:\n%s", r.Seq, a.Context)
		}
	}
}

// chooseByPlace makes some neighbours list options that a turn two or
// three after it chooses among by place (takeChosen).
func chooseByPlace(rag []RAGTurn, words uint8) {
	for i := range rag {
		o := &rag[i]
		if !o.Neighbor || (int(o.Seq)+int(words))%2 != 0 {
			continue
		}
		for j := range rag {
			c := &rag[j]
			if d := c.Seq - o.Seq; (d == 2 || d == 3) && c.Episode == nil && c.Fact == nil && !c.part && c.choseFrom == 0 {
				o.chosen, c.choseFrom = true, o.Seq
				break
			}
		}
	}
}

func sampleProfile(n int) *memory.Profile {
	var st memory.ProfileState
	for i := range n + 1 {
		st = memory.MergeChat(st, "u", fmt.Sprintf("other-%d", i), memory.Summary{CoveredToSeq: 3,
			UserPreferences: []string{fmt.Sprintf("prefers option %d", i)}, Topics: []string{"travel"},
			Entities: []memory.Entity{{Name: fmt.Sprintf("Place %d", i), Type: "place", Details: "somewhere nice"}}}, time.Unix(int64(i), 0))
	}
	return &st.Profile
}

// sameLazy: the retrieved turns left lazy (their text cut only when the
// packer needs it, valued until then by a floor of their tokens, tight
// or loose) are packed exactly as when given whole, and are cut at most
// once each.
func sameLazy(t *testing.T, in AssemblyInput, want Assembled) {
	t.Helper()
	whole := in.RAG
	in.RAG = append([]RAGTurn(nil), whole...)
	calls := 0
	in.Shape = func(r *RAGTurn) {
		calls++
		w := whole[r.lazy-1]
		r.Content, r.Tokens, r.lazy = w.Content, w.Tokens, 0
	}
	lazy := 0
	for i := range in.RAG {
		r := &in.RAG[i]
		if r.Episode != nil || r.Fact != nil {
			continue
		}
		r.lazy, r.floor, r.Content = int32(i+1), pieceFloor(renderTurn(Turn{Role: r.Role, Name: r.Name, Content: r.Content})), ""
		if i%2 == 1 {
			r.floor /= 2
		}
		lazy++
	}
	got := Assemble(in)
	if got.Context != want.Context || !reflect.DeepEqual(got.Usage, want.Usage) || !reflect.DeepEqual(got.Sections, want.Sections) {
		t.Fatalf("lazy turns packed otherwise:\n%s\n-- whole:\n%s", got.Context, want.Context)
	}
	if calls > lazy {
		t.Fatalf("%d cuts of %d lazy turns", calls, lazy)
	}
}

// partsWithTheirTurns: a long turn's part is shown only in its turn's
// line, with the passage the turn was retrieved by, the turn's passages
// in content order; and each retrieved turn has one line.
func partsWithTheirTurns(t *testing.T, rag []RAGTurn, a Assembled) {
	t.Helper()
	lines := map[turnKey2]bool{}
	for _, r := range a.Sections.RAG {
		if lines[turnKey2{r.ChatID, r.Seq}] {
			t.Fatalf("turn %d has two lines", r.Seq)
		}
		lines[turnKey2{r.ChatID, r.Seq}] = true
	}
	for i := 0; i < len(rag); i++ {
		if rag[i].part || i+1 == len(rag) || !rag[i+1].part {
			continue
		}
		g := []RAGTurn{rag[i]} // the turn, then its parts
		for i+1 < len(rag) && rag[i+1].part {
			i++
			g = append(g, rag[i])
		}
		shown := map[int]int{} // From -> where in the context
		for _, r := range g {
			if at := strings.Index(a.Context, unmarked(r.Content)); at >= 0 {
				shown[r.Passages[0].From] = at
			}
		}
		if _, ok := shown[g[0].Passages[0].From]; len(shown) > 0 && !ok {
			t.Fatalf("a part of turn %d shown without its turn:\n%s", g[0].Seq, a.Context)
		}
		froms := slices.Sorted(maps.Keys(shown))
		for k := 1; k < len(froms); k++ {
			if shown[froms[k]] < shown[froms[k-1]] {
				t.Fatalf("turn %d's passages out of order:\n%s", g[0].Seq, a.Context)
			}
		}
	}
}

// standInsAlone: a standing turn's stand-in is shown beside it only when
// the turn as shown does not say it.
func standInsAlone(t *testing.T, a Assembled) {
	turns := map[int64]string{}
	for _, r := range a.Sections.RAG {
		if r.ChatID == "" {
			turns[r.Seq] += r.Content
		}
	}
	for _, f := range a.Sections.Facts {
		if !strings.HasPrefix(f.ID, "s") || len(f.Seqs) != 1 {
			continue
		}
		if shown, ok := turns[f.Seqs[0]]; ok && strings.Contains(shown, strings.TrimPrefix(f.Text, "Standing instruction: ")) {
			t.Fatalf("stand-in %s shown beside its turn %d, which says it", f.ID, f.Seqs[0])
		}
	}
}
