package main

import (
	"reflect"
	"testing"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/filters"
)

// The engine's own defaults (used by its tests and by a Service built
// without a Policy) must be what agents.yaml's defaults resolve to.
func TestDefaultPolicyMatchesConfigDefaults(t *testing.T) {
	got, err := policyOf(config.Default().Agent("any"))
	if err != nil {
		t.Fatal(err)
	}
	if want := engine.DefaultPolicy(); !reflect.DeepEqual(got, want) {
		t.Fatalf("policy of the default config\n got %+v\nwant %+v", got, want)
	}
}

func TestPoliciesPerAgentAndBadSettingsAtStartup(t *testing.T) {
	cfg := config.Default()
	a := cfg.Agent("research")
	a.Memory.RAGK = 9
	a.Memory.Strategy = "rag_augmented"
	cfg.Agents = append(cfg.Agents, a)
	pol, err := policies(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p := pol("research"); p.RAGK != 9 || p.Strategy != engine.StrategyRAG {
		t.Errorf("research policy = %+v", p)
	}
	if p := pol("unknown"); p.RAGK != 5 || p.Strategy != engine.StrategyRunningSummary {
		t.Errorf("unknown agent should get the supervisor's policy: %+v", p)
	}
	for name, mutate := range map[string]func(*config.Agent){
		"truncation": func(a *config.Agent) { a.Memory.TruncationStrategy = "zip" },
		"filters":    func(a *config.Agent) { a.Filters.ToolMessages = "maybe" },
		"preset":     func(a *config.Agent) { a.Filters.Preset = "nope" },
		"strategy":   func(a *config.Agent) { a.Memory.Strategy = "all" },
	} {
		bad := config.Default()
		ag := bad.Agent("x")
		mutate(&ag)
		bad.Agents = append(bad.Agents, ag)
		if _, err := policies(bad); err == nil {
			t.Errorf("%s: a bad setting must fail at startup", name)
		}
	}
}

func TestFiltersOf(t *testing.T) {
	o, err := filtersOf(config.Filters{Preset: "supervisor", SkipPrefixes: []string{"[Router"}, ToolMessages: "drop"}, 12)
	if err != nil {
		t.Fatal(err)
	}
	if !o.StripAgentLabels || !o.SkipRouting || o.MaxTurns != 12 || o.ToolMessages != filters.ToolDrop ||
		!reflect.DeepEqual(o.SkipPrefixes, []string{"[Router"}) {
		t.Errorf("filtersOf = %+v", o)
	}
	if _, err := filtersOf(config.Filters{Preset: "nope"}, 0); err == nil {
		t.Error("want error for unknown preset")
	}
	if _, err := filtersOf(config.Filters{ToolMessages: "sometimes"}, 0); err == nil {
		t.Error("want error for bad tool mode")
	}
}
