package worker

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/derive/extractive"
	"github.com/contextd/contextd/memory"
)

// Deleting a turn takes out the profile items sourced from a stretch that
// held it, and the summaries they came from are merged again: what the
// chat (rebuilt without the turn) and the user's other chats still say
// stays in the profile. The deleted turn's own words do not come back.
// (The request path takes the items out at once, Service.forgetNow; here
// it did not, as when its profile write failed: the worker does it all.)
func TestDeletedTurnKeepsWhatElseIsSaid(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	w := newWorker(st, extractive.New(), "w1", func() Settings {
		s := baseSettings()
		s.RecentTurns, s.TriggerTurns = 2, 4
		return s
	})
	rebuilding(w, st, nil, st)
	p := &Profiler{Store: st, Cooldown: time.Nanosecond}
	says := []string{"My sister Marta lives in Porto.", "Noted.", "My dog Biscuit is allergic to chicken.", "Got it.",
		"I prefer window seats on Zanzibar Air flights.", "Noted too.",
		"I prefer tea over coffee.", "Tea then.", "Thanks.", "Welcome."}
	for _, c := range []string{"p1", "p2"} {
		var msgs []memory.Message
		for i, text := range says {
			role := memory.RoleUser
			if i%2 == 1 {
				role = memory.RoleAssistant
			}
			if c == "p2" && strings.Contains(text, "Zanzibar") {
				text = "The weather is grey today." // said in p1 only
			}
			msgs = append(msgs, memory.Message{ID: fmt.Sprintf("%s-%d", c, i+1), Role: role, Content: text})
		}
		if _, err := st.Append(ctx, memory.AppendRequest{Chat: memory.ChatKey{Tenant: "t", ChatID: c}, UserID: "pu", Messages: msgs}); err != nil {
			t.Fatal(err)
		}
	}
	settle := func() string {
		t.Helper()
		if err := w.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			if n, err := p.Pass(ctx, true); err != nil || n == 0 {
				break
			}
		}
		pst, _, err := st.Profile(ctx, "t", "pu")
		if err != nil {
			t.Fatal(err)
		}
		var items []string
		for _, l := range [][]memory.ProfileItem{pst.Profile.Entities, pst.Profile.UserPreferences, pst.Profile.Topics} {
			for _, it := range l {
				items = append(items, it.Name+it.Text)
			}
		}
		return strings.Join(items, " | ")
	}
	before := settle()
	for _, want := range []string{"Marta", "Zanzibar"} {
		if !strings.Contains(before, want) {
			t.Fatalf("before the delete the profile is %q, without %s: the test cannot fail", before, want)
		}
	}
	if _, err := st.DeleteMessage(ctx, memory.ChatKey{Tenant: "t", ChatID: "p1"}, "p1-5"); err != nil {
		t.Fatal(err)
	}
	after := settle()
	if !strings.Contains(after, "Marta") || !strings.Contains(after, "Porto") {
		t.Errorf("after deleting an unrelated turn the profile is %q (was %q): Marta and Porto, still said, went", after, before)
	}
	if strings.Contains(after, "Zanzibar") {
		t.Errorf("the deleted turn's words are back in the profile: %q", after)
	}
}
