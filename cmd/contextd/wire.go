package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/contextd/contextd/jobs/index"
	"github.com/contextd/contextd/transport/mcpserver"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/derive/episodes"
	"github.com/contextd/contextd/derive/extractive"
	"github.com/contextd/contextd/derive/llmsum"
	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/filters"
	"github.com/contextd/contextd/index/embedded"
	"github.com/contextd/contextd/index/qdrant"
	"github.com/contextd/contextd/internal/admit"
	"github.com/contextd/contextd/internal/metrics"
	"github.com/contextd/contextd/jobs/budget"
	"github.com/contextd/contextd/jobs/worker"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
	"github.com/contextd/contextd/store/postgres"
	"github.com/contextd/contextd/store/sqlite"
	"github.com/contextd/contextd/telemetry"
	"github.com/contextd/contextd/transport/api"
)

// The engine's summariser contract is declared, never asked for by type
// assertion: the worker must provide every method the engine calls.
var _ engine.SummaryJobs = (*worker.Worker)(nil)

// App is a wired contextd: the HTTP handler, the service behind it, and the
// background workers.
type App struct {
	Config  *config.Config
	Service *engine.Service
	Handler http.Handler
	Store   memory.Backend
	Index   rag.Index
	// Retriever serves the service's retrieval (nil when vector.driver is
	// none); the eval's retrieval probe ranks with it.
	Retriever *rag.Retriever
	Background
	Metrics *metrics.Metrics
	// Tracing is the OpenTelemetry provider (no-op when tracing is off).
	Tracing *telemetry.Tracing
	// LLM is how the LLM's last call went (nil without an LLM).
	LLM *llmsum.Health
	// owner names this process in the leases its workers take.
	owner string
	// deps is what Service was built from (benchmarks build variants).
	deps    engine.Deps
	closers []func() error
}

// Background is the App's background work (its fields are the App's).
type Background struct {
	Indexer *index.Indexer
	// Arrivals draws new turns' facts in the background.
	Arrivals *engine.Arrivals
	Worker   *worker.Worker
	// Budget is the tenants' daily LLM token budget, which every use of
	// the model spends from.
	Budget *budget.Daily
	// Profiler merges changed chat summaries into users' profiles.
	Profiler *worker.Profiler
}

// Close releases the backends.
func (a *App) Close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		_ = a.closers[i]()
	}
}

// openStore opens the configured backend. Both stores are checked against
// memory.Backend by the compiler, so wiring never asks a store what it can
// do.
func openStore(ctx context.Context, c config.Storage) (memory.Backend, error) {
	switch c.Driver {
	case "postgres":
		s, err := postgres.Open(ctx, c.PostgresDSN)
		if err != nil {
			return nil, fmt.Errorf("storage postgres: %w", err)
		}
		return s, nil
	default:
		s, err := sqlite.Open(ctx, c.SQLitePath, sqlite.ScrubDelay(c.WALTruncateDelay), sqlite.MaxPages(c.SQLiteMaxPages))
		if err != nil {
			return nil, fmt.Errorf("storage sqlite %s: %w", c.SQLitePath, err)
		}
		return s, nil
	}
}

// openIndex opens the configured vector index; nil when vector.driver is
// none. store lets Qdrant re-index everything when it lost its collection.
func openIndex(ctx context.Context, cfg *config.Config, dim int, store memory.Backend, log *slog.Logger) (rag.Index, error) {
	switch cfg.Vector.Driver {
	case "none":
		return nil, nil
	case "qdrant":
		qc := qdrantConfig(cfg.Vector.Qdrant, cfg.Supervisor.Memory.RAGNamespace, dim)
		qc.OnCollectionCreated = func(collection string) {
			// A new (or lost and recreated) collection holds nothing: mark
			// every stored turn unindexed so the indexer fills it again.
			go func() {
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
				defer cancel()
				for _, kind := range memory.IndexKinds {
					if err := store.Reset(rctx, kind); err != nil {
						log.Warn("re-index after collection creation", "collection", collection, "kind", kind, "err", err)
					}
				}
			}()
		}
		ix, err := qdrant.New(ctx, qc)
		if err != nil {
			return nil, fmt.Errorf("vector qdrant: %w", err)
		}
		return ix, nil
	default:
		ix, err := embedded.Open(ctx, cfg.Vector.EmbeddedPath, dim, embedded.ScrubDelay(cfg.Storage.WALTruncateDelay))
		if err != nil {
			return nil, fmt.Errorf("vector embedded %s: %w", cfg.Vector.EmbeddedPath, err)
		}
		return ix, nil
	}
}

