package storetest

// The forget part of the suite: memory.MessageDeleter (deleting one
// message, the marks it leaves, the rebuild calls that clear them).

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/contextd/contextd/memory"
)

// Secret is what the forget scenario's turn 3 says (its name is
// SecretMark, which Secret holds); after ForgetAndRebuild a store's own
// test counts the rows still holding SecretMark (there must be none).
const (
	Secret     = "my passport number is " + SecretMark
	SecretMark = "X1234567"
)

// forgetChat appends a chat whose turn m-3 says Secret (in content, name
// and metadata) and derives from it: facts, the episode 1..5, a summary
// chain of two records; everything is marked indexed.
func forgetChat(t *testing.T, s memory.Backend, k memory.ChatKey) {
	t.Helper()
	ctx, es, fs := ctxT(t), s, s
	msgs := turns("m", 10)
	msgs[2] = memory.Message{ID: "m-3", Role: memory.RoleUser, Name: SecretMark, Content: Secret,
		Metadata: map[string]any{"card": Secret}}
	mustAppend(t, s, memory.AppendRequest{Chat: k, UserID: "ann", Agent: "planner", Messages: msgs})
	ep1 := withFacts(episode(1, 5), fact("Ann's passport: "+Secret, 3), fact("Ann likes tea", 2), fact("Ann travels", 3, 4))
	ep1.Short, ep1.Summary.Narrative = "Ann said "+Secret, "Ann said "+Secret
	eps, err := es.CloseEpisodes(ctx, k, 0, []memory.Episode{ep1, withFacts(episode(6, 9), fact("Ann prefers coffee", 7))})
	if err != nil {
		t.Fatal(err)
	}
	byText := factsByText(t, fs, k)
	if err := fs.SupersedeFacts(ctx, k, map[string]string{byText["Ann likes tea"].ID: byText["Ann travels"].ID}); err != nil {
		t.Fatal(err)
	}
	for i, to := range []int64{5, 9} {
		sum := sampleSummary(1, to, "so far: "+Secret)
		if _, err := memory.AppendSummary(ctx, s, k, []int64{0, 5}[i], memory.SummaryRecord{Summary: sum, FromSeq: 1, ToSeq: to}); err != nil {
			t.Fatal(err)
		}
	}
	mustMark(t, s, k, span(1, 10)...)
	if err := doneIDs(ctx, es, memory.IndexEpisodes, k, []string{eps[0].ID, eps[1].ID}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range byText {
		ids = append(ids, f.ID)
	}
	if err := doneIDs(ctx, fs, memory.IndexFacts, k, ids); err != nil {
		t.Fatal(err)
	}
}

func factsByText(t *testing.T, fs memory.FactStore, k memory.ChatKey) map[string]memory.Fact {
	t.Helper()
	out := map[string]memory.Fact{}
	for _, f := range mustFacts(t, fs, k, 0, 0, true) {
		out[f.Text] = f
	}
	return out
}

// testDeleteMessage: the tombstone, and every mark the delete leaves, in
// the chat of the deleted turn only.
func testDeleteMessage(t *testing.T, s memory.Backend) {
	ctx, fs, mf := ctxT(t), s, s
	k, other := key("t1", "forget"), key("t2", "forget")
	forgetChat(t, s, k)
	forgetChat(t, s, other)
	tomb, err := mf.DeleteMessage(ctx, k, "m-3")
	if err != nil {
		t.Fatal(err)
	}
	if tomb.ID != "m-3" || tomb.Seq != 3 || tomb.Role != memory.RoleUser || !tomb.Deleted || tomb.Content != "" || tomb.Name != "" || tomb.Metadata != nil {
		t.Errorf("DeleteMessage returned %+v, want the tombstone of seq 3", tomb)
	}
	msgs := mustMessages(t, s, k)
	if fmt.Sprint(seqsOf(msgs)) != fmt.Sprint(span(1, 10)) {
		t.Fatalf("seqs after the delete %v, want 1..10 (gap-free)", seqsOf(msgs))
	}
	bySeq, err := s.MessagesBySeq(ctx, k, []int64{3})
	if err != nil || len(bySeq) != 1 {
		t.Fatalf("MessagesBySeq(3) = %v, %v", bySeq, err)
	}
	for _, m := range []memory.Message{msgs[2], bySeq[0]} {
		if !m.Deleted || m.Content != "" || m.Name != "" || m.Metadata != nil || m.Role != memory.RoleUser || m.ID != "m-3" {
			t.Errorf("read tombstone %+v", m)
		}
	}
	if msgs[1].Deleted || msgs[3].Deleted || msgs[3].Content == "" {
		t.Errorf("neighbours touched: %+v %+v", msgs[1], msgs[3])
	}
	un, _ := s.UnindexedMessages(ctx, k, 0)
	if fmt.Sprint(seqsOf(un)) != "[3]" || !un[0].Deleted {
		t.Errorf("unindexed after the delete: %v, want the tombstone (its vectors must go)", seqsOf(un))
	}

	derivedMarked(t, s, k)
	// A dirty summary is summary work, whatever the chat's backlog: the
	// worker lists the dirty chats alone with no backlog that could pass.
	if w, err := s.ListSummaryWork(ctx, math.MaxInt64, 0); err != nil || fmt.Sprint(chatIDs(w)) != "[t1/forget]" {
		t.Errorf("ListSummaryWork(MaxInt64) = %v, %v; want the dirty chat only", chatIDs(w), err)
	}
	work, err := mf.PendingDeletions(ctx, 0)
	if err != nil || len(work) != 1 || work[0] != (memory.Deletion{Chat: k, UserID: "ann", Seq: 3}) {
		t.Errorf("PendingDeletions = %+v, %v", work, err)
	}
	// The other tenant's chat of the same id is untouched.
	if m := mustMessages(t, s, other); m[2].Deleted || m[2].Content != Secret || mustChat(t, s, other).SummaryDirty {
		t.Errorf("the other tenant's chat changed: %+v", m[2])
	}
	if n := len(factsByText(t, fs, other)); n != 4 {
		t.Errorf("the other tenant's chat has %d facts, want 4", n)
	}

	for name, call := range map[string]func() error{
		"a second delete": func() error { _, err := mf.DeleteMessage(ctx, k, "m-3"); return err },
		"an unknown id":   func() error { _, err := mf.DeleteMessage(ctx, k, "nope"); return err },
		"an unknown chat": func() error { _, err := mf.DeleteMessage(ctx, key("t1", "nope"), "m-3"); return err },
		"another tenant":  func() error { _, err := mf.DeleteMessage(ctx, key("t3", "forget"), "m-3"); return err },
	} {
		if err := call(); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("DeleteMessage of %s: %v, want ErrNotFound", name, err)
		}
	}
	// The deleted id stays known: a retry of the original append is a
	// duplicate and does not bring the turn back.
	res := mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: []memory.Message{msg("m-3", memory.RoleUser, Secret)}})
	if res.Appended != 0 || res.Duplicates != 1 || res.Messages[0].Seq != 3 || mustMessages(t, s, k)[2].Content != "" {
		t.Errorf("re-append of a deleted id = %+v", res)
	}

	if chats, err := pendingChats(ctx, mf, memory.SweepDeletions, 0); err != nil || fmt.Sprint(chatIDs(chats)) != "[t1/"+k.ChatID+"]" {
		t.Errorf("Pending(SweepDeletions) = %v, %v", chatIDs(chats), err)
	}
	if err := forgetDone(ctx, mf, k, 3); err != nil {
		t.Fatal(err)
	}
	if chats, err := pendingChats(ctx, mf, memory.SweepDeletions, 0); err != nil || len(chats) != 0 {
		t.Errorf("Pending(SweepDeletions) after ForgetDone = %v, %v", chatIDs(chats), err)
	}
	if err := forgetDone(ctx, mf, k, 3); err != nil {
		t.Errorf("ForgetDone twice: %v", err)
	}
	if work, _ := mf.PendingDeletions(ctx, 0); len(work) != 0 {
		t.Errorf("PendingDeletions after ForgetDone: %+v", work)
	}
}

