//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/contextd/contextd/derive/llmsum/llmtest"
	"github.com/contextd/contextd/index/qdrant/qdranttest"
	"github.com/contextd/contextd/internal/pgtest"
)

// A second contextd on the same Postgres database with an embedded vector
// index refuses to start, and says why: its index would miss the turns the
// first one indexed (the marks are shared) and keep serving the vectors of
// turns the first one deleted. Once the first stops, it starts.
func TestSecondEmbeddedIndexOnOnePostgresRefused(t *testing.T) {
	cfg := `server:
  addr: "127.0.0.1:0"
` + postgresStorage(pgtest.DSN(t)) + `
vector:
  driver: embedded
  embedded_path: "%DATA%/vectors.db"
`
	a := startBinary(t, cfg)

	dir := t.TempDir()
	file := filepath.Join(dir, "agents.yaml")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(cfg, "%DATA%", dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, contextdBinary(t), "serve", "--config", file)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "CONTEXTD_ADDR=127.0.0.1:0")
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil || !strings.Contains(string(out), "keeps its own embedded vector index") ||
		!strings.Contains(string(out), "vector.driver: qdrant") {
		t.Fatalf("a second replica with its own embedded index: %v\n%s", err, tail(string(out), 2000))
	}

	a.stop()
	b := startBinary(t, cfg) // the lock went with the first process
	b.must(200, "GET", "/healthz", nil, nil)
}

// --- three replicas on one Postgres ---

// replicaConfig is a replica: Postgres storage, turn vectors in a shared
// Qdrant (the in-process fake at qdrantAddr), the scripted LLM at llmURL
// writing episode and root summaries for the historian agent.
func replicaConfig(dsn, qdrantAddr, llmURL, model string) string {
	return fmt.Sprintf(`server:
  addr: "127.0.0.1:0"
  request_timeout: 60s
%s
vector:
  driver: qdrant
  qdrant:
    addr: %q
    timeout: 30s
embedder:
  provider: hashing
llm:
  provider: openai
  model: %s
  base_url: %q
  api_key: test
  timeout: 10s
supervisor:
  memory:
    strategy: running_summary
    summary_recent_turns: 4
    summary_trigger_turns: 1
    summary_cooldown: 0s
    episodes: false
agents:
  - name: historian
    memory:
      episodes: true
      rag_episodes: true
      episode_min_turns: 4
      episode_max_turns: 10
`, postgresStorage(dsn), qdrantAddr, model, llmURL)
}

// replicaLLM answers every call and counts the episode calls per chat and
// range; the chat is read from the "[chat NAME]" tag every turn carries.
type replicaLLM struct {
	mu    sync.Mutex
	srv   *llmtest.Server
	calls map[string]int // "chat from-to" → episode calls
}

var replicaChatRe = regexp.MustCompile(`\[chat (rc\d+)\]`)

func newReplicaLLM(t *testing.T) *replicaLLM {
	l := &replicaLLM{calls: map[string]int{}}
	l.srv = llmtest.New(t, func(_ int, req llmtest.Request) llmtest.Reply {
		user := req.User()
		m := episodeCallRe.FindStringSubmatch(user)
		if m == nil {
			return llmtest.Reply{Content: `{"topics":["projects"],"decisions":["keep weekly check-ins"],"narrative":"Alice and the assistant worked through several projects, one at a time."}`}
		}
		chat := "?"
		if c := replicaChatRe.FindStringSubmatch(user); c != nil {
			chat = c[1]
		}
		l.mu.Lock()
		l.calls[chat+" "+m[1]+"-"+m[2]]++
		l.mu.Unlock()
		short := fmt.Sprintf("Alice went over a project in turns %s to %s.", m[1], m[2])
		b, _ := json.Marshal(map[string]any{"short": short, "topics": []string{"project " + m[1]},
			"narrative": short + " They compared the options and agreed on the next steps.", "decisions": []string{"go on"}})
		return llmtest.Reply{Content: string(b)}
	})
	return l
}

