package main

import (
	"testing"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/jobs/index"
	"github.com/contextd/contextd/jobs/worker"
)

// A component's built-in defaults (EnsureDefaults, or its settings when
// none are given) must equal what config.Default() wires into it, where
// both exist: a component built without a config behaves as the binary.
func TestComponentDefaultsMatchConfigDefaults(t *testing.T) {
	cfg := config.Default()
	ws := workerSettings(cfg)("any")
	def := worker.DefaultSettings()
	ix := &index.Indexer{}
	ix.EnsureDefaults()
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"worker RecentTurns", def.RecentTurns, ws.RecentTurns},
		{"worker TriggerTurns", def.TriggerTurns, ws.TriggerTurns},
		{"worker TriggerTokens", def.TriggerTokens, ws.TriggerTokens},
		{"worker Cooldown", def.Cooldown, ws.Cooldown},
		{"worker MaxTokens", def.MaxTokens, ws.MaxTokens},
		{"worker Structured", def.Structured, ws.Structured},
		{"worker Persist", def.Persist, ws.Persist},
		{"worker Enabled", def.Enabled, ws.Enabled},
		{"worker MinPending", int64(def.RecentTurns) + 1, minPending(cfg)},
		{"indexer BatchSize", ix.BatchSize, cfg.Embedder.BatchSize},
	} {
		if c.got != c.want {
			t.Errorf("%s: built-in default %v, config default %v", c.name, c.got, c.want)
		}
	}
}
