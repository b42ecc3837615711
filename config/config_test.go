package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// env returns a getenv backed by a map (never the process environment).
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func mustParse(t *testing.T, src string, getenv func(string) string) *Config {
	t.Helper()
	c, err := Parse([]byte(src), getenv)
	if err != nil {
		t.Fatalf("Parse: unexpected error:\n%v", err)
	}
	return c
}

func problems(t *testing.T, err error) []Problem {
	t.Helper()
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want *Errors, got %T: %v", err, err)
	}
	return errs.Problems
}

func TestDefaults(t *testing.T) {
	d := Default()
	checks := []struct {
		name      string
		got, want any
	}{
		{"server.addr", d.Server.Addr, "127.0.0.1:8080"},
		{"server.allow_remote_without_auth", d.Server.AllowRemoteWithoutAuth, false},
		{"server.allowed_hosts", len(d.Server.AllowedHosts), 0},
		{"server.body_limit", d.Server.BodyLimit, int64(4 << 20)},
		{"server.request_timeout", d.Server.RequestTimeout, 30 * time.Second},
		{"server.log_level", d.Server.LogLevel, "info"},
		{"server.max_messages_per_request", d.Server.MaxMessagesPerRequest, 1000},
		{"server.max_message_bytes", d.Server.MaxMessageBytes, 256 << 10},
		{"server.rate_limit.requests_per_second", d.Server.RateLimit.RequestsPerSecond, 0.0},
		{"server.mcp.session_timeout", d.Server.MCP.SessionTimeout, 10 * time.Minute},
		{"server.mcp.max_sessions", d.Server.MCP.MaxSessions, 1000},
		{"server.mcp.max_sessions_per_client", d.Server.MCP.MaxSessionsPerClient, 100},
		{"server.ui.sessions_per_tenant", d.Server.UI.SessionsPerTenant, 100},
		{"server.body_budget", d.Server.BodyBudget, int64(64 << 20)},
		{"auth keys", len(d.Server.Auth.APIKeys), 0},
		{"storage.driver", d.Storage.Driver, "sqlite"},
		{"storage.sqlite_path", d.Storage.SQLitePath, "./data/contextd.db"},
		{"vector.driver", d.Vector.Driver, "embedded"},
		{"vector.embedded_path", d.Vector.EmbeddedPath, "./data/vectors.db"},
		{"vector.qdrant.addr", d.Vector.Qdrant.Addr, "localhost:6334"},
		{"vector.qdrant.timeout", d.Vector.Qdrant.Timeout, 5 * time.Second},
		{"embedder.provider", d.Embedder.Provider, "hashing"},
		{"embedder.dimensions", d.Embedder.Dimensions, 384},
		{"embedder.timeout", d.Embedder.Timeout, 10 * time.Second},
		{"embedder.batch_size", d.Embedder.BatchSize, 64},
		{"llm.provider", d.LLM.Provider, "none"},
		{"llm.timeout", d.LLM.Timeout, 60 * time.Second},
		{"memory.strategy", d.Supervisor.Memory.Strategy, "running_summary"},
		{"memory.summary_recent_turns", d.Supervisor.Memory.SummaryRecentTurns, 10},
		{"memory.structured_output", d.Supervisor.Memory.StructuredOutput, true},
		{"memory.persist_summary", d.Supervisor.Memory.PersistSummary, true},
		{"memory.rag_namespace", d.Supervisor.Memory.RAGNamespace, "__memory__"},
		{"memory.rag_k", d.Supervisor.Memory.RAGK, 5},
		{"memory.rag_similarity_threshold", d.Supervisor.Memory.RAGSimilarityThreshold, 0.5},
		{"memory.rag_scope", d.Supervisor.Memory.RAGScope, "chat"},
		{"memory.store_turns", d.Supervisor.Memory.StoreTurns, true},
		{"memory.truncation_strategy", d.Supervisor.Memory.TruncationStrategy, "middle"},
		{"memory.truncation_max_chars", d.Supervisor.Memory.TruncationMaxChars, 1000},
		{"memory.budget_tokens", d.Supervisor.Memory.BudgetTokens, 4000},
		{"memory.summary_trigger_turns", d.Supervisor.Memory.SummaryTriggerTurns, 10},
		{"memory.summary_trigger_tokens", d.Supervisor.Memory.SummaryTriggerTokens, 2000},
		{"memory.summary_cooldown", d.Supervisor.Memory.SummaryCooldown, 30 * time.Second},
		{"memory.summary_max_tokens", d.Supervisor.Memory.SummaryMaxTokens, 800},
		{"memory.episodes", d.Supervisor.Memory.Episodes, true},
		{"memory.episode_min_turns", d.Supervisor.Memory.EpisodeMinTurns, 6},
		{"memory.episode_max_turns", d.Supervisor.Memory.EpisodeMaxTurns, 40},
		{"memory.episode_gap", d.Supervisor.Memory.EpisodeGap, 2 * time.Hour},
		{"memory.episode_overlap", d.Supervisor.Memory.EpisodeOverlap, 2},
		{"memory.rag_episodes", d.Supervisor.Memory.RAGEpisodes, true},
		{"memory.summary_extend_every_episodes", d.Supervisor.Memory.SummaryExtendEveryEpisodes, 1},
		{"filters.tool_messages", d.Supervisor.Filters.ToolMessages, "keep"},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// Empty, comment-only and all-null documents give exactly the defaults.
	for _, src := range []string{"", "# nothing\n", "---\n", "server:\nstorage: ~\nagents:\n"} {
		got := mustParse(t, src, env())
		if !reflect.DeepEqual(got, Default()) {
			t.Errorf("Parse(%q) differs from Default():\n%+v", src, got)
		}
	}
}

func TestDerivedDefaults(t *testing.T) {
	c := mustParse(t, "embedder: {provider: openai}\nserver: {rate_limit: {requests_per_second: 2.5}}\n", env())
	if c.Embedder.Dimensions != 0 {
		t.Errorf("openai dimensions = %d, want 0 (model's own)", c.Embedder.Dimensions)
	}
	if c.Server.RateLimit.Burst != 3 {
		t.Errorf("burst = %d, want ceil(2.5) = 3", c.Server.RateLimit.Burst)
	}
	c = mustParse(t, "embedder: {provider: openai, dimensions: 256}\n", env())
	if c.Embedder.Dimensions != 256 {
		t.Errorf("explicit dimensions = %d, want 256", c.Embedder.Dimensions)
	}
}

func TestRepoAgentsYAML(t *testing.T) {
	c, err := Load("../agents.yaml", env())
	if err != nil {
		t.Fatalf("the repo's agents.yaml must load as is:\n%v", err)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("unexpected warnings: %q", c.Warnings)
	}
	if c.Storage.Driver != "sqlite" || c.Vector.Driver != "embedded" || c.Embedder.Provider != "hashing" || c.LLM.Provider != "none" {
		t.Errorf("example must run on the embedded default, got %s/%s/%s/%s",
			c.Storage.Driver, c.Vector.Driver, c.Embedder.Provider, c.LLM.Provider)
	}
	// Every value it spells out is the default, except the agents.
	want := Default()
	got := *c
	got.Agents = nil
	if !reflect.DeepEqual(&got, want) {
		t.Errorf("agents.yaml's supervisor-level values drifted from the defaults:\n got %+v\nwant %+v", got, *want)
	}
	r := c.Agent("research")
	if r.Memory.Strategy != "rag_augmented" || r.Memory.RAGK != 8 || r.Memory.BudgetTokens != 6000 {
		t.Errorf("research memory = %+v", r.Memory)
	}
	if len(r.Filters.SkipPrefixes) != 0 ||
		!reflect.DeepEqual(r.Filters.StripPrefixes, []string{"[Research Agent]\n"}) {
		t.Errorf("research filters = %+v", r.Filters)
	}
	if !strings.Contains(r.Prompts.SummaryCompressionUserPrompt, "{transcript}") {
		t.Errorf("research compression prompt = %q", r.Prompts.SummaryCompressionUserPrompt)
	}
}

// TestRepoAgentsYAMLCoversEverySchemaKey keeps the example complete: every
// key the decoder accepts is spelled out in it (legacy keys as comments).
func TestRepoAgentsYAMLCoversEverySchemaKey(t *testing.T) {
	data, err := os.ReadFile("../agents.yaml")
	if err != nil {
		t.Fatal(err)
	}
	root, p := parseYAML(data)
	if p != nil {
		t.Fatal(p.Message)
	}
	d := &decoder{getenv: env(), keys: map[string]*yaml.Node{}}
	d.root(root, Default())
	var nd *decoder
	sections := map[string]fields{
		"server":                     nd.serverFields(&Server{}),
		"server.auth":                nd.authFields(&Auth{}),
		"server.rate_limit":          nd.rateLimitFields(&RateLimit{}),
		"storage":                    nd.storageFields(&Storage{}),
		"vector":                     nd.vectorFields(&Vector{}),
		"vector.qdrant":              nd.qdrantFields(&Qdrant{}),
		"embedder":                   nd.embedderFields(&Embedder{}),
		"llm":                        nd.llmFields(&LLM{}),
		"supervisor.memory":          nd.memoryFields(&Memory{}),
		"supervisor.filters":         nd.filterFields(&Filters{}),
		"supervisor.prompt_sections": nd.promptFields(&PromptSections{}),
	}
	// Hidden keys: safety caps and test aids that agents.yaml should not
	// invite anyone to set (docs/config.md documents them).
	hidden := map[string]bool{"storage.sqlite_max_pages": true}
	for prefix, fs := range sections {
		for _, k := range keysOf(fs) {
			if !d.has(prefix+"."+k) && !hidden[prefix+"."+k] {
				t.Errorf("agents.yaml does not show %s.%s", prefix, k)
			}
		}
	}
	for _, lk := range legacyKeys {
		if !strings.Contains(string(data), "# "+lk.legacy+":") {
			t.Errorf("agents.yaml does not mention the legacy key supervisor.%s", lk.legacy)
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		env  []string
		line int
		path string
		msg  string // substring
	}{
		// unknown keys, at every level
		{"unknown top-level", "servr: {}\n", nil, 1, "servr", `did you mean "server"`},
		{"unknown nested", "vector:\n  qdrant:\n    adress: x:1\n", nil, 3, "vector.qdrant.adress", "valid keys here: addr, api_key, timeout, tls"},
		{"unknown memory key", "supervisor:\n  memory:\n    rag_kk: 3\n", nil, 3, "supervisor.memory.rag_kk", `did you mean "rag_k"`},
		{"misplaced memory key", "supervisor:\n  budget_tokens: 3\n", nil, 2, "supervisor.budget_tokens", "belongs under memory"},
		{"unknown agent key", "agents:\n  - name: a\n    model: x\n", nil, 3, "agents[0].model", "unknown key"},
		{"unknown filters key", "agents:\n  - name: a\n    filters: {skip: []}\n", nil, 3, "agents[0].filters.skip", "unknown key"},
		{"duplicate key", "llm:\n  model: a\n  model: b\n", nil, 3, "llm.model", "duplicate key (first set at line 2)"},
		// wrong types
		{"string for int", "supervisor:\n  memory:\n    rag_k: five\n", nil, 3, "supervisor.memory.rag_k", `must be an integer, got "five"`},
		{"float for int", "supervisor:\n  memory:\n    budget_tokens: 1.5\n", nil, 3, "supervisor.memory.budget_tokens", "must be an integer"},
		{"list for string", "llm:\n  model: [a]\n", nil, 2, "llm.model", "must be a string, got a list"},
		{"mapping for bool", "vector:\n  qdrant:\n    tls: {a: 1}\n", nil, 3, "vector.qdrant.tls", "must be true or false, got a mapping"},
		{"string for bool", "supervisor:\n  memory:\n    store_turns: maybe\n", nil, 3, "supervisor.memory.store_turns", "must be true or false"},
		{"scalar for section", "server: 8080\n", nil, 1, "server", "must be a mapping"},
		{"scalar for list", "agents:\n  - name: a\n    filters:\n      skip_prefixes: \"[x\"\n", nil, 4, "agents[0].filters.skip_prefixes", "must be a list of strings"},
		{"agents not a list", "agents:\n  research: {}\n", nil, 2, "agents", "must be a list"},
		{"empty prefix", "supervisor:\n  filters:\n    strip_prefixes: [\"a\", \"\"]\n", nil, 3, "supervisor.filters.strip_prefixes[1]", "must not be empty"},
		{"bad duration", "server:\n  request_timeout: soon\n", nil, 2, "server.request_timeout", `duration like "30s"`},
		{"zero duration", "llm:\n  timeout: 0\n", nil, 2, "llm.timeout", "must be > 0"},
		{"zero mcp session timeout", "server:\n  mcp:\n    session_timeout: 0s\n", nil, 3, "server.mcp.session_timeout", "must be > 0"},
		{"all interfaces with auth off", "server:\n  addr: \":8080\"\n", nil, 2, "server.addr", "server.allow_remote_without_auth: true"},
		{"host with a port", "server:\n  allowed_hosts: [\"a:80\"]\n", nil, 2, "server.allowed_hosts[0]", "must be a host name"},
		{"body budget under the limit", "server:\n  body_budget: 1MB\n", nil, 2, "server.body_budget", "must be at least server.body_limit"},
		{"negative cooldown", "supervisor:\n  memory:\n    summary_cooldown: -1s\n", nil, 3, "supervisor.memory.summary_cooldown", "must be ≥ 0"},
		{"bad size", "server:\n  body_limit: 4XB\n", nil, 2, "server.body_limit", `size like "4MB"`},
		{"zero size", "server:\n  body_limit: 0\n", nil, 2, "server.body_limit", "must be between 1 byte"},
		{"bad cidr", "server:\n  trusted_proxies: [10.0.0.0/8, nope]\n", nil, 2, "server.trusted_proxies[1]", "CIDR"},
		{"bad addr", "server:\n  addr: localhost\n", nil, 2, "server.addr", "host:port"},
		{"empty server addr", "server:\n  addr: \"\"\n", nil, 2, "server.addr", "must not be empty"},
		{"sqlite cap under the schema", "storage:\n  sqlite_max_pages: 100\n", nil, 2, "storage.sqlite_max_pages", "must be 0 (no cap) or ≥ 256"},
		{"sqlite cap on postgres", "storage:\n  driver: postgres\n  postgres_dsn: postgres://x\n  sqlite_max_pages: 1000\n", nil, 4, "storage.sqlite_max_pages", "applies only when storage.driver is sqlite"},
		{"qdrant url", "vector:\n  qdrant:\n    addr: http://q:6334\n", nil, 3, "vector.qdrant.addr", "without a scheme"},
		{"bad base_url", "llm:\n  base_url: localhost:11434\n", nil, 2, "llm.base_url", "http:// or https://"},
		// enums
		{"strategy", "supervisor:\n  memory:\n    strategy: summary\n", nil, 3, "supervisor.memory.strategy", `must be one of "none", "running_summary", "rag_augmented", got "summary"`},
		{"truncation_strategy", "agents:\n  - name: a\n    memory:\n      truncation_strategy: tail\n", nil, 4, "agents[0].memory.truncation_strategy", `"hard", "middle", "llm", "semantic"`},
		{"storage.driver", "storage:\n  driver: mysql\n", nil, 2, "storage.driver", `"sqlite", "postgres"`},
		{"vector.driver", "vector:\n  driver: faiss\n", nil, 2, "vector.driver", `"embedded", "qdrant", "none"`},
		{"embedder.provider", "embedder:\n  provider: cohere\n", nil, 2, "embedder.provider", `"hashing", "openai", "ollama"`},
		{"llm.provider", "llm:\n  provider: mistral\n", nil, 2, "llm.provider", `"anthropic", "googleai"`},
		{"rag_scope", "supervisor:\n  memory:\n    rag_scope: tenant\n", nil, 3, "supervisor.memory.rag_scope", `"chat", "user"`},
		{"filters.preset", "supervisor:\n  filters:\n    preset: strict\n", nil, 3, "supervisor.filters.preset", `"supervisor", "agent"`},
		{"tool_messages", "supervisor:\n  filters:\n    tool_messages: hide\n", nil, 3, "supervisor.filters.tool_messages", `"keep", "drop"`},
		{"log_level", "server:\n  log_level: verbose\n", nil, 2, "server.log_level", `"debug"`},
		// ranges
		{"negative budget", "supervisor:\n  memory:\n    budget_tokens: -100\n", nil, 3, "supervisor.memory.budget_tokens", "must be ≥ 1, got -100"},
		{"rag_k zero", "agents:\n  - name: a\n  - name: b\n    memory:\n      rag_k: 0\n", nil, 5, "agents[1].memory.rag_k", "must be between 1 and 1000, got 0"},
		{"threshold high", "supervisor:\n  memory:\n    rag_similarity_threshold: 1.5\n", nil, 3, "supervisor.memory.rag_similarity_threshold", "between -1 and 1"},
		{"threshold low", "supervisor:\n  memory:\n    rag_similarity_threshold: -2\n", nil, 3, "supervisor.memory.rag_similarity_threshold", "between -1 and 1"},
		{"negative daily budget", "llm:\n  daily_token_budget: -1\n", nil, 2, "llm.daily_token_budget", "must be ≥ 0"},
		{"negative recent turns", "supervisor:\n  memory:\n    summary_recent_turns: -1\n", nil, 3, "supervisor.memory.summary_recent_turns", "must be ≥ 0"},
		{"negative rps", "server:\n  rate_limit:\n    requests_per_second: -1\n", nil, 3, "server.rate_limit.requests_per_second", "between 0 and"},
		{"batch size", "embedder:\n  batch_size: 0\n", nil, 2, "embedder.batch_size", "between 1 and 4096"},
		{"trigger turns", "supervisor:\n  memory:\n    summary_trigger_turns: 0\n", nil, 3, "supervisor.memory.summary_trigger_turns", "must be ≥ 1"},
		{"nan threshold", "supervisor:\n  memory:\n    rag_similarity_threshold: .nan\n", nil, 3, "supervisor.memory.rag_similarity_threshold", "must be a number"},
		// cross-key rules
		{"postgres without dsn", "storage:\n  driver: postgres\n", nil, 2, "storage.postgres_dsn", "required when storage.driver is postgres"},
		{"qdrant without addr", "vector:\n  driver: qdrant\n  qdrant:\n    addr: \"\"\n", nil, 4, "vector.qdrant.addr", "is required when vector.driver is qdrant"},
		{"hashing zero dims", "embedder:\n  dimensions: 0\n", nil, 2, "embedder.dimensions", "≥ 1 for the hashing embedder"},
		{"ollama llm without model", "llm:\n  provider: ollama\n", nil, 2, "llm.model", "required when llm.provider is ollama"},
		{"ollama embedder without model", "embedder:\n  provider: ollama\n", nil, 2, "embedder.model", "required"},
		// auth
		{"empty api key", "server:\n  auth:\n    api_keys:\n      - key: \"\"\n        tenant: a\n", nil, 4, "server.auth.api_keys[0].key", "must not be empty"},
		{"api key from empty env", "server:\n  auth:\n    api_keys:\n      - key: ${K:-}\n", nil, 4, "server.auth.api_keys[0].key", "must not be empty"},
		{"anthropic without a key", "llm:\n  provider: anthropic\n", nil, 2, "llm.api_key", "ANTHROPIC_API_KEY"},
		{"googleai without a key", "llm:\n  provider: googleai\n", nil, 2, "llm.api_key", "is required for llm.provider googleai"},
		{"duplicate of a key with a bad tenant", "server:\n  auth:\n    api_keys:\n      - {key: k1-0123456789abcdef, tenant: \"a b\"}\n      - {key: k1-0123456789abcdef, tenant: b}\n", nil, 5, "server.auth.api_keys[1].key", "duplicate key"},
		{"api key with a newline", "server:\n  auth:\n    api_keys:\n      - {key: \"k1-0123456789abcdef\\n\", tenant: a}\n", nil, 4, "server.auth.api_keys[0].key", "contains whitespace"},
		{"missing api key", "server:\n  auth:\n    api_keys:\n      - tenant: a\n", nil, 4, "server.auth.api_keys[0].key", "is required"},
		{"duplicate api key", "server:\n  auth:\n    api_keys:\n      - {key: k1-0123456789abcdef, tenant: a}\n      - {key: k1-0123456789abcdef, tenant: b}\n", nil, 5, "server.auth.api_keys[1].key", "duplicate key (same as server.auth.api_keys[0].key)"},
		{"empty tenant", "server:\n  auth:\n    api_keys:\n      - key: k1-0123456789abcdef\n        tenant: \"\"\n", nil, 5, "server.auth.api_keys[0].tenant", "must not be empty"},
		// agent names
		{"empty agent name", "agents:\n  - name: \"\"\n", nil, 2, "agents[0].name", "must not be empty"},
		{"missing agent name", "agents:\n  - memory: {rag_k: 2}\n", nil, 2, "agents[0].name", "is required"},
		{"null agent", "agents:\n  -\n  - name: a\n", nil, 2, "agents[0]", "empty agent entry"},
		{"duplicate agent name", "agents:\n  - name: a\n  - name: b\n  - name: a\n", nil, 4, "agents[2].name", `duplicate agent name "a" (first defined at line 2)`},
		{"agent name with space", "agents:\n  - name: my agent\n", nil, 2, "agents[0].name", "spaces"},
		// prompt placeholders
		{"compression placeholder", "supervisor:\n  prompt_sections:\n    summary_compression_user_prompt: \"Summarise.\"\n", nil, 3, "supervisor.prompt_sections.summary_compression_user_prompt", "missing placeholder {transcript}"},
		{"extension placeholders", "agents:\n  - name: a\n    prompt_sections:\n      summary_extension_user_prompt: |\n        {existing_summary} only\n", nil, 4, "agents[0].prompt_sections.summary_extension_user_prompt", "missing placeholder {new_messages}"},
		{"episode placeholder", "agents:\n  - name: a\n    prompt_sections:\n      episode_summary_prompt: \"Summarise the episode.\"\n", nil, 4, "agents[0].prompt_sections.episode_summary_prompt", "missing placeholder {transcript}"},
		{"bad episode gap", "supervisor:\n  memory:\n    episode_gap: soon\n", nil, 3, "supervisor.memory.episode_gap", "duration"},
		{"episode overlap range", "supervisor:\n  memory:\n    episode_overlap: -1\n", nil, 3, "supervisor.memory.episode_overlap", ""},
		{"extend every zero", "supervisor:\n  memory:\n    summary_extend_every_episodes: 0\n", nil, 3, "supervisor.memory.summary_extend_every_episodes", ""},
		{"extend every not a number", "agents:\n  - name: a\n    memory:\n      summary_extend_every_episodes: often\n", nil, 4, "agents[0].memory.summary_extend_every_episodes", ""},
		{"extension both", "agents:\n  - name: a\n    prompt_sections:\n      summary_extension_user_prompt: \"x\"\n", nil, 4, "agents[0].prompt_sections.summary_extension_user_prompt", "{existing_summary} and {new_messages}"},
		// environment
		{"unset variable", "llm:\n  provider: openai\n  api_key: ${OPENAI_API_KEY}\n", nil, 3, "llm.api_key", "environment variable OPENAI_API_KEY is not set"},
		{"bad variable name", "llm:\n  model: ${1X}\n", nil, 2, "llm.model", "invalid environment variable name"},
		{"unterminated", "llm:\n  model: ${X\n", nil, 2, "llm.model", "unterminated"},
		{"env value wrong type", "supervisor:\n  memory:\n    rag_k: ${K}\n", []string{"K", "lots"}, 3, "supervisor.memory.rag_k", "got a value from the environment"},
		{"CONTEXTD_ADDR invalid", "", []string{"CONTEXTD_ADDR", "nonsense"}, 0, "server.addr", "CONTEXTD_ADDR"},
		// syntax
		{"yaml syntax", "server:\n  addr: [\n", nil, 2, "", "invalid YAML"},
		{"tab indentation", "server:\n\taddr: x\n", nil, 2, "", "invalid YAML"},
		{"two documents", "server: {}\n---\nllm: {}\n", nil, 2, "", "only one YAML document"},
		{"top level list", "- a\n", nil, 1, "", "must be a mapping"},
		{"non-string key", "server:\n  [a]: 1\n", nil, 2, "server", "key must be a plain string"},
		{"bad merge", "server:\n  <<: 5\n", nil, 2, "server", "merge key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), env(tc.env...))
			if err == nil {
				t.Fatalf("want an error for:\n%s", tc.src)
			}
			ps := problems(t, err)
			for _, p := range ps {
				if p.Line == tc.line && p.Path == tc.path && strings.Contains(p.Message, tc.msg) {
					return
				}
			}
			t.Errorf("want line %d, path %q, message containing %q; got:\n%v", tc.line, tc.path, tc.msg, err)
		})
	}
}

func TestCollectsEveryProblem(t *testing.T) {
	src := `server:
  body_limit: lots
storage:
  driver: postgres
supervisor:
  memory:
    rag_k: 0
    budget_tokens: -5
agents:
  - name: a
    memory:
      strategy: bogus
  - name: a
unknown: 1
`
	dir := t.TempDir()
	path := filepath.Join(dir, "agents.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, env())
	ps := problems(t, err)
	wantLines := []int{2, 4, 7, 8, 12, 13, 14}
	var got []int
	for _, p := range ps {
		got = append(got, p.Line)
	}
	if !reflect.DeepEqual(got, wantLines) {
		t.Errorf("problem lines = %v, want %v (sorted, all of them):\n%v", got, wantLines, err)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(wantLines) {
		t.Fatalf("Error() has %d lines, want %d", len(lines), len(wantLines))
	}
	want := path + ":7: supervisor.memory.rag_k: must be between 1 and 1000, got 0"
	if lines[2] != want {
		t.Errorf("Error() line = %q, want %q", lines[2], want)
	}
}

func TestErrorFormat(t *testing.T) {
	e := &Errors{Problems: []Problem{
		{Line: 12, Path: "agents[1].memory.rag_k", Message: "must be ≥ 1"},
		{Path: "server.addr", Message: "bad"},
		{Line: 3, Message: "invalid YAML: x"},
	}}
	want := "line 12: agents[1].memory.rag_k: must be ≥ 1\nserver.addr: bad\nline 3: invalid YAML: x"
	if e.Error() != want {
		t.Errorf("Error() = %q, want %q", e.Error(), want)
	}
	if got, want := e.Summary(), "line 12: agents[1].memory.rag_k: must be ≥ 1 (and 2 more; run `contextd check-config`)"; got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
	e.File = "agents.yaml"
	want = "agents.yaml:12: agents[1].memory.rag_k: must be ≥ 1\nagents.yaml: server.addr: bad\nagents.yaml:3: invalid YAML: x"
	if e.Error() != want {
		t.Errorf("Error() = %q, want %q", e.Error(), want)
	}
}

func TestSecretsNeverEchoed(t *testing.T) {
	const secret = "sk-very-secret-value"
	srcs := []string{
		"supervisor:\n  memory:\n    rag_k: ${S}\n",
		"storage:\n  driver: ${S}\n",
		"server:\n  request_timeout: ${S}\n",
		"server:\n  auth:\n    api_keys:\n      - {key: ${S}, tenant: a}\n      - {key: ${S}, tenant: b}\n",
		"server:\n  body_limit: ${S}\n",
	}
	for _, src := range srcs {
		_, err := Parse([]byte(src), env("S", secret))
		if err == nil {
			t.Fatalf("want an error for %q", src)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error echoes the secret: %v", err)
		}
	}
	// Nor the API key itself when it is written literally.
	_, err := Parse([]byte("server:\n  auth:\n    api_keys:\n      - {key: "+secret+", tenant: a}\n      - {key: "+secret+", tenant: b}\n"), env())
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("duplicate key error must not echo the key: %v", err)
	}
}

func TestEnvExpansion(t *testing.T) {
	src := `server:
  addr: "${HOST:-}:${PORT}"
  auth:
    api_keys:
      - key: ${KEY}
        tenant: acme
supervisor:
  memory:
    rag_k: ${RAG_K}
    store_turns: ${STORE:-false}
    summary_prompt: "literal $${NOT_A_VAR} and $HOME stay"
    summary_cooldown: ${COOLDOWN:-90}
llm:
  model: ${MODEL:-gpt-4o-mini}
`
	c := mustParse(t, src, env("PORT", "9090", "KEY", "0123456789abcdef-key", "RAG_K", "7"))
	if c.Server.Addr != ":9090" {
		t.Errorf("addr = %q", c.Server.Addr)
	}
	if len(c.Server.Auth.APIKeys) != 1 || c.Server.Auth.APIKeys[0] != (APIKey{Key: "0123456789abcdef-key", Tenant: "acme"}) {
		t.Errorf("api keys = %+v", c.Server.Auth.APIKeys)
	}
	m := c.Supervisor.Memory
	if m.RAGK != 7 || m.StoreTurns || m.SummaryCooldown != 90*time.Second {
		t.Errorf("memory = %+v", m)
	}
	if m.SummaryPrompt != "literal ${NOT_A_VAR} and $HOME stay" {
		t.Errorf("summary_prompt = %q", m.SummaryPrompt)
	}
	if c.LLM.Model != "gpt-4o-mini" {
		t.Errorf("model = %q", c.LLM.Model)
	}
}

func TestExpandUnit(t *testing.T) {
	get := env("A", "x", "B", "")
	tests := []struct {
		in, out string
		used    bool
		nProbs  int
	}{
		{"plain", "plain", false, 0},
		{"${A}", "x", true, 0},
		{"a${A}b${A}c", "axbxc", true, 0},
		{"${B:-d}", "d", true, 0},
		{"${C:-}", "", true, 0},
		{"${C:-a:-b}", "a:-b", true, 0},
		{"$${A}", "${A}", false, 0},
		{"$A ${", "", true, 1},
		{"${B}", "", true, 1},
		{"${C} ${D}", "", true, 2},
		{"${}", "", true, 1},
	}
	for _, tc := range tests {
		out, used, probs := expand(tc.in, get)
		if len(probs) != tc.nProbs {
			t.Errorf("expand(%q) problems = %q, want %d", tc.in, probs, tc.nProbs)
			continue
		}
		if tc.nProbs == 0 && (out != tc.out || used != tc.used) {
			t.Errorf("expand(%q) = %q, %v; want %q, %v", tc.in, out, used, tc.out, tc.used)
		}
	}
}

func TestEnvAddrOverride(t *testing.T) {
	c := mustParse(t, "server: {addr: \":8080\"}\n", env("CONTEXTD_ADDR", "127.0.0.1:9999"))
	if c.Server.Addr != "127.0.0.1:9999" {
		t.Errorf("addr = %q, want the CONTEXTD_ADDR value", c.Server.Addr)
	}
}

func TestLegacyKeys(t *testing.T) {
	c := mustParse(t, `supervisor:
  history_summary_enabled: false
  history_summary_model: small-model
  history_summary_recent_turns: 4
  history_max_turns: 50
  history_max_chars: 300
`, env())
	m := c.Supervisor.Memory
	want := DefaultMemory()
	want.Strategy, want.SummaryModel, want.SummaryRecentTurns, want.MaxTurns, want.TruncationMaxChars = "none", "small-model", 4, 50, 300
	if m != want {
		t.Errorf("legacy memory = %+v\nwant %+v", m, want)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("no conflict, no warning; got %q", c.Warnings)
	}
	// Agents inherit what the legacy keys set.
	c = mustParse(t, "supervisor:\n  history_max_chars: 300\nagents:\n  - name: a\n", env())
	if c.Agent("a").Memory.TruncationMaxChars != 300 {
		t.Errorf("agent did not inherit legacy history_max_chars")
	}
	// history_summary_enabled: true leaves the default strategy.
	c = mustParse(t, "supervisor:\n  history_summary_enabled: true\n", env())
	if c.Supervisor.Memory.Strategy != "running_summary" {
		t.Errorf("strategy = %q", c.Supervisor.Memory.Strategy)
	}
}

func TestLegacyKeysShadowedByMemory(t *testing.T) {
	src := `supervisor:
  memory:
    strategy: rag_augmented
    summary_model: big-model
    truncation_max_chars: 2000
  history_summary_enabled: false
  history_summary_model: small-model
  history_max_chars: 300
  history_max_turns: 20
`
	c := mustParse(t, src, env())
	m := c.Supervisor.Memory
	if m.Strategy != "rag_augmented" || m.SummaryModel != "big-model" || m.TruncationMaxChars != 2000 || m.MaxTurns != 20 {
		t.Errorf("memory: must win (and unshadowed legacy keys still apply): %+v", m)
	}
	want := []string{
		"line 6: supervisor.history_summary_enabled: ignored: supervisor.memory.strategy (line 3) is also set and wins",
		"line 7: supervisor.history_summary_model: ignored: supervisor.memory.summary_model (line 4) is also set and wins",
		"line 8: supervisor.history_max_chars: ignored: supervisor.memory.truncation_max_chars (line 5) is also set and wins",
	}
	if !reflect.DeepEqual(c.Warnings, want) {
		t.Errorf("warnings =\n%q\nwant\n%q", c.Warnings, want)
	}
	// Legacy keys are validated like their memory: spelling.
	_, err := Parse([]byte("supervisor:\n  history_max_chars: -1\n  history_summary_enabled: perhaps\n"), env())
	ps := problems(t, err)
	if len(ps) != 2 || ps[0].Line != 2 || ps[0].Path != "supervisor.history_max_chars" || ps[1].Path != "supervisor.history_summary_enabled" {
		t.Errorf("legacy validation: %v", err)
	}
}

func TestAgentMerge(t *testing.T) {
	src := `supervisor:
  memory:
    rag_k: 7
    budget_tokens: 3000
    summary_model: base-model
  filters:
    skip_prefixes: ["[Supervisor"]
    strip_prefixes: ["[X] "]
  prompt_sections:
    summary_compression_user_prompt: "base {transcript}"
agents:
  - name: research
    memory:
      rag_k: 9
      summary_model: null
    filters:
      strip_prefixes: ["[Research Agent]\n"]
    prompt_sections:
      summary_extension_user_prompt: "{existing_summary} + {new_messages}"
      episode_summary_prompt: "ep {transcript}"
  - name: plain
`
	c := mustParse(t, src, env())
	r := c.Agent("research")
	if r.Name != "research" || r.Memory.RAGK != 9 || r.Memory.BudgetTokens != 3000 || r.Memory.SummaryModel != "" {
		t.Errorf("research memory = %+v (rag_k overridden, budget inherited, summary_model null → \"\")", r.Memory)
	}
	if !reflect.DeepEqual(r.Filters.SkipPrefixes, []string{"[Supervisor"}) || !reflect.DeepEqual(r.Filters.StripPrefixes, []string{"[Research Agent]\n"}) {
		t.Errorf("research filters = %+v", r.Filters)
	}
	if r.Prompts.SummaryCompressionUserPrompt != "base {transcript}" || r.Prompts.SummaryExtensionUserPrompt != "{existing_summary} + {new_messages}" ||
		r.Prompts.EpisodeSummaryPrompt != "ep {transcript}" || c.Supervisor.Prompts.EpisodeSummaryPrompt != "" {
		t.Errorf("research prompts = %+v", r.Prompts)
	}
	p := c.Agent("plain")
	if p.Memory != c.Supervisor.Memory || !reflect.DeepEqual(p.Filters, c.Supervisor.Filters) || p.Prompts != c.Supervisor.Prompts {
		t.Errorf("an agent that sets nothing must equal the supervisor: %+v", p)
	}
	// An agent not in agents[] gets the supervisor's settings.
	u := c.Agent("unlisted")
	if u.Name != "unlisted" || u.Memory.RAGK != 7 {
		t.Errorf("unlisted agent = %+v", u)
	}
	// Agents do not share slices with the supervisor or each other.
	p.Filters.SkipPrefixes[0] = "mutated"
	if c.Supervisor.Filters.SkipPrefixes[0] != "[Supervisor" || c.Agent("research").Filters.SkipPrefixes[0] != "[Supervisor" {
		t.Errorf("filters slices are shared between agents")
	}
	// The supervisor may appear after agents in the file: merge still applies.
	c = mustParse(t, "agents:\n  - name: a\nsupervisor:\n  memory:\n    rag_k: 11\n", env())
	if c.Agent("a").Memory.RAGK != 11 {
		t.Errorf("agents listed before supervisor did not inherit")
	}
}

func TestMergeKeys(t *testing.T) {
	src := `agents:
  - &base
    name: base
    memory: {rag_k: 3, budget_tokens: 1000}
  - <<: *base
    name: derived
`
	c := mustParse(t, src, env())
	d := c.Agent("derived")
	if len(c.Agents) != 2 || d.Memory.RAGK != 3 || d.Memory.BudgetTokens != 1000 {
		t.Errorf("merge key: agents = %+v", c.Agents)
	}
}

func TestWarnings(t *testing.T) {
	src := `vector:
  driver: none
server:
  auth:
    api_keys:
      - key: short
  rate_limit:
    burst: 5
agents:
  - name: a
    memory:
      strategy: rag_augmented
      truncation_strategy: llm
`
	c := mustParse(t, src, env())
	want := []string{
		"line 6: server.auth.api_keys[0].key: is shorter than 16 characters; use a long random key",
		"line 8: server.rate_limit.burst: has no effect while requests_per_second is 0 (rate limiting off)",
		"line 12: agents[0].memory.strategy: rag_augmented needs a vector index, but vector.driver is none",
		"line 13: agents[0].memory.truncation_strategy: truncation_strategy llm needs an LLM, but llm.provider is none",
	}
	if !reflect.DeepEqual(c.Warnings, want) {
		t.Errorf("warnings =\n%q\nwant\n%q", c.Warnings, want)
	}
	if c.Server.Auth.APIKeys[0].Tenant != DefaultTenant {
		t.Errorf("tenant default = %q", c.Server.Auth.APIKeys[0].Tenant)
	}
}

func TestValues(t *testing.T) {
	src := `server:
  addr: 0.0.0.0:80
  body_limit: 512KB
  request_timeout: 2.5
  max_message_bytes: 1MiB
  trusted_proxies: [10.0.0.0/8, 192.168.1.7, "::1"]
  auth:
    api_keys: ["bare-key-0123456789"]
vector:
  driver: qdrant
  qdrant: {addr: "qdrant:6334", tls: yes, timeout: 1m}
llm:
  provider: anthropic
  api_key: sk-ant-test
  daily_token_budget: 1_000_000
`
	c := mustParse(t, src, env())
	if c.Server.BodyLimit != 512<<10 || c.Server.RequestTimeout != 2500*time.Millisecond || c.Server.MaxMessageBytes != 1<<20 {
		t.Errorf("server = %+v", c.Server)
	}
	if !reflect.DeepEqual(c.Server.TrustedProxies, []string{"10.0.0.0/8", "192.168.1.7/32", "::1/128"}) {
		t.Errorf("trusted_proxies = %q", c.Server.TrustedProxies)
	}
	if len(c.Server.Auth.APIKeys) != 1 || c.Server.Auth.APIKeys[0] != (APIKey{Key: "bare-key-0123456789", Tenant: "default"}) {
		t.Errorf("bare api key = %+v", c.Server.Auth.APIKeys)
	}
	if c.Vector.Qdrant != (Qdrant{Addr: "qdrant:6334", TLS: true, Timeout: time.Minute}) {
		t.Errorf("qdrant = %+v", c.Vector.Qdrant)
	}
	if c.LLM.DailyTokenBudget != 1_000_000 {
		t.Errorf("daily_token_budget = %d", c.LLM.DailyTokenBudget)
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"4MB", 4 << 20, true},
		{"4 MB", 4 << 20, true},
		{"512KB", 512 << 10, true},
		{"1MiB", 1 << 20, true},
		{"1mib", 1 << 20, true},
		{"2G", 2 << 30, true},
		{"1.5KB", 1536, true},
		{"100", 100, true},
		{"100B", 100, true},
		{"4XB", 0, false},
		{"-1", 0, false},
		{"MB", 0, false},
		{"", 0, false},
		{"99999999999GB", 0, false},
	}
	for _, tc := range tests {
		got, err := ParseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30s", 30 * time.Second, true},
		{"1m30s", 90 * time.Second, true},
		{"30", 30 * time.Second, true},
		{"0.25", 250 * time.Millisecond, true},
		{"500ms", 500 * time.Millisecond, true},
		{"soon", 0, false},
		{"1e300", 0, false},
		{"", 0, false},
	}
	for _, tc := range tests {
		got, err := ParseDuration(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("supervisor:\n  memory: {summary_model: x}\n  history_summary_model: y\n"), 0o600)
	os.WriteFile(bad, []byte("llm:\n  provider: nope\nsupervisor:\n  memory:\n    rag_k: 0\n"), 0o600)

	ok, report := Check(good, env())
	want := "ok\nwarning: " + good + ":3: supervisor.history_summary_model: ignored: supervisor.memory.summary_model (line 2) is also set and wins"
	if !ok || report != want {
		t.Errorf("Check(good) = %v, %q\nwant %q", ok, report, want)
	}
	ok, report = Check(bad, env())
	lines := strings.Split(report, "\n")
	if ok || len(lines) != 2 || !strings.HasPrefix(lines[0], bad+":2: llm.provider: ") || !strings.HasPrefix(lines[1], bad+":5: supervisor.memory.rag_k: ") {
		t.Errorf("Check(bad) = %v, %q", ok, report)
	}
	ok, report = Check(filepath.Join(dir, "missing.yaml"), env())
	if ok || !strings.Contains(report, "no such file") {
		t.Errorf("Check(missing) = %v, %q", ok, report)
	}
}

func TestOpenWithoutFile(t *testing.T) {
	t.Chdir(t.TempDir())
	c, source, err := Open("", env("CONTEXTD_ADDR", "127.0.0.1:7070"))
	if err != nil || source != "" {
		t.Fatalf("Open without agents.yaml: %v, source %q", err, source)
	}
	want := Default()
	want.Server.Addr = "127.0.0.1:7070"
	if !reflect.DeepEqual(c, want) {
		t.Errorf("defaults with CONTEXTD_ADDR = %+v", c)
	}
	ok, report := Check("", env())
	if !ok || !strings.HasPrefix(report, "ok\n") {
		t.Errorf("Check without a file = %v, %q", ok, report)
	}
	// With ./agents.yaml present, Open reads it.
	os.WriteFile("agents.yaml", []byte("server: {addr: \"127.0.0.1:6060\"}\n"), 0o600)
	c, source, err = Open("", env())
	if err != nil || source != DefaultPath || c.Server.Addr != "127.0.0.1:6060" {
		t.Errorf("Open with ./agents.yaml: %v, %q, %q", err, source, c.Server.Addr)
	}
	if _, _, err := Open("nope.yaml", env()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing) error = %v, want ErrNotExist", err)
	}
}

func TestMergeKeyBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("x0: &a0 {rag_k: 1, budget_tokens: 2}\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "x%d: &a%d {<<: [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]}\n")
	}
	b.WriteString("supervisor:\n  memory:\n    <<: *a8\n")
	_, err := Parse([]byte(b.String()), env())
	found := false
	for _, p := range problems(t, err) {
		if strings.Contains(p.Message, "merge keys (<<) expand to more than") {
			found = true
		}
	}
	if !found {
		t.Errorf("want the merge budget problem, got:\n%v", err)
	}
}

