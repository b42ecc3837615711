package storetest

// The dump part of the suite: memory.Dumper, from one fresh store into
// another of the same kind (store/sqlite and store/postgres test the
// move across kinds in cmd/contextd).

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
)

// DumpLines dumps scope from s and returns its lines as the dump format
// writes them.
func DumpLines(t testing.TB, s memory.Backend, scope memory.DumpScope) [][]byte {
	t.Helper()
	var lines [][]byte
	err := s.Dump(ctxT(t), scope, func(r memory.DumpRecord) error {
		b, err := json.Marshal(r)
		lines = append(lines, b)
		return err
	})
	if err != nil {
		t.Fatalf("Dump(%+v): %v", scope, err)
	}
	return lines
}

// loadLines parses and loads lines into s; it returns how many were added.
func loadLines(t *testing.T, s memory.Backend, lines [][]byte) int {
	t.Helper()
	added := 0
	for i, l := range lines {
		rec, err := memory.ParseDumpLine(l)
		if err != nil {
			t.Fatalf("line %d %s: %v", i+1, l, err)
		}
		ok, err := s.Load(ctxT(t), rec)
		if err != nil {
			t.Fatalf("Load line %d %s: %v", i+1, l, err)
		}
		if ok {
			added++
		}
	}
	return added
}

// dumpSource fills s: tenant t1 with chats a (ann: the forget scenario,
// one turn deleted), b (ann) and c (bob), ann's profile; tenant t2 with a
// chat a of its own and a profile of its own ann.
func dumpSource(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	a := key("t1", "a")
	forgetChat(t, s, a)
	if _, err := s.DeleteMessage(ctx, a, "m-8"); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, memory.AppendRequest{Chat: key("t1", "b"), UserID: "ann", Messages: turns("b", 3)})
	mustAppend(t, s, memory.AppendRequest{Chat: key("t1", "c"), UserID: "bob", Messages: turns("c", 2)})
	mustAppend(t, s, memory.AppendRequest{Chat: key("t2", "a"), UserID: "ann", Messages: []memory.Message{msg("x", memory.RoleUser, "t2-only words")}})
	ps := s
	for _, tenant := range []string{"t1", "t2"} {
		st := memory.MergeChat(memory.ProfileState{}, "ann", "a", memory.Summary{CoveredToSeq: 4,
			UserPreferences: []string{tenant + " tea"}, Entities: []memory.Entity{{Name: "Lisbon", Type: "place"}}}, time.Unix(1000, 0).UTC())
		st.Forget(st.Profile.Entities[0].ID)
		if err := ps.SaveProfile(ctx, tenant, "ann", st, 0); err != nil {
			t.Fatal(err)
		}
	}
}