func ownerID() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// build wires every component from the config, tracing as its telemetry
// section says.
func build(ctx context.Context, cfg *config.Config, log *slog.Logger) (*App, error) {
	tr, err := startTracing(ctx, cfg.Telemetry, log)
	if err != nil {
		return nil, err
	}
	return buildTraced(ctx, cfg, log, tr)
}

// buildTraced wires every component, tracing into tr (shut down, flushing,
// by Close), in stages: storage, the service, retrieval, the background
// workers, HTTP.
func buildTraced(ctx context.Context, cfg *config.Config, log *slog.Logger, tr *telemetry.Tracing) (*App, error) {
	a := &App{Config: cfg, Metrics: metrics.NewWith(metrics.Options{TenantLabels: cfg.Server.Metrics.TenantLabels}), Tracing: tr, owner: ownerID()}
	a.closers = append(a.closers, flushTracing(tr))
	countDropped(a.Metrics, tr)
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()
	store, err := openStore(ctx, cfg.Storage)
	if err != nil {
		return nil, err
	}
	a.Store = store
	a.closers = append(a.closers, store.Close)
	rawEmb, dim, err := newEmbedder(ctx, cfg.Embedder)
	if err != nil {
		return nil, fmt.Errorf("embedder: %w", err)
	}
	emb := telemetry.NewEmbedder(rawEmb, tr.Tracer(), gen(cfg.Embedder.Provider, cfg.Embedder.Model, cfg.Embedder.BaseURL))
	deps, err := a.serviceDeps(cfg, emb, log)
	if err != nil {
		return nil, err
	}
	if err := a.wireRetrieval(ctx, cfg, emb, dim, log, &deps); err != nil {
		return nil, err
	}
	if err := a.wireWorkers(cfg, log, &deps); err != nil {
		return nil, err
	}
	a.wireArrivals(log, &deps)
	a.deps, a.Service = deps, engine.New(deps)
	a.wireHTTP(cfg, log)
	ok = true
	return a, nil
}

// serviceDeps is what the engine uses of a.Store and the config; the
// later stages add retrieval and the background jobs, and New builds the
// service from it. Full is shared with the jobs, whose writes mark storage
// full as the requests' do.
func (a *App) serviceDeps(cfg *config.Config, emb rag.Embedder, log *slog.Logger) (engine.Deps, error) {
	pol, err := policies(cfg)
	if err != nil {
		return engine.Deps{}, err
	}
	tracer := a.Tracing.Tracer()
	d := engine.BackendDeps(a.Store)
	d.Store = telemetry.NewStore(a.Store, tracer, storeSystem(cfg.Storage.Driver))
	d.Policy, d.AgentDefined = pol, cfg.Defines
	d.Logger, d.Scorer, d.Tracer, d.Full = log, &rag.SentenceScorer{Embedder: emb}, tracer, &engine.DiskFull{}
	d.Limits = engine.Limits{MaxMessagesPerRequest: cfg.Server.MaxMessagesPerRequest, MaxMessageBytes: cfg.Server.MaxMessageBytes}
	d.Observe = observe(a.Metrics)
	d.OnAppend = func(_ string, n int) { a.Metrics.AppendedTurns.Add(float64(n)) }
	return d, nil
}

