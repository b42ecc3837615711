package storetest

// The fact part of the suite: memory.FactStore, and facts stored with
// their episodes by CloseEpisodes.

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
)

var factT0 = time.Date(2024, 2, 3, 4, 5, 6, 789123456, time.FixedZone("Y", -7200))

func fact(text string, seqs ...int64) memory.Fact {
	return memory.Fact{Text: text, Seqs: seqs, ValidAt: factT0.Add(time.Duration(seqs[len(seqs)-1]) * time.Minute),
		Kind: memory.FactPreference, Source: memory.FactSourceLLM}
}

func withFacts(e memory.Episode, facts ...memory.Fact) memory.Episode {
	e.Facts = facts
	return e
}

func factTexts(facts []memory.Fact) []string {
	out := []string{}
	for _, f := range facts {
		out = append(out, f.Text)
	}
	return out
}

func mustFacts(t *testing.T, fs memory.FactStore, k memory.ChatKey, after int64, limit int, superseded bool) []memory.Fact {
	t.Helper()
	facts, err := fs.Facts(ctxT(t), k, memory.FactQuery{AfterSeq: after, Limit: limit, IncludeSuperseded: superseded})
	if err != nil {
		t.Fatalf("Facts(%v, %d, %d, %v): %v", k, after, limit, superseded, err)
	}
	if facts == nil {
		t.Fatal("Facts returned nil, want an empty list")
	}
	return facts
}

