package engine

import (
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/contextd/contextd/internal/tracing"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
	"github.com/contextd/contextd/truncation"
)

// Deps is what the engine uses. New resolves it once: the store, its roles
// and the summary worker are required (New panics without them: a wiring
// bug); the rest is optional, each with the one meaning its comment gives
// to nil.
type Deps struct {
	// Store reads and writes chats and their summaries (required).
	Store ChatStore
	// The store's other roles (required; BackendDeps fills them from one
	// backend): episodes, facts, users' profiles, the chats' backlog lag,
	// export/import, and the deletion of one message.
	Episodes memory.EpisodeReader
	Facts    memory.FactStore
	Profiles Profiles
	Lags     memory.ChatLags
	Dumper   memory.Dumper
	Forget   MessageDeleter

	// SummaryJobs extends chats' summaries, and Previews give a lagging
	// summary's answers the extension the worker is about to write
	// (preview.go): both required, the summary worker in production;
	// tests pass fakes (enginetest.SummaryJobs does nothing).
	SummaryJobs SummaryJobs
	Previews    Previewer
	// Arrivals draws new turns' facts in the background, through this
	// service (New binds it; nil: none are drawn on arrival, only by
	// episodes).
	Arrivals *Arrivals
	// ProfileDegraded names the fallbacks a user's last profile merge took
	// (nil: none are reported).
	ProfileDegraded func(tenant, userID string) []string

	// Index, Retriever and Indexer are the vector store, retrieval over it
	// and its background indexer (nil: vector.driver is none — contexts
	// say vector_store_unavailable, searches are unavailable).
	Index     rag.Index
	Retriever Retriever
	Indexer   Indexer
	// Scorer and Condenser back the semantic and llm truncation strategies
	// (nil: those strategies fall back as truncation documents).
	Scorer    truncation.Scorer
	Condenser truncation.Condenser

	// Policy resolves an agent's settings (nil: DefaultPolicy for all).
	Policy func(agent string) Policy
	// AgentDefined reports whether agents.yaml defines the agent; an
	// undefined one gets the supervisor's settings and contexts say
	// unknown_agent (nil: every agent is defined).
	AgentDefined func(agent string) bool
	Limits       Limits
	// MaxLoad caps the verbatim candidates read per request (0: 400
	// pending turns with a summary, 1000 with strategy none); older turns
	// that fit nowhere are counted as dropped without being read.
	MaxLoad int
	// LLMEpisodes: an LLM writes the episodes' summaries (the summariser
	// declares it); packing then keeps a retrieved episode beside its
	// turns, and facts are drawn by episodes, not on arrival.
	LLMEpisodes bool

	// Full is told of every write's outcome (nil: New makes one; main
	// shares one with the background jobs for /readyz).
	Full *DiskFull
	// Logger (nil: discard), Now (nil: time.Now().UTC()), Tracer (nil:
	// no-op: a span per stage of /v1/context).
	Logger *slog.Logger
	Now    func() time.Time
	Tracer trace.Tracer
	// Observe is told about every assembled context (nil: nothing is).
	Observe func(agent string, a *ContextResult)
	// OnAppend is told how many turns each append stored (nil: nothing is).
	OnAppend func(tenant string, appended int)
}

// BackendDeps is Deps with the store and every store role taken from one
// backend.
func BackendDeps(b memory.Backend) Deps {
	return Deps{Store: b, Episodes: b, Facts: b, Profiles: b, Lags: b, Dumper: b, Forget: b}
}

// storeRoles are the store's roles beside Store, all present.
type storeRoles struct {
	episodes memory.EpisodeReader
	facts    memory.FactStore
	profiles Profiles
	lags     memory.ChatLags
	dumper   memory.Dumper
	forget   MessageDeleter
}

// jobs are the background jobs the use cases wake, wait for or ask.
type jobs struct {
	summaries       SummaryJobs
	previews        Previewer
	arrivals        FactsJob
	indexer         Indexer
	profileDegraded func(tenant, userID string) []string
}

// vectors are the vector store and retrieval over it (both nil without
// one).
type vectors struct {
	index     rag.Index
	retriever Retriever
}

// truncators back the semantic and llm truncation strategies.
type truncators struct {
	scorer    truncation.Scorer
	condenser truncation.Condenser
}

// settings are the agents' policies and the request limits.
type settings struct {
	policy       func(agent string) Policy
	agentDefined func(agent string) bool
	limits       Limits
	maxLoad      int
	llmEpisodes  bool
}

