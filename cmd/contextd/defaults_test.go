package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/derive/episodes"
	"github.com/contextd/contextd/derive/llmsum"
	"github.com/contextd/contextd/embed/remote"
	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/filters"
	"github.com/contextd/contextd/index/qdrant"
	"github.com/contextd/contextd/internal/walscrub"
	"github.com/contextd/contextd/jobs/index"
	"github.com/contextd/contextd/jobs/worker"
	"github.com/contextd/contextd/rag"
	"github.com/contextd/contextd/telemetry"
	"github.com/contextd/contextd/transport/api"
	"github.com/contextd/contextd/transport/mcpserver"
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

// noDefault marks a setting whose default is its zero value (off, none,
// empty): nothing to keep equal, but a decision written down.
type noDefault struct{}

// homes is every leaf field of config.Default(), by its Go path, and the
// named default of the component that reads it: the one home of its value.
// Config's own constants stand only for what no component defaults itself.
// A memory setting the engine's Policy reads needs no row: policyOf carries
// it into the Policy, which TestDefaultPolicyMatchesConfigDefaults holds to
// engine.DefaultPolicy() field by field (reachesPolicy checks it does).
var homes = map[string]any{
	"Server.Addr":                        config.DefaultAddr, // where to listen is the binary's choice
	"Server.BodyLimit":                   api.DefaultBodyLimit,
	"Server.AllowRemoteWithoutAuth":      noDefault{},
	"Server.AllowedHosts":                noDefault{},
	"Server.BodyBudget":                  config.DefaultBodyBudget, // the API takes a built admit.Bytes
	"Server.RequestTimeout":              config.DefaultRequestTimeout,
	"Server.Auth.APIKeys":                noDefault{},
	"Server.RateLimit.RequestsPerSecond": noDefault{},
	"Server.RateLimit.Burst":             noDefault{},
	"Server.TrustedProxies":              noDefault{},
	"Server.LogLevel":                    config.DefaultLogLevel,
	"Server.MaxMessagesPerRequest":       engine.DefaultMaxMessagesPerRequest,
	"Server.MaxMessageBytes":             engine.DefaultMaxMessageBytes,
	"Server.ReadConcurrency":             noDefault{}, // 0 is auto
	"Server.MCP.Enabled":                 true,
	"Server.MCP.AllowDelete":             noDefault{},
	"Server.MCP.SessionTimeout":          mcpserver.DefaultSessionTimeout,
	"Server.MCP.MaxSessions":             mcpserver.DefaultMaxSessions,
	"Server.MCP.MaxSessionsPerClient":    mcpserver.DefaultMaxSessionsPerClient,
	"Server.UI.Enabled":                  true,
	"Server.UI.SessionsPerTenant":        config.DefaultUISessionsPerTenant, // the inspector takes it as given
	"Server.Metrics.TenantLabels":        noDefault{},
	"Storage.Driver":                     "sqlite",
	"Storage.SQLitePath":                 config.DefaultSQLitePath,
	"Storage.PostgresDSN":                noDefault{},
	"Storage.WALTruncateDelay":           walscrub.DefaultDelay,
	"Storage.SQLiteMaxPages":             noDefault{},
	"Vector.Driver":                      "embedded",
	"Vector.EmbeddedPath":                config.DefaultVectorPath,
	"Vector.Qdrant.Addr":                 qdrant.DefaultAddr,
	"Vector.Qdrant.APIKey":               noDefault{},
	"Vector.Qdrant.TLS":                  noDefault{},
	"Vector.Qdrant.Timeout":              qdrant.DefaultTimeout,
	"Embedder.Provider":                  "hashing",
	"Embedder.Model":                     noDefault{},
	"Embedder.BaseURL":                   noDefault{},
	"Embedder.APIKey":                    noDefault{},
	"Embedder.Dimensions":                rag.DefaultHashingDimensions,
	"Embedder.Timeout":                   remote.DefaultEmbedTimeout,
	"Embedder.BatchSize":                 remote.DefaultEmbedBatchSize,
	"LLM.Provider":                       "none",
	"LLM.Model":                          noDefault{},
	"LLM.BaseURL":                        noDefault{},
	"LLM.APIKey":                         noDefault{},
	"LLM.Timeout":                        llmsum.DefaultTimeout,
	"LLM.DailyTokenBudget":               noDefault{},
	"Telemetry.OTLPEndpoint":             noDefault{},
	"Telemetry.OTLPTracesEndpoint":       noDefault{},
	"Telemetry.QueueSize":                noDefault{}, // 0 is telemetry.DefaultQueueSize
	"Telemetry.OTLPProtocol":             telemetry.ProtocolHTTP,
	"Telemetry.SampleRatio":              config.DefaultSampleRatio,
	"Agents":                             noDefault{},
	"Warnings":                           noDefault{},

	"Supervisor.Memory.SummaryModel":               noDefault{},
	"Supervisor.Memory.StructuredOutput":           worker.DefaultSettings().Structured,
	"Supervisor.Memory.PersistSummary":             worker.DefaultSettings().Persist,
	"Supervisor.Memory.SummaryPrompt":              noDefault{},
	"Supervisor.Memory.RAGNamespace":               qdrant.DefaultCollection,
	"Supervisor.Memory.SummaryTriggerTokens":       worker.DefaultTriggerTokens,
	"Supervisor.Memory.SummaryCooldown":            worker.DefaultCooldown,
	"Supervisor.Memory.SummaryMaxTokens":           worker.DefaultMaxTokens,
	"Supervisor.Memory.Episodes":                   true,
	"Supervisor.Memory.EpisodeMinTurns":            episodes.DefaultMinTurns,
	"Supervisor.Memory.EpisodeMaxTurns":            episodes.DefaultMaxTurns,
	"Supervisor.Memory.EpisodeGap":                 episodes.DefaultGap,
	"Supervisor.Memory.EpisodeOverlap":             worker.DefaultEpisodeOverlap,
	"Supervisor.Memory.SummaryExtendEveryEpisodes": worker.DefaultExtendEvery,
	"Supervisor.Filters.Preset":                    "supervisor",
	"Supervisor.Filters.SkipPrefixes":              noDefault{},
	"Supervisor.Filters.StripPrefixes":             noDefault{},
	"Supervisor.Filters.ToolMessages":              filters.ToolKeep,

	"Supervisor.Prompts.SummaryCompressionSystemPrompt": noDefault{}, // "" is the built-in prompt
	"Supervisor.Prompts.SummaryCompressionUserPrompt":   noDefault{},
	"Supervisor.Prompts.SummaryExtensionUserPrompt":     noDefault{},
	"Supervisor.Prompts.EpisodeSummaryPrompt":           noDefault{},
	"Supervisor.Prompts.UserProfilePrompt":              noDefault{},
}

