package config

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/contextd/contextd/derive/episodes"
	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/index/qdrant"
	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/jobs/worker"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/truncation"
)

// Allowed values of the enum keys.
var (
	Strategies           = []string{"none", "running_summary", "rag_augmented"}
	TruncationStrategies = []string{"hard", "middle", "llm", "semantic"}
	StorageDrivers       = []string{"sqlite", "postgres"}
	VectorDrivers        = []string{"embedded", "qdrant", "none"}
	EmbedderProviders    = []string{"hashing", "openai", "ollama"}
	LLMProviders         = []string{"none", "openai", "ollama", "anthropic", "googleai"}
	RAGScopes            = []string{"chat", "user"}
	FilterPresets        = []string{"", "supervisor", "agent"}
	ToolMessageModes     = []string{"keep", "drop"}
	LogLevels            = []string{"debug", "info", "warn", "error"}
)

// legacyKeys are Orchid's supervisor-level toggles and the memory key each
// one maps to (memory: wins where both are set).
var legacyKeys = []struct{ legacy, memory string }{
	{"history_summary_enabled", "strategy"},
	{"history_summary_model", "summary_model"},
	{"history_summary_recent_turns", "summary_recent_turns"},
	{"history_max_turns", "max_turns"},
	{"history_max_chars", "truncation_max_chars"},
}

// homeOf maps a memory/filters/prompt_sections key to its section, to hint
// where a misplaced key belongs. Built from the schema itself (the handlers
// are only constructed, never run, so a nil decoder is fine).
var homeOf = func() map[string]string {
	var d *decoder
	m := map[string]string{}
	for section, fs := range map[string]fields{
		"memory":          d.memoryFields(&Memory{}),
		"filters":         d.filterFields(&Filters{}),
		"prompt_sections": d.promptFields(&PromptSections{}),
	} {
		for k := range fs {
			m[k] = section
		}
	}
	return m
}()

func (d *decoder) root(n *yaml.Node, c *Config) {
	sections := map[string]*yaml.Node{}
	keep := func(name string) handler {
		return func(v *yaml.Node, _ string) { sections[name] = v }
	}
	d.mapping(n, "", fields{
		"server": keep("server"), "storage": keep("storage"), "vector": keep("vector"),
		"embedder": keep("embedder"), "llm": keep("llm"), "supervisor": keep("supervisor"),
		"agents": keep("agents"), "telemetry": keep("telemetry"),
	})
	// Fixed order: agents merge over the supervisor wherever each appears.
	d.mapping(sections["server"], "server", d.serverFields(&c.Server))
	d.mapping(sections["storage"], "storage", d.storageFields(&c.Storage))
	d.mapping(sections["vector"], "vector", d.vectorFields(&c.Vector))
	d.mapping(sections["embedder"], "embedder", d.embedderFields(&c.Embedder))
	d.mapping(sections["llm"], "llm", d.llmFields(&c.LLM))
	d.supervisor(sections["supervisor"], "supervisor", &c.Supervisor)
	d.agents(sections["agents"], "agents", c)
	d.mapping(sections["telemetry"], "telemetry", d.telemetryFields(&c.Telemetry))
}

// sub decodes a nested mapping with the given schema.
func (d *decoder) sub(fs fields) handler {
	return func(n *yaml.Node, path string) { d.mapping(n, path, fs) }
}