// TestThreeReplicasOnOnePostgres starts three real binaries on one
// Postgres database and one (fake) Qdrant, appends concurrently through all
// three to the same chats, and checks what the replicas wrote together:
// every acknowledged turn stored once at its acknowledged seq, seqs gap-free,
// each episode summarised by exactly one LLM call and episodes not
// overlapping, the summary chain one unforked line, every turn indexed once.
func TestThreeReplicasOnOnePostgres(t *testing.T) {
	const (
		replicas = 3
		chats    = 4
		clients  = 3 // per replica
		batches  = 8
		rounds   = 3
		recent   = 4
		maxEp    = 10
	)
	dsn := pgtest.DSN(t)
	fake := qdranttest.Start(t)
	llm := newReplicaLLM(t)
	servers := make([]*binServer, replicas)
	for i := range servers {
		// Each replica names its own model, so the records show who
		// wrote them.
		servers[i] = startBinary(t, replicaConfig(dsn, fake.Addr(), llm.srv.URL, fmt.Sprintf("scripted-r%d", i)))
	}

	// Clients of every replica append 1-3 turns at a time to random chats
	// (each turn names its chat, for the LLM), with contexts in between.
	type ack struct {
		chat string
		seq  int64
	}
	var (
		mu    sync.Mutex
		acked = map[string]ack{} // id → where the server said it is
		sent  = map[string]string{}
		errs  []string
	)
	client := &http.Client{Timeout: 60 * time.Second}
	post := func(s *binServer, path string, body any, out any) (int, error) {
		b, _ := json.Marshal(body)
		resp, err := client.Post(s.base+path, "application/json", bytes.NewReader(b))
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if out != nil && resp.StatusCode < 300 {
			if err := json.Unmarshal(raw, out); err != nil {
				return resp.StatusCode, fmt.Errorf("decode %s: %w", raw, err)
			}
		}
		if resp.StatusCode >= 300 {
			return resp.StatusCode, fmt.Errorf("%s", raw)
		}
		return resp.StatusCode, nil
	}
	words := projectWords
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// settle waits for the replicas' workers: every chat summarised up to
	// its recent window, every turn and episode indexed.
	settle := func() {
		waitFor(t, 30*time.Second, "the replicas' background work to settle", func() bool {
			var behind, unindexed, epUnindexed int
			err := conn.QueryRow(ctx, `SELECT
				(SELECT count(*) FROM chats WHERE summary_cursor < last_seq - $1),
				(SELECT count(*) FROM messages WHERE NOT indexed),
				(SELECT count(*) FROM episodes WHERE NOT indexed)`, recent).Scan(&behind, &unindexed, &epUnindexed)
			return err == nil && behind == 0 && unindexed == 0 && epUnindexed == 0
		})
	}
	// Rounds of concurrent appends, each left to settle, so the summary
	// chains grow over several records written by whichever replica won
	// the chat's lease.
	for round := range rounds {
		var wg sync.WaitGroup
		for r := range replicas {
			for c := range clients {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(round*replicas+r), uint64(c)))
					for b := range batches {
						// Round-robin over the replicas, starting at this client's.
						s := servers[(r+b)%replicas]
						chat := fmt.Sprintf("rc%d", rng.IntN(chats))
						n := 1 + rng.IntN(3)
						var msgs []map[string]any
						for j := range n {
							id := fmt.Sprintf("w%d-r%d-c%d-b%d-%d", round, r, c, b, j)
							ws := words[(b/3+c)%len(words)]
							content := fmt.Sprintf("[chat %s] %s: we talked about %s, %s and %s today.", chat, id, ws[rng.IntN(len(ws))], ws[rng.IntN(len(ws))], ws[rng.IntN(len(ws))])
							msgs = append(msgs, map[string]any{"id": id, "role": []string{"user", "assistant"}[j%2], "content": content})
							mu.Lock()
							sent[id] = chat
							mu.Unlock()
						}
						var a appendAnswer
						st, err := post(s, "/v1/chats/"+chat+"/messages", map[string]any{"user_id": "alice", "agent": "historian", "messages": msgs}, &a)
						mu.Lock()
						if err != nil || st != 201 || a.Appended != n || len(a.Messages) != n {
							errs = append(errs, fmt.Sprintf("append to %s via %s: %d %v %+v", chat, s.base, st, err, a))
						}
						for _, m := range a.Messages {
							acked[m.ID] = ack{chat, m.Seq}
						}
						mu.Unlock()
						if b%3 == 2 {
							if st, err := post(s, "/v1/context", map[string]any{"chat_id": chat, "agent": "historian", "budget_tokens": 400, "query": "what did we talk about"}, nil); err != nil || st != 200 {
								mu.Lock()
								errs = append(errs, fmt.Sprintf("context of %s via %s: %d %v", chat, s.base, st, err))
								mu.Unlock()
							}
						}
					}
				})
			}
		}
		wg.Wait()
		settle()
	}
	for _, e := range errs {
		t.Error(e)
	}
	if len(acked) == 0 {
		t.Fatal("nothing was acknowledged")
	}

	// Turns: exactly the acknowledged ids, each once, at its acknowledged
	// seq; seqs 1..last_seq.
	type stored struct {
		chat, id, content string
		seq               int64
	}
	rows, err := conn.Query(ctx, `SELECT c.chat_id, m.id, m.content, m.seq FROM messages m JOIN chats c ON c.id = m.chat ORDER BY c.chat_id, m.seq`)
	if err != nil {
		t.Fatal(err)
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (stored, error) {
		var s stored
		return s, r.Scan(&s.chat, &s.id, &s.content, &s.seq)
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	lastSeq := map[string]int64{}
	for _, m := range all {
		if m.seq != lastSeq[m.chat]+1 {
			t.Errorf("%s: seq %d follows %d", m.chat, m.seq, lastSeq[m.chat])
		}
		lastSeq[m.chat] = m.seq
		if seen[m.id] {
			t.Errorf("id %s stored twice", m.id)
		}
		seen[m.id] = true
		if a, ok := acked[m.id]; !ok {
			t.Errorf("%s@%d: id %s was never acknowledged", m.chat, m.seq, m.id)
		} else if a.chat != m.chat || a.seq != m.seq {
			t.Errorf("id %s acknowledged at %s@%d, stored at %s@%d", m.id, a.chat, a.seq, m.chat, m.seq)
		}
		if !strings.HasPrefix(m.content, "[chat "+m.chat+"] "+m.id+":") {
			t.Errorf("%s@%d: content %q is not what was sent", m.chat, m.seq, m.content)
		}
	}
	if len(all) != len(acked) {
		t.Errorf("%d turns stored, %d acknowledged", len(all), len(acked))
	}
	var chatRows, lastSum int64
	if err := conn.QueryRow(ctx, `SELECT count(*), coalesce(sum(last_seq), 0) FROM chats`).Scan(&chatRows, &lastSum); err != nil {
		t.Fatal(err)
	}
	if chatRows != int64(len(lastSeq)) || lastSum != int64(len(all)) {
		t.Errorf("chats: %d rows with last_seq summing to %d; stored %d chats, %d turns", chatRows, lastSum, len(lastSeq), len(all))
	}

	// Episodes: contiguous from 1, not overlapping, each written after
	// exactly one LLM call for its range (no replica summarised it again),
	// and no call for a range that was not kept.
	rows, err = conn.Query(ctx, `SELECT chat_id, from_seq, to_seq FROM episodes ORDER BY chat_id, from_seq`)
	if err != nil {
		t.Fatal(err)
	}
	type ep struct {
		chat     string
		from, to int64
	}
	eps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ep, error) {
		var e ep
		return e, r.Scan(&e.chat, &e.from, &e.to)
	})
	if err != nil {
		t.Fatal(err)
	}
	epEnd := map[string]int64{}
	kept := map[string]bool{}
	for _, e := range eps {
		if e.from != epEnd[e.chat]+1 || e.to < e.from || e.to > lastSeq[e.chat] {
			t.Errorf("%s: episode %d..%d after one ending at %d (last_seq %d)", e.chat, e.from, e.to, epEnd[e.chat], lastSeq[e.chat])
		}
		epEnd[e.chat] = e.to
		kept[fmt.Sprintf("%s %d-%d", e.chat, e.from, e.to)] = true
	}
	llm.mu.Lock()
	for k, n := range llm.calls {
		if n != 1 || !kept[k] {
			t.Errorf("episode %s: %d LLM calls, kept %v; want one call for a kept episode", k, n, kept[k])
		}
	}
	for k := range kept {
		if llm.calls[k] == 0 {
			t.Errorf("episode %s stored without an LLM call for it", k)
		}
	}
	llm.mu.Unlock()

	// The summary chain: one record per depth (the schema says so), each
	// the parent of the next, extending turns right after its parent's
	// cursor; the chat's cursor is the head's.
	rows, err = conn.Query(ctx, `SELECT s.chat_id, s.id::text, coalesce(s.parent_id::text, ''), s.depth, s.from_seq, s.to_seq, s.covered_to_seq, c.summary_cursor
		FROM conversation_summaries s JOIN chats c ON c.id = s.chat ORDER BY s.chat_id, s.depth`)
	if err != nil {
		t.Fatal(err)
	}
	type rec struct {
		chat, id, parent    string
		depth               int
		from, to, cov, curs int64
	}
	recs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (rec, error) {
		var r rec
		return r, row.Scan(&r.chat, &r.id, &r.parent, &r.depth, &r.from, &r.to, &r.cov, &r.curs)
	})
	if err != nil {
		t.Fatal(err)
	}
	prev := map[string]rec{}
	for _, r := range recs {
		p, has := prev[r.chat]
		switch {
		case !has && (r.depth != 0 || r.parent != ""):
			t.Errorf("%s: chain base at depth %d with parent %q", r.chat, r.depth, r.parent)
		case has && (r.depth != p.depth+1 || r.parent != p.id):
			t.Errorf("%s: record at depth %d has parent %q, want %s at depth %d", r.chat, r.depth, r.parent, p.id, p.depth)
		}
		if r.from != 0 || r.to != 0 {
			if r.from != p.cov+1 || r.to != r.cov {
				t.Errorf("%s: depth %d extends %d..%d covering to %d after a cursor at %d", r.chat, r.depth, r.from, r.to, r.cov, p.cov)
			}
		} else if r.cov != p.cov {
			t.Errorf("%s: depth %d extends nothing but moves the cursor %d -> %d", r.chat, r.depth, p.cov, r.cov)
		}
		if r.cov > lastSeq[r.chat]-recent {
			t.Errorf("%s: depth %d covers to %d, inside the recent window of last_seq %d", r.chat, r.depth, r.cov, lastSeq[r.chat])
		}
		prev[r.chat] = r
	}
	for chat, last := range lastSeq {
		head, ok := prev[chat]
		if !ok || head.cov != head.curs || head.cov < last-recent {
			t.Errorf("%s: chain head %+v (present %v), last_seq %d", chat, head, ok, last)
		}
		if head.cov-epEnd[chat] >= maxEp {
			t.Errorf("%s: the summary covers to %d but episodes only to %d", chat, head.cov, epEnd[chat])
		}
	}

	// Vectors: every turn and episode is one point in the shared
	// collection, whichever replica indexed it.
	var turnPoints, epPoints int
	for _, name := range fake.Collections() {
		for _, p := range fake.Points(name) {
			switch p.Payload["kind"].GetStringValue() {
			case "turn", "":
				turnPoints++
			case "episode":
				epPoints++
			}
		}
	}
	if turnPoints != len(all) || epPoints != len(eps) {
		t.Errorf("the shared collection holds %d turn and %d episode points; stored %d turns, %d episodes", turnPoints, epPoints, len(all), len(eps))
	}
	// Who did the work (logged, not asserted: any replica may win every
	// lease).
	rows, err = conn.Query(ctx, `SELECT model, count(*) FROM (SELECT model FROM episodes UNION ALL SELECT model FROM conversation_summaries) w GROUP BY model ORDER BY model`)
	if err != nil {
		t.Fatal(err)
	}
	byModel, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var m string
		var n int
		err := r.Scan(&m, &n)
		return fmt.Sprintf("%s %d", m, n), err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("episodes and summary records written per replica's model: %s", strings.Join(byModel, ", "))
	t.Logf("%d replicas: %d turns in %d chats, %d episodes (%d LLM calls), %d summary records, %d+%d points",
		replicas, len(all), len(lastSeq), len(eps), len(llm.calls), len(recs), turnPoints, epPoints)
}

