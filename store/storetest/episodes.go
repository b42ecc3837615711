package storetest

// The episode part of the suite: memory.EpisodeStore, which both stores
// implement beside memory.Backend.

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
)

var epT0 = time.Date(2023, 5, 3, 9, 0, 0, 123456789, time.FixedZone("X", 3600))

func episode(from, to int64) memory.Episode {
	return memory.Episode{
		FromSeq: from, ToSeq: to,
		StartedAt: epT0.Add(time.Duration(from) * time.Minute),
		EndedAt:   epT0.Add(time.Duration(to) * time.Minute),
		Short:     fmt.Sprintf("Turns %d to %d: the Lisbon move — ünïcode.", from, to),
		Summary: memory.Summary{Topics: []string{"lisbon move"}, Decisions: []string{fmt.Sprintf("decided at %d", to)},
			Narrative: "They planned.", CoveredFromSeq: from, CoveredToSeq: to, Model: "m", PromptVersion: "e-1"},
		Model: "m", PromptVersion: "e-1",
	}
}

func ranges(eps []memory.Episode) [][2]int64 {
	out := [][2]int64{}
	for _, e := range eps {
		out = append(out, [2]int64{e.FromSeq, e.ToSeq})
	}
	return out
}

func sameRanges(t *testing.T, what string, got []memory.Episode, want ...[2]int64) {
	t.Helper()
	if want == nil {
		want = [][2]int64{}
	}
	if g := ranges(got); fmt.Sprint(g) != fmt.Sprint(want) {
		t.Errorf("%s: episodes %v, want %v", what, g, want)
	}
}

func testEpisodes(t *testing.T, s memory.Backend) {
	ctx, es := ctxT(t), s
	k := key("t1", "ep")
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("ep", 30)})
	if eps, err := es.Episodes(ctx, k, memory.EpisodeQuery{}); err != nil || eps == nil || len(eps) != 0 {
		t.Fatalf("Episodes of a chat without any: %v, %v", eps, err)
	}
	got, err := es.CloseEpisodes(ctx, k, 0, []memory.Episode{episode(1, 10), episode(11, 18)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID == "" || got[0].ID == got[1].ID || got[1].Turns != 8 || got[0].CreatedAt.IsZero() {
		t.Fatalf("CloseEpisodes returned %+v", got)
	}
	if _, err := es.CloseEpisodes(ctx, k, 18, []memory.Episode{episode(19, 19)}); err != nil {
		t.Fatal(err)
	}
	all, err := es.Episodes(ctx, k, memory.EpisodeQuery{})
	if err != nil {
		t.Fatal(err)
	}
	sameRanges(t, "all", all, [2]int64{1, 10}, [2]int64{11, 18}, [2]int64{19, 19})
	e, want := all[1], episode(11, 18)
	if e.ID != got[1].ID || e.ChatID != "ep" || e.Turns != 8 || e.Short != want.Short || e.Model != "m" || e.PromptVersion != "e-1" ||
		!e.StartedAt.Equal(want.StartedAt.Truncate(time.Microsecond)) || e.StartedAt.Location() != time.UTC ||
		!e.EndedAt.Equal(want.EndedAt.Truncate(time.Microsecond)) || !e.CreatedAt.Equal(got[1].CreatedAt) ||
		fmt.Sprint(e.Summary.Decisions) != "[decided at 18]" || e.Summary.CoveredToSeq != 18 || e.Summary.ActionsTaken == nil {
		t.Errorf("stored episode %+v\nwant like %+v", e, want)
	}
	page, _ := es.Episodes(ctx, k, memory.EpisodeQuery{Limit: 2})
	sameRanges(t, "first page", page, [2]int64{1, 10}, [2]int64{11, 18})
	page, _ = es.Episodes(ctx, k, memory.EpisodeQuery{AfterSeq: page[len(page)-1].ToSeq, Limit: 2})
	sameRanges(t, "next page", page, [2]int64{19, 19})
	page, _ = es.Episodes(ctx, k, memory.EpisodeQuery{AfterSeq: 19, Limit: 2})
	sameRanges(t, "past the end", page)
	latest, err := es.Episodes(ctx, k, memory.LatestEpisodes(2))
	if err != nil {
		t.Fatal(err)
	}
	sameRanges(t, "latest 2", latest, [2]int64{11, 18}, [2]int64{19, 19})
	latest, _ = es.Episodes(ctx, k, memory.EpisodeQuery{AfterSeq: 0, Limit: 0, Latest: true})
	sameRanges(t, "latest, no limit", latest, [2]int64{1, 10}, [2]int64{11, 18}, [2]int64{19, 19})
	latest, _ = es.Episodes(ctx, k, memory.EpisodeQuery{AfterSeq: 10, Limit: 5, Latest: true})
	sameRanges(t, "latest after 10", latest, [2]int64{11, 18}, [2]int64{19, 19})

	for name, fn := range map[string]func() error{
		"Episodes":       func() error { _, err := es.Episodes(ctx, key("t1", "nope"), memory.EpisodeQuery{}); return err },
		"LatestEpisodes": func() error { _, err := es.Episodes(ctx, key("t2", "ep"), memory.LatestEpisodes(1)); return err },
		"CloseEpisodes": func() error {
			_, err := es.CloseEpisodes(ctx, key("t2", "ep"), 0, []memory.Episode{episode(1, 2)})
			return err
		},
		"UnindexedEps":   func() error { _, err := es.UnindexedEpisodes(ctx, key("t2", "ep"), 0); return err },
		"MarkEpsIndexed": func() error { return doneIDs(ctx, es, memory.IndexEpisodes, key("t2", "ep"), []string{got[0].ID}) },
	} {
		if err := fn(); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("%s of an unknown chat (or another tenant's): %v, want ErrNotFound", name, err)
		}
	}
}

