package eval

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
)

// Replay is an OpenAI-compatible chat-completions server that answers
// contextd's summarisation requests from LoCoMo's own LLM-written memory
// (observations and session summaries), using only the material for the
// turns each request's transcript shows (see docs/evaluation.md). It never
// writes text of its own: every string it returns is the dataset's, or the
// existing summary or profile the request gave it.
type Replay struct {
	srv *httptest.Server
	m   *material

	mu   sync.Mutex
	cost LLMCost
}

// LLMCost is what the replay LLM was asked to do.
type LLMCost struct {
	Calls map[string]int // by request kind
	// TurnsSent counts the transcript lines recognised as turns, earlier
	// context included; Unplaced, "[seq]" lines that matched no turn.
	TurnsSent, Unplaced int
}

// Request kinds, as the replay recognises them.
const (
	kindEpisode     = "episode"
	kindCompression = "summary_compression"
	kindExtension   = "summary_extension"
	kindProfile     = "profile_merge"
	kindUnknown     = "unknown"
)

// NewReplay starts a replay LLM for one conversation on loopback.
func NewReplay(c Conversation) *Replay {
	r := &Replay{m: newMaterial(c), cost: LLMCost{Calls: map[string]int{}}}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.handle))
	if l, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		r.srv.Listener = l
	}
	r.srv.Start()
	return r
}

// URL is the OpenAI base URL to configure (…/v1).
func (r *Replay) URL() string { return r.srv.URL + "/v1" }

// Close stops the server.
func (r *Replay) Close() { r.srv.Close() }

// Register records the seq contextd gave a turn, so that "[seq]" prefixes
// resolve without text matching.
func (r *Replay) Register(diaID string, seq int64) { r.m.register(diaID, seq) }

// Cost returns a copy of the calls counted so far.
func (r *Replay) Cost() LLMCost {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.cost
	out.Calls = map[string]int{}
	for k, v := range r.cost.Calls {
		out.Calls[k] = v
	}
	return out
}

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content any    `json:"content"` // a string, or a list of parts
	} `json:"messages"`
}

// text joins the content of the messages with the given role.
func (q chatRequest) text(role string) string {
	var parts []string
	for _, m := range q.Messages {
		if m.Role != role {
			continue
		}
		switch c := m.Content.(type) {
		case string:
			parts = append(parts, c)
		case []any:
			for _, p := range c {
				if pm, ok := p.(map[string]any); ok {
					if t, ok := pm["text"].(string); ok {
						parts = append(parts, t)
					}
				}
			}
		}
	}
	return strings.Join(parts, "\n")
}

func (r *Replay) handle(w http.ResponseWriter, req *http.Request) {
	if !strings.HasSuffix(req.URL.Path, "/chat/completions") {
		http.NotFound(w, req)
		return
	}
	body, err := io.ReadAll(req.Body)
	var q chatRequest
	if err == nil {
		err = json.Unmarshal(body, &q)
	}
	if err != nil {
		http.Error(w, `{"error":{"message":"replay: bad request body","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	content, kind, sent, unplaced := r.answerSafely(q.text("system"), q.text("user"))
	r.mu.Lock()
	r.cost.Calls[kind]++
	r.cost.TurnsSent += sent
	r.cost.Unplaced += unplaced
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if kind == kindUnknown {
		// Not a request the replay can answer from the dataset: fail it, so
		// contextd takes its fallback and says so in degraded.
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"message":"replay: unrecognised request","type":"invalid_request_error"}}`))
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-replay", "object": "chat.completion", "created": 1, "model": q.Model,
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
		"usage": map[string]any{"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
	})
}

var (
	shortKey      = regexp.MustCompile(`"short"\s*:`)
	narrativeOnly = regexp.MustCompile(`(?i)narrative only|plain prose|no json`)
	extensionMark = regexp.MustCompile(`(?i)current summary|existing summary|updated summary|new messages`)
	episodeMark   = regexp.MustCompile(`(?i)\bthe episode\b|\bone episode\b|\bepisode below\b`)
)

// classify names a request's kind from the reply shape its prompt asks for
// and the default prompts' markers (derive/llmsum):
//   - episode: the reply shape has a "short" key, or the prompt speaks of
//     "the episode" / "one episode" / "episode below";
//   - profile merge: the prompt speaks of a profile and carries no turns;
//   - summary extension: turns (or none, a refresh) after an existing
//     summary ("Current summary", "existing/updated summary", "New
//     messages", or a JSON summary object before the first turn);
//   - summary compression: any other request carrying turns.
func classify(system, user string, turns int, summaryBeforeTurns bool) string {
	all := system + "\n" + user
	low := strings.ToLower(all)
	switch {
	case shortKey.MatchString(all) || episodeMark.MatchString(all):
		return kindEpisode
	case strings.Contains(low, "profile") && turns == 0:
		return kindProfile
	case summaryBeforeTurns || extensionMark.MatchString(user):
		return kindExtension
	case turns > 0:
		return kindCompression
	}
	return kindUnknown
}

// answerSafely is answer, a panic turned into an unknown request (a
// failed call contextd falls back from) rather than a dropped connection.
func (r *Replay) answerSafely(system, user string) (content, kind string, sent, unplaced int) {
	defer func() {
		if recover() != nil {
			content, kind = "", kindUnknown
		}
	}()
	return r.answer(system, user)
}

// answer builds the reply to one request.
func (r *Replay) answer(system, user string) (content, kind string, sent, unplaced int) {
	turns, unplaced := r.m.identify(user)
	prior, hasPrior := priorSummary(user)
	kind = classify(system, user, len(turns), hasPrior)
	var own, visible []int // the turns to summarise; earlier context
	for _, t := range turns {
		if t.context {
			visible = append(visible, t.turn)
		} else {
			own = append(own, t.turn)
		}
	}
	prose := narrativeOnly.MatchString(system)
	switch kind {
	case kindEpisode:
		content = r.m.episodeReply(own, visible)
	case kindCompression:
		content = r.m.summaryReply(nil, own, visible, prose)
	case kindExtension:
		content = r.m.summaryReply(prior, own, visible, prose)
	case kindProfile:
		content = r.m.profileReply(user)
	}
	for _, t := range turns {
		if !t.episode {
			sent++
		}
	}
	return content, kind, sent, unplaced
}