// Every field of config.Default() has an entry in homes and equals it: a
// new setting fails here until its home is written down.
func TestEveryConfigDefaultHasOneHome(t *testing.T) {
	seen := map[string]bool{}
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		if v.Kind() == reflect.Struct {
			for i := range v.NumField() {
				walk(strings.TrimPrefix(path+"."+v.Type().Field(i).Name, "."), v.Field(i))
			}
			return
		}
		seen[path] = true
		want, ok := homes[path]
		if !ok && strings.HasPrefix(path, "Supervisor.Memory.") && reachesPolicy(t, strings.TrimPrefix(path, "Supervisor.Memory.")) {
			return
		}
		if !ok {
			t.Errorf("%s (default %v): no entry in homes; name the component default it takes", path, v.Interface())
			return
		}
		if _, none := want.(noDefault); none {
			if !v.IsZero() {
				t.Errorf("%s: default %v, homes says it has none", path, v.Interface())
			}
			return
		}
		w := reflect.ValueOf(want)
		if !w.Type().ConvertibleTo(v.Type()) || !reflect.DeepEqual(w.Convert(v.Type()).Interface(), v.Interface()) {
			t.Errorf("%s: config default %v, its home says %v", path, v.Interface(), want)
		}
	}
	walk("", reflect.ValueOf(*config.Default()))
	for path := range homes {
		if !seen[path] {
			t.Errorf("homes names %s, which config.Config does not have", path)
		}
	}
}

// reachesPolicy reports whether changing the named config.Memory field
// changes (or fails) the engine Policy policyOf resolves.
func reachesPolicy(t *testing.T, field string) bool {
	t.Helper()
	base, err := policyOf(config.Default().Agent("any"))
	if err != nil {
		t.Fatal(err)
	}
	a := config.Default().Agent("any")
	f := reflect.ValueOf(&a.Memory).Elem().FieldByName(field)
	switch f.Kind() {
	case reflect.Bool:
		f.SetBool(!f.Bool())
	case reflect.Int, reflect.Int64: // time.Duration too
		f.SetInt(f.Int() + 1)
	case reflect.Float64:
		f.SetFloat(f.Float() + 0.125)
	case reflect.String:
		f.SetString(f.String() + "x")
	default:
		return false
	}
	p, err := policyOf(a)
	return err != nil || !reflect.DeepEqual(p, base)
}
