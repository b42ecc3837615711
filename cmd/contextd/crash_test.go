package main

// Crash test (issue 7): kill -9 the real binary repeatedly during concurrent
// appends and summarisation, restart it on the same data, and check that
// every acknowledged turn is stored exactly once at its acknowledged seq,
// that unacknowledged batches landed all or nothing, and that every summary
// chain and cursor is consistent.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

const (
	crashRounds      = 6 // kill -9 rounds; then one SIGTERM round
	crashChats       = 5
	crashAppenders   = 5
	crashRecentTurns = 4
	// Small episodes, so that many close (and are cut by kills) in a round.
	crashEpisodeMinTurns = 2
	crashEpisodeMaxTurns = 5
	crashReadyTimeout    = 30 * time.Second
	crashStopTimeout     = 40 * time.Second
)

func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test builds and kills the real binary; skipped with -short")
	}
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skipf("crash test needs Unix signals (GOOS=%s)", runtime.GOOS)
	}
	started := time.Now()
	dir := t.TempDir()
	bin := buildContextd(t, dir)
	built := time.Now()
	cfg := writeCrashConfig(t, dir)

	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	lg := newLedger()
	h := &crashHarness{t: t, bin: bin, cfg: cfg, dir: dir}
	t.Cleanup(h.cleanup)

	kills := 0
	for round := 1; round <= crashRounds; round++ {
		srv := h.start()
		lg.retry(t, srv, rng, 0.5)
		stop := runLoad(srv, lg, seed+uint64(round)*1000)
		time.Sleep(time.Duration(100+rng.IntN(500)) * time.Millisecond)
		srv.kill(t)
		kills++
		stop()
		if lg.violationCount() > 0 {
			break // the verdict below lists them
		}
	}

	// Last loaded round: SIGTERM under load must drain and exit 0.
	srv := h.start()
	lg.retry(t, srv, rng, 0.5)
	stop := runLoad(srv, lg, seed+999_000)
	time.Sleep(time.Duration(300+rng.IntN(300)) * time.Millisecond)
	if err := srv.term(); err != nil {
		t.Errorf("SIGTERM under load: %v (want exit 0 after a graceful drain)", err)
	}
	stop()

	// Restart once more and verify everything through the HTTP API.
	srv = h.start()
	t0 := time.Now()
	lg.waitRebuilt(t, srv)
	v := lg.verify(t, srv)
	waitIndexed(t, srv)
	forgotten := lg.verifyForgotten(t, srv)
	verifyTime := time.Since(t0)
	probeRefresh(t, srv)
	if err := srv.term(); err != nil {
		t.Errorf("SIGTERM when idle: %v (want exit 0)", err)
	}
	lg.report(t)
	h.reportWarnings()
	t.Logf("deletes sent %d: %d surely landed (%d checked everywhere), %d with an unknown outcome", lg.fg.sent, len(lg.fg.deleted), forgotten, len(lg.fg.maybe))
	t.Logf("kill -9 rounds %d (+1 SIGTERM round), starts %d (slowest ready %s), acknowledged turns verified %d, stored turns %d, summary records %d, episodes %d, verify %s, runtime %s (build %s)",
		kills, h.starts, h.slowestReady.Round(time.Millisecond), v.acked, v.stored, v.summaries, v.episodes,
		verifyTime.Round(time.Millisecond), time.Since(started).Round(time.Millisecond), built.Sub(started).Round(time.Millisecond))
}

// buildContextd builds this command into dir; it skips when no go command
// is available (go test puts GOROOT/bin first in PATH).
func buildContextd(t *testing.T, dir string) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("crash test needs the go command to build the binary: %v", err)
	}
	bin := filepath.Join(dir, "contextd")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goCmd, "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// writeCrashConfig makes summarisation as frequent as the schema allows:
// every turn outside a 4-turn window triggers, with no cooldown.
func writeCrashConfig(t *testing.T, dir string) string {
	t.Helper()
	data := filepath.Join(dir, "data")
	cfg := fmt.Sprintf(`server:
  addr: "127.0.0.1:0"
  request_timeout: 3s
  log_level: info
storage:
  driver: sqlite
  sqlite_path: %q
vector:
  driver: embedded
  embedded_path: %q
embedder:
  provider: hashing
llm:
  provider: none
supervisor:
  memory:
    strategy: running_summary
    summary_recent_turns: %d
    summary_trigger_turns: 1
    summary_cooldown: 0s
    persist_summary: true
    episodes: true
    episode_min_turns: %d
    episode_max_turns: %d
`, filepath.Join(data, "contextd.db"), filepath.Join(data, "vectors.db"), crashRecentTurns, crashEpisodeMinTurns, crashEpisodeMaxTurns)
	path := filepath.Join(dir, "agents.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// --- the subprocess ---

type crashHarness struct {
	t      *testing.T
	bin    string
	cfg    string
	dir    string
	starts int
	// slowestReady is the longest a start took to print its address.
	slowestReady time.Duration
	mu           sync.Mutex
	procs        []*crashServer
}

type crashServer struct {
	cmd    *exec.Cmd
	base   string
	log    string
	client *http.Client
	// quick gives up after a second: a forced refresh waits for a summary
	// lease, and a killed process leaves its lease until it expires.
	quick *http.Client
	done  chan struct{}
	err   error // set before done closes
	// stopping is set before the process is killed or terminated, so the
	// load stops issuing new requests; in-flight ones see the crash.
	stopping atomic.Bool
}

var listenRe = regexp.MustCompile(`listening on (http://\S+)`)

// start runs `contextd serve` on the shared data and waits for its address.
func (h *crashHarness) start() *crashServer {
	t := h.t
	t.Helper()
	h.starts++
	logPath := filepath.Join(h.dir, fmt.Sprintf("server-%02d.log", h.starts))
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(h.bin, "serve", "--config", h.cfg)
	cmd.Dir = h.dir
	// Port 0 and the printed address: no race for a "free" port.
	cmd.Env = append(os.Environ(), "CONTEXTD_ADDR=127.0.0.1:0")
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start contextd: %v", err)
	}
	f.Close() // the child holds its own descriptor
	s := &crashServer{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { s.err = cmd.Wait(); close(s.done) }()
	h.mu.Lock()
	h.procs = append(h.procs, s)
	h.mu.Unlock()

	t0 := time.Now()
	deadline := time.After(crashReadyTimeout)
	for {
		if b, _ := os.ReadFile(logPath); b != nil {
			if m := listenRe.FindSubmatch(b); m != nil {
				s.base = string(m[1])
				break
			}
		}
		select {
		case <-s.done:
			t.Fatalf("contextd (start %d) exited before listening: %v", h.starts, s.err)
		case <-deadline:
			t.Fatalf("contextd (start %d) did not print its address within %s", h.starts, crashReadyTimeout)
		case <-time.After(10 * time.Millisecond):
		}
	}
	h.slowestReady = max(h.slowestReady, time.Since(t0))
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	s.client = &http.Client{Timeout: 10 * time.Second, Transport: tr}
	s.quick = &http.Client{Timeout: time.Second, Transport: tr}
	return s
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *crashServer) kill(t *testing.T) {
	s.stopping.Store(true)
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("kill: %v", err)
	}
	<-s.done
	s.client.CloseIdleConnections()
}

// term sends SIGTERM and returns the exit error (nil = exit 0).
func (s *crashServer) term() error {
	s.stopping.Store(true)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("signal: %w", err)
	}
	select {
	case <-s.done:
	case <-time.After(crashStopTimeout):
		_ = s.cmd.Process.Kill()
		<-s.done
		return fmt.Errorf("no exit within %s of SIGTERM (killed)", crashStopTimeout)
	}
	s.client.CloseIdleConnections()
	return s.err
}

// cleanup kills what is still running and, on failure, prints the logs.
func (h *crashHarness) cleanup() {
	h.mu.Lock()
	procs := slices.Clone(h.procs)
	h.mu.Unlock()
	for _, s := range procs {
		select {
		case <-s.done:
		default:
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
	if !h.t.Failed() {
		return
	}
	// CRASH_KEEP=dir keeps the failed run's data and logs for a post-mortem
	// (the temporary directory goes with the test).
	if keep := os.Getenv("CRASH_KEEP"); keep != "" {
		if err := os.CopyFS(keep, os.DirFS(h.dir)); err != nil {
			h.t.Logf("CRASH_KEEP: %v", err)
		}
	}
	for i, s := range procs {
		n := 12
		if i == len(procs)-1 {
			n = 60
		}
		h.t.Logf("--- %s (exit: %v), last %d lines ---\n%s", filepath.Base(s.log), s.err, n, tailLines(s.log, n))
	}
}

// reportWarnings logs how many warnings and errors the servers logged, and
// the distinct messages (with their err), for the test's log.
func (h *crashHarness) reportWarnings() {
	seen := map[string]int{}
	for i := 1; i <= h.starts; i++ {
		b, err := os.ReadFile(filepath.Join(h.dir, fmt.Sprintf("server-%02d.log", i)))
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			var e struct {
				Level, Msg, Err, Path string
				Status                int
			}
			if json.Unmarshal([]byte(line), &e) != nil || (e.Level != "WARN" && e.Level != "ERROR") {
				continue
			}
			seen[fmt.Sprintf("%s %q path=%s status=%d err=%s", e.Level, e.Msg, e.Path, e.Status, e.Err)]++
		}
	}
	for k, n := range seen {
		h.t.Logf("server log: %d× %s", n, k)
	}
}

func tailLines(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// --- HTTP helpers ---

type wireMsg struct {
	ID      string `json:"id"`
	Role    string `json:"role"`
	Content string `json:"content"`
}

// call posts (or gets, with a nil body) and decodes a JSON answer. err is
// a transport error or a broken body: the outcome is unknown.
func (s *crashServer) call(method, path string, body, out any) (int, []byte, error) {
	return s.callWith(s.client, method, path, body, out)
}

func (s *crashServer) callWith(c *http.Client, method, path string, body, out any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, raw, err
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, raw, fmt.Errorf("decode %s: %w", raw, err)
		}
	}
	return resp.StatusCode, raw, nil
}