// derivedMarked: after seq 3 of forgetChat's chat k was deleted, the facts
// citing it are gone, the episode owning it is marked for rebuild and the
// summary is dirty.
func derivedMarked(t *testing.T, s memory.Backend, k memory.ChatKey) {
	t.Helper()
	ctx, es, fs := ctxT(t), s, s
	facts := factsByText(t, fs, k)
	if _, ok := facts["Ann's passport: "+Secret]; ok || facts["Ann travels"].ID != "" || len(facts) != 2 {
		t.Errorf("facts after the delete: %v, want those citing seq 3 gone", slices.Sorted(maps.Keys(facts)))
	}
	if tea := facts["Ann likes tea"]; tea.SupersededBy != "" {
		t.Errorf("a fact superseded by a deleted fact stays superseded: %+v", tea)
	}
	if un, _ := fs.UnindexedFacts(ctx, k, 0); fmt.Sprint(factTexts(un)) != "[Ann likes tea]" {
		t.Errorf("unindexed facts %v, want the one current again", factTexts(un))
	}
	eps, _ := es.Episodes(ctx, k, memory.EpisodeQuery{})
	if !eps[0].Rebuild || eps[1].Rebuild {
		t.Errorf("rebuild marks %v %v, want the episode owning seq 3 only", eps[0].Rebuild, eps[1].Rebuild)
	}
	if un, _ := es.UnindexedEpisodes(ctx, k, 0); len(un) != 1 || un[0].ID != eps[0].ID {
		t.Errorf("unindexed episodes %v, want the marked one", ranges(un))
	}
	if c := mustChat(t, s, k); !c.SummaryDirty {
		t.Errorf("chat %+v: summary not dirty", c)
	}
}

