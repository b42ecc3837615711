package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextd/contextd/derive/llmsum/llmtest"
	"github.com/contextd/contextd/internal/pgtest"
	"github.com/contextd/contextd/internal/tokens"
)

// The LLM root through the binary, with a model whose episode replies are
// short (one to three sentences, often the same one, as small local
// models' are) and whose root replies are a whole structured summary, as
// the prompt asks: the compression prompt writes the first root, the
// extension prompt extends it as episodes close, the served narrative never
// repeats a sentence, and the summariser reads at most 2x the conversation.

// crewShorts are the scripted episode replies: few, and repeated.
var crewShorts = []string{
	"The crew talked about lockers and shifts.",
	"The crew talked about lockers and shifts. Dana asked for the night shift.",
	"The crew talked about lockers and shifts. Omar fixed the rota. The boss approved it.",
}

// rootLLM is the scripted model: it counts the calls of each kind and
// keeps the root prompts it got.
type rootLLM struct {
	mu                 sync.Mutex
	srv                *llmtest.Server
	episodes           int
	compress, extend   []string // user prompts
	summariser, others int      // summariser input tokens; other calls (profile merges)
}

var crewEpisodeRe = regexp.MustCompile(`The episode \(turns (\d+)-(\d+)\)`)

func newRootLLM(t *testing.T) *rootLLM {
	l := &rootLLM{}
	l.srv = llmtest.New(t, func(_ int, req llmtest.Request) llmtest.Reply {
		user := req.User()
		l.mu.Lock()
		defer l.mu.Unlock()
		in := tokens.Count(req.System()) + tokens.Count(user)
		switch {
		case crewEpisodeRe.MatchString(user):
			short := crewShorts[l.episodes%len(crewShorts)]
			l.episodes++
			l.summariser += in
			b, _ := json.Marshal(map[string]any{"short": short, "topics": []string{"lockers", "shifts"},
				"entities": []any{}, "actions_taken": []string{}, "decisions": []string{}, "open_questions": []string{},
				"user_preferences": []string{}, "narrative": short, "facts": []any{}})
			return llmtest.Reply{Content: string(b)}
		case strings.HasPrefix(user, "CREW-COMPRESSION "):
			l.compress = append(l.compress, user)
		case strings.HasPrefix(user, "CREW-EXTENSION "):
			l.extend = append(l.extend, user)
		default:
			l.others++
			return llmtest.Reply{Content: `{}`} // a profile merge: not under test
		}
		l.summariser += in
		return llmtest.Reply{Content: crewRoot(user)}
	})
	return l
}

// crewRoot is a full structured summary, as a model writes it: the
// narrative retells what the root said and adds the new episodes' gists,
// repeats and all.
func crewRoot(user string) string {
	narr := []string{}
	if m := regexp.MustCompile(`"narrative":"((?:[^"\\]|\\.)*)"`).FindStringSubmatch(user); m != nil {
		var prev string
		_ = json.Unmarshal([]byte(`"`+m[1]+`"`), &prev)
		narr = append(narr, prev)
	}
	for _, m := range regexp.MustCompile(`\[episode, turns \d+-\d+, [^\]]*\] ([^\n]*)`).FindAllStringSubmatch(user, -1) {
		narr = append(narr, m[1])
	}
	b, _ := json.Marshal(map[string]any{
		"topics":           []string{"lockers", "shifts", "rota", "night shift", "overtime"},
		"entities":         []map[string]string{{"name": "Dana", "type": "person", "details": "wants the night shift"}, {"name": "Omar", "type": "person", "details": "keeps the rota"}},
		"actions_taken":    []string{"Omar fixed the rota", "lockers were reassigned"},
		"decisions":        []string{"night shifts rotate weekly", "lockers are assigned by seniority"},
		"open_questions":   []string{"who covers the holiday weekend?"},
		"user_preferences": []string{"Dana prefers night shifts"},
		"narrative":        strings.Join(narr, " "),
	})
	return string(b)
}

func (l *rootLLM) figures() (episodes, compress, extend, summariser int, ext []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.episodes, len(l.compress), len(l.extend), l.summariser, append([]string(nil), l.extend...)
}

