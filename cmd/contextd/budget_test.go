package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const embeddedConfig = `server:
  addr: "127.0.0.1:0"
storage:
  driver: sqlite
  sqlite_path: "%DATA%/contextd.db"
vector:
  driver: embedded
  embedded_path: "%DATA%/vectors.db"
embedder:
  provider: hashing
llm:
  provider: none
`

// TestFollowUpKeepsTheTurnBefore: in a 200-turn chat whose last user
// message is "ok, do the second one", the assistant turn just before it
// (listing the options) is in a 1,000-token context, through the binary.
// The question shares no word with it: only recency can bring it.
func TestFollowUpKeepsTheTurnBefore(t *testing.T) {
	s := startBinary(t, embeddedConfig)
	t0 := time.Date(2024, 6, 1, 8, 0, 0, 0, time.UTC)
	msgs := gardenTurns(nil, t0, 1, 198)
	options := "Here are three plans: 1) repaint the fence in blue, 2) rebuild the shed with cedar boards, 3) tile the patio."
	msgs = append(msgs, map[string]any{"id": "t199", "role": "assistant", "content": options,
		"created_at": t0.Add(199 * time.Minute).Format(time.RFC3339)})
	s.must(201, "POST", "/v1/chats/follow/messages", map[string]any{"messages": msgs}, nil)
	var ans struct {
		Context string `json:"context"`
		Usage   struct {
			TotalTokens int `json:"total_tokens"`
		} `json:"usage"`
	}
	s.must(200, "POST", "/v1/context", map[string]any{"chat_id": "follow", "query": "ok, do the second one", "budget_tokens": 1000,
		"strategy": "rag_augmented", "append": []map[string]any{{"id": "t200", "role": "user", "content": "ok, do the second one"}}}, &ans)
	if !strings.Contains(ans.Context, options) || ans.Usage.TotalTokens > 1000 {
		t.Fatalf("the options turn is not in the %d-token context:\n%s", ans.Usage.TotalTokens, ans.Context)
	}
}

// TestChoiceByPlaceShownWithItsOptions: through the binary, a question
// about a choice made by place far back in a long chat ("ok do the second
// one", 190 turns ago) gets the options it chose among and the choice,
// each in its block, at 400 tokens.
func TestChoiceByPlaceShownWithItsOptions(t *testing.T) {
	s := startBinary(t, embeddedConfig)
	t0 := time.Date(2024, 6, 1, 8, 0, 0, 0, time.UTC)
	at := func(i int) string { return t0.Add(time.Duration(i) * time.Minute).Format(time.RFC3339) }
	options := "3 options for the music: 1) DJ Sunny from the wedding, £300 for 3 hours 2) dev does it, he has the speakers 3) a spotify playlist"
	msgs := []map[string]any{
		{"id": "t1", "role": "user", "content": "we cant just have silence at the party", "created_at": at(1)},
		{"id": "t2", "role": "assistant", "content": options, "created_at": at(2)},
		{"id": "t3", "role": "user", "content": "dev will play drum and bass all night though", "created_at": at(3)},
		{"id": "t4", "role": "assistant", "content": "He might, yes.", "created_at": at(4)},
		{"id": "t5", "role": "user", "content": "ok do the second one. ill tell him no dnb", "created_at": at(5)},
	}
	msgs = gardenTurns(msgs, t0, 6, 196)
	s.must(201, "POST", "/v1/chats/party/messages", map[string]any{"messages": msgs}, nil)
	var ans struct {
		Context string `json:"context"`
	}
	s.must(200, "POST", "/v1/context", map[string]any{"chat_id": "party", "query": "who is doing the music at the party?",
		"budget_tokens": 400, "strategy": "rag_augmented"}, &ans)
	for _, want := range []string{options, "ok do the second one"} {
		if !strings.Contains(ans.Context, want) {
			t.Errorf("context lacks %q:\n%s", want, ans.Context)
		}
	}
}

