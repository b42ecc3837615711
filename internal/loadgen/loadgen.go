// Package loadgen is contextd's bounded load generator (`contextd bench
// load`): it pre-loads a synthetic corpus through the HTTP API, waits for
// the indexer, then drives a mix of POST /v1/context and appends from many
// keep-alive clients for a fixed time, and runs the same load against a
// no-op Echo handler to show the HTTP floor. It targets loopback only and
// every loop is bounded in count and time.
package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a run. Zero values take the defaults of `contextd bench
// load`, except Progress (nil: silent) and Profile.
type Options struct {
	Chats    int           // chats pre-loaded (default 1000)
	Turns    int           // turns per chat pre-loaded (default 200)
	Batch    int           // turns per pre-load POST (default 50)
	Clients  int           // concurrent clients (default 64)
	Duration time.Duration // measured time per target (default 20s)
	// Mix is the share of requests that are POST /v1/context; the rest
	// append 1-2 turns. Default 0.8; set MixSet to use 0.
	Mix      float64
	MixSet   bool
	Budget   int    // budget_tokens of context requests (default 4000)
	Strategy string // strategy of context requests (default rag_augmented)
	Seed     int64
	// LongTurns makes the corpus's turns 100-1,500 characters (Corpus.Long).
	LongTurns bool
	// AppendInContext makes each context request the one the AI SDK
	// middleware sends: the user's new turn stored by the same request
	// (`append`, with an id) and the answer as messages (`include:
	// ["messages"]`), its query that turn.
	AppendInContext bool
	// Rate, when > 0, sends this many requests/s in total on a fixed
	// schedule (open loop: request i is due at start + i/Rate, whichever
	// client is free sends it, and its latency counts from when it was
	// due, so queueing behind a slow server is not hidden). 0 runs closed
	// loop, each client as fast as its answers come.
	Rate float64
	// Warmup runs the load this long before the measured Duration, on the
	// same schedule, without recording it: caches cold at the start of a
	// phase (the first request of each chat) otherwise put their stall in
	// the tail, most of all in open loop, where the requests due during it
	// queue behind it.
	Warmup time.Duration
	// NoSettle skips refreshing every chat's summary (POST
	// /v1/chats/{id}/summary/refresh) after the pre-load. By default the
	// run settles, so contexts are measured in steady state (a fresh
	// summary plus the recent window) rather than just after a bulk import,
	// when summaries lag by up to Turns turns per chat.
	NoSettle bool
	// IndexTimeout bounds the wait for the indexer backlog (default 15m);
	// IndexStall ends it sooner when the backlog stops shrinking for that
	// long (default 1m): no vector store, or a failing indexer.
	IndexTimeout time.Duration
	IndexStall   time.Duration
	// InProcess says the server runs in this process: memory comes from
	// /proc/self and the Go runtime. Otherwise from the target's /metrics.
	InProcess bool
	// Progress receives phase lines while the run goes; nil is silent.
	Progress io.Writer
	// Profile, when set, is started before the measured phase against
	// contextd and its result called after it (a CPU profile).
	Profile func() (stop func())
}

// maxRequestsPerClient bounds each client's loop in count, whatever the
// duration (the duration bounds it in time).
const maxRequestsPerClient = 2_000_000

