package config

import (
	"strconv"
	"strings"
	"time"
)

// Settings is the config in agents.yaml's own keys and units (episode_gap:
// 2h, body_limit: 4MB), for people to read: the inspector shows it. Parsing
// its YAML gives the same Config back (a test holds it to that), so every
// key here is one the decoder accepts. Secrets are included; redact them
// before showing.
func (c *Config) Settings() map[string]any {
	agents := make([]any, 0, len(c.Agents))
	for _, a := range c.Agents {
		agents = append(agents, a.Settings())
	}
	s := c.Server
	keys := make([]any, 0, len(s.Auth.APIKeys))
	for _, k := range s.Auth.APIKeys {
		keys = append(keys, map[string]any{"key": k.Key, "tenant": k.Tenant})
	}
	storage := map[string]any{"driver": c.Storage.Driver, "sqlite_path": c.Storage.SQLitePath, "postgres_dsn": c.Storage.PostgresDSN,
		"wal_truncate_delay": Duration(c.Storage.WALTruncateDelay)}
	if c.Storage.SQLiteMaxPages > 0 { // hidden unless set: a safety cap few want
		storage["sqlite_max_pages"] = c.Storage.SQLiteMaxPages
	}
	return map[string]any{
		"server": map[string]any{
			"addr": s.Addr, "body_limit": Size(s.BodyLimit), "body_budget": Size(s.BodyBudget), "request_timeout": Duration(s.RequestTimeout),
			"auth":            map[string]any{"api_keys": keys},
			"rate_limit":      map[string]any{"requests_per_second": s.RateLimit.RequestsPerSecond, "burst": s.RateLimit.Burst},
			"trusted_proxies": list(s.TrustedProxies), "log_level": s.LogLevel,
			"allow_remote_without_auth": s.AllowRemoteWithoutAuth, "allowed_hosts": list(s.AllowedHosts),
			"max_messages_per_request": s.MaxMessagesPerRequest, "max_message_bytes": Size(int64(s.MaxMessageBytes)),
			"read_concurrency": s.ReadConcurrency,
			"mcp": map[string]any{"enabled": s.MCP.Enabled, "allow_delete": s.MCP.AllowDelete, "session_timeout": Duration(s.MCP.SessionTimeout),
				"max_sessions": s.MCP.MaxSessions, "max_sessions_per_client": s.MCP.MaxSessionsPerClient},
			"ui":      map[string]any{"enabled": s.UI.Enabled, "sessions_per_tenant": s.UI.SessionsPerTenant},
			"metrics": map[string]any{"tenant_labels": s.Metrics.TenantLabels},
		},
		"storage": storage,
		"vector": map[string]any{"driver": c.Vector.Driver, "embedded_path": c.Vector.EmbeddedPath,
			"qdrant": map[string]any{"addr": c.Vector.Qdrant.Addr, "api_key": c.Vector.Qdrant.APIKey,
				"tls": c.Vector.Qdrant.TLS, "timeout": Duration(c.Vector.Qdrant.Timeout)}},
		"embedder": map[string]any{"provider": c.Embedder.Provider, "model": c.Embedder.Model, "base_url": c.Embedder.BaseURL,
			"api_key": c.Embedder.APIKey, "dimensions": c.Embedder.Dimensions, "timeout": Duration(c.Embedder.Timeout),
			"batch_size": c.Embedder.BatchSize},
		"llm": map[string]any{"provider": c.LLM.Provider, "model": c.LLM.Model, "base_url": c.LLM.BaseURL, "api_key": c.LLM.APIKey,
			"timeout": Duration(c.LLM.Timeout), "daily_token_budget": c.LLM.DailyTokenBudget},
		"supervisor": map[string]any{"memory": c.Supervisor.Memory.Settings(), "filters": c.Supervisor.Filters.Settings(),
			"prompt_sections": c.Supervisor.Prompts.Settings()},
		"agents": agents,
		"telemetry": map[string]any{"otlp_endpoint": c.Telemetry.OTLPEndpoint, "otlp_protocol": c.Telemetry.OTLPProtocol,
			"sample_ratio": c.Telemetry.SampleRatio},
	}
}

// Settings is one agent's effective settings as an agents[] entry.
func (a Agent) Settings() map[string]any {
	return map[string]any{"name": a.Name, "memory": a.Memory.Settings(), "filters": a.Filters.Settings(),
		"prompt_sections": a.Prompts.Settings()}
}

// Settings is the memory block in agents.yaml's keys and units.
func (m Memory) Settings() map[string]any {
	out := make(map[string]any, len(memorySettings))
	for _, s := range memorySettings {
		out[s.name] = s.value(&m)
	}
	return out
}

// Settings is the filters block in agents.yaml's keys.
func (f Filters) Settings() map[string]any {
	return map[string]any{"preset": f.Preset, "skip_prefixes": list(f.SkipPrefixes), "strip_prefixes": list(f.StripPrefixes),
		"tool_messages": f.ToolMessages}
}

// Settings is the prompt_sections block ("" keeps the built-in prompt).
func (p PromptSections) Settings() map[string]any {
	return map[string]any{
		"summary_compression_system_prompt": p.SummaryCompressionSystemPrompt,
		"summary_compression_user_prompt":   p.SummaryCompressionUserPrompt,
		"summary_extension_user_prompt":     p.SummaryExtensionUserPrompt,
		"episode_summary_prompt":            p.EpisodeSummaryPrompt,
		"user_profile_prompt":               p.UserProfilePrompt,
	}
}

// Duration writes a duration as agents.yaml does: 2h, 1h30m, 30s, 500ms.
func Duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Size writes a byte count in the largest unit that divides it (4MB,
// 512KB, 1000), units being powers of 1024 as ParseSize reads them.
func Size(n int64) string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// list is never nil, so it renders as [] rather than null.
func list(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