// TestRestatedCountsMarkedThroughTheAPI: through the binary, an older
// headcount shown at a small budget carries the newer one ("we're at 46
// now"), and a price asked about carries the one settled on.
func TestRestatedCountsMarkedThroughTheAPI(t *testing.T) {
	s := startBinary(t, embeddedConfig)
	t0 := time.Date(2024, 6, 1, 8, 0, 0, 0, time.UTC)
	at := func(i int) string { return t0.Add(time.Duration(i) * time.Minute).Format(time.RFC3339) }
	msgs := []map[string]any{
		{"id": "t1", "role": "user", "name": "Priya", "content": "i made a rough list, about 40 people. family, choir, neighbours", "created_at": at(1)},
		{"id": "t2", "role": "user", "name": "Arjun", "content": "auntie jo does the cake. is £40 for the cake ok?", "created_at": at(2)},
		{"id": "t3", "role": "user", "name": "Meera", "content": "she can do it cheaper for family", "created_at": at(3)},
		{"id": "t4", "role": "user", "name": "Priya", "content": "deal, £35 it is", "created_at": at(4)},
	}
	msgs = gardenTurns(msgs, t0, 5, 60)
	msgs = append(msgs, map[string]any{"id": "late", "role": "user", "name": "Priya", "content": "two more yeses from the walking group, we're at 46 now", "created_at": at(70)})
	msgs = gardenTurns(msgs, t0, 71, 80)
	s.must(201, "POST", "/v1/chats/party/messages", map[string]any{"messages": msgs}, nil)
	var ans struct {
		Context string `json:"context"`
	}
	s.must(200, "POST", "/v1/context", map[string]any{"chat_id": "party", "query": "how many people are on the list?",
		"budget_tokens": 250, "strategy": "rag_augmented"}, &ans)
	if !strings.Contains(ans.Context, "about 40 people") || !strings.Contains(ans.Context, "we're at 46 now") {
		t.Errorf("the old headcount without the new one:\n%s", ans.Context)
	}
	s.must(200, "POST", "/v1/context", map[string]any{"chat_id": "party", "query": "is £40 for the cake ok?",
		"budget_tokens": 150, "strategy": "rag_augmented"}, &ans)
	if strings.Contains(ans.Context, "£40") && !strings.Contains(ans.Context, "£35 it is") {
		t.Errorf("the price asked about without the one settled on:\n%s", ans.Context)
	}
}

// A standing instruction said in a long turn ("… Never call me, even if
// it's urgent, just email.") is shown at a small budget as its sentence,
// where the whole turn does not fit the instructions' share and better
// matches crowd it out, through the binary once the facts job drew it.
func TestStandingInstructionSentenceThroughTheAPI(t *testing.T) {
	s := startBinary(t, embeddedConfig)
	t0 := time.Date(2024, 6, 1, 8, 0, 0, 0, time.UTC)
	msgs := []map[string]any{{"id": "rule", "role": "user", "name": "Marta", "created_at": t0.Format(time.RFC3339),
		"content": "Great. One thing first: please only contact me by email, marta@posteo.nl. I work shifts in a hospital and can't take calls, " +
			"the ward is loud and my phone stays in the locker for twelve hours. Never call me, even if it's urgent, just email."}}
	for i := 1; i <= 30; i++ {
		msgs = append(msgs, map[string]any{"id": fmt.Sprintf("b%d", i), "role": "assistant", "created_at": t0.Add(time.Duration(i) * time.Minute).Format(time.RFC3339),
			"content": fmt.Sprintf("Battery check %d for customer order %d: the new battery is working, cell group %d reads 3.9 V.", i, 4000+i, i)})
	}
	msgs = gardenTurns(msgs, t0, 31, 60)
	s.must(201, "POST", "/v1/chats/support/messages", map[string]any{"messages": msgs}, nil)
	var fs struct {
		Facts []struct {
			Text string `json:"text"`
		} `json:"facts"`
	}
	waitFor(t, 20*time.Second, "the standing instruction drawn", func() bool {
		fs.Facts = nil
		s.must(200, "GET", "/v1/chats/support/facts", nil, &fs)
		return slices.ContainsFunc(fs.Facts, func(f struct {
			Text string `json:"text"`
		}) bool {
			return strings.Contains(f.Text, "Never call me")
		})
	})
	var ans struct {
		Context string `json:"context"`
	}
	s.must(200, "POST", "/v1/context", map[string]any{"chat_id": "support", "query": "can we phone the customer to check the new battery is working?",
		"budget_tokens": 400, "strategy": "rag_augmented"}, &ans)
	if !strings.Contains(ans.Context, "Standing instruction (Marta): Never call me, even if it's urgent, just email.") {
		t.Errorf("the instruction not to call is not shown:\n%s", ans.Context)
	}
}

