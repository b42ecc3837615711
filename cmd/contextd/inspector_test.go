package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/memory"
)

func TestRedactedConfig(t *testing.T) {
	cfg := config.Default()
	secrets := []string{"sk-api-key-1", "pg-secret-pw", "llm-key-2", "emb-key-3", "qdrant-key-4", "kv-pw-5"}
	cfg.Server.Auth.APIKeys = []config.APIKey{{Key: secrets[0], Tenant: "acme"}}
	cfg.Storage.PostgresDSN = "postgres://app:" + secrets[1] + "@db:5432/contextd?sslmode=disable"
	cfg.LLM.APIKey, cfg.Embedder.APIKey, cfg.Vector.Qdrant.APIKey = secrets[2], secrets[3], secrets[4]
	out := redactedConfig(cfg)
	for _, s := range secrets[:5] {
		if strings.Contains(out, s) {
			t.Errorf("config shows secret %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "acme") {
		t.Errorf("config names a tenant:\n%s", out)
	}
	for _, want := range []string{"api_keys: '[1 key, redacted]'", "postgres://app:redacted@db:5432", "[redacted]"} {
		if !strings.Contains(out, want) {
			t.Errorf("config lacks %q", want)
		}
	}
	cfg.Storage.PostgresDSN = "host=db user=app password=" + secrets[5] + " dbname=x"
	if out := redactedConfig(cfg); strings.Contains(out, secrets[5]) || !strings.Contains(out, "user=app") {
		t.Errorf("keyword DSN: %s", out)
	}
	// A key in a URL's query (some providers take it so) is a secret too.
	cfg.LLM.BaseURL = "https://generativelanguage.example.com/v1beta?key=AIzaSECRET&alt=json"
	cfg.Telemetry.OTLPEndpoint = "https://otel.example.com:4318?token=tok-SECRET"
	if out := redactedConfig(cfg); strings.Contains(out, "SECRET") || !strings.Contains(out, "alt=json") || !strings.Contains(out, "otel.example.com") {
		t.Errorf("URL query secrets:\n%s", out)
	}
}

func TestInspectorMounted(t *testing.T) {
	_, srv := newApp(t, func(c *config.Config) {
		c.Server.Auth.APIKeys = []config.APIKey{{Key: "secret-key-xyz", Tenant: "acme"}}
	})
	res, err := http.Get(srv.URL + "/ui/login")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), `name="key"`) || res.Header.Get("Content-Security-Policy") == "" {
		t.Fatalf("/ui/login: %d", res.StatusCode)
	}

	_, off := newApp(t, func(c *config.Config) { c.Server.UI.Enabled = false })
	res, err = http.Get(off.URL + "/ui/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("ui disabled: /ui/ is %d", res.StatusCode)
	}
}

// The status page speaks agents.yaml: its keys, with units.
func TestAgentSettings(t *testing.T) {
	cfg, err := config.Parse([]byte("agents:\n  - name: research\n    memory: {episode_gap: 30m}\n"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	all := agentSettings(cfg)
	for agent, want := range map[string][]string{
		"default":  {"budget_tokens: 4000", "episode_gap: 2h\n", "summary_cooldown: 30s", "rag_similarity_threshold: 0.5"},
		"research": {"episode_gap: 30m\n", "budget_tokens: 4000"},
	} {
		got := all[agent]
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s settings lack %q:\n%s", agent, w, got)
			}
		}
		for _, goism := range []string{"BudgetTokens", "EpisodeGap", "7200000000000"} {
			if strings.Contains(got, goism) {
				t.Errorf("%s settings show Go's %q:\n%s", agent, goism, got)
			}
		}
	}
	conf := redactedConfig(cfg)
	for _, w := range []string{"api_keys: []\n", "episode_gap: 2h\n", "body_limit: 4MB", "request_timeout: 30s", "tenant_labels: false"} {
		if !strings.Contains(conf, w) {
			t.Errorf("config lacks %q:\n%s", w, conf)
		}
	}
	if strings.Contains(conf, "EpisodeGap") || strings.Contains(conf, "7200000000000") {
		t.Errorf("config shows Go names or nanoseconds:\n%s", conf)
	}
}

