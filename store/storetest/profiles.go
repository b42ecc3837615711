package storetest

// The profile part of the suite: memory.ProfileStore.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
)

// A profile is saved and read back, versioned (a stale version is a
// conflict), kept per tenant and user, and erased.
func testProfiles(t *testing.T, s memory.Backend) {
	ctx := context.Background()
	ps := s
	st, v, err := ps.Profile(ctx, "t1", "alice")
	if err != nil || v != 0 || !st.Profile.IsEmpty() {
		t.Fatalf("no profile yet: %+v %d %v", st, v, err)
	}
	st = memory.MergeChat(st, "alice", "c1", memory.Summary{CoveredToSeq: 4, UserPreferences: []string{"vegetarian"}}, time.Unix(100, 0))
	if err := ps.SaveProfile(ctx, "t1", "alice", st, 0); err != nil {
		t.Fatal(err)
	}
	if err := ps.SaveProfile(ctx, "t1", "alice", st, 0); !errors.Is(err, memory.ErrConflict) {
		t.Fatalf("a second first save: %v, want ErrConflict", err)
	}
	if v, err := ps.ProfileVersion(ctx, "t1", "alice"); err != nil || v != 1 {
		t.Fatalf("ProfileVersion = %d %v, want 1", v, err)
	}
	// The chat row carries its user's profile version.
	mustAppend(t, s, memory.AppendRequest{Chat: key("t1", "alice-chat"), UserID: "alice", Messages: turns("pv", 1)})
	mustAppend(t, s, memory.AppendRequest{Chat: key("t1", "bob-chat"), UserID: "bob", Messages: turns("pv", 1)})
	if c := mustChat(t, s, key("t1", "alice-chat")); c.ProfileVersion != 1 {
		t.Fatalf("alice's chat: profile version %d, want 1", c.ProfileVersion)
	}
	if c := mustChat(t, s, key("t1", "bob-chat")); c.ProfileVersion != 0 || c.HeadID != "" {
		t.Fatalf("bob's chat: profile version %d, head %q; want 0, none", c.ProfileVersion, c.HeadID)
	}
	if v, err := ps.ProfileVersion(ctx, "t1", "bob"); err != nil || v != 0 {
		t.Fatalf("ProfileVersion of a user without a profile = %d %v, want 0", v, err)
	}
	got, v, err := ps.Profile(ctx, "t1", "alice")
	if err != nil || v != 1 || len(got.Profile.UserPreferences) != 1 || got.Profile.UserPreferences[0].Sources[0] != (memory.Source{ChatID: "c1", FromSeq: 1, ToSeq: 4}) {
		t.Fatalf("read back: %+v v%d %v", got, v, err)
	}
	got.Forget(got.Profile.UserPreferences[0].ID)
	if err := ps.SaveProfile(ctx, "t1", "alice", got, 1); err != nil {
		t.Fatal(err)
	}
	if err := ps.SaveProfile(ctx, "t1", "alice", got, 1); !errors.Is(err, memory.ErrConflict) {
		t.Fatalf("stale version: %v, want ErrConflict", err)
	}
	// Every chat of the user carries the new version at once, read before
	// as it was (a store may cache chat rows, never past a write).
	if c := mustChat(t, s, key("t1", "alice-chat")); c.ProfileVersion != 2 {
		t.Fatalf("alice's chat after a save: profile version %d, want 2", c.ProfileVersion)
	}
	again, v, _ := ps.Profile(ctx, "t1", "alice")
	if v != 2 || len(again.Forgotten) != 1 || len(again.Profile.UserPreferences) != 0 {
		t.Fatalf("after forgetting: %+v v%d", again, v)
	}
	for _, other := range [][2]string{{"t1", "bob"}, {"t2", "alice"}} {
		if o, v, _ := ps.Profile(ctx, other[0], other[1]); v != 0 || !o.Profile.IsEmpty() {
			t.Fatalf("%v sees another user's profile", other)
		}
	}
	if err := ps.DeleteProfile(ctx, "t1", "alice"); err != nil {
		t.Fatal(err)
	}
	if _, v, _ := ps.Profile(ctx, "t1", "alice"); v != 0 {
		t.Fatal("profile survived DeleteProfile")
	}
	if c := mustChat(t, s, key("t1", "alice-chat")); c.ProfileVersion != 0 {
		t.Fatalf("alice's chat after DeleteProfile: profile version %d, want 0", c.ProfileVersion)
	}
}

// The profile work is derived from stored state: chats of a user whose
// summary moved past what was merged; erased with the chat.
func testProfileWork(t *testing.T, s memory.Backend) {
	ctx := context.Background()
	ps := s
	mustAppend(t, s, memory.AppendRequest{Chat: key("t1", "c1"), UserID: "alice", Messages: turns("a", 6)})
	mustAppend(t, s, memory.AppendRequest{Chat: key("t1", "nouser"), Messages: turns("n", 6)})
	for _, k := range []memory.ChatKey{key("t1", "c1"), key("t1", "nouser")} {
		if _, err := memory.AppendSummary(ctx, s, k, 0, memory.SummaryRecord{Summary: memory.Summary{CoveredFromSeq: 1, CoveredToSeq: 4}}); err != nil {
			t.Fatal(err)
		}
	}
	work, err := pendingChats(ctx, ps, memory.MergeProfile, 10)
	if err != nil || len(work) != 1 || work[0].ID != "c1" || work[0].UserID != "alice" {
		t.Fatalf("work = %+v %v, want c1 only (nouser has no user)", work, err)
	}
	if err := merged(ctx, ps, key("t1", "c1"), 4); err != nil {
		t.Fatal(err)
	}
	if work, _ := pendingChats(ctx, ps, memory.MergeProfile, 10); len(work) != 0 {
		t.Fatalf("merged chat still in the work: %+v", work)
	}
	if _, err := memory.AppendSummary(ctx, s, key("t1", "c1"), 4, memory.SummaryRecord{Summary: memory.Summary{CoveredFromSeq: 1, CoveredToSeq: 5}}); err != nil {
		t.Fatal(err)
	}
	if work, _ := pendingChats(ctx, ps, memory.MergeProfile, 10); len(work) != 1 {
		t.Fatalf("an extended summary is work again: %+v", work)
	}
	if err := merged(ctx, ps, key("t1", "c1"), 3); err != nil { // never backwards
		t.Fatal(err)
	}
	if work, _ := pendingChats(ctx, ps, memory.MergeProfile, 10); len(work) != 1 {
		t.Fatalf("a lower mark moved the merge backwards: %+v", work)
	}
	if err := merged(ctx, ps, key("t1", "c1"), 5); err != nil {
		t.Fatal(err)
	}
	// A chat whose profile items went with a deleted turn is merged again.
	if err := remerge(ctx, ps, key("t1", "c1")); err != nil {
		t.Fatal(err)
	}
	if work, _ := pendingChats(ctx, ps, memory.MergeProfile, 10); len(work) != 1 || work[0].ID != "c1" {
		t.Fatalf("after RemergeProfile, work = %+v, want c1", work)
	}
	if err := remerge(ctx, ps, key("t1", "no-such-chat")); err != nil {
		t.Errorf("RemergeProfile of an unknown chat: %v", err)
	}
	if err := s.DeleteChat(ctx, key("t1", "c1")); err != nil {
		t.Fatal(err)
	}
	if work, _ := pendingChats(ctx, ps, memory.MergeProfile, 10); len(work) != 0 {
		t.Fatalf("an erased chat is still work: %+v", work)
	}
}