// wireRetrieval opens the vector index (none when vector.driver is none)
// with its retriever and indexer, and gives them to the service.
func (a *App) wireRetrieval(ctx context.Context, cfg *config.Config, emb rag.Embedder, dim int, log *slog.Logger, d *engine.Deps) error {
	if cfg.Vector.Driver == "embedded" && cfg.Storage.Driver == "postgres" {
		// The index is this process's file: a second replica on the
		// database would serve what the first deleted (postgres.ErrIndexHeld).
		lock, err := postgres.HoldEmbeddedIndex(ctx, cfg.Storage.PostgresDSN)
		if err != nil {
			return fmt.Errorf("vector embedded: %w; replicas on one database share a vector store (vector.driver: qdrant), or run one process", err)
		}
		a.closers = append(a.closers, lock.Close)
	}
	store, tracer := a.Store, a.Tracing.Tracer()
	ix, err := openIndex(ctx, cfg, dim, store, log)
	if err != nil || ix == nil {
		return err
	}
	a.Index = ix
	a.closers = append(a.closers, ix.Close)
	sparse := rag.NewSparseEncoder()
	tix := telemetry.NewIndex(ix, tracer, cfg.Vector.Driver)
	a.Retriever = &rag.Retriever{Embedder: queryEmbedder(cfg.Embedder, emb, a.Metrics), Sparse: sparse, Index: tix, Store: d.Store}
	a.Indexer = &index.Indexer{Store: store, Embedder: emb, Sparse: sparse, Index: tix, Owner: a.owner, BatchSize: cfg.Embedder.BatchSize,
		LeaseTTL: memory.DefaultLeaseTTL, Logger: log.With("worker", "indexer"), Tracer: tracer, Kinds: []memory.WorkKind{memory.IndexFacts}}
	if anyAgent(cfg, func(m config.Memory) bool { return m.Episodes && m.RAGEpisodes }) {
		// Per-agent keys take effect for that agent alone: episodes are
		// indexed when any agent retrieves them (retrieval then keeps
		// to the asking agent's rag_episodes).
		a.Indexer.Kinds = append(a.Indexer.Kinds, memory.IndexEpisodes)
	}
	d.Index, d.Retriever, d.Indexer = ix, a.Retriever, a.Indexer
	return nil
}

// wireWorkers builds the summariser (with the LLM when one is configured,
// else extractive), the daily token budget every use of the model spends
// from, the summary jobs and the profiler, and gives them to the service.
func (a *App) wireWorkers(cfg *config.Config, log *slog.Logger, d *engine.Deps) error {
	store, tracer := a.Store, a.Tracing.Tracer()
	ext := extractive.New()
	var summarizer memory.Summarizer = ext
	// merger is the LLM's profile merge (nil: the deterministic merge).
	var merger worker.ProfileMerger
	model, err := newLLM(cfg.LLM, "")
	if err != nil {
		return fmt.Errorf("llm: %w", err)
	}
	// The one daily budget: summaries and episodes, profile merges and
	// condensing all spend from it.
	a.Budget = &budget.Daily{Limit: cfg.LLM.DailyTokenBudget, OnSpend: a.Metrics.AddLLMTokens}
	if model != nil {
		model = telemetry.NewModel(model, tracer, gen(cfg.LLM.Provider, cfg.LLM.Model, cfg.LLM.BaseURL))
		a.LLM = llmsum.NewHealth(model) // every use of the model goes through it
		ls := llmsum.New(a.LLM, llmsum.Options{Timeout: cfg.LLM.Timeout, Fallback: ext, ModelName: cfg.LLM.Model, Logger: log.With("llm", cfg.LLM.Provider)})
		summarizer, merger = ls, ls
		cond := llmsum.NewCondenser(a.LLM, cfg.LLM.Timeout, cfg.LLM.Model, a.LLM)
		cond.Budget = a.Budget
		d.Condenser = cond
	}
	env := &worker.Env{Summarizer: summarizer, Fallback: ext, Budget: a.Budget, Settings: workerSettings(cfg),
		Prepare: summaryInput(d.Policy), Logger: log.With("worker", "summary"), Tracer: tracer,
		// A background write that finds the disk full marks storage full
		// for /readyz, as a request's does.
		OnWrite: d.Full.Note}
	a.wireJobs(cfg, env)
	if a.Indexer != nil {
		a.Indexer.OnError = d.Full.Note
	}
	d.SummaryJobs, d.LLMEpisodes = a.Worker, summarizer.UsesLLM()
	d.Previews = &worker.Previewer{Env: env, Store: store, Episodes: a.Worker.Episodes != nil}
	a.Profiler = &worker.Profiler{Store: store, Logger: log.With("worker", "profile"), Model: "deterministic", Tracer: tracer,
		Prompt: func(agent string) string { return cfg.Agent(agent).Prompts.UserProfilePrompt }, Budget: a.Budget}
	if merger != nil { // an LLM: one merge call per change
		a.Profiler.Merger, a.Profiler.Model = merger, cfg.LLM.Model
	}
	d.ProfileDegraded = a.Profiler.LastDegraded
	return nil
}

