package config

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

const fuzzSecret = "zq-secret-42"

// FuzzParse: Parse never panics; it returns either a config that satisfies
// the validated invariants or *Errors whose every problem is placed (a line
// within the input, or a path) and never echoes an environment secret.
func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile("../agents.yaml"); err == nil {
		f.Add(data)
	}
	f.Add([]byte("supervisor:\n  memory:\n    rag_k: ${N}\n    summary_model: ${S}\n"))
	f.Add([]byte("agents:\n  - &a\n    name: x\n  - <<: *a\n    name: y\n"))
	getenv := env("N", "7", "S", fuzzSecret, "E", "")
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, getenv)
		if err != nil {
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error is %T, not *Errors: %v", err, err)
			}
			if len(errs.Problems) == 0 {
				t.Fatalf("*Errors without problems")
			}
			// YAML breaks lines at \n, \r and \r\n (and a few Unicode breaks).
			maxLine := bytes.Count(data, []byte("\n")) + bytes.Count(data, []byte("\r")) +
				bytes.Count(data, []byte("\u2028")) + bytes.Count(data, []byte("\u2029")) + bytes.Count(data, []byte("\u0085")) + 2
			for _, p := range errs.Problems {
				if p.Line < 0 || p.Line > maxLine {
					t.Fatalf("line %d outside the input (%d lines): %v", p.Line, maxLine, p)
				}
				if p.Line == 0 && p.Path == "" && !strings.HasPrefix(p.Message, "invalid YAML") {
					t.Fatalf("problem with neither line nor path: %+v", p)
				}
				if p.Message == "" {
					t.Fatalf("empty message: %+v", p)
				}
			}
			if !bytes.Contains(data, []byte(fuzzSecret)) && strings.Contains(err.Error(), fuzzSecret) {
				t.Fatalf("error echoes an environment value: %v", err)
			}
			return
		}
		if c == nil {
			t.Fatal("nil config without error")
		}
		checkInvariants(t, c)
	})
}

// checkInvariants re-states what validation promises about a loaded config.
func checkInvariants(t *testing.T, c *Config) {
	t.Helper()
	in := func(v string, allowed []string) bool {
		for _, a := range allowed {
			if v == a {
				return true
			}
		}
		return false
	}
	if !in(c.Storage.Driver, StorageDrivers) || !in(c.Vector.Driver, VectorDrivers) ||
		!in(c.Embedder.Provider, EmbedderProviders) || !in(c.LLM.Provider, LLMProviders) {
		t.Fatalf("bad driver/provider: %+v", c)
	}
	if c.Storage.Driver == "postgres" && c.Storage.PostgresDSN == "" {
		t.Fatal("postgres without dsn")
	}
	if c.Server.BodyLimit < 1 || c.Server.RequestTimeout <= 0 || c.Server.MaxMessagesPerRequest < 1 || c.Server.MaxMessageBytes < 1 {
		t.Fatalf("server out of range: %+v", c.Server)
	}
	seenKey := map[string]bool{}
	for _, k := range c.Server.Auth.APIKeys {
		if k.Key == "" || k.Tenant == "" || seenKey[k.Key] {
			t.Fatalf("bad api keys: %+v", c.Server.Auth.APIKeys)
		}
		seenKey[k.Key] = true
	}
	agents := []Agent{{Name: "supervisor", Memory: c.Supervisor.Memory, Filters: c.Supervisor.Filters, Prompts: c.Supervisor.Prompts}}
	seenName := map[string]bool{}
	for _, a := range c.Agents {
		if a.Name == "" || seenName[a.Name] {
			t.Fatalf("bad agent names: %+v", c.Agents)
		}
		seenName[a.Name] = true
		agents = append(agents, a)
	}
	for _, a := range agents {
		m := a.Memory
		if !in(m.Strategy, Strategies) || !in(m.TruncationStrategy, TruncationStrategies) || !in(m.RAGScope, RAGScopes) {
			t.Fatalf("%s: bad enum: %+v", a.Name, m)
		}
		if m.RAGK < 1 || m.BudgetTokens < 1 || m.RAGSimilarityThreshold < -1 || m.RAGSimilarityThreshold > 1 ||
			m.SummaryRecentTurns < 0 || m.TruncationMaxChars < 0 || m.SummaryTriggerTurns < 1 || m.SummaryCooldown < 0 {
			t.Fatalf("%s: out of range: %+v", a.Name, m)
		}
		if !in(a.Filters.Preset, FilterPresets) || !in(a.Filters.ToolMessages, ToolMessageModes) {
			t.Fatalf("%s: bad filters: %+v", a.Name, a.Filters)
		}
		for _, p := range append(append([]string{}, a.Filters.SkipPrefixes...), a.Filters.StripPrefixes...) {
			if p == "" {
				t.Fatalf("%s: empty prefix", a.Name)
			}
		}
		pr := a.Prompts
		if pr.SummaryCompressionUserPrompt != "" && !strings.Contains(pr.SummaryCompressionUserPrompt, "{transcript}") ||
			pr.SummaryExtensionUserPrompt != "" && (!strings.Contains(pr.SummaryExtensionUserPrompt, "{existing_summary}") ||
				!strings.Contains(pr.SummaryExtensionUserPrompt, "{new_messages}")) {
			t.Fatalf("%s: prompt without placeholders: %+v", a.Name, pr)
		}
	}
}