// TestREADMESessionRemembersFacts: the README's curl session, without an
// LLM, remembers "vegetarian" and "boutique hotels" as facts citing their
// turn, and in alice's profile with that turn as the source.
func TestREADMESessionRemembersFacts(t *testing.T) {
	s := startBinary(t, embeddedConfig)
	s.must(201, "POST", "/v1/chats/trip/messages", map[string]any{"user_id": "alice", "messages": []map[string]any{
		{"id": "m1", "role": "user", "content": "I am planning a trip to Lisbon in May. I prefer boutique hotels and I am vegetarian."},
		{"id": "m2", "role": "assistant", "content": "[Travel Agent]\nBooked: Casa Amora, May 3-7. Dinner at Ao 26 Vegan Food Project on May 4."},
		{"id": "m3", "role": "user", "content": "[Supervisor] routing to travel agent"},
		{"id": "m4", "role": "user", "content": "Also add a day trip to Sintra on May 5."},
		{"id": "m5", "role": "assistant", "content": "Done: train to Sintra at 09:10 on May 5, Pena Palace tickets for 11:00."},
	}}, nil)
	var fs struct {
		Facts []struct {
			Text string  `json:"text"`
			Seqs []int64 `json:"seqs"`
		} `json:"facts"`
	}
	// Facts are drawn in the background, within about a second of the
	// append: poll, with a bound (no timing assert).
	all := ""
	waitFor(t, 20*time.Second, "the facts drawn on arrival", func() bool {
		fs.Facts = nil
		s.must(200, "GET", "/v1/chats/trip/facts", nil, &fs)
		all = ""
		for _, f := range fs.Facts {
			all += f.Text + "\n"
		}
		return strings.Contains(all, "vegetarian") && strings.Contains(all, "boutique hotels")
	})
	for _, f := range fs.Facts {
		if len(f.Seqs) == 0 {
			t.Errorf("fact %q cites no turn", f.Text)
		}
	}
	for _, want := range []string{"vegetarian", "boutique hotels"} {
		if !strings.Contains(all, want) {
			t.Errorf("no fact holds %q; facts:\n%s", want, all)
		}
	}
	var prof struct {
		Profile struct {
			UserPreferences []struct {
				Text    string `json:"text"`
				Sources []struct {
					ChatID  string `json:"chat_id"`
					FromSeq int64  `json:"from_seq"`
				} `json:"sources"`
			} `json:"user_preferences"`
		} `json:"profile"`
	}
	// The profile merge follows the facts' write in the same pass.
	prefs := ""
	waitFor(t, 20*time.Second, "the profile merge of those facts", func() bool {
		prof.Profile.UserPreferences = nil
		s.must(200, "GET", "/v1/users/alice/profile", nil, &prof)
		prefs = ""
		for _, it := range prof.Profile.UserPreferences {
			prefs += it.Text + "\n"
		}
		return strings.Contains(prefs, "vegetarian") && strings.Contains(prefs, "boutique hotels")
	})
	for _, it := range prof.Profile.UserPreferences {
		if len(it.Sources) == 0 || it.Sources[0].ChatID != "trip" || it.Sources[0].FromSeq != 1 {
			t.Errorf("profile item %q without its source turn: %+v", it.Text, it.Sources)
		}
	}
	for _, want := range []string{"vegetarian", "boutique hotels"} {
		if !strings.Contains(prefs, want) {
			t.Errorf("alice's profile lacks %q:\n%s", want, prefs)
		}
	}
	// Verbatim while it fits: the session's context is the whole chat, in
	// order (the routing line filtered, the agent label cut), nothing
	// summarised away or dropped.
	var cx struct {
		Context string `json:"context"`
		Usage   struct {
			DroppedTurns int64 `json:"dropped_turns"`
		} `json:"usage"`
	}
	for _, strategy := range []string{"running_summary", "rag_augmented"} {
		s.must(200, "POST", "/v1/context", map[string]any{"chat_id": "trip", "query": "What did we book?", "strategy": strategy}, &cx)
		// Under its day line: "[Sun 29 November 2026]" for turns stored today.
		want := "\nuser: I am planning a trip to Lisbon in May. I prefer boutique hotels and I am vegetarian.\n" +
			"assistant: Booked: Casa Amora, May 3-7. Dinner at Ao 26 Vegan Food Project on May 4.\n" +
			"user: Also add a day trip to Sintra on May 5.\n" +
			"assistant: Done: train to Sintra at 09:10 on May 5, Pena Palace tickets for 11:00."
		if !strings.HasPrefix(cx.Context, "## Recent turns\n[") {
			t.Errorf("%s: the recent turns are not dated:\n%s", strategy, cx.Context)
		}
		if !strings.Contains(cx.Context, want) || cx.Usage.DroppedTurns != 0 {
			t.Errorf("%s: the session's context is not the whole chat (dropped %d):\n%s", strategy, cx.Usage.DroppedTurns, cx.Context)
		}
	}
}

