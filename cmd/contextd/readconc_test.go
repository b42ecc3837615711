package main

import (
	"runtime"
	"testing"

	"github.com/contextd/contextd/config"
)

// TestReadConcurrency: admission is automatic only where requests are CPU
// (every backend in-process); with a network backend a held slot would
// only cap throughput, so there is no limit unless one is configured.
func TestReadConcurrency(t *testing.T) {
	perCPU := 2 * runtime.GOMAXPROCS(0)
	for _, tc := range []struct {
		name string
		edit func(c *config.Config)
		want int
	}{
		{"defaults (in-process)", func(*config.Config) {}, perCPU},
		{"no vector index", func(c *config.Config) { c.Vector.Driver = "none" }, perCPU},
		{"configured", func(c *config.Config) { c.Server.ReadConcurrency = 3 }, 3},
		{"postgres", func(c *config.Config) { c.Storage.Driver = "postgres" }, 0},
		{"qdrant", func(c *config.Config) { c.Vector.Driver = "qdrant" }, 0},
		{"remote embedder", func(c *config.Config) { c.Embedder.Provider = "openai" }, 0},
		{"an LLM", func(c *config.Config) { c.LLM.Provider = "ollama" }, 0},
		{"configured beside an LLM", func(c *config.Config) { c.LLM.Provider = "ollama"; c.Server.ReadConcurrency = 5 }, 5},
	} {
		c := config.Default()
		tc.edit(c)
		if got := readConcurrency(c); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