func (d *decoder) serverFields(s *Server) fields {
	return fields{
		"addr":                      d.hostPort(&s.Addr, true, false),
		"body_limit":                d.size(func(v int64) { s.BodyLimit = v }, 1<<40),
		"body_budget":               d.size(func(v int64) { s.BodyBudget = v }, 1<<40),
		"allow_remote_without_auth": d.bool(&s.AllowRemoteWithoutAuth),
		"allowed_hosts":             d.hostNames(&s.AllowedHosts),
		"request_timeout":           d.duration(&s.RequestTimeout, true),
		"auth":                      d.sub(d.authFields(&s.Auth)),
		"rate_limit":                d.sub(d.rateLimitFields(&s.RateLimit)),
		"trusted_proxies":           d.cidrs(&s.TrustedProxies),
		"log_level":                 d.enum(&s.LogLevel, LogLevels...),
		"max_messages_per_request":  d.int(&s.MaxMessagesPerRequest, 1, noMax),
		"max_message_bytes":         d.size(func(v int64) { s.MaxMessageBytes = int(v) }, 1<<30),
		"read_concurrency":          d.int(&s.ReadConcurrency, 0, noMax),
		"mcp": d.sub(fields{
			"enabled":                 d.bool(&s.MCP.Enabled),
			"allow_delete":            d.bool(&s.MCP.AllowDelete),
			"session_timeout":         d.duration(&s.MCP.SessionTimeout, true),
			"max_sessions":            d.int(&s.MCP.MaxSessions, 1, noMax),
			"max_sessions_per_client": d.int(&s.MCP.MaxSessionsPerClient, 1, noMax),
		}),
		"ui": d.sub(fields{
			"enabled":             d.bool(&s.UI.Enabled),
			"sessions_per_tenant": d.int(&s.UI.SessionsPerTenant, 1, noMax),
		}),
		"metrics": d.sub(fields{"tenant_labels": d.bool(&s.Metrics.TenantLabels)}),
	}
}

func (d *decoder) authFields(a *Auth) fields {
	return fields{"api_keys": func(n *yaml.Node, path string) { d.apiKeys(n, path, a) }}
}

func (d *decoder) rateLimitFields(r *RateLimit) fields {
	return fields{
		"requests_per_second": d.float(&r.RequestsPerSecond, 0, 1e9),
		"burst":               d.int(&r.Burst, 0, noMax),
	}
}

func (d *decoder) storageFields(s *Storage) fields {
	return fields{
		"driver":             d.enum(&s.Driver, StorageDrivers...),
		"sqlite_path":        d.nonEmpty(&s.SQLitePath),
		"postgres_dsn":       d.str(&s.PostgresDSN),
		"wal_truncate_delay": d.duration(&s.WALTruncateDelay, true),
		"sqlite_max_pages":   d.int(&s.SQLiteMaxPages, 0, noMax),
	}
}

func (d *decoder) vectorFields(v *Vector) fields {
	return fields{
		"driver":        d.enum(&v.Driver, VectorDrivers...),
		"embedded_path": d.nonEmpty(&v.EmbeddedPath),
		"qdrant":        d.sub(d.qdrantFields(&v.Qdrant)),
	}
}

func (d *decoder) qdrantFields(q *Qdrant) fields {
	return fields{
		"addr":    d.hostPort(&q.Addr, false, true),
		"api_key": d.str(&q.APIKey),
		"tls":     d.bool(&q.TLS),
		"timeout": d.duration(&q.Timeout, true),
	}
}

func (d *decoder) embedderFields(e *Embedder) fields {
	return fields{
		"provider":   d.enum(&e.Provider, EmbedderProviders...),
		"model":      d.str(&e.Model),
		"base_url":   d.url(&e.BaseURL),
		"api_key":    d.str(&e.APIKey),
		"dimensions": d.int(&e.Dimensions, 0, 65536),
		"timeout":    d.duration(&e.Timeout, true),
		"batch_size": d.int(&e.BatchSize, 1, 4096),
	}
}

func (d *decoder) llmFields(l *LLM) fields {
	return fields{
		"provider":           d.enum(&l.Provider, LLMProviders...),
		"model":              d.str(&l.Model),
		"base_url":           d.url(&l.BaseURL),
		"api_key":            d.str(&l.APIKey),
		"timeout":            d.duration(&l.Timeout, true),
		"daily_token_budget": d.int64(&l.DailyTokenBudget, 0),
	}
}