// testFacts: CloseEpisodes stores each episode's facts with it (ids kept
// or derived, seqs sorted, chat and episode set, duplicates ignored), and a
// bad fact stores nothing of the batch.
func testFacts(t *testing.T, s memory.Backend) {
	ctx, es, fs := ctxT(t), s, s
	k := key("t1", "facts")
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("f", 12)})
	given := fact("Ann lives in Lisbon", 4, 2, 4)
	given.ID = "f-given"
	eps, err := es.CloseEpisodes(ctx, k, 0, []memory.Episode{
		withFacts(episode(1, 5), given, fact("Ann likes tea", 3), fact("Ann likes tea", 3)),
		withFacts(episode(6, 8), fact("Ann plans a trip", 7, 8)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(eps[0].Facts) == 0 || eps[0].Facts[0].ID != "f-given" || eps[0].Facts[0].EpisodeID != eps[0].ID {
		t.Errorf("CloseEpisodes returned facts %+v", eps[0].Facts)
	}
	all := mustFacts(t, fs, k, 0, 0, true)
	if got := factTexts(all); fmt.Sprint(got) != "[Ann lives in Lisbon Ann likes tea Ann plans a trip]" {
		t.Fatalf("facts %v, want Lisbon (first seq 2), tea (3), trip (7); the repeated tea once", got)
	}
	lisbon, tea, trip := all[0], all[1], all[2]
	if lisbon.ID != "f-given" || fmt.Sprint(lisbon.Seqs) != "[2 4]" || lisbon.ChatID != "facts" || lisbon.EpisodeID != eps[0].ID ||
		lisbon.Kind != memory.FactPreference || lisbon.Source != memory.FactSourceLLM || lisbon.SupersededBy != "" ||
		!lisbon.ValidAt.Equal(given.ValidAt.Truncate(time.Microsecond)) || lisbon.ValidAt.Location() != time.UTC || lisbon.CreatedAt.IsZero() {
		t.Errorf("stored fact %+v", lisbon)
	}
	if want := memory.FactID("t1", "facts", []int64{3}, "Ann likes tea"); tea.ID != want {
		t.Errorf("fact without id got %q, want FactID %q", tea.ID, want)
	}
	if trip.EpisodeID != eps[1].ID || fmt.Sprint(trip.Seqs) != "[7 8]" {
		t.Errorf("second episode's fact %+v", trip)
	}
	got, err := fs.Facts(ctx, k, memory.FactsByID([]string{trip.ID, "nope", lisbon.ID}))
	if err != nil || fmt.Sprint(factTexts(got)) != "[Ann lives in Lisbon Ann plans a trip]" {
		t.Errorf("FactsByID = %v, %v", factTexts(got), err)
	}
	if !reflect.DeepEqual(got[0], lisbon) {
		t.Errorf("FactsByID fact %+v, Facts gave %+v", got[0], lisbon)
	}

	bad := []struct {
		name string
		f    memory.Fact
	}{
		{"no text", memory.Fact{Text: " ", Seqs: []int64{9}}},
		{"no seqs", memory.Fact{Text: "x"}},
		{"seq past last_seq", fact("x", 9, 13)},
		{"seq 0", fact("x", 0, 9)},
		{"NUL", fact("a\x00b", 9)},
	}
	for _, tc := range bad {
		_, err := es.CloseEpisodes(ctx, k, 8, []memory.Episode{episode(9, 10), withFacts(episode(11, 12), tc.f)})
		if !errors.Is(err, memory.ErrConflict) {
			t.Errorf("%s: %v, want ErrConflict", tc.name, err)
		}
	}
	if eps, _ := es.Episodes(ctx, k, memory.EpisodeQuery{}); len(eps) != 2 {
		t.Errorf("a rejected batch stored episodes: %v", ranges(eps))
	}
	if n := len(mustFacts(t, fs, k, 0, 0, true)); n != 3 {
		t.Errorf("a rejected batch stored facts: %d facts", n)
	}
}

// testFactPaging: pages by first seq never split the facts of one first
// seq; superseded facts are left out unless asked for.
func testFactPaging(t *testing.T, s memory.Backend) {
	ctx, es, fs := ctxT(t), s, s
	k := key("t1", "pages")
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("p", 10)})
	if _, err := es.CloseEpisodes(ctx, k, 0, []memory.Episode{withFacts(episode(1, 10),
		fact("a1", 1), fact("a2", 1, 5), fact("a3", 1), fact("b", 2), fact("c1", 3), fact("c2", 3, 4), fact("d", 6))}); err != nil {
		t.Fatal(err)
	}
	firsts := func(facts []memory.Fact) string {
		out := []int64{}
		for _, f := range facts {
			out = append(out, f.FirstSeq())
		}
		return fmt.Sprint(out)
	}
	pages := []struct {
		after int64
		limit int
		want  string
	}{
		{0, 2, "[1 1 1]"},         // the limit falls inside first seq 1: all of it
		{1, 2, "[2 3 3]"},         // and inside first seq 3
		{3, 2, "[6]"},             // the last page
		{6, 2, "[]"},              // past the end
		{0, 4, "[1 1 1 2]"},       // the limit ends exactly at a first seq
		{0, 0, "[1 1 1 2 3 3 6]"}, // no limit
		{2, 100, "[3 3 6]"},
	}
	for _, p := range pages {
		if got := firsts(mustFacts(t, fs, k, p.after, p.limit, false)); got != p.want {
			t.Errorf("Facts(after %d, limit %d) first seqs %s, want %s", p.after, p.limit, got, p.want)
		}
	}
	all := mustFacts(t, fs, k, 0, 0, false)
	byText := map[string]memory.Fact{}
	for _, f := range all {
		byText[f.Text] = f
	}
	if err := fs.SupersedeFacts(ctx, k, map[string]string{byText["a1"].ID: byText["d"].ID, byText["a3"].ID: byText["d"].ID, "unknown": "x"}); err != nil {
		t.Fatal(err)
	}
	if got := factTexts(mustFacts(t, fs, k, 0, 2, false)); fmt.Sprint(got) != "[a2 b]" {
		t.Errorf("current facts, first page: %v, want [a2 b] (a1 and a3 superseded)", got)
	}
	withOld := mustFacts(t, fs, k, 0, 1, true)
	if len(withOld) != 3 {
		t.Errorf("with superseded, first page: %+v", withOld)
	}
	for _, f := range withOld {
		if (f.Text == "a1" || f.Text == "a3") != (f.SupersededBy == byText["d"].ID) {
			t.Errorf("fact %s superseded_by %q", f.Text, f.SupersededBy)
		}
	}
}

