package ui_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/transport/ui"
)

func TestSecurityHeaders(t *testing.T) {
	h := newHarness(t)
	for _, p := range []string{"/ui/", "/ui/status", "/ui/static/ui.css", "/ui/nope", "/ui/chats/missing"} {
		r := h.get(p)
		if r.header.Get("Content-Security-Policy") != ui.CSP || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", p, r.header)
		}
		if !strings.Contains(ui.CSP, "script-src 'self'") || strings.Contains(ui.CSP, "unsafe-inline") {
			t.Fatalf("CSP allows inline script: %s", ui.CSP)
		}
	}
	if r := h.get("/ui/static/ui.js"); r.status != 200 || !strings.Contains(r.body, "addEventListener") {
		t.Fatalf("ui.js: %d", r.status)
	}
	if r := h.get("/ui"); r.status != http.StatusMovedPermanently || r.header.Get("Location") != "/ui/" {
		t.Fatalf("/ui: %d %v", r.status, r.header)
	}
}

func TestNoInlineScript(t *testing.T) {
	h := newHarness(t)
	h.seed("default", "c1", "u1", 3, func(i int) string { return "hello" })
	for _, p := range []string{"/ui/", "/ui/chats/c1", "/ui/chats/c1/playground?run=1&query=hello", "/ui/status", "/ui/chats/c1/confirm?action=delete"} {
		r := h.get(p)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", p, r.status, r.body)
		}
		if strings.Contains(r.body, "<script>") || strings.Contains(r.body, " onclick=") || strings.Contains(r.body, "javascript:") {
			t.Errorf("%s carries inline script", p)
		}
	}
}

func TestChatsPaging(t *testing.T) {
	h := newHarness(t)
	for i := 0; i < 120; i++ {
		h.seed("default", fmt.Sprintf("chat-%03d", i), fmt.Sprintf("user-%d", i%3), 1+i%4, func(i int) string { return "x" })
	}
	seen := map[string]bool{}
	path := "/ui/"
	for pages := 0; path != ""; pages++ {
		if pages > 5 {
			t.Fatal("pager does not end")
		}
		r := h.get(path)
		for i := 0; i < 120; i++ {
			id := fmt.Sprintf("chat-%03d", i)
			if strings.Contains(r.body, `href="/ui/chats/`+id+`"`) {
				if seen[id] {
					t.Fatalf("%s on two pages", id)
				}
				seen[id] = true
			}
		}
		path = ""
		if i := strings.Index(r.body, `rel="next"`); i >= 0 {
			start := strings.LastIndex(r.body[:i], `href="`) + len(`href="`)
			path = strings.ReplaceAll(r.body[start:strings.Index(r.body[start:], `"`)+start], "&amp;", "&")
		}
	}
	if len(seen) != 120 {
		t.Fatalf("paged through %d chats, want 120", len(seen))
	}
	r := h.get("/ui/?q=user-2")
	if !strings.Contains(r.body, "chat-002") || strings.Contains(r.body, "chat-001\"") {
		t.Fatalf("user filter: %s", r.body)
	}
	if r := h.get("/ui/?q=chat-11"); !strings.Contains(r.body, "chat-119") || strings.Contains(r.body, "chat-000") {
		t.Fatal("chat id filter")
	}
}

func TestChatTimelinePaging(t *testing.T) {
	h := newHarness(t)
	h.seed("default", "big", "u", 250, func(i int) string { return fmt.Sprintf("turn number %d", i) })
	r := h.get("/ui/chats/big")
	if !strings.Contains(r.body, "turn number 100<") || strings.Contains(r.body, "turn number 101<") {
		t.Fatal("first page is not turns 1..100")
	}
	if !strings.Contains(r.body, `href="/ui/chats/big?after=100" rel="next"`) {
		t.Fatal("no next link")
	}
	r = h.get("/ui/chats/big?after=200")
	if !strings.Contains(r.body, "turn number 201<") || !strings.Contains(r.body, "turn number 250<") || strings.Contains(r.body, "turn number 200<") {
		t.Fatal("last page")
	}
	if strings.Contains(r.body, `rel="next"`) || !strings.Contains(r.body, `?after=100" rel="prev"`) {
		t.Fatal("last page links")
	}
	if !strings.Contains(r.body, "index pending") || !strings.Contains(r.body, "summary pending") {
		t.Fatal("turn states missing")
	}
	if !strings.Contains(r.body, "no summary yet") || strings.Contains(r.body, "1–0") {
		t.Error("a chat without a summary is said to have one of turns 1–0")
	}
}