// wireJobs builds the summary jobs over env and the loop that runs them.
func (a *App) wireJobs(cfg *config.Config, env *worker.Env) {
	store := a.Store
	closer := &worker.Closer{Env: env, Store: store, Facts: store}
	a.Worker = &worker.Worker{Env: env, Store: store,
		Summary:   &worker.Extender{Env: env, Store: store},
		Episodes:  closer,
		Rebuilder: &worker.Rebuilder{Env: env, Store: store, Episodes: closer, Profiles: store},
		Owner:     a.owner, Lease: memory.DefaultLeaseTTL, Poll: worker.DefaultPoll,
		MinPending: minPending(cfg),
		OnJob:      a.countJob,
	}
	if a.Index != nil {
		a.Worker.Rebuilder.Erase = rag.PointEraser{Index: a.Index}
		env.OnDerived = a.Indexer.Kick // closed episodes and their facts are indexed at once
	}
}

// wireArrivals builds the facts-on-arrival job: appends kick it, and what
// it draws kicks the indexer.
func (a *App) wireArrivals(log *slog.Logger, d *engine.Deps) {
	a.Arrivals = &engine.Arrivals{Store: a.Store, Owner: a.owner, Logger: log.With("worker", "facts")}
	if a.Indexer != nil {
		a.Arrivals.OnDrawn = a.Indexer.Kick
	}
	d.Arrivals = a.Arrivals
}

// countJob counts a summary job's outcome (the LLM tokens are counted by
// the budget's OnSpend).
func (a *App) countJob(ev worker.JobEvent) {
	if ev.Outcome != "" {
		a.Metrics.SummaryJobs.WithLabelValues(ev.Outcome).Inc()
	}
}

// wireHTTP builds the handler (the API, the inspector, MCP) and the
// metrics' view of the store.
func (a *App) wireHTTP(cfg *config.Config, log *slog.Logger) {
	tenants := []string{memory.DefaultTenant}
	for _, k := range cfg.Server.Auth.APIKeys {
		tenants = append(tenants, k.Tenant)
	}
	a.Metrics.Known(tenants)
	build := buildInfo()
	a.Metrics.BuildInfo(build.Version, build.Commit, build.Go)
	store, svc := a.Store, a.Service
	a.Metrics.Backlog(func(ctx context.Context) (metrics.Backlogs, error) {
		b, err := store.BacklogSizes(ctx)
		return metrics.Backlogs{UnindexedTurns: b.Unindexed, UnsummarisedTurns: b.Unsummarised, UnindexedEpisodes: b.UnindexedEpisodes,
			UnindexedFacts: b.UnindexedFacts, UndrawnTurns: b.UndrawnTurns}, err
	})
	reads := admit.New(readConcurrency(cfg)) // one gate for HTTP and MCP reads
	deps := api.Deps{Service: svc, Options: apiOptions(cfg), Logger: log, Metrics: a.Metrics, Ready: a.ready,
		UI: a.inspector(cfg), Tracer: a.Tracing.Tracer(), Reads: reads, Build: build,
		Bodies: admit.NewBytes(cfg.Server.BodyBudget)}
	if cfg.Server.MCP.Enabled {
		mcp := mcpserver.NewHandler(svc, mcpserver.Options{Version: version, AllowDelete: cfg.Server.MCP.AllowDelete,
			Reads: reads, ReadWait: cfg.Server.RequestTimeout, SessionTimeout: cfg.Server.MCP.SessionTimeout,
			MaxSessions: cfg.Server.MCP.MaxSessions, MaxSessionsPerClient: cfg.Server.MCP.MaxSessionsPerClient,
			ClientByAddress: len(cfg.Server.Auth.APIKeys) == 0})
		a.Metrics.MCPSessions(mcp.Sessions)
		deps.MCP = mcp
	}
	a.Handler = api.NewHandler(deps)
}

// The Previewer previews lagging extractive summaries for the request path.
var _ engine.Previewer = (*worker.Previewer)(nil)