// testFactBacklog: facts wait unindexed until marked; superseding one
// makes it unindexed again; a reset marks all; BacklogSizes counts them.
func testFactBacklog(t *testing.T, s memory.Backend) {
	ctx, es, fs := ctxT(t), s, s
	a, b := key("t1", "a"), key("t2", "b")
	for _, k := range []memory.ChatKey{a, b} {
		mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns(k.ChatID, 6)})
	}
	if chats, err := pendingChats(ctx, fs, memory.IndexFacts, 0); err != nil || len(chats) != 0 {
		t.Fatalf("fact backlog before any fact: %v, %v", chatIDs(chats), err)
	}
	if _, err := es.CloseEpisodes(ctx, a, 0, []memory.Episode{withFacts(episode(1, 6), fact("x", 2), fact("y", 4), fact("z", 5))}); err != nil {
		t.Fatal(err)
	}
	if _, err := es.CloseEpisodes(ctx, b, 0, []memory.Episode{withFacts(episode(1, 6), fact("w", 1))}); err != nil {
		t.Fatal(err)
	}
	if got := backlog(t, s).UnindexedFacts; got != 4 {
		t.Errorf("BacklogSizes.UnindexedFacts = %d, want 4", got)
	}
	chats, err := pendingChats(ctx, fs, memory.IndexFacts, 0)
	if err != nil || fmt.Sprint(sorted(chatIDs(chats))) != "[t1/a t2/b]" {
		t.Fatalf("fact backlog chats %v, %v", chatIDs(chats), err)
	}
	un, err := fs.UnindexedFacts(ctx, a, 2)
	if err != nil || fmt.Sprint(factTexts(un)) != "[x y]" {
		t.Fatalf("UnindexedFacts(a, 2) = %v, %v", factTexts(un), err)
	}
	all := mustFacts(t, fs, a, 0, 0, true)
	if err := doneIDs(ctx, fs, memory.IndexFacts, a, []string{all[0].ID, all[1].ID, all[2].ID}); err != nil {
		t.Fatal(err)
	}
	if un, _ := fs.UnindexedFacts(ctx, a, 0); len(un) != 0 {
		t.Errorf("unindexed after marking: %v", factTexts(un))
	}
	if chats, _ := pendingChats(ctx, fs, memory.IndexFacts, 0); fmt.Sprint(chatIDs(chats)) != "[t2/b]" {
		t.Errorf("fact backlog chats after marking a: %v", chatIDs(chats))
	}
	if err := fs.SupersedeFacts(ctx, a, map[string]string{all[0].ID: all[2].ID}); err != nil {
		t.Fatal(err)
	}
	if un, _ := fs.UnindexedFacts(ctx, a, 0); fmt.Sprint(factTexts(un)) != "[x]" {
		t.Errorf("a superseded fact must be indexed again (its payload changed): unindexed %v", factTexts(un))
	}
	if err := fs.Reset(ctx, memory.IndexFacts); err != nil {
		t.Fatal(err)
	}
	if un, _ := fs.UnindexedFacts(ctx, a, 0); len(un) != 3 {
		t.Errorf("after a reset: %v unindexed, want all 3", factTexts(un))
	}
}

