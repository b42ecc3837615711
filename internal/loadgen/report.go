package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the outcome of a run.
type Report struct {
	Options   Options
	Target    string
	Preload   Preload
	Settle    Settle  // zero when not settled
	Phases    []Phase // "contextd", then "no-op"
	Mem       Mem
	LoadStart string // /proc/loadavg at the start and the end
	LoadEnd   string
	// Backlogs after the measured phase (appends keep adding to them).
	UnindexedAfter, UnsummarisedAfter int64
}

// Preload is the ingest phase.
type Preload struct {
	Turns, Requests, Errors int64
	Elapsed                 time.Duration
	FirstError              string
	// IndexWait is how long the indexer backlog took to drain after the
	// last append; Unindexed/Unsummarised are the backlogs when it ended.
	IndexWait               time.Duration
	Unindexed, Unsummarised int64
	IndexNote               string
}

// TurnsPerSec is the ingest throughput through the HTTP API.
func (p Preload) TurnsPerSec() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Turns) / p.Elapsed.Seconds()
}

// Settle is the summary refresh between pre-load and measuring.
type Settle struct {
	Chats, Errors int64
	Elapsed       time.Duration
	FirstError    string
	Unsummarised  int64 // backlog afterwards (the recent windows stay unsummarised)
}

// Phase is the measured load against one target.
type Phase struct {
	Target     string
	Elapsed    time.Duration
	Rows       []Row // per route, then "all"
	FirstError string
	Sample     Sample
	// CPU is the process CPU time used during the phase (-1: unknown).
	// In-process it includes the load generator's own work.
	CPU time.Duration
	// Open is the open loop's schedule (nil in closed loop).
	Open *OpenLoop
}

// OpenLoop is how an open-loop phase kept its schedule.
type OpenLoop struct {
	Rate      float64
	Scheduled int64 // requests due in the phase: floor(rate * duration)
	Unsent    int64 // still untaken a whole Duration after the phase's end
	// How late requests left after they were due (all clients busy, or
	// the generator itself behind); included in the latencies.
	LagP50, LagP99, LagMax time.Duration
	// Busy requests fell due while every client was busy (waiting on the
	// server, mostly); how late the others left (WakeLag) is the load
	// generator's own delay (see lateness).
	Busy                   int64
	WakeLagP99, WakeLagMax time.Duration
}

// Row returns the phase's row for a route ("all" for the total).
func (p Phase) Row(route string) (Row, bool) {
	for _, r := range p.Rows {
		if r.Route == route {
			return r, true
		}
	}
	return Row{}, false
}

// Row is one route's figures.
type Row struct {
	Route                    string
	Requests, Errors         int64
	Throughput               float64 // requests/s over the phase
	P50, P95, P99, P999, Max time.Duration
	Mean                     time.Duration
}

// Mem is the memory seen; -1 is unknown.
type Mem struct {
	InProcess bool
	// PeakRSS is VmHWM at the end (the measured phase's peak when the
	// reset worked, else the whole run's); PreloadPeakRSS is VmHWM after
	// the pre-load and index wait.
	PeakRSS, PreloadPeakRSS int64
	PeakResetOK             bool
	// Maxima sampled once a second during the measured phase against contextd.
	MeasureMaxRSS, MeasureMaxHeap int64
	HeapInuse                     int64 // at the end
}

// Sample summarises the /v1/context answers decoded (1 in 20 per client).
type Sample struct {
	Answers     int
	TotalTokens int64
	RAGHits     int64
	WithRAG     int
	WithSummary int
	OverBudget  int
	Undecodable int
	Degraded    map[string]int
}