// testRebuildEpisode: the marked episode is listed with its chat; a
// rebuild overwrites its summaries and facts and clears the mark, unless
// another turn of it was deleted since it was read.
func testRebuildEpisode(t *testing.T, s memory.Backend) {
	ctx, es, fs, mf := ctxT(t), s, s, s
	k := key("t1", "rebuild")
	forgetChat(t, s, k)
	if work, err := mf.EpisodesToRebuild(ctx, 0); err != nil || len(work) != 0 {
		t.Fatalf("EpisodesToRebuild before any delete: %+v, %v", work, err)
	}
	if _, err := mf.DeleteMessage(ctx, k, "m-3"); err != nil {
		t.Fatal(err)
	}
	work, err := mf.EpisodesToRebuild(ctx, 0)
	if err != nil || len(work) != 1 {
		t.Fatalf("EpisodesToRebuild = %+v, %v", work, err)
	}
	w := work[0]
	if w.Chat.Key() != k || w.Chat.UserID != "ann" || w.Chat.Agent != "planner" || w.Episode.FromSeq != 1 || !w.Episode.Rebuild {
		t.Errorf("rebuild work %+v", w)
	}

	// A second turn of the episode is deleted while the first rebuild runs:
	// that rebuild is stored, but the episode stays marked.
	stale := w.Episode
	if _, err := mf.DeleteMessage(ctx, k, "m-4"); err != nil {
		t.Fatal(err)
	}
	stale.Short = "first rebuild"
	if err := mf.RebuildEpisode(ctx, k, stale); err != nil {
		t.Fatal(err)
	}
	eps, _ := es.Episodes(ctx, k, memory.EpisodeQuery{Limit: 1})
	if eps[0].Short != "first rebuild" || !eps[0].Rebuild {
		t.Errorf("after a rebuild that missed a delete: %+v, want written and still marked", eps[0])
	}

	work, _ = mf.EpisodesToRebuild(ctx, 0)
	ep := work[0].Episode
	ep.Short, ep.Summary = "Ann talked about tea.", memory.Summary{Narrative: "tea", CoveredFromSeq: 1, CoveredToSeq: 5}
	ep.Model, ep.PromptVersion = "m2", "e-2"
	ep.Facts = []memory.Fact{fact("Ann likes tea", 2), fact("cites the deleted turn", 2, 4)}
	if err := mf.RebuildEpisode(ctx, k, ep); err != nil {
		t.Fatal(err)
	}
	eps, _ = es.Episodes(ctx, k, memory.EpisodeQuery{})
	got := eps[0]
	if got.Rebuild || got.Short != ep.Short || got.Summary.Narrative != "tea" || got.Model != "m2" || got.PromptVersion != "e-2" ||
		got.FromSeq != 1 || got.ToSeq != 5 || got.ID != ep.ID {
		t.Errorf("rebuilt episode %+v", got)
	}
	if un, _ := es.UnindexedEpisodes(ctx, k, 0); len(un) != 1 || un[0].ID != ep.ID {
		t.Errorf("a rebuilt episode must be indexed again: unindexed %v", ranges(un))
	}
	if work, _ := mf.EpisodesToRebuild(ctx, 0); len(work) != 0 {
		t.Errorf("still to rebuild: %+v", work)
	}
	facts := mustFacts(t, fs, k, 0, 0, true)
	if fmt.Sprint(factTexts(facts)) != "[Ann likes tea Ann prefers coffee]" {
		t.Errorf("facts after the rebuild %v: the episode's replaced, the one citing a deleted turn dropped, the next episode's kept", factTexts(facts))
	}
	if facts[0].EpisodeID != ep.ID || facts[0].ChatID != k.ChatID {
		t.Errorf("rebuilt fact %+v", facts[0])
	}
	ep.ID = "00000000-0000-4000-8000-000000000000"
	if err := mf.RebuildEpisode(ctx, k, ep); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("RebuildEpisode of an unknown episode: %v, want ErrNotFound", err)
	}
	if err := mf.RebuildEpisode(ctx, key("t9", "rebuild"), work0(t, eps)); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("RebuildEpisode in an unknown chat: %v, want ErrNotFound", err)
	}
}