// summaryInput applies the agent's filters to the turns a summary reads, so
// routing noise and agent labels stay out of summaries as they stay out of
// contexts.
func summaryInput(pol func(string) engine.Policy) func(string, []memory.Message) []memory.Message {
	return func(agent string, turns []memory.Message) []memory.Message {
		o := pol(agent).Filters
		o.MaxTurns = 0 // a summary reads every turn
		return filters.Apply(turns, o).Kept
	}
}

// minPending is the fewest stored turns a chat needs before any agent's
// summary could trigger: the smallest recent window plus one.
func minPending(cfg *config.Config) int64 {
	n := cfg.Supervisor.Memory.SummaryRecentTurns
	for _, a := range cfg.Agents {
		n = min(n, a.Memory.SummaryRecentTurns)
	}
	return int64(n) + 1
}

// workerSettings resolves the summariser's settings for an agent.
func workerSettings(cfg *config.Config) func(agent string) worker.Settings {
	return func(agent string) worker.Settings {
		ag := cfg.Agent(agent)
		m := ag.Memory
		return worker.Settings{
			Enabled:       m.Strategy != string(engine.StrategyNone) && m.PersistSummary,
			RecentTurns:   m.SummaryRecentTurns,
			TriggerTurns:  m.SummaryTriggerTurns,
			TriggerTokens: m.SummaryTriggerTokens,
			Cooldown:      m.SummaryCooldown,
			MaxTokens:     m.SummaryMaxTokens,
			Prompts: llmsum.ResolvePrompts(memory.Prompts{
				System:      ag.Prompts.SummaryCompressionSystemPrompt,
				Compression: ag.Prompts.SummaryCompressionUserPrompt,
				Extension:   ag.Prompts.SummaryExtensionUserPrompt,
			}, m.SummaryPrompt),
			Model:      m.SummaryModel,
			Structured: m.StructuredOutput,
			Persist:    m.PersistSummary,
			Episodes: worker.EpisodeSettings{
				Enabled:     m.Episodes,
				Params:      episodes.Params{MinTurns: m.EpisodeMinTurns, MaxTurns: m.EpisodeMaxTurns, Gap: m.EpisodeGap},
				Overlap:     m.EpisodeOverlap,
				ExtendEvery: m.SummaryExtendEveryEpisodes,
				Prompt:      ag.Prompts.EpisodeSummaryPrompt,
			},
		}
	}
}

func observe(m *metrics.Metrics) func(string, *engine.ContextResult) {
	return func(_ string, r *engine.ContextResult) {
		m.ContextTokens.WithLabelValues("rag").Observe(float64(r.Usage.RAGTokens))
		m.ContextTokens.WithLabelValues("summary").Observe(float64(r.Usage.SummaryTokens))
		m.ContextTokens.WithLabelValues("recent").Observe(float64(r.Usage.RecentTokens))
		m.ContextTokens.WithLabelValues("total").Observe(float64(r.Usage.TotalTokens))
		if r.Strategy == engine.StrategyRAG {
			m.Retrieval.Observe(r.RetrievalTime.Seconds())
		}
		m.Assembly.Observe(r.AssemblyTime.Seconds())
		for _, d := range r.Degraded {
			m.Degraded.WithLabelValues(d).Inc()
		}
	}
}

// ready reports each backend's state for /readyz and the backend gauges.
func (a *App) ready(ctx context.Context) map[string]string {
	states := map[string]string{"storage": "ok", "vector": "disabled", "embedder": "ok", "llm": "disabled"}
	if err := a.Store.Ping(ctx); err != nil {
		states["storage"] = "unavailable"
	} else if a.Service != nil && a.Service.StorageFull() {
		// Reads work, writes do not: out of rotation as a down store is,
		// until a write succeeds again.
		states["storage"] = "degraded"
	}
	if a.Index != nil {
		states["vector"] = "ok"
		if err := a.Index.Ping(ctx); err != nil {
			states["vector"] = "unavailable"
		}
		if err := a.Indexer.LastError(); err != nil && errors.Is(err, rag.ErrEmbedder) {
			states["embedder"] = "unavailable"
		}
	}
	if a.LLM != nil {
		states["llm"] = "ok"
		if down, _ := a.LLM.Down(); down { // its last call failed; the next success clears it
			states["llm"] = "unavailable"
		}
	}
	for k, v := range states {
		up := 0.0
		if v == "ok" {
			up = 1
		}
		a.Metrics.BackendUp.WithLabelValues(k).Set(up)
	}
	return states
}