// TestREADMECommands runs the README's curl session as written against the
// real binary (localhost:8080 replaced by its address), and its
// check-config command on the repo's agents.yaml: the front page's
// commands work on a fresh clone.
func TestREADMECommands(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("curl is required in CI for the README's session")
		}
		t.Skip("no curl")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	i := strings.Index(text, "A session with curl")
	start := strings.Index(text[i:], "```sh\n") + i + len("```sh\n")
	end := strings.Index(text[start:], "```") + start
	session := text[start:end]
	if !strings.Contains(session, "curl -s -X POST localhost:8080/v1/chats/trip/messages") {
		t.Fatalf("the README's session moved:\n%s", session)
	}
	s := startBinary(t, embeddedConfig)
	addr := strings.TrimPrefix(s.base, "http://")
	script := strings.ReplaceAll(session, "localhost:8080", addr)
	cmd := exec.Command("bash", "-e", "-o", "pipefail", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(curl)+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's session failed: %v\n%s", err, out)
	}
	for _, want := range []string{`"appended":5`, `"sections"`, `"storage":"ok"`, "204"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the session's output lacks %s:\n%s", want, out)
		}
	}
	check, err := exec.Command(contextdBinary(t), "check-config", "--config", "../../agents.yaml").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(check), "ok") {
		t.Errorf("check-config on agents.yaml: %v\n%s", err, check)
	}
}

// TestStandingInstructionShownForAnyQuestion: a standing instruction
// stated early in a long chat is in the context of a later question that
// shares none of its words, and is gone once the turn is deleted.
func TestStandingInstructionShownForAnyQuestion(t *testing.T) {
	s := startBinary(t, embeddedConfig)
	t0 := time.Date(2024, 6, 1, 8, 0, 0, 0, time.UTC)
	instruction := "Always include version numbers when I ask about software libraries."
	msgs := gardenTurns([]map[string]any{{"id": "rule", "role": "user", "content": instruction, "created_at": t0.Format(time.RFC3339)}}, t0, 2, 150)
	s.must(201, "POST", "/v1/chats/rules/messages", map[string]any{"messages": msgs}, nil)
	// ask answers whether turn 1 is among the retrieved turns, and the
	// context text. (The profile and the summary may quote the instruction
	// too; the turn itself must be there.)
	ask := func() (bool, string) {
		var ans struct {
			Context  string `json:"context"`
			Sections struct {
				RAG []struct {
					Seq int64 `json:"seq"`
				} `json:"rag"`
			} `json:"sections"`
		}
		s.must(200, "POST", "/v1/context", map[string]any{"chat_id": "rules", "query": "Which packages does our project depend on?",
			"budget_tokens": 1000, "strategy": "rag_augmented"}, &ans)
		for _, r := range ans.Sections.RAG {
			if r.Seq == 1 {
				return true, ans.Context
			}
		}
		return false, ans.Context
	}
	if shown, ctx := ask(); !shown || !strings.Contains(ctx, instruction) {
		t.Fatalf("the standing instruction's turn is not in the context:\n%s", ctx)
	}
	s.must(204, "DELETE", "/v1/chats/rules/messages/rule", nil, nil)
	if shown, ctx := ask(); shown || strings.Contains(ctx, "version numbers") {
		t.Fatalf("the deleted instruction is still in the context:\n%s", ctx)
	}
}

// TestConstraintShownForAnyQuestion: a person's own constraint (a diet),
// texted early in a long chat without apostrophes, is in the context of a
// later question about food that shares none of its words.
func TestConstraintShownForAnyQuestion(t *testing.T) {
	s := startBinary(t, embeddedConfig)
	t0 := time.Date(2024, 6, 1, 8, 0, 0, 0, time.UTC)
	diet := "btw i dont eat meat anymore, vegetarian since may"
	msgs := gardenTurns([]map[string]any{{"id": "diet", "role": "user", "content": diet, "created_at": t0.Format(time.RFC3339)}}, t0, 2, 150)
	s.must(201, "POST", "/v1/chats/dinner/messages", map[string]any{"messages": msgs}, nil)
	var ans struct {
		Context string `json:"context"`
	}
	s.must(200, "POST", "/v1/context", map[string]any{"chat_id": "dinner", "query": "Any ideas for a dinner tonight?",
		"budget_tokens": 1000, "strategy": "rag_augmented"}, &ans)
	if !strings.Contains(ans.Context, diet) {
		t.Fatalf("the diet is not in the context:\n%s", ans.Context)
	}
}

// gardenTurns appends turns from..to (ids t<seq>, odd seqs the user's, one
// a minute after t0), all about the same garden, to msgs.
func gardenTurns(msgs []map[string]any, t0 time.Time, from, to int) []map[string]any {
	for i := from; i <= to; i++ {
		role := "user"
		if i%2 == 0 {
			role = "assistant"
		}
		msgs = append(msgs, map[string]any{"id": fmt.Sprintf("t%d", i), "role": role,
			"content":    fmt.Sprintf("Turn %d about the garden: compost, seedlings and watering the basil.", i),
			"created_at": t0.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)})
	}
	return msgs
}
