package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/contextd/contextd/memory"
)

const chromiumPath = "/usr/bin/chromium"

// browser starts headless Chromium for a test; it skips when Chromium is
// missing, except under CI (CI=true) where that is a failure.
func browser(t *testing.T) (context.Context, *consoleErrors) {
	t.Helper()
	if _, err := exec.LookPath(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium not installed at %s (CI must install it: make chromium)", chromiumPath)
		}
		t.Skipf("chromium not installed at %s: skipping browser tests (install: apt-get install -y chromium, or make chromium)", chromiumPath)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1000, 760),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelC := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelC(); cancelB(); cancelA() })
	ce := &consoleErrors{}
	// Listen starts the browser; chromedp enables the runtime and log domains.
	if err := chromedp.Listen(ctx, ce.listen); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx, ce
}

// consoleErrors collects console errors, uncaught exceptions, error log
// entries (CSP violations, failed loads) and dialogs.
type consoleErrors struct {
	mu   sync.Mutex
	errs []string
}

func (c *consoleErrors) listen(ev any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			c.errs = append(c.errs, "console."+string(ev.Type))
		}
	case *runtime.EventExceptionThrown:
		c.errs = append(c.errs, "exception: "+ev.ExceptionDetails.Text)
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError {
			c.errs = append(c.errs, "log: "+ev.Entry.Text+" "+ev.Entry.URL)
		}
	case *page.EventJavascriptDialogOpening:
		c.errs = append(c.errs, "dialog: "+ev.Message)
	}
}

func (c *consoleErrors) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.errs
	c.errs = nil
	return e
}