// apiKeys reads server.auth.api_keys: a list of {key, tenant} (tenant
// defaults to "default"), or of bare keys. Key values never appear in messages.
func (d *decoder) apiKeys(n *yaml.Node, path string, a *Auth) {
	n = d.collection(n, path)
	if isNull(n) {
		a.APIKeys = nil
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(n, path, "must be a list of {key, tenant}, got %s", describe(n))
		return
	}
	a.APIKeys = nil
	firstAt := map[string]string{}
	for i, item := range n.Content {
		ip := fmt.Sprintf("%s[%d]", path, i)
		it := d.collection(item, ip)
		k := APIKey{Tenant: DefaultTenant}
		before := len(d.problems)
		var keyNode, tenantNode *yaml.Node
		switch {
		case isNull(it):
			d.fail(item, ip, "empty entry; write {key: ..., tenant: ...}")
			continue
		case it.Kind == yaml.ScalarNode:
			keyNode = it
			d.str(&k.Key)(it, ip+".key")
		default:
			present := d.mapping(it, ip, fields{"key": d.str(&k.Key), "tenant": d.str(&k.Tenant)})
			if it.Kind != yaml.MappingNode {
				continue
			}
			keyNode, tenantNode = present["key"], present["tenant"]
			if keyNode == nil {
				d.fail(it, ip+".key", "is required")
				continue
			}
		}
		if len(d.problems) > before {
			continue
		}
		switch {
		case k.Key == "":
			d.fail(keyNode, ip+".key", "must not be empty")
			continue
		case strings.TrimSpace(k.Key) != k.Key || strings.ContainsFunc(k.Key, unicode.IsSpace):
			// A bearer token is read without surrounding whitespace: such
			// a key (a secret file's trailing newline) could never match.
			d.fail(keyNode, ip+".key", "contains whitespace (a trailing newline from a secret file?); no request could present it")
			continue
		case firstAt[k.Key] != "":
			d.fail(keyNode, ip+".key", "duplicate key (same as %s)", firstAt[k.Key])
			continue
		}
		firstAt[k.Key] = ip + ".key" // a later copy is a duplicate even if this entry's tenant is wrong
		if msg := checkName(k.Tenant); msg != "" {
			d.fail(tenantNode, ip+".tenant", "%s", msg)
			continue
		}
		if len(k.Key) < 16 {
			d.warn(keyNode, ip+".key", "is shorter than 16 characters; use a long random key")
		}
		a.APIKeys = append(a.APIKeys, k)
	}
}

// checkName validates a tenant or agent name: non-empty, printable, no
// surrounding or inner whitespace, at most 128 bytes.
func checkName(s string) string {
	if err := memory.CheckName(s); err != nil {
		return err.Error()
	}
	return ""
}

