package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextd/contextd/derive/llmsum/llmtest"
	"github.com/contextd/contextd/internal/pgtest"
)

// The LLM path (issue 18) through the real binary and a scripted
// OpenAI-compatible server: per-agent episodes and prompts, an episode
// summary's fact in a small context, one call per episode under a refresh
// mid-run, clean roots and shorts.

const vaultFact = "The crew christened the vault Bluebird."

// scriptedLLM answers episode calls (recognised by "The episode (turns
// A-B)") with a summary of the episode, the vault episode with vaultFact,
// and every other call (the root) with a structured summary. It records
// which episodes it summarised and the root prompts it got.
type scriptedLLM struct {
	mu       sync.Mutex
	srv      *llmtest.Server
	episodes map[string]int // "from-to" → calls
	roots    []string       // user prompts of root calls
}

var episodeCallRe = regexp.MustCompile(`The episode \(turns (\d+)-(\d+)\)`)

func newScriptedLLM(t *testing.T, delay time.Duration) *scriptedLLM {
	l := &scriptedLLM{episodes: map[string]int{}}
	l.srv = llmtest.New(t, func(_ int, req llmtest.Request) llmtest.Reply {
		user := req.User()
		l.mu.Lock()
		defer l.mu.Unlock()
		m := episodeCallRe.FindStringSubmatch(user)
		if m == nil && strings.HasPrefix(user, "Merge what the conversation summary") {
			return llmtest.Reply{Content: `{}`} // a profile merge: not under test here
		}
		if m == nil {
			l.roots = append(l.roots, user)
			return llmtest.Reply{Delay: delay, Content: `{"topics":["projects"],"decisions":["keep weekly check-ins"],"narrative":"Alice and the assistant worked through several projects, one at a time."}`}
		}
		l.episodes[m[1]+"-"+m[2]]++
		from, _ := strconv.Atoi(m[1])
		short := fmt.Sprintf("Alice went over a project in turns %s to %s.", m[1], m[2])
		var facts []map[string]any
		if strings.Contains(user, " vault ") {
			short = vaultFact
			facts = append(facts, map[string]any{"text": "The crew named the new vault Bluebird.", "seqs": []int{from}})
		}
		narr := short + " " + strings.Repeat("They compared the options, weighed the costs and agreed on the next steps together. ", 6)
		b, _ := json.Marshal(map[string]any{"short": short, "topics": []string{"project " + m[1]}, "narrative": narr,
			"decisions": []string{"continue with the plan from turn " + m[1]}, "facts": facts})
		return llmtest.Reply{Delay: delay, Content: string(b)}
	})
	return l
}

func (l *scriptedLLM) counts() (episodeCalls, distinct int, roots []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.episodes {
		episodeCalls += n
	}
	return episodeCalls, len(l.episodes), append([]string(nil), l.roots...)
}

// llmPathConfig: the supervisor has episodes off; the agent historian
// turns them on with its own prompts.
func llmPathConfig(llmURL, storage string) string {
	return fmt.Sprintf(`server:
  addr: "127.0.0.1:0"
  request_timeout: 60s
%s
vector:
  driver: embedded
  embedded_path: "%%DATA%%/vectors.db"
embedder:
  provider: hashing
llm:
  provider: openai
  model: scripted
  base_url: %q
  api_key: test
  timeout: 10s
supervisor:
  memory:
    strategy: rag_augmented
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
    prompt_sections:
      summary_compression_user_prompt: "HISTORIAN-COMPRESSION {transcript}"
      summary_extension_user_prompt: "HISTORIAN-EXTENSION {existing_summary} NEW {new_messages}"
`, storage, llmURL)
}

const sqliteStorage = `storage:
  driver: sqlite
  sqlite_path: "%DATA%/contextd.db"`

// postgresStorage is the storage section of a config on the database dsn.
func postgresStorage(dsn string) string {
	return fmt.Sprintf("storage:\n  driver: postgres\n  postgres_dsn: %q", dsn)
}

var projectWords = [][]string{
	strings.Fields("garden tomatoes compost seedlings watering basil greenhouse harvest"),
	strings.Fields("taxes invoice deduction accountant receipts filing refund income"),
	strings.Fields("guitar chords practice amplifier strings tuning metronome scales"),
	strings.Fields("recipe oven dough flour pasta sauce garlic baking"),
	strings.Fields("vault door crew welding hinges steel bolts locks"),
	strings.Fields("marathon training intervals shoes hydration pacing tempo stretching"),
}

// projectTurns is n turns moving through the projects, 8 turns each; the
// vault turns never say "christen" nor "Bluebird".
func projectTurns(n int) []map[string]any {
	t0 := time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)
	var out []map[string]any
	for i := 0; i < n; i++ {
		words := projectWords[(i/8)%len(projectWords)]
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		text := fmt.Sprintf("About the %s and the %s: we went over the %s again.", words[i%len(words)], words[(i+3)%len(words)], words[(i+5)%len(words)])
		out = append(out, map[string]any{"id": fmt.Sprintf("m%03d", i+1), "role": role, "content": text,
			"created_at": t0.Add(time.Duration(i) * 7 * time.Minute).Format(time.RFC3339)})
	}
	return out
}

type summaryAnswer struct {
	Summary *struct {
		Narrative    string `json:"narrative"`
		CoveredToSeq int64  `json:"covered_to_seq"`
	} `json:"summary"`
}

type episodesAnswer struct {
	Episodes []struct {
		FromSeq int64  `json:"from_seq"`
		ToSeq   int64  `json:"to_seq"`
		Short   string `json:"short"`
		Model   string `json:"model"`
	} `json:"episodes"`
}