type appendAnswer struct {
	Appended   int   `json:"appended"`
	Duplicates int   `json:"duplicates"`
	LastSeq    int64 `json:"last_seq"`
	Messages   []struct {
		ID  string `json:"id"`
		Seq int64  `json:"seq"`
	} `json:"messages"`
}

// --- the ledger of what clients sent and what the server acknowledged ---

type sentMsg struct {
	chat, role, content string
	batch               int
}

type batchRec struct {
	chat string
	msgs []wireMsg
}

type ledger struct {
	mu      sync.Mutex
	sent    map[string]sentMsg // every id ever sent
	acked   map[string]int64   // acknowledged id -> seq (0: acknowledged by /v1/context, seq not returned)
	batches []batchRec         // every batch, by index
	pending map[int]bool       // batches whose outcome is unknown
	errs    []string           // protocol violations seen by the clients
	nextID  atomic.Int64

	appendOK, contextOK, unknown, serverErr int
	retried, retriedLanded, retriedNew      int
	refreshOK, refreshTimeout, refreshOther int
	refreshGaveUp                           int
	fg                                      forgetLedger // deletes (crash_forget_test.go)
}

func newLedger() *ledger {
	return &ledger{sent: map[string]sentMsg{}, acked: map[string]int64{}, pending: map[int]bool{}}
}

func (l *ledger) violation(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.errs) < 50 {
		l.errs = append(l.errs, fmt.Sprintf(format, args...))
	}
}

func (l *ledger) violationCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.errs)
}

// newBatch registers a batch before it is sent; its outcome starts unknown.
func (l *ledger) newBatch(chat string, msgs []wireMsg) (int, []wireMsg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := len(l.batches)
	l.batches = append(l.batches, batchRec{chat: chat, msgs: msgs})
	for _, m := range msgs {
		l.sent[m.ID] = sentMsg{chat: chat, role: m.Role, content: m.Content, batch: i}
	}
	l.pending[i] = true
	return i, msgs
}

// ackAppend records a 201 of the messages endpoint for batch i. retry says
// the batch was sent before with an unknown outcome.
func (l *ledger) ackAppend(i int, a appendAnswer, retry bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.batches[i]
	if len(a.Messages) != len(b.msgs) || a.Appended+a.Duplicates != len(b.msgs) {
		l.errs = append(l.errs, fmt.Sprintf("batch %d on %s: answer %+v does not account for its %d messages", i, b.chat, a, len(b.msgs)))
		return
	}
	switch {
	case retry && a.Duplicates == len(b.msgs):
		l.retriedLanded++
	case retry && a.Appended == len(b.msgs):
		l.retriedNew++
	case retry:
		// The first, unknown attempt committed part of the batch: appends
		// are not atomic.
		l.errs = append(l.errs, fmt.Sprintf("retry of batch %d on %s: %d appended + %d duplicates: the first attempt landed partially", i, b.chat, a.Appended, a.Duplicates))
	case a.Duplicates != 0:
		l.errs = append(l.errs, fmt.Sprintf("batch %d on %s: %d of its fresh ids reported as duplicates", i, b.chat, a.Duplicates))
	}
	for k, ref := range a.Messages {
		if ref.ID != b.msgs[k].ID {
			l.errs = append(l.errs, fmt.Sprintf("batch %d: answer lists id %q at %d, sent %q", i, ref.ID, k, b.msgs[k].ID))
			continue
		}
		if k > 0 && ref.Seq != a.Messages[k-1].Seq+1 {
			l.errs = append(l.errs, fmt.Sprintf("batch %d on %s: seqs %d then %d: one append's turns are not consecutive", i, b.chat, a.Messages[k-1].Seq, ref.Seq))
		}
		if ref.Seq < 1 || ref.Seq > a.LastSeq {
			l.errs = append(l.errs, fmt.Sprintf("batch %d: id %s at seq %d outside 1..last_seq %d", i, ref.ID, ref.Seq, a.LastSeq))
		}
		if prev, ok := l.acked[ref.ID]; ok && prev != 0 && prev != ref.Seq {
			l.errs = append(l.errs, fmt.Sprintf("id %s acknowledged at seq %d, then at seq %d", ref.ID, prev, ref.Seq))
		}
		l.acked[ref.ID] = ref.Seq
	}
	delete(l.pending, i)
	l.appendOK++
}

