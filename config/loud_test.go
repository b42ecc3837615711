package config

import (
	"errors"
	"strings"
	"testing"
)

// check-config refuses a minimum above its maximum and reports YAML syntax
// errors on the line of the problem, not the line its block opens on.
func TestCheckConfigProblems(t *testing.T) {
	tests := []struct {
		name, src string
		line      int
		path, msg string
	}{
		{"episode min > max", "supervisor:\n  memory:\n    episode_min_turns: 50\n    episode_max_turns: 10\n",
			3, "supervisor.memory.episode_min_turns", "episode_min_turns (50) is greater than episode_max_turns (10)"},
		{"only max set, below the default min", "supervisor:\n  memory:\n    episode_max_turns: 3\n",
			3, "supervisor.memory.episode_max_turns", "episode_min_turns (6) is greater than episode_max_turns (3)"},
		{"agent max below the supervisor's min", "supervisor:\n  memory:\n    episode_min_turns: 8\nagents:\n  - name: a\n    memory:\n      episode_max_turns: 4\n",
			7, "agents[0].memory.episode_max_turns", "(8) is greater than episode_max_turns (4)"},
		{"mis-indented key", "server:\n  addr: \":8080\"\n   body_limit: 4MB\n", 3, "", "invalid YAML"},
		{"key left of its block", "server:\n  addr: \":8080\"\n body_limit: 4MB\n", 3, "", "invalid YAML"},
		{"list item in a mapping", "supervisor:\n  memory:\n    rag_k: 5\n    - 6\n", 4, "", "invalid YAML"},
		{"tab indentation", "server:\n  addr: \":8080\"\n\tbody_limit: 4MB\n", 3, "", "invalid YAML"},
		{"unclosed quote", "llm:\n  model: \"gpt\n", 2, "", "invalid YAML"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), env())
			var errs *Errors
			if !errors.As(err, &errs) || len(errs.Problems) != 1 {
				t.Fatalf("want one problem, got %v", err)
			}
			p := errs.Problems[0]
			if p.Line != tc.line || p.Path != tc.path || !strings.Contains(p.Message, tc.msg) {
				t.Errorf("got line %d %s: %s; want line %d %s: …%s…", p.Line, p.Path, p.Message, tc.line, tc.path, tc.msg)
			}
		})
	}
	// An agent that sets neither side inherits the supervisor's, reported once.
	_, err := Parse([]byte("supervisor:\n  memory:\n    episode_min_turns: 50\n    episode_max_turns: 10\nagents:\n  - name: a\n"), env())
	var errs *Errors
	if !errors.As(err, &errs) || len(errs.Problems) != 1 {
		t.Errorf("want the supervisor's problem once, got %v", err)
	}
	// Equal bounds are fine.
	mustParse(t, "supervisor:\n  memory:\n    episode_min_turns: 10\n    episode_max_turns: 10\n", env())
}

func TestMetricsTenantLabels(t *testing.T) {
	if c := mustParse(t, "", env()); c.Server.Metrics.TenantLabels {
		t.Error("tenant labels must be off by default")
	}
	if c := mustParse(t, "server:\n  metrics:\n    tenant_labels: true\n", env()); !c.Server.Metrics.TenantLabels {
		t.Error("server.metrics.tenant_labels: true not applied")
	}
	if _, err := Parse([]byte("server:\n  metrics:\n    tenant_label: true\n"), env()); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("a misspelt key is a config error with its line: %v", err)
	}
}

func TestDefines(t *testing.T) {
	c := mustParse(t, "agents:\n  - name: research\n", env())
	for name, want := range map[string]bool{"research": true, "reserch": false, "default": false, "": false} {
		if got := c.Defines(name); got != want {
			t.Errorf("Defines(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestCheckConfigWarnsAboutKeysWithNoEffect: a key set where the owner's
// other settings switch its feature off is a warning at its line; a
// supervisor key an agent uses is not.
func TestCheckConfigWarnsAboutKeysWithNoEffect(t *testing.T) {
	cfg := mustParse(t, "supervisor:\n  memory:\n    strategy: running_summary\n    episodes: false\n    rag_k: 8\n    rag_similarity_threshold: 0.9\n"+
		"agents:\n  - name: h\n    memory:\n      rag_episodes: true\n  - name: r\n    memory:\n      episodes: true\n      episode_gap: 1h\n", env())
	got := strings.Join(cfg.Warnings, "\n")
	for _, want := range []string{"5: supervisor.memory.rag_k: has no effect", "10: agents[0].memory.rag_episodes: has no effect: episodes is false"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "rag_similarity_threshold") { // /v1/search filters by it whatever the strategy
		t.Errorf("rag_similarity_threshold is said to have no effect:\n%s", got)
	}
	if strings.Contains(got, "episode_gap") {
		t.Errorf("an agent with episodes on is warned about its own episode key:\n%s", got)
	}
}

// rag_namespace names the Qdrant collection, one for every agent: set per
// agent, or with another vector driver, it does nothing, and says so.
func TestRAGNamespaceWarnings(t *testing.T) {
	cfg := mustParse(t, "supervisor:\n  memory:\n    rag_namespace: mine\nagents:\n  - name: a\n    memory:\n      rag_namespace: theirs\n", env())
	got := strings.Join(cfg.Warnings, "\n")
	for _, want := range []string{"3: supervisor.memory.rag_namespace: has no effect: it names the Qdrant collection, and vector.driver is embedded",
		"7: agents[0].memory.rag_namespace: has no effect per agent"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
	cfg = mustParse(t, "vector:\n  driver: qdrant\n  qdrant: {addr: \"q:6334\"}\nsupervisor:\n  memory:\n    rag_namespace: mine\n", env())
	if strings.Contains(strings.Join(cfg.Warnings, "\n"), "rag_namespace") {
		t.Errorf("the supervisor's namespace with Qdrant is warned about: %q", cfg.Warnings)
	}
}

func TestGoogleAIBaseURLWarned(t *testing.T) {
	cfg := mustParse(t, "llm:\n  provider: googleai\n  api_key: k\n  base_url: https://proxy.example.com\n", env())
	if got := strings.Join(cfg.Warnings, "\n"); !strings.Contains(got, "4: llm.base_url: has no effect") {
		t.Errorf("warnings %q lack llm.base_url's", got)
	}
}