// observers are the clock, the log, the tracer and the metrics' hooks.
type observers struct {
	now      func() time.Time
	logger   *slog.Logger
	tracer   trace.Tracer
	observe  func(agent string, a *ContextResult)
	onAppend func(tenant string, appended int)
}

// caches are the service's in-memory caches of hot chats.
type caches struct {
	tokens   *tokenCache
	turns    *turnCache
	heads    *headCache
	profiles *profileCache
	standing *standingCache
	updates  *updateCache
	marks    *markMemo
}

// New builds the service from d; it panics when a required collaborator
// is missing.
func New(d Deps) *Service {
	if err := d.check(); err != nil {
		panic(err)
	}
	s := &Service{
		store: d.Store,
		roles: storeRoles{episodes: d.Episodes, facts: d.Facts, profiles: d.Profiles, lags: d.Lags, dumper: d.Dumper, forget: d.Forget},
		jobs: jobs{summaries: d.SummaryJobs, previews: d.Previews, indexer: d.Indexer,
			profileDegraded: d.ProfileDegraded},
		vec:   vectors{index: d.Index, retriever: d.Retriever},
		trunc: truncators{scorer: d.Scorer, condenser: d.Condenser},
		conf: settings{policy: d.Policy, agentDefined: d.AgentDefined, limits: d.Limits, maxLoad: d.MaxLoad,
			llmEpisodes: d.LLMEpisodes},
		obs: observers{now: d.Now, logger: d.Logger, tracer: tracing.Or(d.Tracer), observe: d.Observe, onAppend: d.OnAppend},
		cache: caches{tokens: newTokenCache(1 << 18), turns: newTurnCache(defaultTurnCacheBytes),
			heads:    &headCache{m: map[memory.ChatKey]*memory.SummaryRecord{}},
			profiles: &profileCache{m: map[[2]string]cachedProfile{}},
			standing: &standingCache{}, updates: &updateCache{}, marks: newMarkMemo()},
		full: d.Full,
	}
	if s.full == nil {
		s.full = &DiskFull{}
	}
	s.transfer = &Transfer{store: s.store, dumper: s.roles.dumper, limits: s.conf.limits, full: s.full}
	if d.Arrivals != nil { // not a typed nil in jobs.arrivals
		d.Arrivals.svc = s
		s.jobs.arrivals = d.Arrivals
	}
	s.defaults()
	return s
}

// defaults gives each optional function its documented nil meaning, once.
func (s *Service) defaults() {
	if s.conf.policy == nil {
		s.conf.policy = func(string) Policy { return DefaultPolicy() }
	}
	if s.conf.agentDefined == nil {
		s.conf.agentDefined = func(string) bool { return true }
	}
	if s.jobs.profileDegraded == nil {
		s.jobs.profileDegraded = func(string, string) []string { return nil }
	}
	if s.obs.now == nil {
		s.obs.now = func() time.Time { return time.Now().UTC() }
	}
	if s.obs.logger == nil {
		s.obs.logger = slog.New(slog.DiscardHandler)
	}
	if s.obs.observe == nil {
		s.obs.observe = func(string, *ContextResult) {}
	}
	if s.obs.onAppend == nil {
		s.obs.onAppend = func(string, int) {}
	}
}

// check names the required collaborators d lacks.
func (d Deps) check() error {
	var missing []string
	for _, r := range []struct {
		name string
		nil  bool
	}{
		{"Store", d.Store == nil}, {"Episodes", d.Episodes == nil}, {"Facts", d.Facts == nil},
		{"Profiles", d.Profiles == nil}, {"Lags", d.Lags == nil}, {"Dumper", d.Dumper == nil}, {"Forget", d.Forget == nil},
		{"SummaryJobs", d.SummaryJobs == nil}, {"Previews", d.Previews == nil},
	} {
		if r.nil {
			missing = append(missing, r.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("engine.New: missing %s", strings.Join(missing, ", "))
	}
	return nil
}

// DiskFull remembers whether the last write that succeeded or ran out of
// space ran out: requests' writes and the background jobs' tell it, and
// /readyz asks it.
type DiskFull struct{ full atomic.Bool }

// Note records a write's outcome: success clears the mark, a full disk
// sets it, any other error leaves it.
func (f *DiskFull) Note(err error) {
	switch {
	case err == nil:
		f.full.Store(false)
	case storageFull(err):
		f.full.Store(true)
	}
}

// Full reports whether the last write that succeeded or ran out of space
// ran out.
func (f *DiskFull) Full() bool { return f.full.Load() }
