package main

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"gopkg.in/yaml.v3"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/jobs/worker"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/transport/ui"
)

// inspector builds the /ui registration, or nil when server.ui is off.
func (a *App) inspector(cfg *config.Config) func(g *echo.Group) {
	if !cfg.Server.UI.Enabled {
		return nil
	}
	act := &activity{counts: map[string]int{}}
	if a.Worker != nil {
		next := a.Worker.OnJob
		a.Worker.OnJob = func(ev worker.JobEvent) {
			if ev.Outcome != "" {
				act.record(ev.Outcome)
			}
			if next != nil {
				next(ev)
			}
		}
	}
	d := ui.Deps{Service: a.Service, Lister: a.Store, Ready: a.ready, Config: redactedConfig(cfg),
		Agents: agentSettings(cfg), Activity: func() map[string]string { return a.activity(act) },
		Backlog: func(ctx context.Context) (memory.Backlog, error) { return a.Store.BacklogSizes(ctx) },
		Keys:    cfg.Server.Auth.APIKeys, SessionsPerTenant: cfg.Server.UI.SessionsPerTenant,
		Episodes: func(ctx context.Context, key memory.ChatKey, from, to int64) ([]memory.Episode, error) {
			return episodesIn(ctx, a.Store, key, from, to)
		}}
	return func(g *echo.Group) { ui.Register(g, d) }
}

// episodesIn pages through the chat's closed episodes that hold turns
// from..to, in seq order.
func episodesIn(ctx context.Context, es memory.EpisodeReader, key memory.ChatKey, from, to int64) ([]memory.Episode, error) {
	var out []memory.Episode
	// Episodes pages by from_seq; the one holding from starts at most
	// episode_max_turns (under 1,000) before it.
	after := max(from-1000, 0)
	for {
		page, err := es.Episodes(ctx, key, memory.EpisodeQuery{AfterSeq: after, Limit: 200})
		if err != nil {
			return nil, err
		}
		for _, e := range page {
			if e.FromSeq > to {
				return out, nil
			}
			if e.ToSeq >= from {
				out = append(out, e)
			}
		}
		if len(page) < 200 {
			return out, nil
		}
		after = page[len(page)-1].ToSeq
	}
}

// activity remembers the summariser's recent jobs for the status page.
type activity struct {
	mu      sync.Mutex
	counts  map[string]int
	last    time.Time
	outcome string
}

func (a *activity) record(outcome string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.counts[outcome]++
	a.last, a.outcome = time.Now().UTC(), outcome
}

func (a *App) activity(act *activity) map[string]string {
	act.mu.Lock()
	defer act.mu.Unlock()
	out := map[string]string{"summariser": "no job since start"}
	if !act.last.IsZero() {
		out["summariser"] = fmt.Sprintf("last job %s (%s); jobs since start: %s", act.last.Format(time.RFC3339), act.outcome, jobCounts(act.counts))
	}
	if a.Indexer == nil {
		out["indexer"] = "not running (no vector store)"
	} else if err := a.Indexer.LastError(); err != nil {
		out["indexer"] = "last run failed: " + err.Error()
	} else {
		out["indexer"] = "last run ok"
	}
	return out
}

// jobCounts reads as "2 failed, 1 ok": outcomes in a fixed (sorted)
// order, so the line does not reshuffle between reloads as a map would.
func jobCounts(counts map[string]int) string {
	outcomes := slices.Sorted(maps.Keys(counts))
	parts := make([]string, len(outcomes))
	for i, o := range outcomes {
		parts[i] = fmt.Sprintf("%d %s", counts[o], o)
	}
	return strings.Join(parts, ", ")
}

// agentSettings renders each agent's effective settings (the supervisor's
// as "default", overrides merged) in agents.yaml's keys and units.
func agentSettings(cfg *config.Config) map[string]string {
	names := []string{memory.DefaultAgent}
	for _, ag := range cfg.Agents {
		names = append(names, ag.Name)
	}
	out := make(map[string]string, len(names))
	for _, n := range names {
		settings := cfg.Agent(n).Settings()
		delete(settings, "name")
		out[n] = toYAML(settings)
	}
	return out
}

func toYAML(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return "unavailable: " + err.Error()
	}
	return string(b)
}

// secretKey names fields whose string values are never shown.
var secretKey = regexp.MustCompile(`(?i)(key|password|secret|token$|credential)`)

// kvPassword is a keyword/value DSN's password.
var kvPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('[^']*'|\S+)`)

// redactedConfig is the effective config in agents.yaml's keys and units
// with every secret replaced: API keys, DSN passwords, LLM/embedder/Qdrant
// keys. Every tenant sees this page, so server.auth.api_keys is only their
// count: its entries name the tenants.
func redactedConfig(cfg *config.Config) string {
	s := redact("", cfg.Settings()).(map[string]any)
	if n := len(cfg.Server.Auth.APIKeys); n > 0 { // none stays [], auth off
		auth := s["server"].(map[string]any)["auth"].(map[string]any)
		auth["api_keys"] = keyCount(n) // after redact, which would blank it
	}
	return toYAML(s)
}

// keyCount stands in for the api_keys list: "[2 keys, redacted]".
func keyCount(n int) string {
	if n == 1 {
		return "[1 key, redacted]"
	}
	return fmt.Sprintf("[%d keys, redacted]", n)
}

func redact(key string, v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = redact(k, x)
		}
	case []any:
		for i, x := range t {
			t[i] = redact(key, x)
		}
	case string:
		if t != "" && secretKey.MatchString(key) {
			return "[redacted]"
		}
		return redactDSN(t)
	}
	return v
}

// redactDSN hides the password of a URL or keyword/value connection string,
// and a URL's query parameters that hold a secret (?key=, ?token=, ...).
func redactDSN(s string) string {
	if u, err := url.Parse(s); err == nil && (u.User != nil || u.RawQuery != "") {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "redacted")
		}
		if q := u.Query(); len(q) > 0 {
			for k := range q {
				if secretKey.MatchString(k) || strings.EqualFold(k, "sig") || strings.EqualFold(k, "signature") {
					q.Set(k, "redacted")
				}
			}
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	if strings.Contains(strings.ToLower(s), "password") {
		return kvPassword.ReplaceAllString(s, "${1}[redacted]")
	}
	return s
}