// crewTurns is n turns of a crew's chat on one subject (no topic shift:
// episodes close at episode_max_turns), sized as real chats: short user
// turns, longer assistant ones.
func crewTurns(n int) []map[string]any {
	r := rand.New(rand.NewSource(3))
	vocab := strings.Fields(`locker shift rota night morning crew Dana Omar overtime swap keys badge
the a we should check whether it works after Monday and then tell the boss about holiday weekend cover`)
	t0 := time.Date(2024, 6, 3, 8, 0, 0, 0, time.UTC)
	var out []map[string]any
	for i := 0; i < n; i++ {
		role, words := "user", 10+r.Intn(25)
		if i%2 == 1 {
			role, words = "assistant", 30+r.Intn(70)
		}
		var b strings.Builder
		for words > 0 {
			k := min(words, 6+r.Intn(10))
			w := make([]string, k)
			for j := range w {
				w[j] = vocab[r.Intn(len(vocab))]
			}
			s := strings.Join(w, " ")
			b.WriteString(strings.ToUpper(s[:1]) + s[1:] + ". ")
			words -= k
		}
		out = append(out, map[string]any{"id": fmt.Sprintf("c%03d", i+1), "role": role, "content": strings.TrimSpace(b.String()),
			"created_at": t0.Add(time.Duration(i) * 3 * time.Minute).Format(time.RFC3339)})
	}
	return out
}

func crewConfig(llmURL, storage string) string {
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
    summary_cooldown: 0s
agents:
  - name: crew
    prompt_sections:
      summary_compression_user_prompt: "CREW-COMPRESSION {transcript}"
      summary_extension_user_prompt: "CREW-EXTENSION {existing_summary} NEW {new_messages}"
`, storage, llmURL)
}

var sentenceEndRe = regexp.MustCompile(`[.!?]["')\]]*\s+`)

// sentences splits a narrative at its sentence ends.
func sentences(text string) []string {
	var out []string
	for _, s := range sentenceEndRe.Split(strings.TrimSpace(text)+" ", -1) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func TestLLMRootExtendedThroughBinary(t *testing.T) {
	stores := map[string]func(t *testing.T) string{
		"sqlite":   func(*testing.T) string { return sqliteStorage },
		"postgres": func(t *testing.T) string { return postgresStorage(pgtest.DSN(t)) },
	}
	for name, storage := range stores {
		t.Run(name, func(t *testing.T) {
			llm := newRootLLM(t)
			s := startBinary(t, crewConfig(llm.srv.URL, storage(t)))
			turns := crewTurns(600)
			conv := 0
			for _, tr := range turns {
				conv += tokens.Count(tr["content"].(string))
			}
			for i := 0; i < len(turns); i += 100 {
				s.must(201, "POST", "/v1/chats/crew1/messages", map[string]any{"agent": "crew", "messages": turns[i : i+100]}, nil)
				waitFor(t, 60*time.Second, "the summary to cover the chat", func() bool {
					var a summaryAnswer
					s.must(200, "GET", "/v1/chats/crew1/summary", nil, &a)
					return a.Summary != nil && a.Summary.CoveredToSeq >= int64(i+100-10)
				})
			}
			var eps episodesAnswer
			s.must(200, "GET", "/v1/chats/crew1/episodes?limit=100", nil, &eps)
			episodes, compress, extend, in, ext := llm.figures()
			ratio := float64(in) / float64(conv)
			t.Logf("%d episodes closed; calls: %d episode, %d compression, %d extension; summariser input %d tokens over a %d-token conversation (%.2fx)",
				len(eps.Episodes), episodes, compress, extend, in, conv, ratio)
			if compress != 1 {
				t.Errorf("%d compression calls, want 1 (the first root)", compress)
			}
			if extend*3 < len(eps.Episodes) {
				t.Errorf("%d extension calls for %d closed episodes: want at least one per 3", extend, len(eps.Episodes))
			}
			for _, p := range ext {
				if !strings.Contains(p, `"narrative":"The crew talked about lockers and shifts.`) || !strings.Contains(p, "[episode, turns ") {
					t.Errorf("an extension prompt without the root or the new episodes: %.300q", p)
					break
				}
			}
			if ratio > 2 {
				t.Errorf("summariser input %.2fx the conversation, want <= 2x", ratio)
			}
			var sum summaryAnswer
			s.must(200, "GET", "/v1/chats/crew1/summary", nil, &sum)
			seen := map[string]bool{}
			for _, snt := range sentences(sum.Summary.Narrative) {
				if k := strings.ToLower(snt); seen[k] {
					t.Errorf("the served narrative repeats %q: %q", snt, sum.Summary.Narrative)
					break
				} else {
					seen[k] = true
				}
			}
			t.Logf("narrative: %q", sum.Summary.Narrative)
		})
	}
}