type contextAnswer struct {
	Sections struct {
		RAG     []json.RawMessage `json:"rag"`
		Summary json.RawMessage   `json:"summary"`
	} `json:"sections"`
	Usage struct {
		BudgetTokens int `json:"budget_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
	Degraded []string `json:"degraded"`
}

func (s *Sample) add(body []byte) {
	var a contextAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		s.Undecodable++
		return
	}
	s.Answers++
	s.TotalTokens += int64(a.Usage.TotalTokens)
	s.RAGHits += int64(len(a.Sections.RAG))
	if len(a.Sections.RAG) > 0 {
		s.WithRAG++
	}
	if len(a.Sections.Summary) > 0 && string(a.Sections.Summary) != "null" {
		s.WithSummary++
	}
	if a.Usage.TotalTokens > a.Usage.BudgetTokens {
		s.OverBudget++
	}
	for _, d := range a.Degraded {
		if s.Degraded == nil {
			s.Degraded = map[string]int{}
		}
		s.Degraded[d]++
	}
}

func (s *Sample) merge(o Sample) {
	s.Answers += o.Answers
	s.TotalTokens += o.TotalTokens
	s.RAGHits += o.RAGHits
	s.WithRAG += o.WithRAG
	s.WithSummary += o.WithSummary
	s.OverBudget += o.OverBudget
	s.Undecodable += o.Undecodable
	for k, v := range o.Degraded {
		if s.Degraded == nil {
			s.Degraded = map[string]int{}
		}
		s.Degraded[k] += v
	}
}

// Targets of issue 7 (reported, never asserted).
const (
	TargetContextP99  = 10 * time.Millisecond
	TargetContextRate = 1000.0
	TargetPeakRSS     = 300 << 20
)

// Write prints the report: the table, the ratios, memory, targets.
func (r *Report) Write(w io.Writer) {
	r.writeHeader(w)
	cd, noop, ok := r.phases()
	r.writeLatency(w, cd, noop, ok)
	r.writeCPU(w)
	r.writeMemory(w)
	if ok {
		r.writeChecks(w, cd)
	}
	fmt.Fprintf(w, "load average (1/5/15 min): %s at the start, %s at the end\n", r.LoadStart, r.LoadEnd)
}

// writeHeader writes the run's settings, the pre-load and the settle.
func (r *Report) writeHeader(w io.Writer) {
	o := r.Options
	mode := "closed loop"
	if o.Rate > 0 {
		mode = fmt.Sprintf("open loop at %g req/s", o.Rate)
	}
	if o.Warmup > 0 {
		mode += fmt.Sprintf(" after %s of warmup (not recorded)", o.Warmup)
	}
	turns := "turns"
	if o.LongTurns {
		turns = "long turns"
	}
	ctxReq := "context"
	if o.AppendInContext {
		ctxReq = "context with append (the AI SDK's call)"
	}
	fmt.Fprintf(w, "\ncontextd bench load: %d chats x %d %s; %d clients, %s per target, %s; mix %.2f %s; budget %d; strategy %s; seed %d\n",
		o.Chats, o.Turns, turns, o.Clients, o.Duration, mode, o.Mix, ctxReq, o.Budget, o.Strategy, o.Seed)
	p := r.Preload
	fmt.Fprintf(w, "pre-load: %d turns in %d requests (%d errors) in %s: %.0f turns/s",
		p.Turns, p.Requests, p.Errors, p.Elapsed.Round(time.Millisecond), p.TurnsPerSec())
	if p.IndexNote != "" {
		fmt.Fprintf(w, "; indexer: %s", p.IndexNote)
	} else {
		fmt.Fprintf(w, "; indexer backlog drained %s after the last append", p.IndexWait.Round(time.Millisecond))
	}
	fmt.Fprintf(w, " (unsummarised turns then: %d)\n", p.Unsummarised)
	if p.FirstError != "" {
		fmt.Fprintf(w, "pre-load first error: %s\n", p.FirstError)
	}
	if st := r.Settle; st.Chats > 0 {
		fmt.Fprintf(w, "settle: %d summaries refreshed (%d errors) in %s; unsummarised turns then: %d\n",
			st.Chats-st.Errors, st.Errors, st.Elapsed.Round(time.Millisecond), st.Unsummarised)
		if st.FirstError != "" {
			fmt.Fprintf(w, "settle first error: %s\n", st.FirstError)
		}
	} else {
		fmt.Fprintln(w, "settle: skipped (summaries lag as after a bulk import)")
	}
	fmt.Fprintln(w)

}

// writeLatency writes the latency table, the open loop's lateness, the
// contextd/no-op ratios (when both phases ran) and the first errors.
func (r *Report) writeLatency(w io.Writer, cd, noop Phase, ok bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\troute\trequests\terrors\treq/s\tp50\tp95\tp99\tp99.9\tmax\t")
	for _, ph := range r.Phases {
		for _, row := range ph.Rows {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t\n", ph.Target, row.Route, row.Requests, row.Errors,
				row.Throughput, ms(row.P50), ms(row.P95), ms(row.P99), ms(row.P999), ms(row.Max))
		}
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	for _, ph := range r.Phases {
		if op := ph.Open; op != nil {
			fmt.Fprintf(w, "open loop, %s: %d requests due at %g req/s, %d unsent; sent late by p50 %s, p99 %s, max %s (latency counts from when due, so this is inside it); %d fell due with every client busy; the rest, due with a client free, left late by p99 %s, max %s (the load generator's own delay)\n",
				ph.Target, op.Scheduled, op.Rate, op.Unsent, ms(op.LagP50), ms(op.LagP99), ms(op.LagMax), op.Busy, ms(op.WakeLagP99), ms(op.WakeLagMax))
		}
	}

	if ok {
		for _, route := range []string{routeNames[routeContext], routeNames[routeAppend], "all"} {
			a, _ := cd.Row(route)
			b, _ := noop.Row(route)
			fmt.Fprintf(w, "ratio contextd/no-op, %s: p99 x%s, throughput x%s\n", route, ratio(float64(a.P99), float64(b.P99)), ratio(a.Throughput, b.Throughput))
		}
	}
	for _, ph := range r.Phases {
		if ph.FirstError != "" {
			fmt.Fprintf(w, "%s first error: %s\n", ph.Target, ph.FirstError)
		}
	}

}

// writeCPU writes each phase's CPU per request and the ceiling it implies.
func (r *Report) writeCPU(w io.Writer) {
	for _, ph := range r.Phases {
		all, _ := ph.Row("all")
		if ph.CPU <= 0 || all.Requests == 0 {
			continue
		}
		cores := ph.CPU.Seconds() / ph.Elapsed.Seconds()
		per := ph.CPU / time.Duration(all.Requests)
		scope := "this process, load generator included"
		if ph.Target == "contextd" && !r.Mem.InProcess {
			scope = "the target's process_cpu_seconds_total"
		}
		fmt.Fprintf(w, "cpu, %s: %.1f core-seconds in %s (%.2f cores busy, %s) = %s per request; CPU-bound ceiling on %d free cores ~%.0f req/s\n",
			ph.Target, ph.CPU.Seconds(), ph.Elapsed.Round(time.Millisecond), cores, scope, ms(per), runtime.NumCPU(), float64(runtime.NumCPU())/per.Seconds())
	}

}

// writeMemory writes the peak and sampled memory.
func (r *Report) writeMemory(w io.Writer) {
	m := r.Mem
	if m.InProcess {
		peakWhat := "measured phases"
		if !m.PeakResetOK {
			peakWhat = "whole run"
		}
		fmt.Fprintf(w, "memory (in-process: includes the load generator): peak RSS %s (%s), %s (pre-load and indexing); RSS max %s and Go heap in use max %s during the contextd phase (sampled 1/s); heap in use at the end %s\n",
			mb(m.PeakRSS), peakWhat, mb(m.PreloadPeakRSS), mb(m.MeasureMaxRSS), mb(m.MeasureMaxHeap), mb(m.HeapInuse))
	} else {
		fmt.Fprintf(w, "memory (target's /metrics, sampled 1/s during the contextd phase): RSS max %s, Go heap in use max %s; heap in use at the end %s\n",
			mb(m.MeasureMaxRSS), mb(m.MeasureMaxHeap), mb(m.HeapInuse))
	}
}

// writeChecks writes what the sampled context answers held, the backlogs
// after the contextd phase and the verdicts against the targets.
func (r *Report) writeChecks(w io.Writer, cd Phase) {
	o, m := r.Options, r.Mem
	s := cd.Sample
	if s.Answers > 0 {
		var deg []string
		for k, v := range s.Degraded {
			deg = append(deg, fmt.Sprintf("%s %.0f%%", k, 100*float64(v)/float64(s.Answers)))
		}
		sort.Strings(deg)
		if len(deg) == 0 {
			deg = []string{"none"}
		}
		fmt.Fprintf(w, "context answers checked (1 in 20): %d; mean total_tokens %.0f of %d; with RAG hits %.0f%% (mean %.1f hits); with a summary %.0f%%; over budget %d; undecodable %d; degraded: %s\n",
			s.Answers, float64(s.TotalTokens)/float64(s.Answers), o.Budget, pct(s.WithRAG, s.Answers), float64(s.RAGHits)/float64(s.Answers),
			pct(s.WithSummary, s.Answers), s.OverBudget, s.Undecodable, strings.Join(deg, ", "))
	}
	fmt.Fprintf(w, "backlogs after the contextd phase: %d unindexed, %d unsummarised turns\n", r.UnindexedAfter, r.UnsummarisedAfter)
	if c, ok := cd.Row(routeNames[routeContext]); ok {
		rss := m.PeakRSS
		if !m.InProcess {
			rss = m.MeasureMaxRSS
		}
		offered := ""
		if o.Rate > 0 {
			offered = ", offered in open loop"
		}
		fmt.Fprintf(w, "targets (2 cores): /v1/context p99 <= %s: %s (%s); >= %.0f req/s: %s (%.0f%s); peak RSS <= %s: %s (%s)\n",
			ms(TargetContextP99), verdict(c.P99 <= TargetContextP99), ms(c.P99),
			TargetContextRate, verdict(c.Throughput >= TargetContextRate), c.Throughput, offered,
			mb(TargetPeakRSS), verdictKnown(rss >= 0, rss <= TargetPeakRSS), mb(rss))
	}
}

func (r *Report) phases() (cd, noop Phase, ok bool) {
	var n int
	for _, p := range r.Phases {
		switch p.Target {
		case "contextd":
			cd, n = p, n+1
		case "no-op":
			noop, n = p, n+1
		}
	}
	return cd, noop, n == 2
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
}

func mb(b int64) string {
	if b < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f MB", float64(b)/(1<<20))
}

func ratio(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func verdictKnown(known, ok bool) string {
	if !known {
		return "unknown"
	}
	return verdict(ok)
}