// ackContext records a 200 of /v1/context whose append stored batch i.
func (l *ledger) ackContext(i int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.batches[i].msgs {
		if _, ok := l.acked[m.ID]; !ok {
			l.acked[m.ID] = 0
		}
	}
	delete(l.pending, i)
	l.contextOK++
}

func (l *ledger) outcomeUnknown(serverError bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unknown++
	if serverError {
		l.serverErr++
	}
}

// retry resends a fraction of the unknown batches with the same ids, right
// after a restart and before any new load: a batch that had landed must come
// back as all duplicates at its stored seqs, one that had not as all new.
func (l *ledger) retry(t *testing.T, s *crashServer, rng *rand.Rand, frac float64) {
	t.Helper()
	l.mu.Lock()
	var todo []int
	for i := range l.pending {
		if rng.Float64() < frac {
			todo = append(todo, i)
		}
	}
	l.mu.Unlock()
	slices.Sort(todo)
	for _, i := range todo {
		l.mu.Lock()
		b := l.batches[i]
		l.retried++
		l.mu.Unlock()
		var a appendAnswer
		status, raw, err := s.call(http.MethodPost, "/v1/chats/"+b.chat+"/messages", map[string]any{"messages": b.msgs}, &a)
		switch {
		case err != nil || status >= 500:
			// Still unknown (a slow start); it stays pending.
			l.outcomeUnknown(err == nil)
		case status != http.StatusCreated:
			t.Fatalf("retry of batch %d: %d %s", i, status, raw)
		default:
			l.ackAppend(i, a, true)
		}
	}
}

// --- the load ---

// runLoad starts the clients against s and returns a function that waits
// for them; they stop issuing requests once s is being stopped.
func runLoad(s *crashServer, l *ledger, seed uint64) (wait func()) {
	var wg sync.WaitGroup
	for c := range crashAppenders {
		wg.Go(func() { appender(s, l, rand.New(rand.NewPCG(seed, uint64(c))), c) })
	}
	wg.Go(func() { contextClient(s, l, rand.New(rand.NewPCG(seed, 100))) })
	wg.Go(func() { refresher(s, l, rand.New(rand.NewPCG(seed, 200))) })
	wg.Go(func() { deleter(s, l, rand.New(rand.NewPCG(seed, 300))) })
	return wg.Wait
}

func chatName(i int) string { return fmt.Sprintf("crash-%d", i) }

// newMessages makes n turns with ids unique in the whole test; about one in
// eight is supervisor routing noise, which filters remove from contexts and
// summaries but which still counts as a stored turn.
func (l *ledger) newMessages(rng *rand.Rand, client, n int) []wireMsg {
	out := make([]wireMsg, n)
	for k := range out {
		id := fmt.Sprintf("m%d-c%d", l.nextID.Add(1), client)
		role := "user"
		if rng.IntN(2) == 0 {
			role = "assistant"
		}
		content := fmt.Sprintf("Turn %s from client %d: the %s project needs %d more %s before the %s review.",
			id, client, pick(rng, "Bluebird", "Falcon", "Osprey", "Heron"), rng.IntN(90)+2,
			pick(rng, "tests", "benchmarks", "reviews", "migrations"), pick(rng, "Monday", "Friday", "quarterly"))
		if rng.IntN(8) == 0 {
			role = "assistant"
			content = fmt.Sprintf("[Supervisor] → Research Agent (%s)", id)
		}
		out[k] = wireMsg{ID: id, Role: role, Content: content}
	}
	return out
}

func pick(rng *rand.Rand, xs ...string) string { return xs[rng.IntN(len(xs))] }

func appender(s *crashServer, l *ledger, rng *rand.Rand, client int) {
	for !s.stopping.Load() {
		chat := chatName(rng.IntN(crashChats))
		i, msgs := l.newBatch(chat, l.newMessages(rng, client, 1+rng.IntN(3)))
		var a appendAnswer
		status, raw, err := s.call(http.MethodPost, "/v1/chats/"+chat+"/messages", map[string]any{"messages": msgs}, &a)
		switch {
		case err != nil:
			l.outcomeUnknown(false)
		case status == http.StatusCreated:
			l.ackAppend(i, a, false)
		case status >= 500:
			l.outcomeUnknown(true)
		default:
			l.violation("append batch %d on %s: %d %s", i, chat, status, raw)
		}
	}
}