// The status page's job counts read as words, sorted by outcome, never as
// Go's map[ok:1].
func TestJobCounts(t *testing.T) {
	for _, tc := range []struct {
		counts map[string]int
		want   string
	}{
		{map[string]int{"ok": 1}, "1 ok"},
		{map[string]int{"ok": 3, "failed": 2, "empty": 1}, "1 empty, 2 failed, 3 ok"},
		{map[string]int{}, ""},
	} {
		if got := jobCounts(tc.counts); got != tc.want {
			t.Errorf("jobCounts(%v) = %q, want %q", tc.counts, got, tc.want)
		}
	}
}

func TestActivityLine(t *testing.T) {
	act := &activity{counts: map[string]int{}}
	act.record("ok")
	got := (&App{}).activity(act)["summariser"]
	if !strings.HasSuffix(got, "(ok); jobs since start: 1 ok") || strings.Contains(got, "map[") {
		t.Fatalf("summariser line: %q", got)
	}
}

// With API keys on, a tenant's status page names no other tenant and
// shows no other tenant's backlog (the binary's wiring, real config).
func TestInspectorStatusOneTenant(t *testing.T) {
	keyA, keyB := "key-alpha-0123456789", "key-bravo-0123456789"
	_, srv := newApp(t, func(c *config.Config) {
		c.Server.Auth.APIKeys = []config.APIKey{{Key: keyA, Tenant: "tenant-alpha"}, {Key: keyB, Tenant: "tenant-bravo"}}
	})
	turns := `{"messages":[{"id":"1","role":"user","content":"one"},{"id":"2","role":"assistant","content":"two"},{"id":"3","role":"user","content":"three"}]}`
	if code, body := call(t, "POST", srv.URL+"/v1/chats/a1/messages", keyA, turns); code != http.StatusCreated {
		t.Fatalf("append: %d %s", code, body)
	}
	page := uiGet(t, uiLogin(t, srv.URL, keyB), srv.URL+"/ui/status")
	for _, leak := range []string{"tenant-alpha", keyA, keyB} {
		if strings.Contains(page, leak) {
			t.Errorf("tenant-bravo's status page shows %q", leak)
		}
	}
	for _, want := range []string{"tenant-bravo", "api_keys: &#39;[2 keys, redacted]&#39;", "not indexed <b>0</b>", "not summarised <b>0</b>"} {
		if !strings.Contains(page, want) {
			t.Errorf("status page lacks %q", want)
		}
	}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`)

// uiLogin logs a cookie-jar client in to the inspector with key.
func uiLogin(t *testing.T, base, key string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	m := csrfField.FindStringSubmatch(uiGet(t, c, base+"/ui/login"))
	if m == nil {
		t.Fatal("login form has no csrf field")
	}
	res, err := c.PostForm(base+"/ui/login", url.Values{"csrf": {m[1]}, "key": {key}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return c
}

func uiGet(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", u, res.StatusCode, b)
	}
	return string(b)
}

// fakeEpisodes answers Episodes as the stores do: from_seq > after, in
// order, up to limit.
type fakeEpisodes []memory.Episode

func (f fakeEpisodes) Episodes(_ context.Context, _ memory.ChatKey, q memory.EpisodeQuery) ([]memory.Episode, error) {
	if q.Latest {
		return nil, nil
	}
	var out []memory.Episode
	for _, e := range f {
		if e.FromSeq > q.AfterSeq && len(out) < q.Limit {
			out = append(out, e)
		}
	}
	return out, nil
}

// A page's episodes are those holding its turns: the one its first turn is
// in (which starts before the page) through the one its last turn is in.
func TestEpisodesIn(t *testing.T) {
	var eps fakeEpisodes
	for from := int64(1); from <= 5000; from += 7 {
		eps = append(eps, memory.Episode{FromSeq: from, ToSeq: from + 6})
	}
	got, err := episodesIn(context.Background(), eps, memory.ChatKey{}, 1301, 1400)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || got[0].FromSeq > 1301 || got[0].ToSeq < 1301 || got[len(got)-1].FromSeq > 1400 || got[len(got)-1].ToSeq < 1400 {
		t.Fatalf("episodes %d..%d, want those holding 1301..1400", got[0].FromSeq, got[len(got)-1].ToSeq)
	}
	if len(got) != 15 {
		t.Errorf("%d episodes, want 15", len(got))
	}
}