func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("x: &big\n  name: a\n  memory:\n")
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&b, "    k%d: 1\n", i)
	}
	b.WriteString("agents: [")
	for i := 0; i < 1000; i++ {
		b.WriteString("*big, ")
	}
	b.WriteString("]\n")
	_, err := Parse([]byte(b.String()), env())
	ps := problems(t, err)
	if len(ps) > maxProblems+1 {
		t.Errorf("%d problems, want at most %d", len(ps), maxProblems+1)
	}
	if !strings.Contains(err.Error(), "aliases expand to more than") && !strings.Contains(err.Error(), "too many problems") {
		t.Errorf("want a budget problem, got %d problems: %s", len(ps), ps[len(ps)-1].Message)
	}
}

func TestMergeAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("x: &big\n  filters:\n    skip_prefixes: [")
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, "p%d, ", i)
	}
	b.WriteString("]\nagents:\n")
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&b, "  - {<<: *big, name: a%d}\n", i)
	}
	_, err := Parse([]byte(b.String()), env())
	if err == nil || !strings.Contains(err.Error(), "aliases expand to more than") {
		t.Errorf("want the alias budget problem, got %v", err)
	}
}

func TestOptionalQdrantAddr(t *testing.T) {
	// An unused qdrant.addr may be empty (templated configs).
	c := mustParse(t, "vector:\n  driver: embedded\n  qdrant:\n    addr: ${QDRANT_ADDR:-}\n", env())
	if c.Vector.Qdrant.Addr != "" {
		t.Errorf("addr = %q", c.Vector.Qdrant.Addr)
	}
	// qdrant with no addr key uses the default.
	c = mustParse(t, "vector:\n  driver: qdrant\n", env())
	if c.Vector.Qdrant.Addr != DefaultQdrantAddr {
		t.Errorf("addr = %q, want the default", c.Vector.Qdrant.Addr)
	}
}

func BenchmarkParseExample(b *testing.B) {
	data, err := os.ReadFile("../agents.yaml")
	if err != nil {
		b.Fatal(err)
	}
	get := env()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, get); err != nil {
			b.Fatal(err)
		}
	}
}