// contextClient appends through POST /v1/context, which acknowledges the
// append with 200 but returns no seqs.
func contextClient(s *crashServer, l *ledger, rng *rand.Rand) {
	for !s.stopping.Load() {
		chat := chatName(rng.IntN(crashChats))
		i, msgs := l.newBatch(chat, l.newMessages(rng, 100, 1))
		strategy := pick(rng, "running_summary", "rag_augmented")
		var out struct {
			ChatID string `json:"chat_id"`
		}
		status, raw, err := s.call(http.MethodPost, "/v1/context", map[string]any{
			"chat_id": chat, "query": "what does the Falcon project need?", "strategy": strategy,
			"append": msgs,
		}, &out)
		switch {
		case err != nil:
			l.outcomeUnknown(false)
		case status == http.StatusOK:
			l.ackContext(i)
		case status >= 500:
			l.outcomeUnknown(true)
		default:
			l.violation("context batch %d on %s: %d %s", i, chat, status, raw)
		}
	}
}

// refresher forces summary extensions while the appenders run. A refresh
// may time out (503): a killed process leaves its summary lease behind until
// the lease expires.
func refresher(s *crashServer, l *ledger, rng *rand.Rand) {
	for !s.stopping.Load() {
		chat := chatName(rng.IntN(crashChats))
		status, raw, err := s.callWith(s.quick, http.MethodPost, "/v1/chats/"+chat+"/summary/refresh", nil, nil)
		l.mu.Lock()
		switch {
		case err != nil:
			l.refreshGaveUp++
		case status == http.StatusOK || status == http.StatusAccepted:
			l.refreshOK++
		case status == http.StatusServiceUnavailable:
			l.refreshTimeout++
		case status == http.StatusNotFound: // no turn on that chat yet
			l.refreshOther++
		default:
			if len(l.errs) < 50 {
				l.errs = append(l.errs, fmt.Sprintf("refresh %s: %d %s", chat, status, raw))
			}
		}
		l.mu.Unlock()
		time.Sleep(time.Duration(5+rng.IntN(20)) * time.Millisecond)
	}
}

// --- verification ---

type storedMsg struct {
	ID      string `json:"id"`
	Seq     int64  `json:"seq"`
	Role    string `json:"role"`
	Content string `json:"content"`
	Deleted bool   `json:"deleted"`
}

type summaryRec struct {
	ID             string  `json:"id"`
	ParentID       *string `json:"parent_id"`
	Depth          int     `json:"depth"`
	FromSeq        int64   `json:"from_seq"`
	ToSeq          int64   `json:"to_seq"`
	CoveredFromSeq int64   `json:"covered_from_seq"`
	CoveredToSeq   int64   `json:"covered_to_seq"`
}

type verified struct{ acked, stored, summaries, episodes int }

func (l *ledger) verify(t *testing.T, s *crashServer) verified {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.errs {
		t.Errorf("during the load: %s", e)
	}

	var v verified
	where := map[string]string{} // stored id -> "chat@seq"
	for c := range crashChats {
		chat := chatName(c)
		msgs := listAll(t, s, chat)
		v.stored += len(msgs)

		// Seqs are exactly 1..last_seq; each id once; each id one we sent
		// to this chat, with the content we sent.
		next := int64(1)
		for _, m := range msgs {
			if m.Seq != next {
				t.Errorf("%s: seq %d follows seq %d (a gap or disorder)", chat, m.Seq, next-1)
			}
			next = m.Seq + 1
			at := fmt.Sprintf("%s@%d", chat, m.Seq)
			if prev, dup := where[m.ID]; dup {
				t.Errorf("id %s stored twice: %s and %s", m.ID, prev, at)
			}
			where[m.ID] = at
			sent, ok := l.sent[m.ID]
			switch {
			case !ok:
				t.Errorf("%s: stored id %q was never sent", at, m.ID)
			case m.Deleted && (!l.mayBeDeleted(m.ID) || m.Content != "" || sent.role != m.Role || sent.chat != chat):
				t.Errorf("%s: id %s is a tombstone %+v, but no delete of it was sent (or it kept content)", at, m.ID, m)
			case !m.Deleted && l.fg.deleted[m.ID]:
				t.Errorf("%s: id %s was deleted (204) but is stored with its content", at, m.ID)
			case !m.Deleted && (sent.chat != chat || sent.content != m.Content || sent.role != m.Role):
				t.Errorf("%s: id %s stored as %s %q, sent to %s as %s %q", at, m.ID, m.Role, m.Content, sent.chat, sent.role, sent.content)
			}
		}
		l.verifySummary(t, s, chat, msgs, &v)
	}

	// Every acknowledged turn is there, at its acknowledged seq.
	for id, seq := range l.acked {
		v.acked++
		at, ok := where[id]
		want := fmt.Sprintf("%s@%d", l.sent[id].chat, seq)
		switch {
		case !ok:
			t.Errorf("acknowledged id %s (%s) is missing", id, want)
		case seq != 0 && at != want:
			t.Errorf("acknowledged id %s at %s is stored at %s", id, want, at)
		case seq == 0 && !strings.HasPrefix(at, l.sent[id].chat+"@"):
			t.Errorf("acknowledged id %s of %s is stored at %s", id, l.sent[id].chat, at)
		}
	}
	// A batch whose outcome stayed unknown landed whole or not at all.
	for i := range l.pending {
		n := 0
		for _, m := range l.batches[i].msgs {
			if _, ok := where[m.ID]; ok {
				n++
			}
		}
		if n != 0 && n != len(l.batches[i].msgs) {
			t.Errorf("unacknowledged batch %d on %s: %d of its %d turns are stored", i, l.batches[i].chat, n, len(l.batches[i].msgs))
		}
	}
	if l.appendOK == 0 || v.acked == 0 {
		t.Errorf("the load acknowledged nothing (appends %d, contexts %d): the test exercised nothing", l.appendOK, l.contextOK)
	}
	return v
}