// settled waits until the chat's summary covers all but the recent window.
func settled(t *testing.T, s *binServer, chat string, lastSeq int64) {
	waitFor(t, 60*time.Second, "the summary to cover the chat", func() bool {
		var a summaryAnswer
		s.must(200, "GET", "/v1/chats/"+chat+"/summary", nil, &a)
		return a.Summary != nil && a.Summary.CoveredToSeq >= lastSeq-4
	})
}

func TestLLMPathThroughBinary(t *testing.T) {
	llm := newScriptedLLM(t, 0)
	s := startBinary(t, llmPathConfig(llm.srv.URL, sqliteStorage))
	// A chat that grows while the summariser keeps up: 16 turns at a time.
	turns := projectTurns(192)
	for i := 0; i < len(turns); i += 16 {
		s.must(201, "POST", "/v1/chats/h1/messages", map[string]any{"user_id": "alice", "agent": "historian", "messages": turns[i : i+16]}, nil)
		settled(t, s, "h1", int64(i+16))
	}

	_, _, roots := llm.counts()
	var comp, ext int
	for _, r := range roots {
		switch {
		case strings.HasPrefix(r, "HISTORIAN-COMPRESSION "):
			comp++
		case strings.HasPrefix(r, "HISTORIAN-EXTENSION "):
			ext++
		default:
			t.Errorf("a root call without the agent's prompts: %.120q", r)
		}
	}
	if comp != 1 || ext == 0 {
		t.Errorf("root calls: %d with the compression prompt, %d with the extension prompt; want 1 and some", comp, ext)
	}

	var eps episodesAnswer
	s.must(200, "GET", "/v1/chats/h1/episodes", nil, &eps)
	if len(eps.Episodes) < 10 {
		t.Fatalf("%d episodes for 192 turns", len(eps.Episodes))
	}
	for _, e := range eps.Episodes {
		if strings.TrimSpace(e.Short) == "" {
			t.Errorf("episode %d-%d has no short summary", e.FromSeq, e.ToSeq)
		}
	}

	var hits struct {
		Hits []struct {
			Kind    string `json:"kind"`
			Content string `json:"content"`
		} `json:"hits"`
	}
	waitFor(t, 30*time.Second, "episodes in the index", func() bool {
		s.must(200, "POST", "/v1/search", map[string]any{"query": "crew christened vault Bluebird", "chat_id": "h1", "kinds": []string{"episode"}}, &hits)
		return len(hits.Hits) > 0
	})
	if hits.Hits[0].Kind != "episode" || hits.Hits[0].Content != vaultFact {
		t.Errorf("top episode hit %+v, want the vault episode", hits.Hits[0])
	}

	var ctxAns struct {
		Context  string `json:"context"`
		Sections struct {
			Episodes []struct {
				Short string `json:"short"`
			} `json:"episodes"`
			RAG []struct {
				Seq int64 `json:"seq"`
			} `json:"rag"`
		} `json:"sections"`
	}
	s.must(200, "POST", "/v1/context", map[string]any{"chat_id": "h1", "agent": "historian", "strategy": "rag_augmented",
		"budget_tokens": 1000, "query": "Which vault did the crew christen Bluebird?"}, &ctxAns)
	// The episode is retrieved beside its own turns (the drill brings
	// them): an LLM-written summary says what they do not, so it stays.
	shown := false
	for _, e := range ctxAns.Sections.Episodes {
		shown = shown || e.Short == vaultFact
	}
	if !shown || len(ctxAns.Sections.RAG) == 0 {
		t.Errorf("the episode's fact is not in the RAG section of the 1,000-token context (%d turns beside it):\n%s", len(ctxAns.Sections.RAG), ctxAns.Context)
	}

	var sum summaryAnswer
	s.must(200, "GET", "/v1/chats/h1/summary", nil, &sum)
	n := sum.Summary.Narrative
	if regexp.MustCompile(`(?i)\b(user|assistant):`).MatchString(n) || strings.Contains(n, "……") || strings.Contains(n, "......") {
		t.Errorf("root narrative has role labels or ellipsis pile-ups: %q", n)
	}
	t.Logf("root narrative: %q", n)
}

// TestRefreshMidRunOneCallPerEpisode: a refresh while the background run
// summarises a 160-turn chat with a slow model joins it: exactly one LLM
// call per episode, on SQLite and on Postgres.
func TestRefreshMidRunOneCallPerEpisode(t *testing.T) {
	stores := map[string]func(t *testing.T) string{
		"sqlite": func(*testing.T) string { return sqliteStorage },
		"postgres": func(t *testing.T) string {
			return postgresStorage(pgtest.DSN(t))
		},
	}
	for name, storage := range stores {
		t.Run(name, func(t *testing.T) {
			llm := newScriptedLLM(t, 40*time.Millisecond)
			s := startBinary(t, llmPathConfig(llm.srv.URL, storage(t)))
			s.must(201, "POST", "/v1/chats/r1/messages", map[string]any{"agent": "historian", "messages": projectTurns(160)}, nil)
			time.Sleep(300 * time.Millisecond)
			s.must(200, "POST", "/v1/chats/r1/summary/refresh", nil, nil)
			settled(t, s, "r1", 160)
			var eps episodesAnswer
			s.must(200, "GET", "/v1/chats/r1/episodes", nil, &eps)
			calls, distinct, _ := llm.counts()
			t.Logf("%d episodes, %d episode calls (%d distinct ranges)", len(eps.Episodes), calls, distinct)
			if len(eps.Episodes) < 10 || calls != len(eps.Episodes) || distinct != calls {
				t.Errorf("%d episode calls (%d distinct) for %d episodes: want exactly one per episode", calls, distinct, len(eps.Episodes))
			}
		})
	}
}
