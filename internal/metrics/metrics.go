// Package metrics holds contextd's Prometheus metrics on a registry of its
// own (no global state), so tests and several servers in one process do not
// collide. Nothing is sent anywhere: /metrics is scraped.
package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are contextd's metrics.
type Metrics struct {
	Registry        *prometheus.Registry
	RequestDuration *prometheus.HistogramVec
	AppendedTurns   prometheus.Counter
	ContextTokens   *prometheus.HistogramVec
	Retrieval       prometheus.Histogram
	Assembly        prometheus.Histogram
	SummaryJobs     *prometheus.CounterVec
	Degraded        *prometheus.CounterVec
	BackendUp       *prometheus.GaugeVec
	// QueryCache counts query-embedding cache lookups by result (hit, miss).
	QueryCache *prometheus.CounterVec

	// The per-tenant counters carry a tenant label only when
	// Options.TenantLabels is set; use AddLLMTokens and CountRateLimited.
	tenantLabels bool
	llmTokens    *prometheus.CounterVec
	rateLimited  *prometheus.CounterVec
}

// Options shape the metrics.
type Options struct {
	// TenantLabels names the tenant in the labels of per-tenant metrics
	// (server.metrics.tenant_labels). Off, they are totals over tenants,
	// so a scrape reveals no tenant's name.
	TenantLabels bool
}

// New creates the metrics on a fresh registry, without tenant labels.
func New() *Metrics { return NewWith(Options{}) }

// NewWith creates the metrics on a fresh registry.
func NewWith(o Options) *Metrics {
	tenant := func(labels ...string) []string {
		if o.TenantLabels {
			return append([]string{"tenant"}, labels...)
		}
		return labels
	}
	m := &Metrics{
		tenantLabels: o.TenantLabels,
		Registry:     prometheus.NewRegistry(),
		RequestDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "contextd_http_request_duration_seconds", Help: "HTTP request latency by route and status.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"route", "method", "status"}),
		AppendedTurns: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "contextd_appended_turns_total", Help: "Turns stored (duplicates excluded).",
		}),
		ContextTokens: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "contextd_context_tokens", Help: "Tokens in assembled contexts by section.",
			Buckets: prometheus.ExponentialBuckets(16, 2, 12),
		}, []string{"section"}),
		Retrieval: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "contextd_retrieval_duration_seconds", Help: "Retrieval latency within /v1/context.",
			Buckets: []float64{.0001, .00025, .0005, .001, .002, .005, .01, .025, .05, .1, .5, 1},
		}),
		Assembly: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "contextd_assembly_duration_seconds", Help: "Context assembly latency (without retrieval).",
			Buckets: []float64{.0001, .00025, .0005, .001, .002, .005, .01, .025, .05},
		}),
		SummaryJobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contextd_summary_jobs_total", Help: "Summary extensions by outcome.",
		}, []string{"outcome"}),
		llmTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contextd_llm_tokens_total", Help: "LLM tokens by direction (in, out), and tenant with server.metrics.tenant_labels.",
		}, tenant("direction")),
		Degraded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contextd_degraded_answers_total", Help: "Context answers that took a fallback, by reason.",
		}, []string{"reason"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contextd_rate_limited_total", Help: "Requests refused by the per-tenant rate limit (by tenant with server.metrics.tenant_labels).",
		}, tenant()),
		BackendUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "contextd_backend_up", Help: "1 when the backend answers, 0 when degraded or down.",
		}, []string{"backend"}),
		QueryCache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "contextd_query_embedding_cache_total", Help: "Query-embedding cache lookups (remote embedders) by result: hit, miss.",
		}, []string{"result"}),
	}
	m.Registry.MustRegister(m.RequestDuration, m.AppendedTurns, m.ContextTokens, m.Retrieval, m.Assembly,
		m.SummaryJobs, m.llmTokens, m.Degraded, m.rateLimited, m.BackendUp, m.QueryCache,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Known pre-creates the series of known label values at zero, so a scrape
// shows every metric before its first event.
func (m *Metrics) Known(tenants []string) {
	m.QueryCache.WithLabelValues("hit")
	m.QueryCache.WithLabelValues("miss")
	for _, o := range []string{"ok", "degraded", "error"} {
		m.SummaryJobs.WithLabelValues(o)
	}
	if !m.tenantLabels {
		tenants = []string{""}
	}
	for _, t := range tenants {
		m.llmTokens.WithLabelValues(m.labels(t, "in")...)
		m.llmTokens.WithLabelValues(m.labels(t, "out")...)
		m.rateLimited.WithLabelValues(m.labels(t)...)
	}
	for _, b := range []string{"storage", "vector", "embedder", "llm"} {
		m.BackendUp.WithLabelValues(b)
	}
	for _, s := range []string{"rag", "summary", "recent", "total"} {
		m.ContextTokens.WithLabelValues(s)
	}
}

// labels puts the tenant first when tenant labels are on.
func (m *Metrics) labels(tenant string, rest ...string) []string {
	if m.tenantLabels {
		return append([]string{tenant}, rest...)
	}
	return rest
}

// AddLLMTokens counts a tenant's LLM tokens in and out.
func (m *Metrics) AddLLMTokens(tenant string, in, out int) {
	m.llmTokens.WithLabelValues(m.labels(tenant, "in")...).Add(float64(in))
	m.llmTokens.WithLabelValues(m.labels(tenant, "out")...).Add(float64(out))
}

// CountRateLimited counts a request the tenant's rate limit refused.
func (m *Metrics) CountRateLimited(tenant string) {
	m.rateLimited.WithLabelValues(m.labels(tenant)...).Inc()
}

// BuildInfo registers contextd_build_info, a gauge that is always 1 and
// whose labels name the build: version (-ldflags main.version), commit and
// the Go version it was built with.
func (m *Metrics) BuildInfo(version, commit, goversion string) {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "contextd_build_info",
		Help:        "The build of this contextd: always 1; the labels are its version, commit and Go version.",
		ConstLabels: prometheus.Labels{"version": version, "commit": commit, "goversion": goversion},
	})
	g.Set(1)
	m.Registry.MustRegister(g)
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// MCPSessions registers a gauge of the MCP sessions open, read at scrape
// time.
func (m *Metrics) MCPSessions(read func() int) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "contextd_mcp_sessions", Help: "MCP sessions open (bounded by server.mcp.max_sessions).",
	}, func() float64 { return float64(read()) }))
}