// Check fills in the defaults and validates the options; Run calls it too.
func (o *Options) Check() error {
	if o.Chats == 0 {
		o.Chats = 1000
	}
	if o.Turns == 0 {
		o.Turns = 200
	}
	if o.Batch == 0 {
		o.Batch = 50
	}
	if o.Clients == 0 {
		o.Clients = 64
	}
	if o.Duration == 0 {
		o.Duration = 20 * time.Second
	}
	if o.Mix == 0 && !o.MixSet {
		o.Mix = 0.8
	}
	if o.Budget == 0 {
		o.Budget = 4000
	}
	if o.Strategy == "" {
		o.Strategy = "rag_augmented"
	}
	if o.IndexTimeout == 0 {
		o.IndexTimeout = 15 * time.Minute
	}
	if o.IndexStall == 0 {
		o.IndexStall = time.Minute
	}
	switch {
	case o.Chats < 1 || o.Chats > 1_000_000:
		return fmt.Errorf("chats must be in 1..1000000, not %d", o.Chats)
	case o.Turns < 1 || o.Turns > 100_000:
		return fmt.Errorf("turns must be in 1..100000, not %d", o.Turns)
	case o.Batch < 1 || o.Batch > 1000:
		return fmt.Errorf("batch must be in 1..1000, not %d", o.Batch)
	case o.Clients < 1 || o.Clients > 4096:
		return fmt.Errorf("clients must be in 1..4096, not %d", o.Clients)
	case o.Duration < 0 || o.Duration > time.Hour:
		return fmt.Errorf("duration must be in 0..1h, not %s", o.Duration)
	case o.Mix < 0 || o.Mix > 1:
		return fmt.Errorf("mix must be in 0..1, not %g", o.Mix)
	case o.Budget < 1:
		return fmt.Errorf("budget must be positive, not %d", o.Budget)
	case o.Rate < 0:
		return fmt.Errorf("rate must not be negative")
	case o.Warmup < 0 || o.Warmup > 10*time.Minute:
		return fmt.Errorf("warmup must be in 0..10m, not %s", o.Warmup)
	}
	return nil
}

// BaseURL turns an address ("127.0.0.1:8080", "localhost:8080" or
// "http://[::1]:8080") into a base URL, refusing anything but loopback: the
// load generator is not a tool to aim at other machines.
func BaseURL(addr string) (string, error) {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	u, err := url.Parse(addr)
	if err != nil {
		return "", fmt.Errorf("bad address %q: %w", addr, err)
	}
	if u.Scheme != "http" {
		return "", fmt.Errorf("bad address %q: only http:// on loopback", addr)
	}
	host := u.Hostname()
	if host != "localhost" {
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			return "", fmt.Errorf("address %q is not loopback: bench load only targets 127.0.0.1, ::1 or localhost", addr)
		}
	}
	if u.Port() == "" {
		return "", fmt.Errorf("address %q has no port", addr)
	}
	return "http://" + u.Host, nil
}

// newClient is a keep-alive client sized for n concurrent requests to one
// host; no proxy (loopback), no compression.
func newClient(n int) *http.Client {
	return &http.Client{
		Timeout: time.Minute,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        2 * n,
			MaxIdleConnsPerHost: n,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
	}
}

// NewServer is an http.Server with the settings `contextd serve` uses, so
// contextd in-process and the no-op handler are served alike.
func NewServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
}

// Run executes a whole run against the contextd at base and returns the
// report. A failing request is counted, not fatal; Run fails only when the
// server cannot be used at all (every pre-load request failed) or ctx ends.
func Run(ctx context.Context, base string, o Options) (*Report, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	base, err := BaseURL(base)
	if err != nil {
		return nil, err
	}
	rep := &Report{Options: o, Target: base, LoadStart: loadAvg()}
	progress := o.Progress
	if progress == nil {
		progress = io.Discard
	}
	corpus := Corpus{Seed: o.Seed, Long: o.LongTurns}

	client := newClient(o.Clients)
	defer client.CloseIdleConnections()
	if err := rep.prepare(ctx, client, corpus, progress); err != nil {
		return nil, err
	}
	mem := newMemProbe(o.InProcess, client, base)
	rep.Mem.PreloadPeakRSS = mem.peakRSS()
	rep.Mem.PeakResetOK = mem.resetPeak()
	if err := rep.measureContextd(ctx, client, mem, corpus, progress); err != nil {
		return nil, err
	}
	if err := rep.measureNoop(ctx, corpus, progress); err != nil {
		return nil, err
	}
	rep.Mem.PeakRSS = mem.peakRSS()
	rep.Mem.HeapInuse = mem.heapNow()
	rep.Mem.InProcess = o.InProcess
	rep.LoadEnd = loadAvg()
	return rep, nil
}