// memorySettings are the keys of a memory block, one line each: the field
// it sets, its default (the named default of the component that reads it)
// and how it is read. The decoder (memoryFields), Memory.Settings and
// DefaultMemory all read this table, so a new memory setting is one line
// here (and its field in Memory).
var memorySettings = []memorySetting{
	key("strategy", func(m *Memory) *string { return &m.Strategy }, string(engine.StrategyRunningSummary), oneOf(Strategies...)),
	key("summary_recent_turns", func(m *Memory) *int { return &m.SummaryRecentTurns }, memory.DefaultRecentTurns, ints(0, noMax)),
	key("recent_floor_turns", func(m *Memory) *int { return &m.RecentFloorTurns }, engine.DefaultFloorTurns, ints(0, noMax)),
	key("summary_model", func(m *Memory) *string { return &m.SummaryModel }, "", (*decoder).str),
	key("structured_output", func(m *Memory) *bool { return &m.StructuredOutput }, true, (*decoder).bool),
	key("persist_summary", func(m *Memory) *bool { return &m.PersistSummary }, true, (*decoder).bool),
	key("summary_prompt", func(m *Memory) *string { return &m.SummaryPrompt }, "", (*decoder).str),
	key("rag_namespace", func(m *Memory) *string { return &m.RAGNamespace }, qdrant.DefaultCollection, (*decoder).nonEmpty),
	key("rag_k", func(m *Memory) *int { return &m.RAGK }, engine.DefaultRAGK, ints(1, 1000)),
	key("rag_similarity_threshold", func(m *Memory) *float64 { return &m.RAGSimilarityThreshold }, engine.DefaultRAGThreshold, floats(-1, 1)),
	key("rag_scope", func(m *Memory) *string { return &m.RAGScope }, engine.DefaultRAGScope, oneOf(RAGScopes...)),
	key("rag_neighbors", func(m *Memory) *int { return &m.RAGNeighbors }, engine.DefaultRAGNeighbors, ints(0, 100)),
	key("rag_fill", func(m *Memory) *bool { return &m.RAGFill }, true, (*decoder).bool),
	key("rag_max_hits", func(m *Memory) *int { return &m.RAGMaxHits }, engine.DefaultRAGMaxHits, ints(1, 1000)),
	key("store_turns", func(m *Memory) *bool { return &m.StoreTurns }, true, (*decoder).bool),
	key("truncation_strategy", func(m *Memory) *string { return &m.TruncationStrategy }, string(truncation.Middle), oneOf(TruncationStrategies...)),
	key("truncation_max_chars", func(m *Memory) *int { return &m.TruncationMaxChars }, engine.DefaultTruncationMaxChars, ints(0, noMax)),
	key("budget_tokens", func(m *Memory) *int { return &m.BudgetTokens }, engine.DefaultBudgetTokens, ints(1, noMax)),
	key("tokenizer", func(m *Memory) *string { return &m.Tokenizer }, tokens.CL100KName, oneOf("cl100k", "o200k")),
	key("user_profile", func(m *Memory) *bool { return &m.UserProfile }, true, (*decoder).bool),
	key("max_turns", func(m *Memory) *int { return &m.MaxTurns }, 0, ints(0, noMax)),
	key("summary_trigger_turns", func(m *Memory) *int { return &m.SummaryTriggerTurns }, memory.DefaultTriggerTurns, ints(1, noMax)),
	key("summary_trigger_tokens", func(m *Memory) *int { return &m.SummaryTriggerTokens }, worker.DefaultTriggerTokens, ints(1, noMax)),
	key("summary_cooldown", func(m *Memory) *time.Duration { return &m.SummaryCooldown }, worker.DefaultCooldown, durations(false)),
	key("summary_max_tokens", func(m *Memory) *int { return &m.SummaryMaxTokens }, worker.DefaultMaxTokens, ints(0, noMax)),
	key("episodes", func(m *Memory) *bool { return &m.Episodes }, true, (*decoder).bool),
	key("episode_min_turns", func(m *Memory) *int { return &m.EpisodeMinTurns }, episodes.DefaultMinTurns, ints(1, 10000)),
	key("episode_max_turns", func(m *Memory) *int { return &m.EpisodeMaxTurns }, episodes.DefaultMaxTurns, ints(1, 10000)),
	key("episode_gap", func(m *Memory) *time.Duration { return &m.EpisodeGap }, episodes.DefaultGap, durations(true)),
	key("episode_overlap", func(m *Memory) *int { return &m.EpisodeOverlap }, worker.DefaultEpisodeOverlap, ints(0, 100)),
	key("summary_extend_every_episodes", func(m *Memory) *int { return &m.SummaryExtendEveryEpisodes }, worker.DefaultExtendEvery, ints(1, 1000)),
	key("rag_episodes", func(m *Memory) *bool { return &m.RAGEpisodes }, true, (*decoder).bool),
}

// memorySetting is one line of memorySettings.
type memorySetting struct {
	name string
	read func(d *decoder, m *Memory) handler
	// value is the setting in agents.yaml's units (Memory.Settings).
	value      func(m *Memory) any
	setDefault func(m *Memory)
}

// key builds a memorySetting from the field's address, its default and
// its decoder.
func key[T any](name string, field func(*Memory) *T, def T, read func(*decoder, *T) handler) memorySetting {
	return memorySetting{
		name: name,
		read: func(d *decoder, m *Memory) handler { return read(d, field(m)) },
		value: func(m *Memory) any {
			if d, ok := any(*field(m)).(time.Duration); ok {
				return Duration(d)
			}
			return *field(m)
		},
		setDefault: func(m *Memory) { *field(m) = def },
	}
}