// Backlogs are the derived backlogs' sizes.
type Backlogs struct {
	UnindexedTurns, UnsummarisedTurns, UnindexedEpisodes, UnindexedFacts, UndrawnTurns int64
}

// Backlog registers gauges of the derived backlogs, read at scrape time,
// once per scrape for all of them (one collector).
func (m *Metrics) Backlog(read func(ctx context.Context) (Backlogs, error)) {
	m.Registry.MustRegister(&backlogCollector{read: read})
}

// backlogCollector reads the store once per scrape.
type backlogCollector struct {
	read func(ctx context.Context) (Backlogs, error)
}

var backlogGauges = []struct {
	desc *prometheus.Desc
	pick func(Backlogs) int64
}{
	{backlogDesc("unindexed_turns", "Stored turns not yet in the vector index"), func(b Backlogs) int64 { return b.UnindexedTurns }},
	{backlogDesc("unsummarised_turns", "Stored turns not yet covered by a summary"), func(b Backlogs) int64 { return b.UnsummarisedTurns }},
	{backlogDesc("unindexed_episodes", "Closed episodes not yet in the vector index"), func(b Backlogs) int64 { return b.UnindexedEpisodes }},
	{backlogDesc("unindexed_facts", "Facts not yet in the vector index"), func(b Backlogs) int64 { return b.UnindexedFacts }},
	{backlogDesc("undrawn_turns", "Stored turns whose facts on arrival are not drawn yet"), func(b Backlogs) int64 { return b.UndrawnTurns }},
}

func backlogDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("contextd_backlog_"+name, help+" (-1: store unreachable).", nil, nil)
}

func (c *backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, g := range backlogGauges {
		ch <- g.desc
	}
}

func (c *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	b, err := c.read(ctx)
	for _, g := range backlogGauges {
		v := float64(g.pick(b))
		if err != nil {
			v = -1
		}
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, v)
	}
}