// prepare pre-loads the chats, waits for the indexer, then (unless
// NoSettle) refreshes every chat's summary.
func (rep *Report) prepare(ctx context.Context, client *http.Client, corpus Corpus, progress io.Writer) error {
	o, base := rep.Options, rep.Target
	fmt.Fprintf(progress, "pre-load: %d chats x %d turns through %s with %d clients\n", o.Chats, o.Turns, base, o.Clients)
	var err error
	rep.Preload, err = preload(ctx, client, base, corpus, o, progress)
	if err != nil {
		return err
	}
	fmt.Fprintf(progress, "pre-load: %d turns in %s (%.0f turns/s); waiting for the indexer\n",
		rep.Preload.Turns, rep.Preload.Elapsed.Round(time.Millisecond), rep.Preload.TurnsPerSec())
	if err := waitIndexed(ctx, client, base, o.IndexTimeout, o.IndexStall, &rep.Preload, progress); err != nil {
		return err
	}
	if o.NoSettle {
		return nil
	}
	fmt.Fprintf(progress, "settle: refreshing %d chats' summaries\n", o.Chats)
	rep.Settle, err = settle(ctx, client, base, corpus, o)
	if err != nil {
		return err
	}
	if m, ok, _ := backlog(ctx, client, base); ok {
		rep.Settle.Unsummarised = m.unsummarised
	}
	return nil
}

// measureContextd is the measured phase against contextd, profiled when
// Options.Profile is set, with its CPU and memory.
func (rep *Report) measureContextd(ctx context.Context, client *http.Client, mem memProbe, corpus Corpus, progress io.Writer) error {
	o, base := rep.Options, rep.Target
	fmt.Fprintf(progress, "measure: contextd, %d clients for %s\n", o.Clients, o.Duration)
	var stopProfile func()
	if o.Profile != nil {
		stopProfile = o.Profile()
	}
	sampler := mem.sample(o.Warmup + o.Duration)
	cpu0 := cpuAfter(ctx, mem, o.Warmup)
	ph, err := measure(ctx, client, "contextd", base, corpus, o, true)
	ph.CPU = cpuSince(mem.cpuTime(ctx), <-cpu0)
	memRes := sampler()
	if stopProfile != nil {
		stopProfile()
	}
	if err != nil {
		return err
	}
	rep.Phases = append(rep.Phases, ph)
	rep.Mem.MeasureMaxRSS, rep.Mem.MeasureMaxHeap = memRes.rss, memRes.heap
	if m, ok, _ := backlog(ctx, client, base); ok {
		rep.UnindexedAfter, rep.UnsummarisedAfter = m.unindexed, m.unsummarised
	}
	return nil
}

// measureNoop is the same load against a no-op Echo handler on another
// loopback port, served with the same http.Server settings: the HTTP
// floor.
func (rep *Report) measureNoop(ctx context.Context, corpus Corpus, progress io.Writer) error {
	o := rep.Options
	noop, err := serveNoop()
	if err != nil {
		return err
	}
	defer noop.close()
	fmt.Fprintf(progress, "measure: no-op handler at %s, %d clients for %s\n", noop.base, o.Clients, o.Duration)
	noopClient := newClient(o.Clients)
	defer noopClient.CloseIdleConnections()
	// The no-op server runs in this process, so its CPU is this process's.
	self := newMemProbe(true, nil, "")
	cpu0 := cpuAfter(ctx, self, o.Warmup)
	ph, err := measure(ctx, noopClient, "no-op", noop.base, corpus, o, false)
	if err != nil {
		return err
	}
	ph.CPU = cpuSince(self.cpuTime(ctx), <-cpu0)
	rep.Phases = append(rep.Phases, ph)
	return nil
}