func TestTurnStates(t *testing.T) {
	h := newHarness(t)
	h.seed("default", "c", "u", 6, func(i int) string {
		switch i {
		case 3:
			return "/skip-me please"
		}
		return fmt.Sprintf("turn %d body", i)
	})
	ctx := context.Background()
	k := memory.ChatKey{Tenant: "default", ChatID: "c"}
	if gone, err := h.store.Done(ctx, memory.IndexTurns, []memory.Mark{{Chat: k, Seqs: []int64{1, 2}}}); err != nil || len(gone) != 0 {
		t.Fatal(gone, err)
	}
	r := h.get("/ui/chats/c")
	row := func(seq int) string {
		i := strings.Index(r.body, fmt.Sprintf(`id="turn-%d"`, seq))
		j := strings.Index(r.body[i:], "</tr>")
		return r.body[i : i+j]
	}
	if !strings.Contains(row(1), ">indexed<") || !strings.Contains(row(3), "index pending") {
		t.Fatalf("indexed flags: %s / %s", row(1), row(3))
	}
}

func TestEscaping(t *testing.T) {
	h := newHarness(t)
	payloads := []string{`<script>alert(1)</script>`, `<img src=x onerror=alert(1)>`}
	h.seed("default", `<b>chat</b>`, `<i>u</i>`, 2, func(i int) string { return payloads[i-1] })
	h.seed("default", "long", "u", 1, func(int) string { return strings.Repeat("a", 300) + payloads[1] })
	pages := []string{"/ui/", "/ui/chats/" + url.PathEscape(`<b>chat</b>`), "/ui/chats/long",
		"/ui/chats/" + url.PathEscape(`<b>chat</b>`) + "/playground?run=1&query=" + url.QueryEscape(payloads[0])}
	for _, p := range pages {
		r := h.get(p)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", p, r.status, r.body)
		}
		for _, raw := range append(payloads, "<b>chat</b>", "<i>u</i>") {
			if strings.Contains(r.body, raw) {
				t.Errorf("%s shows %q unescaped", p, raw)
			}
		}
	}
	if r := h.get(pages[1]); !strings.Contains(r.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Fatal("payload not shown as text")
	}
}

func TestOddChatIDs(t *testing.T) {
	h := newHarness(t)
	for _, id := range []string{"a/b", "q?x=1", "h#1", "p%41", "sp ace", "ü", "a/%41"} {
		h.seed("default", id, "u", 1, func(int) string { return "content of " + id })
		r := h.get("/ui/chats/" + url.PathEscape(id))
		if r.status != 200 || !strings.Contains(r.body, "content of "+strings.ReplaceAll(id, "#", "#")) {
			t.Errorf("chat %q: %d", id, r.status)
		}
		if list := h.get("/ui/"); !strings.Contains(list.body, `href="/ui/chats/`+url.PathEscape(id)+`"`) {
			t.Errorf("chat %q: list link not escaped", id)
		}
	}
}

func TestNotFound(t *testing.T) {
	h := newHarness(t)
	for _, p := range []string{"/ui/chats/none", "/ui/chats/none/playground", "/ui/chats/none/confirm?action=delete", "/ui/whatever"} {
		if r := h.get(p); r.status != 404 || !strings.Contains(r.body, "Not found") {
			t.Errorf("%s: %d", p, r.status)
		}
	}
}