// StartWorkers runs the indexer, the summariser, the profiler and the
// facts-on-arrival job until ctx is done; the returned channel closes
// when all have stopped.
func (a *App) StartWorkers(ctx context.Context) <-chan struct{} {
	var wg sync.WaitGroup
	if a.Indexer != nil {
		wg.Go(func() { _ = a.Indexer.Run(ctx) })
	}
	if a.Worker != nil {
		wg.Go(func() { _ = a.Worker.Run(ctx) })
	}
	if a.Arrivals != nil {
		wg.Go(func() { _ = a.Arrivals.Run(ctx) })
	}
	if a.Profiler != nil {
		wg.Go(func() { _ = a.Profiler.Run(ctx) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return done
}

// apiOptions is the HTTP layer's share of the server settings.
func apiOptions(c *config.Config) api.Options {
	s := c.Server
	keys := make([]api.APIKey, 0, len(s.Auth.APIKeys))
	for _, k := range s.Auth.APIKeys {
		keys = append(keys, api.APIKey{Key: k.Key, Tenant: k.Tenant})
	}
	return api.Options{
		TrustedProxies: s.TrustedProxies, RequestTimeout: s.RequestTimeout, BodyLimit: s.BodyLimit,
		APIKeys: keys, RateLimit: api.RateLimit{RequestsPerSecond: s.RateLimit.RequestsPerSecond, Burst: s.RateLimit.Burst},
		AllowedHosts: s.AllowedHosts, ListenHost: listenHost(s.Addr),
	}
}

// listenHost is the host of a listen address host:port ("" for all
// interfaces).
func listenHost(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return h
}

// readConcurrency is how many context and search requests may work at
// once: server.read_concurrency, or when it is 0 (auto) two per CPU if
// every backend runs in this process (SQLite, the embedded index or none,
// the hashing embedder, no LLM) and no limit otherwise. In-process,
// those requests are CPU, and more at once than the cores can run only
// lengthens the tail; with Postgres, Qdrant, a remote embedder or an LLM
// they mostly wait on the network, and a slot held by a waiting request
// would only cap the throughput.
func readConcurrency(c *config.Config) int {
	if n := c.Server.ReadConcurrency; n > 0 {
		return n
	}
	local := c.Storage.Driver == "sqlite" && c.Vector.Driver != "qdrant" &&
		c.Embedder.Provider == "hashing" && c.LLM.Provider == "none"
	if !local {
		return 0
	}
	return 2 * runtime.GOMAXPROCS(0)
}

// queryCacheSize bounds the query-embedding cache: 4096 vectors of 1,536
// float32 are about 25 MB.
const queryCacheSize = 4096

// queryEmbedder puts a bounded LRU of query vectors in front of a remote
// embedder, so a repeated query costs no round trip. The hashing embedder
// is faster than a cache lookup's bookkeeping and is left as it is.
func queryEmbedder(c config.Embedder, emb rag.Embedder, m *metrics.Metrics) rag.Embedder {
	if c.Provider == "hashing" {
		return emb
	}
	ident := strings.Join([]string{c.Provider, c.Model, c.BaseURL, strconv.Itoa(c.Dimensions)}, "|")
	qc := rag.NewQueryCache(emb, ident, queryCacheSize)
	qc.OnLookup = func(hit bool) {
		if hit {
			m.QueryCache.WithLabelValues("hit").Inc()
		} else {
			m.QueryCache.WithLabelValues("miss").Inc()
		}
	}
	return qc
}

// anyAgent reports whether the supervisor's memory settings or any agent's
// effective ones satisfy f.
func anyAgent(cfg *config.Config, f func(config.Memory) bool) bool {
	if f(cfg.Supervisor.Memory) {
		return true
	}
	for _, a := range cfg.Agents {
		if f(cfg.Agent(a.Name).Memory) {
			return true
		}
	}
	return false
}