// cpuAfter reads m's CPU time once the warmup has passed (at once
// without one), so a phase's CPU counts what its recorded requests used.
func cpuAfter(ctx context.Context, m memProbe, warmup time.Duration) <-chan time.Duration {
	c := make(chan time.Duration, 1)
	go func() {
		if warmup > 0 {
			t := time.NewTimer(warmup)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
			}
		}
		c <- m.cpuTime(ctx)
	}()
	return c
}

func cpuSince(now, before time.Duration) time.Duration {
	if now < 0 || before < 0 {
		return -1
	}
	return now - before
}

type inMessage struct {
	ID      string `json:"id,omitempty"`
	Role    string `json:"role"`
	Content string `json:"content"`
}

type appendBody struct {
	UserID   string      `json:"user_id"`
	Messages []inMessage `json:"messages"`
}

type contextBody struct {
	ChatID       string      `json:"chat_id"`
	Query        string      `json:"query"`
	BudgetTokens int         `json:"budget_tokens"`
	Strategy     string      `json:"strategy"`
	Append       []inMessage `json:"append,omitempty"`
	Include      []string    `json:"include,omitempty"`
}

// contextRequest is one POST /v1/context body: a query drawn from the
// chat, or with AppendInContext the AI SDK middleware's call, whose query
// is the new user turn it stores.
func contextRequest(c Corpus, r *rand.Rand, chat int, o Options) contextBody {
	b := contextBody{ChatID: c.ChatID(chat), Query: c.Query(r, chat, o.Turns), BudgetTokens: o.Budget, Strategy: o.Strategy}
	if o.AppendInContext {
		b.Append = []inMessage{{ID: fmt.Sprintf("ai-%d-%d", chat, r.Uint64()), Role: "user", Content: b.Query}}
		b.Include = []string{"messages"}
	}
	return b
}

