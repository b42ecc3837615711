package memory

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func sum(from, to int64, prefs ...string) Summary {
	return Summary{CoveredFromSeq: from, CoveredToSeq: to, UserPreferences: prefs,
		Entities: []Entity{{Name: "Casa Amora", Type: "place", Details: "hotel in Lisbon"}}}
}

func TestMergeChatSourcesForgetAndErase(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var st ProfileState
	st = MergeChat(st, "alice", "c1", sum(1, 10, "vegetarian"), t0)
	st = MergeChat(st, "alice", "c2", sum(1, 5, "Vegetarian", "boutique hotels"), t0.Add(time.Minute))
	p := st.Profile
	if len(p.UserPreferences) != 2 || len(p.Entities) != 1 {
		t.Fatalf("profile = %+v", p)
	}
	var veg ProfileItem
	for _, it := range p.UserPreferences {
		if it.Text == "vegetarian" {
			veg = it
		}
	}
	if veg.Text != "vegetarian" || len(veg.Sources) != 2 || veg.Sources[0] != (Source{"c1", 1, 10}) || veg.Sources[1] != (Source{"c2", 1, 5}) {
		t.Fatalf("vegetarian item = %+v", veg)
	}
	// Forgetting: the same chats never derive it again, a new chat does.
	if !st.Forget(veg.ID) || st.Forget("nope") {
		t.Fatal("Forget reports wrongly")
	}
	st = MergeChat(st, "alice", "c1", sum(1, 20, "vegetarian"), t0.Add(2*time.Minute))
	if len(st.Profile.UserPreferences) != 1 {
		t.Fatalf("forgotten item came back from its own source: %+v", st.Profile.UserPreferences)
	}
	st = MergeChat(st, "alice", "c3", sum(1, 3, "vegetarian"), t0.Add(3*time.Minute))
	if len(st.Profile.UserPreferences) != 2 || st.Profile.UserPreferences[0].Sources[0].ChatID != "c3" {
		t.Fatalf("a newer source must bring it back: %+v", st.Profile.UserPreferences)
	}
	// Erasing c2 removes its only items; items with other sources stay.
	st.WithoutChat("c2")
	for _, it := range st.Profile.UserPreferences {
		if it.Text == "boutique hotels" {
			t.Fatal("an item whose only source was the erased chat survived")
		}
	}
	if len(st.Profile.Entities) != 1 || len(st.Profile.Entities[0].Sources) != 2 {
		t.Fatalf("entity sources after erasing c2: %+v", st.Profile.Entities)
	}
	// A chat's context leaves out what only it said.
	if got := st.Profile.ForChat("c3"); len(got.UserPreferences) != 0 {
		t.Fatalf("ForChat(c3) repeats c3's own item: %+v", got.UserPreferences)
	}
}

func TestProfileCapKeepsMostRecentlyConfirmed(t *testing.T) {
	var st ProfileState
	t0 := time.Unix(0, 0)
	for i := range ProfileCap + 10 {
		st = MergeChat(st, "u", fmt.Sprintf("c%d", i), Summary{CoveredToSeq: 1, Topics: []string{fmt.Sprintf("topic %d", i)}}, t0.Add(time.Duration(i)*time.Second))
	}
	st = MergeChat(st, "u", "late", Summary{CoveredToSeq: 1, Topics: []string{"topic 12"}}, t0.Add(time.Hour))
	top := st.Profile.Topics
	if len(top) != ProfileCap || top[0].Text != "topic 12" || top[len(top)-1].Text != "topic 10" {
		t.Fatalf("cap kept %d, first %q, last %q", len(top), top[0].Text, top[len(top)-1].Text)
	}
}

// BenchmarkMergeUser200Chats: merging every one of 200 chats' summaries into
// a user's profile (target ≤ 5 ms for all 200).
func BenchmarkMergeUser200Chats(b *testing.B) {
	sums := make([]Summary, 200)
	for i := range sums {
		sums[i] = Summary{CoveredToSeq: 40, Topics: []string{fmt.Sprintf("topic %d", i%50), "travel"},
			UserPreferences: []string{"vegetarian", fmt.Sprintf("likes %d", i%20)},
			OpenQuestions:   []string{fmt.Sprintf("question %d?", i)},
			Entities:        []Entity{{Name: fmt.Sprintf("Entity %d", i%40), Type: "org", Details: "a detail"}, {Name: "Alice", Type: "person"}}}
	}
	now := time.Unix(0, 0)
	for b.Loop() {
		var st ProfileState
		for i, s := range sums {
			st = MergeChat(st, "u", fmt.Sprintf("c%d", i), s, now.Add(time.Duration(i)))
		}
	}
}

func TestWithoutTurn(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var st ProfileState
	st = MergeChat(st, "alice", "c1", sum(1, 10, "vegetarian"), t0)
	st = MergeChat(st, "alice", "c2", sum(1, 5, "boutique hotels"), t0)
	st = MergeChat(st, "alice", "c1", Summary{CoveredFromSeq: 11, CoveredToSeq: 20, Topics: []string{"trains"}}, t0)
	for _, tc := range []struct {
		chat string
		seq  int64
		gone int
		left string
	}{
		{"c3", 4, 0, "[boutique hotels vegetarian] [trains]"},
		{"c2", 6, 0, "[boutique hotels vegetarian] [trains]"},
		{"c1", 15, 1, "[boutique hotels vegetarian] []"},
		// The entity came from both chats: a deleted turn of either takes it.
		{"c2", 5, 2, "[vegetarian] []"},
		{"c1", 4, 1, "[] []"},
	} {
		n := len(st.WithoutTurn(tc.chat, tc.seq))
		var prefs, topics []string
		for _, it := range st.Profile.UserPreferences {
			prefs = append(prefs, it.Text)
		}
		for _, it := range st.Profile.Topics {
			topics = append(topics, it.Text)
		}
		slices.Sort(prefs)
		if got := fmt.Sprint(prefs, " ", topics); n != tc.gone || got != tc.left {
			t.Errorf("WithoutTurn(%s, %d) = %d, left %s; want %d, %s", tc.chat, tc.seq, n, got, tc.gone, tc.left)
		}
	}
	if len(st.Forgotten) != 0 {
		t.Errorf("WithoutTurn remembered %v as forgotten", st.Forgotten)
	}
}