func artefactDir(t *testing.T) string {
	dir := os.Getenv("CONTEXTD_ARTEFACTS")
	if dir == "" {
		dir = filepath.Join("..", "..", "test-artefacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBrowser(t *testing.T) {
	ctx, ce := browser(t)
	h := newHarness(t)
	for i := 0; i < 30; i++ {
		h.seed("default", fmt.Sprintf("support-%02d", i), fmt.Sprintf("user-%d", i%4), 5+i, func(n int) string {
			return fmt.Sprintf("turn %d: the customer asks about invoice %d and the refund policy", n, n*7)
		})
	}
	xss := []string{`<script>window.__xss=1;alert(1)</script>`, `<img src=x onerror="window.__xss=1;alert(1)">`}
	h.seed("default", "support-00", "user-0", 2, func(n int) string { return xss[n-1] })
	h.seed("default", "support-00", "user-0", 1, func(int) string { return strings.Repeat("a long turn ", 60) })
	h.index()
	h.seed("default", "support-01", "user-1", 2, func(n int) string { return fmt.Sprintf("late turn %d, not indexed yet", n) })
	tok := csrf(t, h.get("/ui/chats/support-01/confirm?action=summarise").body)
	if r := h.post("/ui/chats/support-01/summarise", map[string][]string{"csrf": {tok}}); r.status != http.StatusSeeOther {
		t.Fatalf("summarise: %d", r.status)
	}
	dir := artefactDir(t)
	pages := []struct{ name, path, want string }{
		{"chats", "/ui/", "support-29"},
		{"chat", "/ui/chats/support-01", "Summary records"},
		{"xss", "/ui/chats/support-00", "<script>window.__xss=1;alert(1)</script>"},
		{"status", "/ui/status", "Effective configuration"},
		{"confirm", "/ui/chats/support-01/confirm?action=delete", "Yes, delete"},
		{"playground", "/ui/chats/support-01/playground?run=1&query=refund+policy+invoice+21&budget=300", "invoice 21"},
	}
	for _, p := range pages {
		if err := chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+p.path), chromedp.WaitReady(chromedp.CSS("main"))); err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		body := run(t, ctx, chromedp.Text(chromedp.CSS("main")))
		xssFlag := run(t, ctx, chromedp.Evaluate[bool](`window.__xss === 1`))
		png := run(t, ctx, chromedp.CaptureScreenshot())
		if !strings.Contains(body, p.want) {
			t.Errorf("%s: visible text lacks %q", p.name, p.want)
		}
		if xssFlag {
			t.Errorf("%s: the XSS payload ran", p.name)
		}
		if err := os.WriteFile(filepath.Join(dir, "ui-"+p.name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
		if errs := ce.take(); len(errs) > 0 {
			t.Errorf("%s: browser errors %v", p.name, errs)
		}
	}
	checkPlayground(t, ctx, ce, h)
	checkExpandAll(t, ctx, h)
}

// checkPlayground compares the page's numbers with POST /v1/context.
func checkPlayground(t *testing.T, ctx context.Context, ce *consoleErrors, h *harness) {
	keys := []string{"budget_tokens", "total_tokens", "summarised_turns", "dropped_turns", "filtered_turns"}
	got := map[string]string{}
	err := chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+"/ui/chats/support-01/playground"),
		chromedp.SetValue(chromedp.CSS(`input[name=query]`), "refund policy invoice"),
		chromedp.SetValue(chromedp.CSS(`input[name=budget]`), "600"),
		chromedp.Click(chromedp.CSS(`form.play button`)),
		chromedp.WaitVisible(chromedp.CSS(`#usage`)))
	if err != nil {
		t.Fatal(err)
	}
	nums := run(t, ctx, chromedp.Evaluate[[]string](`[`+quoteAll(keys)+`].map(k => document.querySelector('[data-k="'+k+'"]').textContent)`))
	if errs := ce.take(); len(errs) > 0 {
		t.Errorf("playground form: browser errors %v", errs)
	}
	for i, k := range keys {
		got[k] = nums[i]
	}
	res, err := http.Post(h.srv.URL+"/v1/context", "application/json",
		strings.NewReader(`{"chat_id":"support-01","query":"refund policy invoice","budget_tokens":600}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var ans struct{ Usage map[string]any }
	if err := json.NewDecoder(res.Body).Decode(&ans); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		want := strconv.FormatFloat(ans.Usage[k].(float64), 'f', -1, 64)
		if got[k] != want {
			t.Errorf("playground %s = %s, /v1/context says %s", k, got[k], want)
		}
	}
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ",")
}

// checkExpandAll drives the one script: "Expand all" opens long turns.
func checkExpandAll(t *testing.T, ctx context.Context, h *harness) {
	err := chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+"/ui/chats/support-00"),
		chromedp.WaitVisible(chromedp.CSS(`section.timeline > button`)),
		chromedp.Click(chromedp.CSS(`section.timeline > button`)))
	if err != nil {
		t.Fatal(err)
	}
	open := run(t, ctx, chromedp.Evaluate[bool](`document.querySelector('table.turns details').open`))
	if !open {
		t.Fatal("expand all did not open the long turn")
	}
}

func run[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestBrowserLogin logs in through the form and sees that tenant's chats.
func TestBrowserLogin(t *testing.T) {
	ctx, ce := browser(t)
	h := newHarness(t, memory.APIKey{Key: "browser-key-a", Tenant: "ta"}, memory.APIKey{Key: "browser-key-b", Tenant: "tb"})
	h.seed("ta", "mine", "u", 2, func(int) string { return "a" })
	h.seed("tb", "theirs", "u", 2, func(int) string { return "b" })
	err := chromedp.Do(ctx, chromedp.Navigate(h.srv.URL+"/ui/"), chromedp.WaitVisible(chromedp.CSS(`input[name=key]`)))
	if err != nil {
		t.Fatal(err)
	}
	png := run(t, ctx, chromedp.CaptureScreenshot())
	if err := os.WriteFile(filepath.Join(artefactDir(t), "ui-login.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`input[name=key]`), "browser-key-a"),
		chromedp.Click(chromedp.CSS(`form.card button`)), chromedp.WaitVisible(chromedp.CSS(`table.list`)))
	if err != nil {
		t.Fatal(err)
	}
	body := run(t, ctx, chromedp.Text(chromedp.CSS("main")))
	if !strings.Contains(body, "mine") || strings.Contains(body, "theirs") {
		t.Fatalf("after login: %q", body)
	}
	if cookies := run(t, ctx, chromedp.Evaluate[string](`document.cookie`)); cookies != "" {
		t.Fatalf("script can read cookies: %q", cookies)
	}
	if errs := ce.take(); len(errs) > 0 {
		t.Errorf("browser errors %v", errs)
	}
}