func listAll(t *testing.T, s *crashServer, chat string) []storedMsg {
	t.Helper()
	var all []storedMsg
	after := int64(0)
	for {
		var page struct {
			Messages     []storedMsg `json:"messages"`
			NextAfterSeq int64       `json:"next_after_seq"`
		}
		status, raw, err := s.call(http.MethodGet, fmt.Sprintf("/v1/chats/%s/messages?after_seq=%d&limit=37", chat, after), nil, &page)
		if err != nil || status != http.StatusOK {
			t.Fatalf("list %s after %d: %d %v %s", chat, after, status, err, raw)
		}
		if len(page.Messages) == 0 {
			return all
		}
		if page.NextAfterSeq != page.Messages[len(page.Messages)-1].Seq {
			t.Errorf("list %s after %d: next_after_seq %d, last seq %d", chat, after, page.NextAfterSeq, page.Messages[len(page.Messages)-1].Seq)
		}
		all = append(all, page.Messages...)
		after = page.Messages[len(page.Messages)-1].Seq
	}
}

func isNoise(content string) bool { return strings.HasPrefix(content, "[Supervisor") }

// verifySummary checks that a context answer accounts for every stored turn
// and that the chat's summary chain is consistent. The restarted server's
// worker may still extend summaries meanwhile (no appends run any more), so
// the chain is read after the context and may only be ahead of it.
func (l *ledger) verifySummary(t *testing.T, s *crashServer, chat string, msgs []storedMsg, v *verified) {
	t.Helper()
	var lastSeq int64
	if len(msgs) > 0 {
		lastSeq = msgs[len(msgs)-1].Seq
	}
	if lastSeq == 0 {
		status, raw, _ := s.call(http.MethodGet, "/v1/chats/"+chat+"/summary", nil, nil)
		if status != http.StatusNotFound {
			t.Errorf("%s has no turns: summary answered %d %s", chat, status, raw)
		}
		return
	}

	// Every stored turn is summarised, shown, dropped or filtered (the
	// query is not a stored turn).
	var cx struct {
		Sections struct {
			Summary *struct {
				CoveredToSeq int64 `json:"covered_to_seq"`
			} `json:"summary"`
			Recent []struct {
				Seq int64 `json:"seq"`
			} `json:"recent"`
		} `json:"sections"`
		Usage struct {
			SummarizedTurns int64   `json:"summarised_turns"`
			DroppedTurns    int64   `json:"dropped_turns"`
			DroppedSeqs     []int64 `json:"dropped_seqs"`
			FilteredTurns   int64   `json:"filtered_turns"`
		} `json:"usage"`
	}
	status, raw, err := s.call(http.MethodPost, "/v1/context", map[string]any{
		"chat_id": chat, "query": "crash test accounting query", "strategy": "running_summary", "budget_tokens": 1_000_000,
	}, &cx)
	if err != nil || status != http.StatusOK {
		t.Fatalf("context of %s: %d %v %s", chat, status, err, raw)
	}
	u := cx.Usage
	var ctxCursor int64
	if cx.Sections.Summary != nil {
		ctxCursor = cx.Sections.Summary.CoveredToSeq
	}
	if u.SummarizedTurns != ctxCursor {
		t.Errorf("%s: context counts %d summarised turns, its summary covers to %d", chat, u.SummarizedTurns, ctxCursor)
	}
	if sum := u.SummarizedTurns + int64(len(cx.Sections.Recent)) + u.DroppedTurns + u.FilteredTurns; sum != lastSeq {
		t.Errorf("%s: summarised %d + recent %d + dropped %d + filtered %d = %d, want last_seq %d",
			chat, u.SummarizedTurns, len(cx.Sections.Recent), u.DroppedTurns, u.FilteredTurns, sum, lastSeq)
	}
	// With this budget nothing is dropped (unless more than the engine's
	// load limit waits unsummarised), so the recent turns are exactly the
	// turns after the cursor that are not routing noise.
	var want, gotSeqs []int64
	for _, m := range msgs {
		if m.Seq > ctxCursor && !isNoise(m.Content) && !m.Deleted { // a tombstone is filtered
			want = append(want, m.Seq)
		}
	}
	for _, r := range cx.Sections.Recent {
		gotSeqs = append(gotSeqs, r.Seq)
	}
	if u.DroppedTurns == 0 && !slices.Equal(want, gotSeqs) {
		t.Errorf("%s: recent seqs %v, want the unsummarised non-noise turns %v", chat, gotSeqs, want)
	}

	var got struct {
		Summary *struct {
			CoveredToSeq int64 `json:"covered_to_seq"`
		} `json:"summary"`
		Preview bool         `json:"preview"`
		Chain   []summaryRec `json:"chain"`
	}
	// A context may carry a preview of the summary the worker is about to
	// write (engine/preview.go): the chain catches up with it shortly.
	for deadline := time.Now().Add(30 * time.Second); ; {
		status, raw, err = s.call(http.MethodGet, "/v1/chats/"+chat+"/summary", nil, &got)
		if err != nil || status != http.StatusOK {
			t.Fatalf("summary of %s: %d %v %s", chat, status, err, raw)
		}
		if len(got.Chain) > 0 && got.Chain[0].CoveredToSeq >= ctxCursor || ctxCursor == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	chain := got.Chain
	v.summaries += len(chain)
	if len(chain) > 0 {
		head := chain[0].CoveredToSeq
		// The summary is the head, or (preview: true) the preview a
		// context shows while the head lags: never behind the head.
		if got.Summary == nil || got.Summary.CoveredToSeq < head || (!got.Preview && got.Summary.CoveredToSeq != head) {
			t.Errorf("%s: summary %s disagrees with its chain head (covered_to_seq %d)", chat, raw, head)
		}
		if limit := lastSeq - crashRecentTurns; head > limit {
			t.Errorf("%s: head covers to %d, inside the %d-turn recent window of last_seq %d", chat, head, crashRecentTurns, lastSeq)
		}
		if head < ctxCursor {
			t.Errorf("%s: the chain head covers to %d, behind the %d a context used before", chat, head, ctxCursor)
		}
	} else if (got.Summary != nil && !got.Preview) || ctxCursor != 0 {
		t.Errorf("%s: empty chain, but summary %s and a context cursor at %d", chat, raw, ctxCursor)
	}
	covered := map[int64]bool{0: true} // cursors the chain passed through
	for k, r := range chain {
		covered[r.CoveredToSeq] = true
		// Head first: each record's parent is the next one, one level down.
		var prevCovered int64
		if k+1 < len(chain) {
			next := chain[k+1]
			prevCovered = next.CoveredToSeq
			if r.ParentID == nil || *r.ParentID != next.ID {
				t.Errorf("%s: record %s (depth %d) has parent %v, want %s", chat, r.ID, r.Depth, r.ParentID, next.ID)
			}
			if r.Depth != next.Depth+1 {
				t.Errorf("%s: depth %d above depth %d", chat, r.Depth, next.Depth)
			}
			if r.CoveredToSeq < next.CoveredToSeq {
				t.Errorf("%s: covered_to_seq goes back from %d to %d toward the head", chat, next.CoveredToSeq, r.CoveredToSeq)
			}
		} else if r.ParentID != nil || r.Depth != 0 {
			t.Errorf("%s: chain base %s has parent %v and depth %d, want none and 0", chat, r.ID, r.ParentID, r.Depth)
		}
		if r.FromSeq != 0 || r.ToSeq != 0 { // it extended turns
			if r.FromSeq != prevCovered+1 || r.ToSeq != r.CoveredToSeq || r.ToSeq < r.FromSeq {
				t.Errorf("%s: record depth %d extends %d..%d covering to %d after a cursor at %d", chat, r.Depth, r.FromSeq, r.ToSeq, r.CoveredToSeq, prevCovered)
			}
		} else if r.CoveredToSeq != prevCovered {
			t.Errorf("%s: record depth %d extends nothing but moves the cursor %d -> %d", chat, r.Depth, prevCovered, r.CoveredToSeq)
		}
		if r.CoveredToSeq > lastSeq || r.CoveredFromSeq < 1 || r.CoveredFromSeq > max(r.CoveredToSeq, 1) {
			t.Errorf("%s: record depth %d covers %d..%d of %d turns", chat, r.Depth, r.CoveredFromSeq, r.CoveredToSeq, lastSeq)
		}
	}
	if !covered[ctxCursor] {
		t.Errorf("%s: a context used a summary covering to %d, which no chain record covers to", chat, ctxCursor)
	}

	head := int64(0)
	if len(chain) > 0 {
		head = chain[0].CoveredToSeq
	}
	t.Logf("%s: last_seq %d, summary covers to %d in %d records", chat, lastSeq, head, len(chain))
	v.episodes += verifyEpisodes(t, s, chat, lastSeq, head)
}

// verifyEpisodes checks that the chat's closed episodes are whole: they own
// contiguous, non-overlapping ranges from seq 1 within the stored turns,
// and every turn the summary covers (head, read before them) is in one but
// for an open tail shorter than episode_max_turns.
func verifyEpisodes(t *testing.T, s *crashServer, chat string, lastSeq, head int64) int {
	t.Helper()
	next, after, n := int64(1), int64(0), 0
	for {
		var page struct {
			Episodes []struct {
				ID      string `json:"id"`
				FromSeq int64  `json:"from_seq"`
				ToSeq   int64  `json:"to_seq"`
				Turns   int64  `json:"turns"`
				Short   string `json:"short"`
			} `json:"episodes"`
			NextAfterSeq int64 `json:"next_after_seq"`
		}
		status, raw, err := s.call(http.MethodGet, fmt.Sprintf("/v1/chats/%s/episodes?after_seq=%d&limit=3", chat, after), nil, &page)
		if err != nil || status != http.StatusOK {
			t.Fatalf("episodes of %s after %d: %d %v %s", chat, after, status, err, raw)
		}
		if len(page.Episodes) == 0 {
			break
		}
		for _, e := range page.Episodes {
			if e.FromSeq != next || e.ToSeq < e.FromSeq || e.ToSeq > lastSeq || e.Turns != e.ToSeq-e.FromSeq+1 || e.ID == "" {
				t.Errorf("%s: episode %s owns %d..%d (%d turns), want a range from %d within last_seq %d", chat, e.ID, e.FromSeq, e.ToSeq, e.Turns, next, lastSeq)
			}
			next = e.ToSeq + 1
			n++
		}
		after = page.NextAfterSeq
	}
	if tail := head - (next - 1); tail >= crashEpisodeMaxTurns {
		t.Errorf("%s: the summary covers to %d but episodes only to %d (an open tail of %d, max %d)", chat, head, next-1, tail, crashEpisodeMaxTurns)
	}
	t.Logf("%s: %d episodes cover 1..%d", chat, n, next-1)
	return n
}

// probeRefresh forces a refresh of every chat at once and logs which ones
// do not finish within a second. Not asserted (it is timing): it shows the
// chats whose summary lease a killed process still holds (the lease expires
// after its TTL).
func probeRefresh(t *testing.T, s *crashServer) {
	t.Helper()
	out := make([]string, crashChats)
	var wg sync.WaitGroup
	for c := range crashChats {
		wg.Go(func() {
			status, raw, err := s.callWith(s.quick, http.MethodPost, "/v1/chats/"+chatName(c)+"/summary/refresh", nil, nil)
			switch {
			case err != nil:
				out[c] = "not done within 1s (summary lease held by a killed process?)"
			case status == http.StatusOK:
				var r struct {
					Summary *struct {
						CoveredToSeq int64 `json:"covered_to_seq"`
					} `json:"summary"`
				}
				_ = json.Unmarshal(raw, &r)
				if r.Summary != nil {
					out[c] = fmt.Sprintf("ok, covers to %d", r.Summary.CoveredToSeq)
				} else {
					out[c] = "ok, no summary"
				}
			default:
				out[c] = fmt.Sprintf("%d %s", status, raw)
			}
		})
	}
	wg.Wait()
	for c, o := range out {
		t.Logf("forced refresh of %s after the crashes: %s", chatName(c), o)
	}
}

func (l *ledger) report(t *testing.T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Logf("batches %d: acknowledged by append %d, by context %d; outcome unknown %d (%d of them 5xx); retried %d (had landed %d, stored by the retry %d); never retried %d",
		len(l.batches), l.appendOK, l.contextOK, l.unknown, l.serverErr, l.retried, l.retriedLanded, l.retriedNew, len(l.pending))
	t.Logf("refreshes: ok %d, server timeout %d, chat unknown %d, client gave up or crashed %d", l.refreshOK, l.refreshTimeout, l.refreshOther, l.refreshGaveUp)
}