// testFactsErased: facts go with their chat (and so with their user),
// stay in their tenant, and every chat-scoped method says ErrNotFound for
// an unknown chat.
func testFactsErased(t *testing.T, s memory.Backend) {
	ctx, es, fs := ctxT(t), s, s
	k, other := key("t1", "gone"), key("t2", "gone")
	for _, c := range []memory.ChatKey{k, other} {
		mustAppend(t, s, memory.AppendRequest{Chat: c, UserID: "u", Messages: turns(c.Tenant, 4)})
		if _, err := es.CloseEpisodes(ctx, c, 0, []memory.Episode{withFacts(episode(1, 4), fact("secret of "+c.Tenant, 2))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteChat(ctx, k); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("again", 3)})
	if got := mustFacts(t, fs, k, 0, 0, true); len(got) != 0 {
		t.Errorf("a recreated chat has the erased chat's facts: %v", factTexts(got))
	}
	if got := mustFacts(t, fs, other, 0, 0, true); fmt.Sprint(factTexts(got)) != "[secret of t2]" {
		t.Errorf("the other tenant's facts: %v", factTexts(got))
	}
	if chats, _ := pendingChats(ctx, fs, memory.IndexFacts, 0); fmt.Sprint(chatIDs(chats)) != "[t2/gone]" {
		t.Errorf("fact backlog after the delete: %v", chatIDs(chats))
	}
	unknown := key("t3", "gone")
	for name, fn := range map[string]func() error{
		"Facts":            func() error { _, err := fs.Facts(ctx, unknown, memory.FactQuery{IncludeSuperseded: true}); return err },
		"FactsByID":        func() error { _, err := fs.Facts(ctx, unknown, memory.FactsByID([]string{"x"})); return err },
		"SupersedeFacts":   func() error { return fs.SupersedeFacts(ctx, unknown, map[string]string{"a": "b"}) },
		"UnindexedFacts":   func() error { _, err := fs.UnindexedFacts(ctx, unknown, 0); return err },
		"MarkFactsIndexed": func() error { return doneIDs(ctx, fs, memory.IndexFacts, unknown, []string{"x"}) },
	} {
		if err := fn(); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("%s of an unknown chat: %v, want ErrNotFound", name, err)
		}
	}
}

// testAddFacts: facts of turns no episode owns yet are stored as they
// arrive, idempotently by id (so the episode that later owns the turns,
// drawing the same facts, adds nothing twice); a fact citing a deleted turn
// is dropped; a bad fact rejects the batch.
func testAddFacts(t *testing.T, s memory.Backend) {
	ctx, es, fs := ctxT(t), s, s
	k := key("t1", "add-facts")
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("a", 6)})
	veg := fact("Alice is vegetarian", 1)
	veg.ID = memory.FactID(k.Tenant, k.ChatID, veg.Seqs, veg.Text)
	got, err := fs.AddFacts(ctx, k, []memory.Fact{veg, fact("Alice prefers boutique hotels", 1)})
	if err != nil || len(got) != 2 || got[0].EpisodeID != "" {
		t.Fatalf("AddFacts = %+v, %v", got, err)
	}
	if _, err := fs.AddFacts(ctx, k, []memory.Fact{fact("x", 9)}); !errors.Is(err, memory.ErrConflict) {
		t.Errorf("a seq past last_seq: %v, want ErrConflict", err)
	}
	eps, err := es.CloseEpisodes(ctx, k, 0, []memory.Episode{withFacts(episode(1, 4), veg)})
	if err != nil || len(eps) != 1 {
		t.Fatal(err)
	}
	if all := factTexts(mustFacts(t, fs, k, 0, 0, true)); len(all) != 2 || !slices.Contains(all, "Alice is vegetarian") || !slices.Contains(all, "Alice prefers boutique hotels") {
		t.Errorf("facts %v: the episode's copy of a stored fact must not be added twice", all)
	}
	if _, err := fs.AddFacts(ctx, key("t1", "nope"), []memory.Fact{veg}); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("unknown chat: %v, want ErrNotFound", err)
	}
	{
		if _, err := s.DeleteMessage(ctx, k, "a-6"); err != nil {
			t.Fatal(err)
		}
		got, err := fs.AddFacts(ctx, k, []memory.Fact{fact("from a deleted turn", 6)})
		if err != nil || len(got) != 0 {
			t.Errorf("a fact citing a deleted turn: stored %+v, %v", got, err)
		}
	}
}
