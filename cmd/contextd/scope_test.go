package main

import (
	"context"
	"strings"
	"testing"
)

// rag_scope user reaches every chat of the user, whatever agent each was
// opened with: an agent chooses settings, it does not own memory (the
// retriever narrowed to the asking chat's agent, and a research chat never
// saw what the user told the default agent).
func TestUserScopeCrossesAgents(t *testing.T) {
	app, srv := newApp(t, nil)
	for _, c := range []struct{ chat, agent, text string }{
		{"e1", "", "My passport number ends in 4471 and expires in May."},
		{"e2", "research", "Planning a trip."},
	} {
		body := `{"user_id":"erin","agent":"` + c.agent + `","messages":[{"role":"user","content":"` + c.text + `"},{"role":"assistant","content":"Noted."}]}`
		if c.agent == "" {
			body = strings.Replace(body, `"agent":"",`, "", 1)
		}
		if st, b := call(t, "POST", srv.URL+"/v1/chats/"+c.chat+"/messages", "", body); st != 201 {
			t.Fatalf("append %s: %d %s", c.chat, st, b)
		}
	}
	if _, err := app.Indexer.DrainOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, b := call(t, "POST", srv.URL+"/v1/context", "", `{"chat_id":"e2","strategy":"rag_augmented","rag_scope":"user","query":"when does my passport expire?","include":["sections"]}`)
	if st != 200 || !strings.Contains(b, "expires in May") {
		t.Fatalf("user scope from the research chat: %d, the other agent's chat not retrieved: %s", st, b)
	}
}
