package ui_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/contextd/contextd/derive/extractive"
	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/engine/enginetest"
	"github.com/contextd/contextd/index/embedded"
	"github.com/contextd/contextd/jobs/index"
	"github.com/contextd/contextd/jobs/worker"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
	"github.com/contextd/contextd/store/sqlite"
	"github.com/contextd/contextd/transport/api"
	"github.com/contextd/contextd/transport/ui"
)

// harness is a contextd handler (API and inspector) over a fresh SQLite
// store, with the extractive summariser behind "summarise now".
type harness struct {
	t     testing.TB
	srv   *httptest.Server
	store *sqlite.Store
	// indexer indexes pending turns when a test calls DrainOnce.
	indexer *index.Indexer
	svc     *engine.Service
	client  *http.Client
}

func newHarness(t testing.TB, keys ...memory.APIKey) *harness {
	t.Helper()
	st, err := sqlite.Open(context.Background(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	w := &worker.Worker{Env: &worker.Env{Summarizer: extractive.New(), Settings: func(string) worker.Settings {
		return worker.Settings{RecentTurns: 2, TriggerTurns: 1, MaxTokens: 800, Persist: true, Enabled: true}
	}}, Store: st, Summary: &worker.Extender{Store: st}}
	ix, err := embedded.Open(context.Background(), filepath.Join(t.TempDir(), "index"), 64)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	emb, sparse := rag.NewHashingEmbedder(64), rag.NewSparseEncoder()
	indexer := &index.Indexer{Store: st, Embedder: emb, Sparse: sparse, Index: ix, Owner: "test"}
	deps := enginetest.Deps(st)
	deps.SummaryJobs, deps.Index, deps.Indexer = w, ix, indexer
	deps.Retriever = &rag.Retriever{Embedder: emb, Sparse: sparse, Index: ix, Store: st}
	svc := engine.New(deps)
	d := ui.Deps{Service: svc, Lister: st, Keys: keys, Config: `{"storage": {"postgres_dsn": "[redacted]"}}`,
		Ready: func(context.Context) map[string]string {
			return map[string]string{"storage": "ok", "vector": "disabled"}
		},
		Backlog: st.BacklogSizes, Agents: map[string]string{"default": "{}"},
		Activity: func() map[string]string { return map[string]string{"summariser": "jobs since start: 9 ok"} }}
	h := api.NewHandler(api.Deps{Service: svc, Options: api.Options{APIKeys: keys}, UI: func(g *echo.Group) { ui.Register(g, d) }})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &harness{t: t, srv: srv, store: st, svc: svc, client: c, indexer: indexer}
}

// seed appends n turns to a chat of the tenant.
func (h *harness) seed(tenant, chat, user string, n int, content func(i int) string) {
	h.t.Helper()
	for from := 0; from < n; from += 1000 {
		var msgs []memory.Message
		for i := from; i < min(n, from+1000); i++ {
			role := memory.RoleUser
			if i%2 == 1 {
				role = memory.RoleAssistant
			}
			msgs = append(msgs, memory.Message{ID: fmt.Sprintf("m%d-%d", time.Now().UnixNano(), i+1), Role: role, Content: content(i + 1)})
		}
		_, err := h.store.Append(context.Background(), memory.AppendRequest{Chat: memory.ChatKey{Tenant: tenant, ChatID: chat}, UserID: user, Messages: msgs})
		if err != nil {
			h.t.Fatal(err)
		}
	}
}

type resp struct {
	status int
	header http.Header
	body   string
}

func (h *harness) get(path string) resp {
	h.t.Helper()
	return h.do(http.MethodGet, path, nil)
}

func (h *harness) post(path string, form url.Values) resp {
	h.t.Helper()
	return h.do(http.MethodPost, path, form)
}

func (h *harness) do(method, path string, form url.Values) resp {
	h.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, h.srv.URL+path, body)
	if err != nil {
		h.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := h.client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: string(b)}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]{64})"`)

// csrf reads the hidden CSRF token of a page's form.
func csrf(t testing.TB, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no csrf field in page:\n%s", page)
	}
	return m[1]
}

func (h *harness) login(key string) resp {
	h.t.Helper()
	tok := csrf(h.t, h.get("/ui/login").body)
	return h.post("/ui/login", url.Values{"csrf": {tok}, "key": {key}})
}

// index drains the indexer so that every stored turn is searchable.
func (h *harness) index() {
	h.t.Helper()
	for {
		n, err := h.indexer.DrainOnce(context.Background())
		if err != nil {
			h.t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

// api sends a JSON request to the API (auth off) and fails on an error
// status.
func (h *harness) api(method, path, body string) {
	h.t.Helper()
	req, err := http.NewRequest(method, h.srv.URL+path, strings.NewReader(body))
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := h.client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 {
		b, _ := io.ReadAll(res.Body)
		h.t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
}