func work0(t *testing.T, eps []memory.Episode) memory.Episode {
	t.Helper()
	if len(eps) == 0 {
		t.Fatal("no episode")
	}
	return eps[0]
}

// testReplaceSummary: the chain becomes one record; the cursor is checked;
// the dirty mark is cleared unless a message was deleted meanwhile.
func testReplaceSummary(t *testing.T, s memory.Backend) {
	ctx, mf := ctxT(t), s
	k := key("t1", "replace")
	forgetChat(t, s, k)
	if _, err := mf.DeleteMessage(ctx, k, "m-3"); err != nil {
		t.Fatal(err)
	}
	read := mustChat(t, s, k)
	if !read.SummaryDirty || read.SummaryCursor != 9 {
		t.Fatalf("chat %+v", read)
	}
	rec := memory.SummaryRecord{Summary: sampleSummary(1, 9, "rebuilt without the turn"), FromSeq: 1, ToSeq: 9}
	if _, err := replaceSummary(ctx, mf, k, 5, read.DirtyMark, rec); !errors.Is(err, memory.ErrCursorMoved) {
		t.Errorf("stale cursor: %v, want ErrCursorMoved", err)
	}
	bad := rec
	bad.CoveredToSeq = 11
	if _, err := replaceSummary(ctx, mf, k, 9, read.DirtyMark, bad); !errors.Is(err, memory.ErrConflict) {
		t.Errorf("covered_to_seq past last_seq: %v, want ErrConflict", err)
	}
	if _, err := replaceSummary(ctx, mf, key("t1", "nope"), 0, 0, rec); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("unknown chat: %v, want ErrNotFound", err)
	}
	// A message deleted after the chat was read keeps the chat dirty.
	if _, err := mf.DeleteMessage(ctx, k, "m-8"); err != nil {
		t.Fatal(err)
	}
	got, err := replaceSummary(ctx, mf, k, 9, read.DirtyMark, rec)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID == "" || got.Depth != 0 || got.ParentID != nil || got.CreatedAt.IsZero() {
		t.Errorf("ReplaceSummary returned %+v", got)
	}
	chain, err := s.SummaryChain(ctx, k)
	if err != nil || len(chain) != 1 || chain[0].ID != got.ID || chain[0].Narrative != "rebuilt without the turn" {
		t.Fatalf("chain after the replace: %+v, %v", chain, err)
	}
	head, _ := s.SummaryHead(ctx, k)
	if head == nil || head.ID != got.ID {
		t.Errorf("head %+v, want the replacement", head)
	}
	again := mustChat(t, s, k)
	if !again.SummaryDirty || again.SummaryCursor != 9 {
		t.Errorf("after a replace that missed a delete: %+v, want still dirty", again)
	}
	final, err := replaceSummary(ctx, mf, k, 9, again.DirtyMark, rec)
	if err != nil {
		t.Fatal(err)
	}
	if c := mustChat(t, s, k); c.SummaryDirty {
		t.Errorf("chat %+v still dirty", c)
	}
	// Extensions continue the new chain.
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("more", 2)})
	next, err := memory.AppendSummary(ctx, s, k, 9, memory.SummaryRecord{Summary: sampleSummary(1, 11, "more")})
	if err != nil || next.Depth != 1 || next.ParentID == nil || *next.ParentID != final.ID {
		t.Errorf("AppendSummary after a replace: %+v, %v", next, err)
	}
}