func ints(lo, hi int64) func(*decoder, *int) handler {
	return func(d *decoder, p *int) handler { return d.int(p, lo, hi) }
}

func floats(lo, hi float64) func(*decoder, *float64) handler {
	return func(d *decoder, p *float64) handler { return d.float(p, lo, hi) }
}

func oneOf(allowed ...string) func(*decoder, *string) handler {
	return func(d *decoder, p *string) handler { return d.enum(p, allowed...) }
}

func durations(positive bool) func(*decoder, *time.Duration) handler {
	return func(d *decoder, p *time.Duration) handler { return d.duration(p, positive) }
}

func (d *decoder) memoryFields(m *Memory) fields {
	fs := make(fields, len(memorySettings))
	for _, s := range memorySettings {
		fs[s.name] = s.read(d, m)
	}
	return fs
}

func (d *decoder) filterFields(f *Filters) fields {
	return fields{
		"preset":         d.enum(&f.Preset, FilterPresets...),
		"skip_prefixes":  d.strings(&f.SkipPrefixes, true),
		"strip_prefixes": d.strings(&f.StripPrefixes, true),
		"tool_messages":  d.enum(&f.ToolMessages, ToolMessageModes...),
	}
}

func (d *decoder) promptFields(p *PromptSections) fields {
	return fields{
		"summary_compression_system_prompt": d.prompt(&p.SummaryCompressionSystemPrompt),
		"summary_compression_user_prompt":   d.prompt(&p.SummaryCompressionUserPrompt, "{transcript}"),
		"summary_extension_user_prompt":     d.prompt(&p.SummaryExtensionUserPrompt, "{existing_summary}", "{new_messages}"),
		"episode_summary_prompt":            d.prompt(&p.EpisodeSummaryPrompt, "{transcript}"),
		"user_profile_prompt":               d.prompt(&p.UserProfilePrompt, "{existing_profile}", "{chat_summary}"),
	}
}

// supervisor reads supervisor:. Orchid's legacy toggles are applied first so
// that memory: overrides them key by key.
func (d *decoder) supervisor(n *yaml.Node, path string, s *Supervisor) {
	var memN, filN, proN *yaml.Node
	legacy := map[string]*yaml.Node{}
	fs := fields{
		"memory":          func(v *yaml.Node, _ string) { memN = v },
		"filters":         func(v *yaml.Node, _ string) { filN = v },
		"prompt_sections": func(v *yaml.Node, _ string) { proN = v },
	}
	for _, lk := range legacyKeys {
		fs[lk.legacy] = func(v *yaml.Node, _ string) { legacy[lk.legacy] = v }
	}
	d.mapping(n, path, fs)

	m := &s.Memory
	for _, lk := range legacyKeys {
		v, ok := legacy[lk.legacy]
		if !ok {
			continue
		}
		lp := join(path, lk.legacy)
		switch lk.legacy {
		case "history_summary_enabled":
			on := true
			d.bool(&on)(v, lp)
			if !on {
				m.Strategy = "none"
			}
		case "history_summary_model":
			d.str(&m.SummaryModel)(v, lp)
		case "history_summary_recent_turns":
			d.int(&m.SummaryRecentTurns, 0, noMax)(v, lp)
		case "history_max_turns":
			d.int(&m.MaxTurns, 0, noMax)(v, lp)
		case "history_max_chars":
			d.int(&m.TruncationMaxChars, 0, noMax)(v, lp)
		}
	}
	mp := join(path, "memory")
	present := d.mapping(memN, mp, d.memoryFields(m))
	for _, lk := range legacyKeys {
		lp := join(path, lk.legacy)
		if legacyKey, memKey := d.key(lp), present[lk.memory]; legacyKey != nil && memKey != nil {
			d.warn(legacyKey, lp, "ignored: %s.%s (line %d) is also set and wins", mp, lk.memory, memKey.Line)
		}
	}
	d.mapping(filN, join(path, "filters"), d.filterFields(&s.Filters))
	d.mapping(proN, join(path, "prompt_sections"), d.promptFields(&s.Prompts))
}