func TestActionsNeedCSRF(t *testing.T) {
	h := newHarness(t)
	h.seed("default", "c", "u", 8, func(i int) string { return fmt.Sprintf("we decided on plan %d", i) })
	page := h.get("/ui/chats/c/confirm?action=delete")
	tok := csrf(t, page.body)
	wrong := "0" + tok[1:]
	if tok[0] == '0' {
		wrong = "1" + tok[1:]
	}
	for _, form := range []url.Values{{}, {"csrf": {wrong}}, {"csrf": {""}}} {
		if r := h.post("/ui/chats/c/delete", form); r.status != http.StatusForbidden {
			t.Fatalf("delete without a valid token: %d", r.status)
		}
	}
	if _, err := h.store.Chat(context.Background(), memory.ChatKey{Tenant: "default", ChatID: "c"}); err != nil {
		t.Fatal("a rejected delete deleted:", err)
	}
	// The token alone, without its cookie (a cross-site form), fails too.
	bare := &http.Client{}
	res, err := bare.PostForm(h.srv.URL+"/ui/chats/c/delete", url.Values{"csrf": {tok}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("token without cookie: %d", res.StatusCode)
	}

	if r := h.post("/ui/chats/c/summarise", url.Values{"csrf": {tok}}); r.status != http.StatusSeeOther {
		t.Fatalf("summarise: %d %s", r.status, r.body)
	}
	if head, _ := h.store.SummaryHead(context.Background(), memory.ChatKey{Tenant: "default", ChatID: "c"}); head == nil {
		t.Fatal("summarise now wrote no summary")
	}
	if r := h.get("/ui/chats/c"); !strings.Contains(r.body, "Summary records") || strings.Contains(r.body, "No summary yet") {
		t.Fatal("summary not shown")
	}
	if r := h.post("/ui/chats/c/delete", url.Values{"csrf": {tok}}); r.status != http.StatusSeeOther {
		t.Fatalf("delete: %d", r.status)
	}
	if _, err := h.store.Chat(context.Background(), memory.ChatKey{Tenant: "default", ChatID: "c"}); err == nil {
		t.Fatal("chat survived delete")
	}
}

func TestLoginAndTenantIsolation(t *testing.T) {
	h := newHarness(t, memory.APIKey{Key: "key-a", Tenant: "ta"}, memory.APIKey{Key: "key-b", Tenant: "tb"})
	h.seed("ta", "chat-a", "u", 2, func(int) string { return "alpha" })
	h.seed("tb", "chat-b", "u", 2, func(int) string { return "beta" })
	if r := h.get("/ui/"); r.status != http.StatusSeeOther || r.header.Get("Location") != "/ui/login" {
		t.Fatalf("no session: %d", r.status)
	}
	if r := h.login("wrong"); r.status != http.StatusUnauthorized {
		t.Fatalf("bad key: %d", r.status)
	}
	tok := csrf(t, h.get("/ui/login").body)
	if r := h.post("/ui/login", url.Values{"key": {"key-a"}}); r.status != http.StatusForbidden {
		t.Fatalf("login without csrf: %d", r.status)
	}
	r := h.post("/ui/login", url.Values{"csrf": {tok}, "key": {"key-a"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("login: %d %s", r.status, r.body)
	}
	var session *http.Cookie
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == "contextd_ui_session" {
			session = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Secure {
		t.Fatalf("session cookie %+v", session)
	}
	if strings.Contains(session.Value, "key-a") || strings.Contains(r.header.Get("Location"), "key") {
		t.Fatal("the key leaks into a cookie or URL")
	}
	list := h.get("/ui/")
	if !strings.Contains(list.body, "chat-a") || strings.Contains(list.body, "chat-b") {
		t.Fatal("tenant a sees the wrong chats")
	}
	for _, p := range []string{"/ui/chats/chat-b", "/ui/chats/chat-b/playground?run=1&query=beta", "/ui/chats/chat-b/confirm?action=delete"} {
		if r := h.get(p); r.status != 404 {
			t.Fatalf("%s from tenant a: %d", p, r.status)
		}
	}
	ptok := csrf(t, h.get("/ui/chats/chat-a").body)
	if r := h.post("/ui/chats/chat-b/delete", url.Values{"csrf": {ptok}}); r.status != 404 {
		t.Fatalf("cross-tenant delete: %d", r.status)
	}
	if r := h.post("/ui/logout", url.Values{"csrf": {ptok}}); r.status != http.StatusSeeOther {
		t.Fatalf("logout: %d", r.status)
	}
	if r := h.get("/ui/"); r.status != http.StatusSeeOther {
		t.Fatal("session survives logout")
	}
}

func TestCookiesSecureOverTLS(t *testing.T) {
	h := newHarness(t, memory.APIKey{Key: "k", Tenant: "t"})
	h.srv.Close()
	tls := httptest.NewTLSServer(h.srv.Config.Handler)
	defer tls.Close()
	res, err := tls.Client().Get(tls.URL + "/ui/login")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	cs := res.Cookies()
	if len(cs) == 0 {
		t.Fatal("no csrf cookie")
	}
	for _, c := range cs {
		if !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
			t.Fatalf("cookie over TLS: %+v", c)
		}
	}
}

func TestPlaygroundAppendsNothing(t *testing.T) {
	h := newHarness(t)
	h.seed("default", "c", "u", 30, func(i int) string { return fmt.Sprintf("we talked about topic %d", i) })
	r := h.get("/ui/chats/c/playground?run=1&query=topic+7&budget=300&strategy=running_summary")
	if r.status != 200 || !strings.Contains(r.body, `data-k="budget_tokens">300<`) {
		t.Fatalf("playground: %d %s", r.status, r.body)
	}
	chat, _ := h.store.Chat(context.Background(), memory.ChatKey{Tenant: "default", ChatID: "c"})
	if chat.LastSeq != 30 {
		t.Fatalf("playground appended: last_seq %d", chat.LastSeq)
	}
	if !strings.Contains(r.body, "/v1/search hits") || !strings.Contains(r.body, "dropped") {
		t.Fatal("accounting or search missing")
	}
}

func TestStatusPage(t *testing.T) {
	h := newHarness(t)
	h.seed("default", "c", "u", 4, func(int) string { return "x" })
	r := h.get("/ui/status")
	for _, want := range []string{"storage", "not indexed <b>4</b>", "[redacted]", "default", "jobs since start: 9 ok"} {
		if !strings.Contains(r.body, want) {
			t.Errorf("status lacks %q", want)
		}
	}
}

func TestEpisodeSeam(t *testing.T) {
	h := newHarness(t)
	h.seed("default", "c", "u", 6, func(i int) string { return fmt.Sprintf("turn %d", i) })
	// Register a second inspector with an episodes source on its own router.
	eps := []memory.Episode{{ID: "e1", FromSeq: 1, ToSeq: 3, Short: "<b>first</b> stretch", Summary: memory.Summary{Narrative: "long one"}},
		{ID: "e2", FromSeq: 4, ToSeq: 5, Short: "second"}}
	e := echo.New()
	ui.Register(e.Group("/ui"), ui.Deps{Service: h.svc, Lister: h.store,
		Episodes: func(context.Context, memory.ChatKey, int64, int64) ([]memory.Episode, error) { return eps, nil }})
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui/chats/c", nil))
	body := rec.Body.String()
	for _, want := range []string{"turns 1–3", "&lt;b&gt;first&lt;/b&gt; stretch", "Long summary", "episode turns 4–5"} {
		if !strings.Contains(body, want) {
			t.Errorf("chat page lacks %q", want)
		}
	}
	if i := strings.Index(body, `id="turn-6"`); i < 0 || strings.Contains(body[i:i+strings.Index(body[i:], "</tr>")], "episode turns") {
		t.Error("turn 6 belongs to no episode")
	}
}

// A chat of a user shows the user's profile across chats, with sources,
// escaped; another tenant's same user id shows nothing of it.
func TestChatShowsTheUsersProfile(t *testing.T) {
	h := newHarness(t)
	h.seed("default", "c", "alice", 4, func(i int) string { return fmt.Sprintf("turn %d", i) })
	st := memory.MergeChat(memory.ProfileState{}, "alice", "trip", memory.Summary{CoveredToSeq: 7,
		UserPreferences: []string{"<i>vegetarian</i>"}}, time.Unix(1, 0))
	if err := h.store.SaveProfile(context.Background(), "default", "alice", st, 0); err != nil {
		t.Fatal(err)
	}
	body := h.get("/ui/chats/c").body
	for _, want := range []string{"User profile (alice, across chats)", "&lt;i&gt;vegetarian&lt;/i&gt;", "trip 1–7"} {
		if !strings.Contains(body, want) {
			t.Errorf("chat page lacks %q", want)
		}
	}
	h.seed("default", "nouser", "", 2, func(i int) string { return "x" })
	if strings.Contains(h.get("/ui/chats/nouser").body, "User profile") {
		t.Error("a chat without a user shows a profile")
	}
}

// The playground refuses a bad budget with a visible error instead of
// running with the agent's default.
func TestPlaygroundRefusesBadBudgets(t *testing.T) {
	h := newHarness(t)
	h.seed("default", "c", "u", 6, func(i int) string { return fmt.Sprintf("turn %d", i) })
	for _, c := range []struct {
		budget string
		status int
		err    string
	}{
		{"-5", 400, "budget_tokens: must be a positive number of tokens"},
		{"0", 400, "budget_tokens: must be a positive number of tokens"},
		{"lots", 400, `budget: &#34;lots&#34; is not a whole number of tokens`},
		{"2000000", 400, "budget_tokens: must be at most 1000000"},
		{"", 200, ""},
		{"250", 200, ""},
	} {
		r := h.get("/ui/chats/c/playground?run=1&query=turn&budget=" + url.QueryEscape(c.budget))
		if r.status != c.status {
			t.Errorf("budget %q: status %d, want %d", c.budget, r.status, c.status)
		}
		hasErr := strings.Contains(r.body, `class="error"`)
		if hasErr != (c.err != "") || !strings.Contains(r.body, c.err) {
			t.Errorf("budget %q: error shown %v, want %q:\n%s", c.budget, hasErr, c.err, r.body)
		}
		if ran := strings.Contains(r.body, `id="usage"`); ran != (c.status == 200) {
			t.Errorf("budget %q: a context was assembled = %v", c.budget, ran)
		}
	}
	if r := h.get("/ui/chats/c/playground?run=1&budget=250"); !strings.Contains(r.body, `data-k="budget_tokens">250<`) || !strings.Contains(r.body, `value="250"`) {
		t.Errorf("a good budget is used and kept in the form:\n%s", r.body)
	}
}

// TestChatShowsFacts: the chat page lists the chat's facts, the updated
// ones marked, each linking to the page and row of its turns; text escaped.
func TestChatShowsFacts(t *testing.T) {
	h := newHarness(t)
	h.seed("default", "f", "alice", 4, func(i int) string { return fmt.Sprintf("turn %d", i) })
	key := memory.ChatKey{Tenant: "default", ChatID: "f"}
	fs, err := h.store.AddFacts(context.Background(), key, []memory.Fact{
		{Text: "Alice lives in <b>Boston</b>", Seqs: []int64{1}, Kind: memory.FactAttribute, Source: memory.FactSourceExtractive},
		{Text: "Alice moved to Denver", Seqs: []int64{3, 4}, Kind: memory.FactAttribute, Source: memory.FactSourceExtractive},
	})
	if err != nil || len(fs) != 2 {
		t.Fatal(fs, err)
	}
	if err := h.store.SupersedeFacts(context.Background(), key, map[string]string{fs[0].ID: fs[1].ID}); err != nil {
		t.Fatal(err)
	}
	body := h.get("/ui/chats/f").body
	for _, want := range []string{"<h3>Facts from these turns</h3>", "Alice lives in &lt;b&gt;Boston&lt;/b&gt;", "updated since", "Alice moved to Denver",
		`href="/ui/chats/f?after=2#turn-3"`, `href="/ui/chats/f?after=0#turn-1"`} {
		if !strings.Contains(body, want) {
			t.Errorf("chat page lacks %q", want)
		}
	}

}

// A page of a long chat shows the episodes and facts of its own turns,
// not the whole chat's (thousands, megabytes a page), and none is cut off.
func TestChatPageShowsItsOwnTurnsMemory(t *testing.T) {
	h := newHarness(t)
	h.seed("default", "long", "alice", 1500, func(i int) string { return fmt.Sprintf("turn %d", i) })
	key := memory.ChatKey{Tenant: "default", ChatID: "long"}
	var fs []memory.Fact
	for seq := int64(1); seq <= 1500; seq++ {
		fs = append(fs, memory.Fact{Text: fmt.Sprintf("fact of turn %d.", seq), Seqs: []int64{seq}, Kind: memory.FactEvent, Source: memory.FactSourceExtractive})
	}
	if _, err := h.store.AddFacts(context.Background(), key, fs); err != nil {
		t.Fatal(err)
	}
	var asked [][2]int64
	e := echo.New()
	ui.Register(e.Group("/ui"), ui.Deps{Service: h.svc, Lister: h.store,
		Episodes: func(_ context.Context, _ memory.ChatKey, from, to int64) ([]memory.Episode, error) {
			asked = append(asked, [2]int64{from, to})
			return []memory.Episode{{ID: "e", FromSeq: from - 3, ToSeq: from + 5, Short: "the episode of this page"}}, nil
		}})
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui/chats/long?after=1300", nil))
	body := rec.Body.String()
	if len(asked) != 1 || asked[0] != [2]int64{1301, 1400} {
		t.Errorf("episodes asked for %v, want the page's turns 1301..1400", asked)
	}
	for _, want := range []string{"fact of turn 1301.", "fact of turn 1400.", "the episode of this page"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, not := range []string{"fact of turn 1300.", "fact of turn 1401.", "fact of turn 1."} {
		if strings.Contains(body, not) {
			t.Errorf("page shows %q, of another page's turns", not)
		}
	}
}

// A message deleted on its own is a tombstone: the chat page shows it as
// deleted, not as a turn whose empty content the filters removed, and
// claims no summary or index state for it (its vectors are gone and the
// summariser skips it).
func TestDeletedTurn(t *testing.T) {
	h := newHarness(t)
	h.api(http.MethodPost, "/v1/chats/del1/messages", `{"messages":[{"id":"a","role":"user","content":"first"},
		{"id":"b","role":"assistant","content":"second"},{"id":"c","role":"user","content":"third"}]}`)
	h.api(http.MethodDelete, "/v1/chats/del1/messages/c", "")
	r := h.get("/ui/chats/del1")
	if r.status != 200 {
		t.Fatalf("chat page: %d %s", r.status, r.body)
	}
	for _, tc := range []struct {
		seq          int
		want, refuse []string
	}{
		{1, []string{"first", "summary pending", "index pending"}, []string{"deleted"}},
		{3, []string{`class="tag deleted">deleted<`}, []string{"filtered", "summar", "index", "third"}},
	} {
		row := turnRowHTML(t, r.body, tc.seq)
		for _, w := range tc.want {
			if !strings.Contains(row, w) {
				t.Errorf("turn %d lacks %q: %s", tc.seq, w, row)
			}
		}
		for _, w := range tc.refuse {
			if strings.Contains(row, w) {
				t.Errorf("turn %d shows %q: %s", tc.seq, w, row)
			}
		}
	}
}

// turnRowHTML is the timeline row of one seq.
func turnRowHTML(t *testing.T, body string, seq int) string {
	t.Helper()
	i := strings.Index(body, fmt.Sprintf(`id="turn-%d"`, seq))
	if i < 0 {
		t.Fatalf("no row for turn %d", seq)
	}
	return body[i : i+strings.Index(body[i:], "</tr>")]
}

// With auth on, a tenant's status page counts its own backlog only, names
// no other tenant and leaves out the workers' process-wide activity.
func TestStatusPageShowsOneTenant(t *testing.T) {
	h := newHarness(t, memory.APIKey{Key: "key-alpha-0123456789", Tenant: "tenant-alpha"},
		memory.APIKey{Key: "key-bravo-0123456789", Tenant: "tenant-bravo"})
	h.seed("tenant-alpha", "a1", "u", 4, func(int) string { return "x" })
	h.seed("tenant-alpha", "a2", "u", 2, func(int) string { return "x" })
	h.seed("tenant-bravo", "b1", "u", 1, func(int) string { return "x" })
	h.login("key-bravo-0123456789")
	r := h.get("/ui/status")
	for _, want := range []string{"Backlogs (tenant tenant-bravo)", "not indexed <b>1</b>", "not summarised <b>1</b>", "not shown while API keys are on"} {
		if !strings.Contains(r.body, want) {
			t.Errorf("status lacks %q", want)
		}
	}
	for _, leak := range []string{"tenant-alpha", "<b>7</b>", "<b>6</b>", "jobs since start"} {
		if strings.Contains(r.body, leak) {
			t.Errorf("tenant-bravo's status shows %q", leak)
		}
	}
}