// chatJSON is everything a chat holds, as the API shows it.
func chatJSON(t *testing.T, s memory.Backend, k memory.ChatKey) string {
	t.Helper()
	ctx := ctxT(t)
	c := mustChat(t, s, k)
	chain, err := s.SummaryChain(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := s.Episodes(ctx, k, memory.EpisodeQuery{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{"user": c.UserID, "agent": c.Agent, "created": c.CreatedAt, "updated": c.UpdatedAt,
		"last_seq": c.LastSeq, "cursor": c.SummaryCursor, "dirty": c.SummaryDirty, "messages": mustMessages(t, s, k),
		"chain": chain, "episodes": eps, "facts": mustFacts(t, s, k, 0, 0, true)})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func profileJSON(t *testing.T, s memory.Backend, tenant, user string) string {
	t.Helper()
	st, _, err := s.Profile(ctxT(t), tenant, user)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(st)
	return string(b)
}

// testDumpRoundTrip: a chat, then its user, dumped and loaded into an empty
// store hold the same rows, unindexed; loading again adds nothing.
func testDumpRoundTrip(t *testing.T, src, dst memory.Backend) {
	ctx := ctxT(t)
	dumpSource(t, src)
	a := key("t1", "a")
	lines := DumpLines(t, src, memory.DumpScope{Tenant: "t1", ChatID: "a"})
	for _, l := range lines {
		rec, err := memory.ParseDumpLine(l)
		if err != nil || rec.Tenant != "t1" || rec.ChatID != "a" || rec.Type == memory.DumpProfile {
			t.Errorf("chat dump line %s: %+v, %v", l, rec, err)
		}
	}
	if first, _ := memory.ParseDumpLine(lines[0]); first.Type != memory.DumpChat {
		t.Errorf("first line %s, want the chat", lines[0])
	}
	if n := loadLines(t, dst, lines); n != len(lines) {
		t.Errorf("loaded %d of %d lines into an empty store", n, len(lines))
	}
	if got, want := chatJSON(t, dst, a), chatJSON(t, src, a); got != want {
		t.Errorf("loaded chat\n%s\nwant\n%s", got, want)
	}
	if un, _ := dst.UnindexedMessages(ctx, a, 0); len(un) != 10 {
		t.Errorf("%d loaded messages unindexed, want all 10", len(un))
	}
	if un, _ := dst.UnindexedEpisodes(ctx, a, 0); len(un) != 2 {
		t.Errorf("%d loaded episodes unindexed, want 2", len(un))
	}
	if un, _ := dst.UnindexedFacts(ctx, a, 0); len(un) != len(mustFacts(t, src, a, 0, 0, true)) {
		t.Errorf("%d loaded facts unindexed, want all", len(un))
	}
	if n := loadLines(t, dst, lines); n != 0 {
		t.Errorf("loading the same dump again added %d records", n)
	}
	if got, want := chatJSON(t, dst, a), chatJSON(t, src, a); got != want {
		t.Errorf("after loading twice\n%s\nwant\n%s", got, want)
	}

	user := DumpLines(t, src, memory.DumpScope{Tenant: "t1", UserID: "ann"})
	text := string(joinLines(user))
	if !strings.Contains(text, `"chat_id":"b"`) || strings.Contains(text, `"chat_id":"c"`) || !strings.Contains(text, `"type":"profile"`) {
		t.Errorf("user dump holds the wrong chats or no profile:\n%s", text)
	}
	if n := loadLines(t, dst, user); n != 1+3+1 { // chat b, its 3 turns, the profile
		t.Errorf("loading the user's dump added %d records, want 5 (chat a was there)", n)
	}
	for _, k := range []memory.ChatKey{a, key("t1", "b")} {
		if got, want := chatJSON(t, dst, k), chatJSON(t, src, k); got != want {
			t.Errorf("chat %v\n%s\nwant\n%s", k, got, want)
		}
	}
	if got, want := profileJSON(t, dst, "t1", "ann"), profileJSON(t, src, "t1", "ann"); got != want || !strings.Contains(got, "forgotten") {
		t.Errorf("loaded profile %s\nwant %s (with what was forgotten)", got, want)
	}
	if _, err := dst.Chat(ctx, key("t2", "a")); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("a t1 dump created a t2 chat: %v", err)
	}
}

func joinLines(lines [][]byte) []byte {
	var b []byte
	for _, l := range lines {
		b = append(append(b, l...), '\n')
	}
	return b
}

// testDumpScopes: a tenant's dump holds its chats and profiles and nothing
// of another tenant; unknown chats and users are ErrNotFound.
func testDumpScopes(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	dumpSource(t, s)
	lines := DumpLines(t, s, memory.DumpScope{Tenant: "t1"})
	chats := map[string]bool{}
	profiles := 0
	for _, l := range lines {
		rec, err := memory.ParseDumpLine(l)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Tenant != "t1" || strings.Contains(string(l), "t2-only") || strings.Contains(string(l), "t2 tea") {
			t.Errorf("t1's dump holds another tenant's row: %s", l)
		}
		if rec.Type == memory.DumpChat {
			chats[rec.ChatID] = true
		}
		if rec.Type == memory.DumpProfile {
			profiles++
		}
	}
	if len(chats) != 3 || profiles != 1 {
		t.Errorf("t1's dump: chats %v and %d profiles, want a, b, c and ann's profile", chats, profiles)
	}
	t2 := string(joinLines(DumpLines(t, s, memory.DumpScope{Tenant: "t2", UserID: "ann"})))
	if strings.Contains(t2, `"tenant":"t1"`) || strings.Contains(t2, Secret) || !strings.Contains(t2, "t2-only") {
		t.Errorf("t2's ann dump:\n%s", t2)
	}
	d := s
	for name, scope := range map[string]memory.DumpScope{
		"an unknown chat":       {Tenant: "t1", ChatID: "nope"},
		"another tenant's chat": {Tenant: "t3", ChatID: "a"},
		"an unknown user":       {Tenant: "t1", UserID: "nobody"},
		"another tenant's user": {Tenant: "t2", UserID: "bob"},
	} {
		err := d.Dump(ctx, scope, func(memory.DumpRecord) error { t.Errorf("%s: emitted a record", name); return nil })
		if !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("Dump of %s: %v, want ErrNotFound", name, err)
		}
	}
	stop := errors.New("stop")
	if err := d.Dump(ctx, memory.DumpScope{Tenant: "t1"}, func(memory.DumpRecord) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("an emit error: %v, want it returned", err)
	}
}

// testLoadConflicts: a load into a store holding other data adds only what
// it does not have and refuses what contradicts it.
func testLoadConflicts(t *testing.T, s memory.Backend) {
	ctx, d := ctxT(t), s
	k := key("t1", "held")
	mustAppend(t, s, memory.AppendRequest{Chat: k, UserID: "ann", Messages: turns("h", 4)})
	if _, err := s.CloseEpisodes(ctx, k, 0, []memory.Episode{episode(1, 2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := memory.AppendSummary(ctx, s, k, 0, memory.SummaryRecord{Summary: sampleSummary(1, 2, "held")}); err != nil {
		t.Fatal(err)
	}
	parse := func(line string) memory.DumpRecord {
		t.Helper()
		rec, err := memory.ParseDumpLine([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return rec
	}
	tests := []struct {
		name, line string
		want       error
	}{
		{"a message before its chat", `{"type":"message","tenant":"t1","chat_id":"nochat","id":"m","seq":1,"role":"user","content":"x"}`, memory.ErrNotFound},
		{"the chat of another user", `{"type":"chat","tenant":"t1","chat_id":"held","user_id":"bob","agent":"default"}`, memory.ErrConflict},
		{"a new id at a taken seq", `{"type":"message","tenant":"t1","chat_id":"held","id":"other","seq":2,"role":"user","content":"x"}`, memory.ErrConflict},
		{"a gap in seqs", `{"type":"message","tenant":"t1","chat_id":"held","id":"other","seq":6,"role":"user","content":"x"}`, memory.ErrConflict},
		{"a record off the chain", `{"type":"summary_record","tenant":"t1","chat_id":"held","id":"00000000-0000-4000-8000-000000000001","parent_id":null,"depth":0,"covered_to_seq":2}`, memory.ErrConflict},
		{"an overlapping episode", `{"type":"episode","tenant":"t1","chat_id":"held","id":"00000000-0000-4000-8000-000000000002","from_seq":2,"to_seq":3}`, memory.ErrConflict},
		{"a fact past last_seq", `{"type":"fact","tenant":"t1","chat_id":"held","id":"f-x","text":"x","seqs":[9]}`, memory.ErrConflict},
	}
	for _, tc := range tests {
		if added, err := d.Load(ctx, parse(tc.line)); !errors.Is(err, tc.want) || added {
			t.Errorf("Load of %s: %v (added %v), want %v", tc.name, err, added, tc.want)
		}
	}
	if got := seqsOf(mustMessages(t, s, k)); len(got) != 4 {
		t.Errorf("refused loads changed the chat: seqs %v", got)
	}
	for _, line := range []string{
		`{"type":"chat","tenant":"t1","chat_id":"held","user_id":"ann","agent":"default"}`,
		`{"type":"message","tenant":"t1","chat_id":"held","id":"h-2","seq":2,"role":"user","content":"whatever"}`,
	} {
		if added, err := d.Load(ctx, parse(line)); err != nil || added {
			t.Errorf("Load of what the store holds %s: added %v, %v; want nothing added", line, added, err)
		}
	}
	if added, err := d.Load(ctx, parse(`{"type":"message","tenant":"t1","chat_id":"held","id":"new","seq":5,"role":"user","content":"next"}`)); err != nil || !added {
		t.Errorf("Load of the next turn: %v %v", added, err)
	}

	// A profile adds only the items the stored one lacks.
	ps := s
	mine := memory.MergeChat(memory.ProfileState{}, "ann", "held", memory.Summary{CoveredToSeq: 2, UserPreferences: []string{"tea"}}, time.Unix(10, 0).UTC())
	if err := ps.SaveProfile(ctx, "t1", "ann", mine, 0); err != nil {
		t.Fatal(err)
	}
	theirs := memory.MergeChat(memory.ProfileState{}, "ann", "x", memory.Summary{CoveredToSeq: 2, UserPreferences: []string{"tea", "coffee"}}, time.Unix(20, 0).UTC())
	if added, err := d.Load(ctx, memory.DumpRecord{Type: memory.DumpProfile, Tenant: "t1", Profile: &theirs}); err != nil || !added {
		t.Fatalf("Load of a profile: %v %v", added, err)
	}
	got, _, _ := ps.Profile(ctx, "t1", "ann")
	if len(got.Profile.UserPreferences) != 2 {
		t.Fatalf("merged preferences %+v", got.Profile.UserPreferences)
	}
	for _, it := range got.Profile.UserPreferences {
		if it.Text == "tea" && it.Sources[0].ChatID != "held" {
			t.Errorf("the stored item was replaced: %+v", it)
		}
	}
	if added, _ := d.Load(ctx, memory.DumpRecord{Type: memory.DumpProfile, Tenant: "t1", Profile: &theirs}); added {
		t.Error("loading the same profile twice added something")
	}
}