// agents reads agents[]: each entry starts from the supervisor's effective
// settings and overrides only the keys it sets.
func (d *decoder) agents(n *yaml.Node, path string, c *Config) {
	n = d.collection(n, path)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(n, path, "must be a list of agents (- name: ...), got %s", describe(n))
		return
	}
	firstLine := map[string]int{}
	for i, item := range n.Content {
		ip := fmt.Sprintf("%s[%d]", path, i)
		it := d.collection(item, ip)
		if isNull(it) {
			d.fail(item, ip, "empty agent entry; it needs at least a name")
			continue
		}
		a := Agent{
			Memory:  c.Supervisor.Memory,
			Filters: cloneFilters(c.Supervisor.Filters),
			Prompts: c.Supervisor.Prompts,
		}
		var nameVal *yaml.Node
		present := d.mapping(it, ip, fields{
			"name": func(v *yaml.Node, p string) { nameVal = v; d.str(&a.Name)(v, p) },
			"memory": func(v *yaml.Node, p string) {
				d.mapping(v, p, d.memoryFields(&a.Memory))
			},
			"filters": func(v *yaml.Node, p string) {
				d.mapping(v, p, d.filterFields(&a.Filters))
			},
			"prompt_sections": func(v *yaml.Node, p string) {
				d.mapping(v, p, d.promptFields(&a.Prompts))
			},
		})
		if it.Kind != yaml.MappingNode {
			continue
		}
		nameKey := present["name"]
		if nameKey == nil {
			d.fail(it, ip+".name", "is required")
			continue
		}
		if msg := checkName(a.Name); msg != "" {
			d.fail(nameKey, ip+".name", "%s", msg)
			continue
		}
		if line, dup := firstLine[a.Name]; dup {
			d.fail(nameKey, ip+".name", "duplicate agent name %s (first defined at line %d)", describe(nameVal), line)
			continue
		}
		firstLine[a.Name] = nameKey.Line
		c.Agents = append(c.Agents, a)
	}
}

func cloneFilters(f Filters) Filters {
	f.SkipPrefixes = append([]string(nil), f.SkipPrefixes...)
	f.StripPrefixes = append([]string(nil), f.StripPrefixes...)
	return f
}

// serverChecks are crossChecks among server.* keys.
func (d *decoder) serverChecks(s Server) {
	if len(s.Auth.APIKeys) == 0 && !LoopbackAddr(s.Addr) {
		n := d.first("server.addr", "server")
		if !s.AllowRemoteWithoutAuth {
			d.fail(n, "server.addr", "%q listens beyond loopback with auth off (no server.auth.api_keys): anyone who "+
				"reaches it reads and writes every chat. Listen on 127.0.0.1, set api_keys, or set "+
				"server.allow_remote_without_auth: true (or %s=true)", s.Addr, EnvAllowRemoteWithoutAuth)
		} else {
			d.warn(n, "server.addr", "%q listens beyond loopback with auth off (server.allow_remote_without_auth): "+
				"anyone who reaches it reads and writes every chat", s.Addr)
		}
	}
	if s.BodyBudget < s.BodyLimit {
		d.fail(d.first("server.body_budget", "server.body_limit"), "server.body_budget",
			"(%d bytes) must be at least server.body_limit (%d bytes): no body could ever be admitted", s.BodyBudget, s.BodyLimit)
	}
}

// MinSQLiteMaxPages is the least storage.sqlite_max_pages (other than 0):
// the schema alone takes about 100 pages, and a cap it cannot fit would
// stop the server at its first start rather than cap anything.
const MinSQLiteMaxPages = 256