// --- throughput of 1, 2 and 3 replicas (by hand) ---

// TestReplicaThroughput measures appends/s and contexts/s of 1, 2 and 3
// replicas on one Postgres database at a fixed concurrency, requests spread
// round-robin over the replicas, then counts what the replicas' background
// work wrote. It is a measurement, not a check of speed: it runs only with
// CONTEXTD_REPLICA_BENCH=1 (scripts/bench-replicas.sh) and asserts only the
// stored data. Vectors: vector.driver none (no Qdrant server here), LLM
// none (extractive summaries): the figures are storage and the read path
// without shared vectors.
func TestReplicaThroughput(t *testing.T) {
	if os.Getenv("CONTEXTD_REPLICA_BENCH") == "" {
		t.Skip("a measurement: set CONTEXTD_REPLICA_BENCH=1 (scripts/bench-replicas.sh)")
	}
	dur := 10 * time.Second
	if d, err := time.ParseDuration(os.Getenv("CONTEXTD_REPLICA_BENCH_DURATION")); err == nil {
		dur = d
	}
	const (
		clients = 16
		chats   = 64
		preload = 40 // turns per chat before the context phase
		recent  = 8
	)
	cfg := func(dsn string) string {
		return `server:
  addr: "127.0.0.1:0"
  log_level: warn
` + postgresStorage(dsn) + `
vector:
  driver: none
embedder:
  provider: hashing
llm:
  provider: none
supervisor:
  memory:
    strategy: running_summary
    summary_recent_turns: 8
    summary_trigger_turns: 1
    persist_summary: true
    episodes: true
    episode_min_turns: 4
    episode_max_turns: 12
`
	}
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	post := func(url string, body []byte) error {
		resp, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			return fmt.Errorf("%s: %d %s", url, resp.StatusCode, raw)
		}
		return nil
	}
	// run has clients request for dur, client i starting at replica i and
	// moving to the next on every request; it returns requests/s.
	run := func(bases []string, req func(rng *rand.Rand, client, n int) (path string, body []byte)) (float64, int) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		total, failed := 0, 0
		start := time.Now()
		stop := start.Add(dur)
		for c := range clients {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(c), 7))
				n := 0
				for ; time.Now().Before(stop); n++ {
					path, body := req(rng, c, n)
					if err := post(bases[(c+n)%len(bases)]+path, body); err != nil {
						mu.Lock()
						if failed == 0 {
							t.Errorf("request: %v", err)
						}
						failed++
						mu.Unlock()
					}
				}
				mu.Lock()
				total += n
				mu.Unlock()
			})
		}
		wg.Wait()
		return float64(total) / time.Since(start).Seconds(), failed
	}
	turn := func(chat string, id string, rng *rand.Rand) map[string]any {
		ws := projectWords[rng.IntN(len(projectWords))]
		return map[string]any{"id": id, "role": []string{"user", "assistant"}[rng.IntN(2)],
			"content": fmt.Sprintf("In %s we went over the %s, the %s and the %s again, and agreed to look at the %s next week.",
				chat, ws[rng.IntN(len(ws))], ws[rng.IntN(len(ws))], ws[rng.IntN(len(ws))], ws[rng.IntN(len(ws))])}
	}

	var report []string
	for n := 1; n <= 3; n++ {
		dsn := pgtest.DSN(t)
		var bases []string
		for range n {
			bases = append(bases, startBinary(t, cfg(dsn)).base)
		}
		// Pre-load every chat through the replicas, then let the summaries
		// settle so contexts are measured in steady state.
		rng := rand.New(rand.NewPCG(1, 1))
		for c := range chats {
			chat := fmt.Sprintf("b%d", c)
			var msgs []map[string]any
			for j := range preload {
				msgs = append(msgs, turn(chat, fmt.Sprintf("pre-%d", j), rng))
			}
			b, _ := json.Marshal(map[string]any{"user_id": fmt.Sprintf("u%d", c%8), "messages": msgs})
			if err := post(bases[c%n]+"/v1/chats/"+chat+"/messages", b); err != nil {
				t.Fatal(err)
			}
		}
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		settle := func() {
			waitFor(t, 120*time.Second, "summaries to settle", func() bool {
				var behind int
				return conn.QueryRow(ctx, `SELECT count(*) FROM chats WHERE summary_cursor < last_seq - $1`, recent).Scan(&behind) == nil && behind == 0
			})
		}
		settle()

		ctxRate, ctxFailed := run(bases, func(rng *rand.Rand, _, _ int) (string, []byte) {
			b, _ := json.Marshal(map[string]any{"chat_id": fmt.Sprintf("b%d", rng.IntN(chats)), "budget_tokens": 1000, "query": "what did we agree to look at next week"})
			return "/v1/context", b
		})
		appRate, appFailed := run(bases, func(rng *rand.Rand, c, i int) (string, []byte) {
			chat := fmt.Sprintf("b%d", rng.IntN(chats))
			b, _ := json.Marshal(map[string]any{"messages": []map[string]any{
				turn(chat, fmt.Sprintf("a-%d-%d-0", c, i), rng), turn(chat, fmt.Sprintf("a-%d-%d-1", c, i), rng)}})
			return "/v1/chats/" + chat + "/messages", b
		})
		settleStart := time.Now()
		settle()
		settled := time.Since(settleStart)

		// What the replicas wrote together: turns once each, seqs
		// gap-free, episodes contiguous (no range summarised twice), one
		// summary record per depth on a line.
		var turns, gaps, overlaps, badChains, eps, sums int
		if err := conn.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM messages),
			(SELECT count(*) FROM chats c WHERE c.last_seq <> (SELECT count(*) FROM messages m WHERE m.chat = c.id)
				OR c.last_seq <> (SELECT coalesce(max(seq), 0) FROM messages m WHERE m.chat = c.id)),
			(SELECT count(*) FROM (SELECT from_seq, lag(to_seq, 1, 0::bigint) OVER (PARTITION BY chat ORDER BY from_seq) AS prev_to FROM episodes) e WHERE from_seq <> prev_to + 1),
			(SELECT count(*) FROM conversation_summaries s WHERE (s.depth = 0 AND s.parent_id IS NOT NULL) OR (s.depth > 0 AND NOT EXISTS
				(SELECT 1 FROM conversation_summaries p WHERE p.id = s.parent_id AND p.depth = s.depth - 1 AND p.covered_to_seq <= s.covered_to_seq))),
			(SELECT count(*) FROM episodes),
			(SELECT count(*) FROM conversation_summaries)`).Scan(&turns, &gaps, &overlaps, &badChains, &eps, &sums); err != nil {
			t.Fatal(err)
		}
		if gaps+overlaps+badChains+ctxFailed+appFailed > 0 {
			t.Errorf("%d replicas: %d chats with gaps, %d episodes not right after the previous, %d broken chain records, %d+%d failed requests",
				n, gaps, overlaps, badChains, ctxFailed, appFailed)
		}
		conn.Close(ctx)
		line := fmt.Sprintf("| %d | %.0f | %.0f | %s | %d | %d | %d |", n, appRate, ctxRate, settled.Round(100*time.Millisecond), turns, eps, sums)
		t.Log(line)
		report = append(report, line)
	}
	t.Logf("%d clients, %s per phase, %d chats pre-loaded with %d turns\n| replicas | appends/s (2 turns) | contexts/s | summaries settled after | turns | episodes | summary records |\n|---|---|---|---|---|---|---|\n%s",
		clients, dur, chats, preload, strings.Join(report, "\n"))
}
