package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contextd/contextd/config"
)

type profileAnswer struct {
	UserID  string `json:"user_id"`
	Profile struct {
		UserPreferences []struct {
			ID      string `json:"id"`
			Text    string `json:"text"`
			Sources []struct {
				ChatID  string `json:"chat_id"`
				FromSeq int64  `json:"from_seq"`
				ToSeq   int64  `json:"to_seq"`
			} `json:"sources"`
		} `json:"user_preferences"`
		Entities []struct {
			Name    string `json:"name"`
			Sources []struct {
				ChatID string `json:"chat_id"`
			} `json:"sources"`
		} `json:"entities"`
	} `json:"profile"`
}

// The user's profile across chats, through the real wiring: two chats of
// one user in the context of a third, isolation, forgetting, erasure.
func TestUserProfileAcrossChats(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	app, srv := newApp(t, func(c *config.Config) {
		c.Storage.SQLitePath = filepath.Join(dir, "p.db")
		c.Supervisor.Memory.SummaryRecentTurns = 1
		c.Server.Auth.APIKeys = []config.APIKey{{Key: "key-t1-0123456789", Tenant: "t1"}, {Key: "key-t2-0123456789", Tenant: "t2"}}
	})
	key1, key2 := "key-t1-0123456789", "key-t2-0123456789"
	say := func(key, user, chat string, lines ...string) {
		t.Helper()
		var msgs []string
		for _, l := range lines {
			msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":%q}`, l))
		}
		msgs = append(msgs, `{"role":"assistant","content":"Noted."}`)
		if code, body := call(t, "POST", srv.URL+"/v1/chats/"+chat+"/messages", key, fmt.Sprintf(`{"user_id":%q,"messages":[%s]}`, user, strings.Join(msgs, ","))); code != 201 {
			t.Fatalf("append: %d %s", code, body)
		}
		if code, body := call(t, "POST", srv.URL+"/v1/chats/"+chat+"/summary/refresh", key, ""); code != 200 {
			t.Fatalf("refresh: %d %s", code, body)
		}
		if _, err := app.Profiler.Pass(ctx, true); err != nil {
			t.Fatal(err)
		}
	}
	profile := func(key, user string) (int, profileAnswer) {
		t.Helper()
		code, body := call(t, "GET", srv.URL+"/v1/users/"+user+"/profile", key, "")
		var p profileAnswer
		_ = json.Unmarshal([]byte(body), &p)
		return code, p
	}
	prefs := func(p profileAnswer) string {
		var out []string
		for _, it := range p.Profile.UserPreferences {
			out = append(out, it.Text)
		}
		return strings.Join(out, " | ")
	}
	say(key1, "alice", "trip", "I prefer boutique hotels when I travel to Lisbon.", "We stay at Casa Amora.")
	say(key1, "alice", "food", "I am vegetarian, so I prefer vegetarian restaurants.")
	say(key1, "bob", "bobchat", "I prefer window seats.")
	say(key2, "alice", "other-tenant", "I prefer the red-eye flights.")

	code, p := profile(key1, "alice")
	if code != 200 || !strings.Contains(prefs(p), "boutique hotels") || !strings.Contains(prefs(p), "vegetarian restaurants") ||
		strings.Contains(prefs(p), "window seats") || strings.Contains(prefs(p), "red-eye") {
		t.Fatalf("alice's profile: %d %s", code, prefs(p))
	}
	for _, it := range p.Profile.UserPreferences {
		if strings.Contains(it.Text, "boutique") && (len(it.Sources) != 1 || it.Sources[0].ChatID != "trip" || it.Sources[0].FromSeq != 1 || it.Sources[0].ToSeq < 1) {
			t.Fatalf("boutique hotels sources: %+v", it.Sources)
		}
	}
	// A third chat of alice starts with her profile; bob's does not get it.
	call(t, "POST", srv.URL+"/v1/chats/new/messages", key1, `{"user_id":"alice","messages":[{"role":"user","content":"Where should we eat tonight?"}]}`)
	code, body := call(t, "POST", srv.URL+"/v1/context", key1, `{"chat_id":"new","budget_tokens":2000}`)
	var res struct {
		Context  string `json:"context"`
		Sections struct {
			Profile *profileAnswer `json:"profile"`
		} `json:"sections"`
		Usage map[string]int `json:"usage"`
	}
	_ = json.Unmarshal([]byte(body), &res)
	if code != 200 || !strings.Contains(res.Context, "About the user") || !strings.Contains(res.Context, "vegetarian restaurants") ||
		res.Usage["profile_tokens"] == 0 || strings.Contains(res.Context, "window seats") {
		t.Fatalf("third chat's context: %d %s", code, body)
	}
	u := res.Usage
	if u["rag_tokens"]+u["episode_tokens"]+u["profile_tokens"]+u["summary_tokens"]+u["recent_tokens"] != u["total_tokens"] || u["total_tokens"] > 2000 {
		t.Fatalf("usage does not add up: %v", u)
	}
	if code, p := profile(key2, "bob"); code != 404 {
		t.Fatalf("bob in another tenant: %d %+v", code, p)
	}
	// Forgetting: gone, and not derived again when its chat is extended.
	var veg string
	for _, it := range p.Profile.UserPreferences {
		if strings.Contains(it.Text, "vegetarian") {
			veg = it.ID
		}
	}
	if code, body := call(t, "DELETE", srv.URL+"/v1/users/alice/profile/items/"+veg, key1, ""); code != 204 {
		t.Fatalf("forget: %d %s", code, body)
	}
	if code, _ := call(t, "DELETE", srv.URL+"/v1/users/alice/profile/items/nope", key1, ""); code != 404 {
		t.Fatalf("forgetting an unknown item: %d", code)
	}
	say(key1, "alice", "food", "Also, we fly on Friday.")
	if _, p := profile(key1, "alice"); strings.Contains(prefs(p), "vegetarian") {
		t.Fatalf("forgotten item came back from its own chat: %s", prefs(p))
	}
	say(key1, "alice", "later", "I am vegetarian, so I prefer vegetarian restaurants.")
	if _, p := profile(key1, "alice"); !strings.Contains(prefs(p), "vegetarian") {
		t.Fatalf("a new mention in a later chat must bring it back: %s", prefs(p))
	}
	// Erasing a chat removes what only it said.
	call(t, "DELETE", srv.URL+"/v1/chats/trip", key1, "")
	if _, p := profile(key1, "alice"); strings.Contains(prefs(p), "boutique") {
		t.Fatalf("an erased chat's only item survived: %s", prefs(p))
	}
	// Erasing the user leaves no profile row.
	call(t, "DELETE", srv.URL+"/v1/users/alice", key1, "")
	if n := sqlCount(t, filepath.Join(dir, "p.db"), "profiles", "tenant = 't1' AND user_id = 'alice'"); n != 0 {
		t.Fatalf("%d profile rows left after erasing the user", n)
	}
	if n := sqlCount(t, filepath.Join(dir, "p.db"), "profiles", "tenant = 't2' AND user_id = 'alice'"); n != 1 {
		t.Fatalf("the other tenant's alice lost her profile: %d rows", n)
	}
}