func (d *decoder) storageChecks(s Storage) {
	if s.SQLiteMaxPages == 0 {
		return
	}
	if s.Driver != "sqlite" {
		d.fail(d.key("storage.sqlite_max_pages"), "storage.sqlite_max_pages", "applies only when storage.driver is sqlite")
	}
	if s.SQLiteMaxPages < MinSQLiteMaxPages {
		d.fail(d.key("storage.sqlite_max_pages"), "storage.sqlite_max_pages",
			"must be 0 (no cap) or ≥ %d pages, got %d", MinSQLiteMaxPages, s.SQLiteMaxPages)
	}
}

// crossChecks are the rules that involve more than one key; they run on
// the decoded values and point at the most relevant key's line.
func (d *decoder) crossChecks(c *Config) {
	if c.Storage.Driver == "postgres" && c.Storage.PostgresDSN == "" {
		d.fail(d.first("storage.postgres_dsn", "storage.driver", "storage"), "storage.postgres_dsn",
			"is required when storage.driver is postgres")
	}
	d.storageChecks(c.Storage)
	if c.Vector.Driver == "qdrant" && c.Vector.Qdrant.Addr == "" {
		d.fail(d.first("vector.qdrant.addr", "vector.driver", "vector"), "vector.qdrant.addr",
			"is required when vector.driver is qdrant")
	}
	if c.Embedder.Provider == "hashing" && c.Embedder.Dimensions < 1 {
		d.fail(d.first("embedder.dimensions", "embedder.provider"), "embedder.dimensions",
			"must be ≥ 1 for the hashing embedder")
	}
	if c.Embedder.Provider == "ollama" && c.Embedder.Model == "" {
		d.fail(d.first("embedder.model", "embedder.provider"), "embedder.model", "is required when embedder.provider is ollama")
	}
	if c.LLM.Provider == "ollama" && c.LLM.Model == "" {
		d.fail(d.first("llm.model", "llm.provider"), "llm.model", "is required when llm.provider is ollama")
	}
	d.llmKey(c.LLM)
	d.serverChecks(c.Server)
	if c.Server.RateLimit.RequestsPerSecond == 0 && c.Server.RateLimit.Burst > 0 {
		d.warn(d.key("server.rate_limit.burst"), "server.rate_limit.burst",
			"has no effect while requests_per_second is 0 (rate limiting off)")
	}

	d.memoryRanges("supervisor", c.Supervisor.Memory)
	d.memoryWarnings(c, "supervisor", c.Supervisor.Memory)
	d.noEffect(c, "supervisor", c.Supervisor.Memory)
	for i, a := range c.Agents {
		d.memoryRanges(fmt.Sprintf("agents[%d]", i), a.Memory)
		d.memoryWarnings(c, fmt.Sprintf("agents[%d]", i), a.Memory)
		d.noEffect(c, fmt.Sprintf("agents[%d]", i), c.Agent(a.Name).Memory)
	}
}

// noEffect warns about a key its owner set that can have no effect under
// the owner's other settings (episode keys with episodes off, retrieval
// keys without rag_augmented). A supervisor key is one only when no agent
// would use it either (an agent inherits it).
func (d *decoder) noEffect(c *Config, owner string, m Memory) {
	mp := owner + ".memory"
	usedBy := func(on func(Memory) bool) bool {
		if on(m) {
			return true
		}
		if owner != "supervisor" {
			return false
		}
		for _, a := range c.Agents {
			if on(c.Agent(a.Name).Memory) {
				return true
			}
		}
		return false
	}
	check := func(on func(Memory) bool, why string, keys ...string) {
		if usedBy(on) {
			return
		}
		for _, k := range keys {
			if n := d.key(mp + "." + k); n != nil {
				d.warn(n, mp+"."+k, "has no effect: %s", why)
			}
		}
	}
	episodes := func(m Memory) bool { return m.Episodes }
	check(episodes, "episodes is false", "rag_episodes", "episode_min_turns", "episode_max_turns", "episode_gap", "episode_overlap", "summary_extend_every_episodes")
	rag := func(m Memory) bool { return m.Strategy == "rag_augmented" }
	// Not rag_similarity_threshold: /v1/search and search_memory filter by
	// it whatever the strategy.
	check(rag, "the strategy is not rag_augmented (retrieval is off)", "rag_k", "recent_floor_turns")
}