// testEpisodesWholeOrNothing: a batch that does not continue the chat's
// closed episodes exactly stores nothing, not even its valid first part.
func testEpisodesWholeOrNothing(t *testing.T, s memory.Backend) {
	ctx, es := ctxT(t), s
	k := key("t1", "whole")
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("w", 20)})
	if _, err := es.CloseEpisodes(ctx, k, 0, []memory.Episode{episode(1, 5)}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		expectTo int64
		eps      []memory.Episode
		want     error
	}{
		{"cursor moved", 0, []memory.Episode{episode(1, 5)}, memory.ErrCursorMoved},
		{"stale cursor ahead", 7, []memory.Episode{episode(8, 9)}, memory.ErrCursorMoved},
		{"gap after the last", 5, []memory.Episode{episode(7, 9)}, memory.ErrConflict},
		{"overlaps the last", 5, []memory.Episode{episode(5, 9)}, memory.ErrConflict},
		{"gap inside the batch", 5, []memory.Episode{episode(6, 8), episode(10, 12)}, memory.ErrConflict},
		{"overlap inside the batch", 5, []memory.Episode{episode(6, 8), episode(8, 12)}, memory.ErrConflict},
		{"reversed range", 5, []memory.Episode{episode(6, 4)}, memory.ErrConflict},
		{"past last_seq", 5, []memory.Episode{episode(6, 10), episode(11, 21)}, memory.ErrConflict},
	}
	for _, tc := range tests {
		_, err := es.CloseEpisodes(ctx, k, tc.expectTo, tc.eps)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		all, err := es.Episodes(ctx, k, memory.EpisodeQuery{})
		if err != nil {
			t.Fatal(err)
		}
		sameRanges(t, tc.name, all, [2]int64{1, 5})
	}
}

func testEpisodeBacklog(t *testing.T, s memory.Backend) {
	ctx, es := ctxT(t), s
	a, b := key("t1", "a"), key("t1", "b")
	mustAppend(t, s, memory.AppendRequest{Chat: a, Messages: turns("a", 10)})
	mustAppend(t, s, memory.AppendRequest{Chat: b, Messages: turns("b", 10)})
	if chats, err := pendingChats(ctx, es, memory.IndexEpisodes, 0); err != nil || len(chats) != 0 {
		t.Fatalf("backlog before any episode: %v, %v", chatIDs(chats), err)
	}
	epsA, err := es.CloseEpisodes(ctx, a, 0, []memory.Episode{episode(1, 3), episode(4, 6)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := es.CloseEpisodes(ctx, b, 0, []memory.Episode{episode(1, 9)}); err != nil {
		t.Fatal(err)
	}
	chats, err := pendingChats(ctx, es, memory.IndexEpisodes, 0)
	if err != nil || fmt.Sprint(sorted(chatIDs(chats))) != "[t1/a t1/b]" {
		t.Fatalf("backlog chats %v, %v", chatIDs(chats), err)
	}
	un, err := es.UnindexedEpisodes(ctx, a, 1)
	if err != nil {
		t.Fatal(err)
	}
	sameRanges(t, "first unindexed of a", un, [2]int64{1, 3})
	if err := doneIDs(ctx, es, memory.IndexEpisodes, a, []string{epsA[0].ID, epsA[1].ID}); err != nil {
		t.Fatal(err)
	}
	un, _ = es.UnindexedEpisodes(ctx, a, 0)
	sameRanges(t, "unindexed of a after marking", un)
	chats, _ = pendingChats(ctx, es, memory.IndexEpisodes, 0)
	if fmt.Sprint(chatIDs(chats)) != "[t1/b]" {
		t.Errorf("backlog chats after marking a: %v", chatIDs(chats))
	}
	if err := es.Reset(ctx, memory.IndexEpisodes); err != nil {
		t.Fatal(err)
	}
	un, _ = es.UnindexedEpisodes(ctx, a, 0)
	sameRanges(t, "unindexed of a after a reset", un, [2]int64{1, 3}, [2]int64{4, 6})
}

// testEpisodesErased: a deleted chat leaves no episode row behind, and a
// new chat under the same id starts without episodes.
func testEpisodesErased(t *testing.T, s memory.Backend) {
	ctx, es := ctxT(t), s
	k, other := key("t1", "gone"), key("t2", "gone")
	for _, c := range []memory.ChatKey{k, other} {
		mustAppend(t, s, memory.AppendRequest{Chat: c, Messages: turns(c.Tenant, 8)})
		if _, err := es.CloseEpisodes(ctx, c, 0, []memory.Episode{episode(1, 4)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteChat(ctx, k); err != nil {
		t.Fatal(err)
	}
	if _, err := es.Episodes(ctx, k, memory.EpisodeQuery{}); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Episodes of a deleted chat: %v", err)
	}
	if chats, _ := pendingChats(ctx, es, memory.IndexEpisodes, 0); fmt.Sprint(chatIDs(chats)) != "[t2/gone]" {
		t.Errorf("backlog after delete: %+v", chats)
	}
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("again", 3)})
	eps, err := es.Episodes(ctx, k, memory.EpisodeQuery{})
	if err != nil {
		t.Fatal(err)
	}
	sameRanges(t, "recreated chat", eps)
	eps, _ = es.Episodes(ctx, other, memory.EpisodeQuery{})
	sameRanges(t, "other tenant's chat", eps, [2]int64{1, 4})
}