// preload appends every chat's turns in batches; each client takes whole
// chats so a chat's batches arrive in order.
func preload(ctx context.Context, client *http.Client, base string, c Corpus, o Options, progress io.Writer) (Preload, error) {
	var (
		p        Preload
		turns    atomic.Int64
		reqs     atomic.Int64
		errs     atomic.Int64
		firstErr firstError
	)
	chats := make(chan int)
	start := time.Now()
	var wg sync.WaitGroup
	for range min(o.Clients, o.Chats) {
		wg.Go(func() {
			var buf bytes.Buffer
			for i := range chats {
				for from := 0; from < o.Turns && ctx.Err() == nil; from += o.Batch {
					body := appendBody{UserID: c.UserID(i)}
					for t := from; t < min(from+o.Batch, o.Turns); t++ {
						body.Messages = append(body.Messages, inMessage{ID: fmt.Sprintf("t%d", t), Role: c.Role(t), Content: c.Turn(i, t)})
					}
					buf.Reset()
					_ = json.NewEncoder(&buf).Encode(body)
					status, err := post(ctx, client, base+"/v1/chats/"+url.PathEscape(c.ChatID(i))+"/messages", buf.Bytes(), nil)
					reqs.Add(1)
					if err != nil || status/100 != 2 {
						errs.Add(1)
						firstErr.set(describe(status, err))
						continue
					}
					turns.Add(int64(len(body.Messages)))
				}
			}
		})
	}
	// Progress every 10s while feeding chats.
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
feed:
	for i := 0; i < o.Chats; i++ {
		for {
			select {
			case chats <- i:
				continue feed
			case <-tick.C:
				n := turns.Load()
				fmt.Fprintf(progress, "pre-load: %d/%d turns (%.0f turns/s)\n", n, int64(o.Chats)*int64(o.Turns), float64(n)/time.Since(start).Seconds())
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(chats)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return p, err
	}
	p.Elapsed = time.Since(start)
	p.Turns, p.Requests, p.Errors, p.FirstError = turns.Load(), reqs.Load(), errs.Load(), firstErr.get()
	if p.Requests > 0 && p.Errors == p.Requests {
		return p, fmt.Errorf("pre-load: every request failed, e.g. %s", p.FirstError)
	}
	return p, nil
}

// settle refreshes every chat's summary, clients at a time.
func settle(ctx context.Context, client *http.Client, base string, c Corpus, o Options) (Settle, error) {
	var (
		st       Settle
		errs     atomic.Int64
		firstErr firstError
	)
	chats := make(chan int)
	start := time.Now()
	var wg sync.WaitGroup
	for range min(o.Clients, o.Chats) {
		wg.Go(func() {
			for i := range chats {
				status, err := post(ctx, client, base+"/v1/chats/"+url.PathEscape(c.ChatID(i))+"/summary/refresh", nil, nil)
				if err != nil || status/100 != 2 {
					errs.Add(1)
					firstErr.set(describe(status, err))
				}
			}
		})
	}
	for i := 0; i < o.Chats && ctx.Err() == nil; i++ {
		select {
		case chats <- i:
		case <-ctx.Done():
		}
	}
	close(chats)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return st, err
	}
	st.Chats, st.Errors, st.FirstError, st.Elapsed = int64(o.Chats), errs.Load(), firstErr.get(), time.Since(start)
	return st, nil
}

// waitIndexed polls /metrics until the indexer backlog is empty or the
// timeout passes (then the run goes on, and the report says how many turns
// were still unindexed).
func waitIndexed(ctx context.Context, client *http.Client, base string, timeout, stall time.Duration, p *Preload, progress io.Writer) error {
	start := time.Now()
	deadline := start.Add(timeout)
	lastPrint := start
	// A backlog that does not shrink for a minute will not drain (no
	// vector store configured, or the indexer is failing): stop waiting.
	best, bestAt := int64(-1), start
	for {
		// A scrape that fails (a busy server timing out) is a round without
		// news, not the end of the wait: one such scrape once measured a
		// run with most of a million turns unindexed.
		m, ok, err := backlog(ctx, client, base)
		if err == nil && !ok {
			p.IndexNote = "no contextd_backlog_unindexed_turns in /metrics; not waited for"
			return nil
		}
		if err == nil {
			p.Unindexed, p.Unsummarised = m.unindexed, m.unsummarised
			if m.unindexed == 0 {
				p.IndexWait = time.Since(start)
				return nil
			}
			if best < 0 || m.unindexed < best {
				best, bestAt = m.unindexed, time.Now()
			}
		}
		if time.Since(bestAt) > stall {
			p.IndexWait = time.Since(start)
			p.IndexNote = fmt.Sprintf("backlog stuck at %d turns for %s (no vector store, the indexer fails, or /metrics does not answer: %v); measuring anyway", p.Unindexed, stall, err)
			return nil
		}
		if time.Now().After(deadline) {
			p.IndexWait = time.Since(start)
			p.IndexNote = fmt.Sprintf("gave up after %s with %d turns unindexed", timeout, m.unindexed)
			return nil
		}
		if time.Since(lastPrint) >= 10*time.Second {
			fmt.Fprintf(progress, "indexer: %d turns left\n", m.unindexed)
			lastPrint = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

type backlogs struct{ unindexed, unsummarised int64 }

func backlog(ctx context.Context, client *http.Client, base string) (backlogs, bool, error) {
	m, err := scrape(ctx, client, base, "contextd_backlog_unindexed_turns", "contextd_backlog_unsummarised_turns")
	if err != nil {
		return backlogs{}, false, err
	}
	u, ok := m["contextd_backlog_unindexed_turns"]
	if !ok || u < 0 {
		return backlogs{}, false, nil
	}
	return backlogs{unindexed: int64(u), unsummarised: int64(m["contextd_backlog_unsummarised_turns"])}, true, nil
}

// Route indexes.
const (
	routeContext = iota
	routeAppend
	nRoutes
)

var routeNames = [nRoutes]string{"POST /v1/context", "POST /v1/chats/{id}/messages"}

type clientResult struct {
	hist     [nRoutes]*Histogram
	errs     [nRoutes]int64
	firstErr string
	sample   Sample
	lag      *Histogram // open loop: how late each request left
	wakeLag  *Histogram // ... of those that fell due with a client free
	busy     int64      // requests that fell due while every client was busy
}

// measure drives the mix against base for o.Duration from o.Clients
// clients and returns one row per route plus "all". With o.Rate > 0 the
// requests follow a schedule (open loop, see plan), else each client
// sends its next request when the last is answered (closed loop).
func measure(ctx context.Context, client *http.Client, name, base string, c Corpus, o Options, check bool) (Phase, error) {
	return measureWith(ctx, realClock{}, client, name, base, c, o, check)
}

func measureWith(ctx context.Context, clk clock, client *http.Client, name, base string, c Corpus, o Options, check bool) (Phase, error) {
	results := make([]clientResult, o.Clients)
	start := clk.Now()
	from := start.Add(o.Warmup) // what starts before is not recorded
	pr := &phaseRun{clk: clk, client: client, base: base, c: c, o: o, check: check, from: from, end: from.Add(o.Duration)}
	var warmN int64 // open loop: requests due during the warmup
	if o.Rate > 0 {
		// Requests due before end but still queued then are sent until one
		// more Duration has passed; the rest are reported unsent.
		pr.sched = newPlan(clk, start, o.Rate, o.Warmup+o.Duration, o.Duration)
		warmN = int64(sort.Search(int(pr.sched.n), func(i int) bool { return !pr.sched.due(int64(i)).Before(from) }))
	}
	var wg sync.WaitGroup
	for w := range o.Clients {
		wg.Go(func() { pr.runClient(ctx, w, &results[w]) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Phase{}, err
	}
	return pr.phase(name, results, warmN), nil
}

// phaseRun is what one measured phase's clients share.
type phaseRun struct {
	clk       clock
	client    *http.Client
	base      string
	c         Corpus
	o         Options
	check     bool  // sample context answers for the checks
	sched     *plan // open loop's schedule; nil: closed loop
	from, end time.Time
}

// runClient is client w's loop: its requests, timed into res.
func (pr *phaseRun) runClient(ctx context.Context, w int, res *clientResult) {
	for i := range res.hist {
		res.hist[i] = NewHistogram()
	}
	res.lag, res.wakeLag = NewHistogram(), NewHistogram()
	// Per-client generator: the same seed gives the same request
	// sequence per client.
	r := rand.New(rand.NewPCG(uint64(pr.o.Seed), uint64(w)+1<<40))
	var buf bytes.Buffer
	var prevDone time.Time
	for n := 0; n < maxRequestsPerClient && ctx.Err() == nil; n++ {
		began, record, ok := pr.next(ctx, res, prevDone)
		if !ok {
			return
		}
		route, target := pr.request(r, &buf)
		var sink func([]byte)
		if pr.check && record && route == routeContext && n%20 == 0 {
			sink = res.sample.add
		}
		status, err := post(ctx, pr.client, target, buf.Bytes(), sink)
		prevDone = pr.clk.Now()
		if record {
			res.hist[route].Record(prevDone.Sub(began))
		}
		if record && (err != nil || status/100 != 2) {
			if ctx.Err() != nil {
				return
			}
			res.errs[route]++
			if res.firstErr == "" {
				res.firstErr = describe(status, err)
			}
		}
	}
}

// next waits for a client's next request: when it began (was due, in the
// open loop), whether it is recorded, and false when the phase is over.
func (pr *phaseRun) next(ctx context.Context, res *clientResult, prevDone time.Time) (began time.Time, record, ok bool) {
	began = pr.clk.Now()
	if pr.sched == nil {
		if !began.Before(pr.end) {
			return began, false, false
		}
		return began, !began.Before(pr.from), true
	}
	_, due, ok := pr.sched.take(ctx)
	if !ok {
		return began, false, false
	}
	// Latency counts from when the request was due; how late it left is
	// reported apart, and is part of it.
	record = !due.Before(pr.from)
	if lag, busy := lateness(due, pr.clk.Now(), prevDone); record {
		res.lag.Record(lag)
		if busy {
			res.busy++
		} else {
			res.wakeLag.Record(lag)
		}
	}
	return due, record, true
}

// request draws the next request of the mix into buf: a context request
// or an append of one or two turns to a random chat.
func (pr *phaseRun) request(r *rand.Rand, buf *bytes.Buffer) (route int, target string) {
	c, o := pr.c, pr.o
	chat := r.IntN(o.Chats)
	route, target = routeAppend, pr.base+"/v1/chats/"+c.ChatID(chat)+"/messages"
	buf.Reset()
	if r.Float64() < o.Mix {
		route, target = routeContext, pr.base+"/v1/context"
		_ = json.NewEncoder(buf).Encode(contextRequest(c, r, chat, o))
		return route, target
	}
	body := appendBody{UserID: c.UserID(chat)}
	for k := range 1 + r.IntN(2) {
		t := o.Turns + r.IntN(1<<30)
		body.Messages = append(body.Messages, inMessage{Role: c.Role(k), Content: c.Turn(chat, t)})
	}
	_ = json.NewEncoder(buf).Encode(body)
	return route, target
}

// phase sums the clients' results: one row per route plus "all", and the
// open loop's lateness.
func (pr *phaseRun) phase(name string, results []clientResult, warmN int64) Phase {
	elapsed := pr.clk.Now().Sub(pr.from)
	ph := Phase{Target: name, Elapsed: elapsed}
	all := NewHistogram()
	lag, wakeLag := NewHistogram(), NewHistogram()
	var allErrs, busy int64
	for route := range nRoutes {
		h := NewHistogram()
		var errs int64
		for i := range results {
			h.Merge(results[i].hist[route])
			errs += results[i].errs[route]
		}
		all.Merge(h)
		allErrs += errs
		ph.Rows = append(ph.Rows, rowOf(routeNames[route], h, errs, elapsed))
	}
	ph.Rows = append(ph.Rows, rowOf("all", all, allErrs, elapsed))
	for i := range results {
		if ph.FirstError == "" {
			ph.FirstError = results[i].firstErr
		}
		ph.Sample.merge(results[i].sample)
		lag.Merge(results[i].lag)
		wakeLag.Merge(results[i].wakeLag)
		busy += results[i].busy
	}
	if pr.sched != nil {
		ph.Open = &OpenLoop{
			Rate: pr.o.Rate, Scheduled: pr.sched.n - warmN, Unsent: pr.sched.unsent.Load(),
			LagP50: lag.Quantile(0.50), LagP99: lag.Quantile(0.99), LagMax: lag.Max(),
			Busy: busy, WakeLagP99: wakeLag.Quantile(0.99), WakeLagMax: wakeLag.Max(),
		}
	}
	return ph
}

func rowOf(route string, h *Histogram, errs int64, elapsed time.Duration) Row {
	return Row{
		Route: route, Requests: int64(h.Count()), Errors: errs,
		Throughput: float64(h.Count()) / elapsed.Seconds(),
		P50:        h.Quantile(0.50), P95: h.Quantile(0.95), P99: h.Quantile(0.99), P999: h.Quantile(0.999),
		Max: h.Max(), Mean: h.Mean(),
	}
}

// post sends a JSON body and reads the whole answer (so the connection is
// reused); sink, when set, gets the body of a 2xx answer.
func post(ctx context.Context, client *http.Client, url string, body []byte, sink func([]byte)) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if sink != nil && resp.StatusCode/100 == 2 {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return resp.StatusCode, err
		}
		sink(b)
		return resp.StatusCode, nil
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, &statusError{status: resp.StatusCode, body: strings.TrimSpace(string(b))}
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

type statusError struct {
	status int
	body   string
}

func (e *statusError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.body) }

func describe(status int, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("HTTP %d", status)
}

// firstError keeps the first failure seen by any goroutine.
type firstError struct {
	mu  sync.Mutex
	msg string
}

func (f *firstError) set(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.msg == "" {
		f.msg = s
	}
}

func (f *firstError) get() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.msg
}