// testReplaceSummaryCoveringNothing: a deletion in a chat with no summary
// yet is rebuilt into no summary, not an empty record covering 1..0; the
// mark is cleared.
func testReplaceSummaryCoveringNothing(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	k := key("t1", "unsummarised")
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("u", 3)})
	if _, err := s.DeleteMessage(ctx, k, "u-3"); err != nil {
		t.Fatal(err)
	}
	c := mustChat(t, s, k)
	if !c.SummaryDirty || c.SummaryCursor != 0 {
		t.Fatalf("chat %+v, want dirty and unsummarised", c)
	}
	empty := memory.SummaryRecord{Summary: memory.Summary{CoveredFromSeq: 1}}
	if _, err := replaceSummary(ctx, s, k, 0, c.DirtyMark, empty); err != nil {
		t.Fatal(err)
	}
	if head, err := s.SummaryHead(ctx, k); head != nil || (err != nil && !errors.Is(err, memory.ErrNotFound)) {
		t.Errorf("head %+v (%v), want no summary", head, err)
	}
	if chain, err := s.SummaryChain(ctx, k); err != nil || len(chain) != 0 {
		t.Errorf("chain %+v (%v), want none", chain, err)
	}
	if c := mustChat(t, s, k); c.SummaryDirty || c.SummaryCursor != 0 {
		t.Errorf("chat %+v, want clean, still unsummarised", c)
	}
}

