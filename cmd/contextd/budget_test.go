package main

import (
	"fmt"
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
	var msgs []map[string]any
	for i := 1; i <= 198; i++ {
		role := "user"
		if i%2 == 0 {
			role = "assistant"
		}
		msgs = append(msgs, map[string]any{"id": fmt.Sprintf("t%d", i), "role": role,
			"content":    fmt.Sprintf("Turn %d about the garden: compost, seedlings and watering the basil.", i),
			"created_at": t0.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)})
	}
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
	s.must(200, "GET", "/v1/chats/trip/facts", nil, &fs)
	all := ""
	for _, f := range fs.Facts {
		all += f.Text + "\n"
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
	s.must(200, "GET", "/v1/users/alice/profile", nil, &prof)
	prefs := ""
	for _, it := range prof.Profile.UserPreferences {
		prefs += it.Text + "\n"
		if len(it.Sources) == 0 || it.Sources[0].ChatID != "trip" || it.Sources[0].FromSeq != 1 {
			t.Errorf("profile item %q without its source turn: %+v", it.Text, it.Sources)
		}
	}
	for _, want := range []string{"vegetarian", "boutique hotels"} {
		if !strings.Contains(prefs, want) {
			t.Errorf("alice's profile lacks %q:\n%s", want, prefs)
		}
	}
}