// memoryRanges refuses a minimum above its maximum. An agent is blamed only
// for a pair it set a side of (else the supervisor's own check reports it),
// at the line of the key it set.
func (d *decoder) memoryRanges(owner string, m Memory) {
	mp := owner + ".memory"
	if m.EpisodeMinTurns <= m.EpisodeMaxTurns {
		return
	}
	path := mp + ".episode_min_turns"
	n := d.key(path)
	if n == nil { // the owner set only the max: name it
		path = mp + ".episode_max_turns"
		n = d.key(path)
	}
	if n == nil && owner != "supervisor" {
		return
	}
	d.fail(n, path, "episode_min_turns (%d) is greater than episode_max_turns (%d): an episode could never close",
		m.EpisodeMinTurns, m.EpisodeMaxTurns)
}

// memoryWarnings flags settings that will run degraded. For an agent, only
// what the agent itself set is reported (the supervisor's own is reported once).
func (d *decoder) memoryWarnings(c *Config, owner string, m Memory) {
	mp := owner + ".memory"
	own := func(keys ...string) *yaml.Node {
		for _, k := range keys {
			if n := d.key(mp + "." + k); n != nil {
				return n
			}
		}
		return nil
	}
	isAgent := strings.HasPrefix(owner, "agents[")
	report := func(keys []string, fallback string, msg string) {
		n := own(keys...)
		if n == nil && isAgent {
			return
		}
		path := mp + "." + keys[0]
		if n == nil {
			n = d.key(fallback)
		}
		d.warn(n, path, "%s", msg)
	}
	if m.Strategy == "rag_augmented" && c.Vector.Driver == "none" {
		report([]string{"strategy"}, "vector.driver",
			"rag_augmented needs a vector index, but vector.driver is none")
	}
	if n := own("rag_namespace"); n != nil {
		switch {
		case isAgent:
			d.warn(n, mp+".rag_namespace", "has no effect per agent: every agent's memory is in the supervisor's collection (supervisor.memory.rag_namespace)")
		case c.Vector.Driver != "qdrant" && m.RAGNamespace != Default().Supervisor.Memory.RAGNamespace:
			d.warn(n, mp+".rag_namespace", "has no effect: it names the Qdrant collection, and vector.driver is %s", c.Vector.Driver)
		}
	}
	if m.Strategy == "rag_augmented" && !m.StoreTurns {
		report([]string{"store_turns", "strategy"}, "",
			"rag_augmented with store_turns false: new turns are not indexed, so retrieval finds none of them")
	}
	if m.TruncationStrategy == "llm" && c.LLM.Provider == "none" {
		report([]string{"truncation_strategy"}, "llm.provider",
			"truncation_strategy llm needs an LLM, but llm.provider is none")
	}
}

// llmKey fails a provider whose client refuses to start without a key
// (serve would exit with the client's own words): anthropic takes
// llm.api_key or ANTHROPIC_API_KEY, googleai llm.api_key only.
func (d *decoder) llmKey(l LLM) {
	if l.Provider == "googleai" && l.BaseURL != "" {
		d.warn(d.key("llm.base_url"), "llm.base_url", "has no effect: the googleai client takes no base URL")
	}
	if l.APIKey != "" {
		return
	}
	at := d.first("llm.api_key", "llm.provider")
	switch {
	case l.Provider == "anthropic" && d.env("ANTHROPIC_API_KEY") == "":
		d.fail(at, "llm.api_key", "is required for llm.provider anthropic (or set ANTHROPIC_API_KEY)")
	case l.Provider == "googleai":
		d.fail(at, "llm.api_key", "is required for llm.provider googleai")
	}
}

func (d *decoder) env(name string) string {
	if d.getenv == nil {
		return ""
	}
	return d.getenv(name)
}