// testDirtyMarksNeverRepeat: every deletion gives the chat a mark it never
// had, and clearing the summary does not bring an old one back (a cache of
// turns read under a mark relies on it to see every deletion); a replace
// on a clean chat leaves it clean.
func testDirtyMarksNeverRepeat(t *testing.T, s memory.Backend) {
	ctx, mf := ctxT(t), s
	k := key("t1", "marks")
	forgetChat(t, s, k)
	c := mustChat(t, s, k)
	seen := []int64{c.DirtyMark}
	rec := memory.SummaryRecord{Summary: sampleSummary(1, 9, "rebuilt"), FromSeq: 1, ToSeq: 9}
	if _, err := replaceSummary(ctx, mf, k, 9, c.DirtyMark, rec); err != nil {
		t.Fatal(err)
	}
	if c := mustChat(t, s, k); c.SummaryDirty || c.DirtyMark != seen[0] {
		t.Fatalf("a replace on a clean chat: %+v, want clean with mark %d", c, seen[0])
	}
	for _, id := range []string{"m-3", "m-5"} {
		if _, err := mf.DeleteMessage(ctx, k, id); err != nil {
			t.Fatal(err)
		}
		dirty := mustChat(t, s, k)
		if !dirty.SummaryDirty || slices.Contains(seen, dirty.DirtyMark) {
			t.Fatalf("after deleting %s: %+v, want dirty with a mark not in %v", id, dirty, seen)
		}
		seen = append(seen, dirty.DirtyMark)
		if _, err := replaceSummary(ctx, mf, k, 9, dirty.DirtyMark, rec); err != nil {
			t.Fatal(err)
		}
		clean := mustChat(t, s, k)
		if clean.SummaryDirty || slices.Contains(seen, clean.DirtyMark) {
			t.Fatalf("after the rebuild: %+v, want clean with a mark not in %v", clean, seen)
		}
		seen = append(seen, clean.DirtyMark)
	}
}

// testLateWorkOnDeletedTurn: a summariser that read a turn before it was
// deleted writes late: the episode it closes is marked for rebuild, its
// facts citing the turn are dropped, and a summary covering it is dirty.
func testLateWorkOnDeletedTurn(t *testing.T, s memory.Backend) {
	ctx, es, fs, mf := ctxT(t), s, s, s
	k := key("t1", "late")
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("l", 8)})
	if _, err := mf.DeleteMessage(ctx, k, "l-2"); err != nil {
		t.Fatal(err)
	}
	if _, err := es.CloseEpisodes(ctx, k, 0, []memory.Episode{
		withFacts(episode(1, 3), fact("from the deleted turn", 2), fact("from turn 3", 3)),
		withFacts(episode(4, 6), fact("from turn 5", 5)),
	}); err != nil {
		t.Fatal(err)
	}
	eps, _ := es.Episodes(ctx, k, memory.EpisodeQuery{})
	if !eps[0].Rebuild || eps[1].Rebuild {
		t.Errorf("late episodes' rebuild marks %v %v, want the one holding the deleted turn", eps[0].Rebuild, eps[1].Rebuild)
	}
	if got := factTexts(mustFacts(t, fs, k, 0, 0, true)); fmt.Sprint(got) != "[from turn 3 from turn 5]" {
		t.Errorf("late facts %v, want the one citing the deleted turn dropped", got)
	}
	c := mustChat(t, s, k)
	if _, err := replaceSummary(ctx, mf, k, 0, c.DirtyMark, memory.SummaryRecord{Summary: sampleSummary(1, 1, "clean")}); err != nil {
		t.Fatal(err)
	}
	if mustChat(t, s, k).SummaryDirty {
		t.Fatal("still dirty after the replace")
	}
	if _, err := memory.AppendSummary(ctx, s, k, 1, memory.SummaryRecord{Summary: sampleSummary(1, 4, "late")}); err != nil {
		t.Fatal(err)
	}
	if !mustChat(t, s, k).SummaryDirty {
		t.Error("a summary extension over a deleted turn must leave the summary dirty")
	}
}

// ForgetAndRebuild runs the forget scenario to its end: the chat of
// forgetChat, its turn m-3 deleted, the episode rebuilt and the summary
// replaced with text that no longer holds Secret, the forget work done. A
// store's own test then counts the rows still holding Secret.
func ForgetAndRebuild(t *testing.T, s memory.Backend) memory.ChatKey {
	t.Helper()
	ctx, mf := ctxT(t), s
	k := key("t1", "forget-all")
	forgetChat(t, s, k)
	if _, err := mf.DeleteMessage(ctx, k, "m-3"); err != nil {
		t.Fatal(err)
	}
	work, err := mf.EpisodesToRebuild(ctx, 0)
	if err != nil || len(work) != 1 {
		t.Fatalf("EpisodesToRebuild = %+v, %v", work, err)
	}
	ep := work[0].Episode
	ep.Short, ep.Summary, ep.Facts = "Ann talked.", memory.Summary{Narrative: "Ann talked."}, []memory.Fact{fact("Ann likes tea", 2)}
	if err := mf.RebuildEpisode(ctx, k, ep); err != nil {
		t.Fatal(err)
	}
	c := mustChat(t, s, k)
	if _, err := replaceSummary(ctx, mf, k, c.SummaryCursor, c.DirtyMark, memory.SummaryRecord{Summary: sampleSummary(1, 9, "Ann talked.")}); err != nil {
		t.Fatal(err)
	}
	if err := forgetDone(ctx, mf, k, 3); err != nil {
		t.Fatal(err)
	}
	return k
}

// testSummaryHeadWhileReplaced: a chain replaced over and over (a rebuild
// after each forgotten message) never makes SummaryHead report the chat
// gone or fail: a reader sees the old head or the new one.
func testSummaryHeadWhileReplaced(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	k := key("t1", "head-while-replaced")
	mustAppend(t, s, memory.AppendRequest{Chat: k, Messages: turns("h", 10)})
	if _, err := memory.AppendSummary(ctx, s, k, 0, memory.SummaryRecord{Summary: sampleSummary(1, 10, "first"), FromSeq: 1, ToSeq: 10}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	replaced := make(chan error, 1)
	go func() {
		var err error
		for i := 0; err == nil; i++ {
			select {
			case <-stop:
				replaced <- nil
				return
			default:
			}
			var c memory.Chat
			if c, err = s.Chat(ctx, k); err != nil { // not mustChat: no t.Fatal off the test's goroutine
				break
			}
			_, err = replaceSummary(ctx, s, k, c.SummaryCursor, c.DirtyMark,
				memory.SummaryRecord{Summary: sampleSummary(1, 10, fmt.Sprint("rebuilt ", i)), FromSeq: 1, ToSeq: 10})
		}
		replaced <- err
	}()
	for i := 0; i < 300; i++ {
		h, err := s.SummaryHead(ctx, k)
		if err != nil || h == nil {
			close(stop)
			t.Fatalf("read %d while the chain is replaced: %v, %v", i, h, err)
		}
	}
	close(stop)
	if err := <-replaced; err != nil {
		t.Fatalf("ReplaceSummary: %v", err)
	}
}

// replaceSummary writes rec as the chain's only record (memory.ReplaceWrite)
// and returns it as stored; a rec covering nothing is returned as it is.
func replaceSummary(ctx context.Context, s memory.Backend, k memory.ChatKey, expectCursor, dirtyMark int64, rec memory.SummaryRecord) (memory.SummaryRecord, error) {
	recs, err := s.WriteSummary(ctx, k, memory.ReplaceWrite(expectCursor, dirtyMark, rec))
	if err != nil {
		return memory.SummaryRecord{}, err
	}
	if len(recs) == 0 {
		return rec, nil
	}
	return recs[0], nil
}

// rebuildSummary keeps the chain up to keep and writes recs on top of it
// (memory.RebuildWrite).
func rebuildSummary(ctx context.Context, s memory.Backend, k memory.ChatKey, expectCursor, dirtyMark int64, keep string, recs []memory.SummaryRecord) error {
	_, err := s.WriteSummary(ctx, k, memory.RebuildWrite(expectCursor, dirtyMark, keep, recs))
	return err
}
