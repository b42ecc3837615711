package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextd/contextd/derive/extractive"
	"github.com/contextd/contextd/derive/llmsum"
	"github.com/contextd/contextd/derive/llmsum/llmtest"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/sqlite"
)

// secret is what the deleted turn said; nothing derived may keep it.
const secret = "Zebrafish"

// recEraser records the turns it erased and fails while down.
type recEraser struct {
	mu    sync.Mutex
	down  bool
	turns []memory.Deletion
	eps   []int64 // from_seq of the episodes erased
}

func (e *recEraser) EraseEpisode(_ context.Context, _ memory.ChatKey, ep memory.Episode) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.down {
		return errors.New("index down")
	}
	e.eps = append(e.eps, ep.FromSeq)
	return nil
}

func (e *recEraser) EraseTurn(_ context.Context, f memory.Deletion) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.down {
		return errors.New("index down")
	}
	e.turns = append(e.turns, f)
	return nil
}

// secretChat stores 100 turns for user ann, turn 30 telling the secret,
// drains the worker and merges the summary into ann's profile. It returns
// the deleted turn's id.
func secretChat(t *testing.T, st *sqlite.Store, w *Worker) string {
	t.Helper()
	ctx := context.Background()
	turns := topicTurns(100)
	turns[29].Content = "My diagnosis is " + secret + " syndrome, confirmed by Doctor " + secret + "."
	turns[29].ID = "the-secret"
	if _, err := st.Append(ctx, memory.AppendRequest{Chat: chatKey, UserID: "ann", Agent: "a", Messages: turns}); err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	head, err := st.SummaryHead(ctx, chatKey)
	if err != nil || head == nil {
		t.Fatalf("head %v, %v", head, err)
	}
	prof := memory.MergeChat(memory.ProfileState{}, "ann", chatKey.ChatID, head.Summary, time.Now())
	prof = memory.MergeChat(prof, "ann", "other", memory.Summary{CoveredFromSeq: 1, CoveredToSeq: 4, Topics: []string{"sailing"}}, time.Now())
	if err := st.SaveProfile(ctx, chatKey.Tenant, "ann", prof, 0); err != nil {
		t.Fatal(err)
	}
	return "the-secret"
}

// holdsSecret lists where the secret is still found in derived state.
func holdsSecret(t *testing.T, st *sqlite.Store) []string {
	t.Helper()
	ctx := context.Background()
	var where []string
	js := func(what string, v any) {
		b, _ := json.Marshal(v)
		if strings.Contains(strings.ToLower(string(b)), strings.ToLower(secret)) {
			where = append(where, what)
		}
	}
	chain, err := st.SummaryChain(ctx, chatKey)
	if err != nil {
		t.Fatal(err)
	}
	js("summary chain", chain)
	eps, _ := st.Episodes(ctx, chatKey, memory.EpisodeQuery{})
	js("episodes", eps)
	facts, _ := st.Facts(ctx, chatKey, memory.FactQuery{IncludeSuperseded: true})
	js("facts", facts)
	prof, _, _ := st.Profile(ctx, chatKey.Tenant, "ann")
	js("profile", prof.Profile)
	msgs, _ := st.Messages(ctx, chatKey, 0, 1000)
	js("messages", msgs)
	return where
}

// withAndWithoutEpisodes are the extractive settings the rebuild tests run
// under.
var withAndWithoutEpisodes = []struct {
	name     string
	settings func() Settings
}{{"episodes", episodeSettings}, {"no episodes", baseSettings}}

// TestRebuildAfterDelete: with and without episodes, extractively, the
// deleted turn leaves the summary, the episodes, the facts and the profile;
// the marks are cleared, the forget row done, the other turns intact.
func TestRebuildAfterDelete(t *testing.T) {
	for _, tc := range withAndWithoutEpisodes {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t)
			er := &recEraser{}
			w := newWorker(st, extractive.New(), "w1", tc.settings)
			rebuilding(w, st, er, st)
			id := secretChat(t, st, w)
			if where := holdsSecret(t, st); !strings.Contains(fmt.Sprint(where), "summary chain") || !strings.Contains(fmt.Sprint(where), "profile") {
				t.Fatalf("before the delete the secret is in %v: the test cannot fail", where)
			}
			if _, err := st.DeleteMessage(ctx, chatKey, id); err != nil {
				t.Fatal(err)
			}
			er.down = true // the index is down: nothing is lost, the row waits
			if _, err := w.Rebuild(ctx); err == nil {
				t.Fatal("Rebuild with the index down: no error")
			}
			if fs, _ := st.PendingDeletions(ctx, 0); len(fs) != 1 {
				t.Fatalf("forget rows %+v, want the one kept while the index is down", fs)
			}
			er.down = false
			if n, err := w.Rebuild(ctx); err != nil || n != 1 {
				t.Fatalf("Rebuild = %d, %v", n, err)
			}
			if where := holdsSecret(t, st); len(where) != 0 {
				t.Errorf("the secret is still in %v", where)
			}
			checkRebuilt(t, st, er)
			// The chain goes on from the rebuilt record.
			appendTurns(t, st, chatKey, 30)
			if err := w.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			if chain, _ := st.SummaryChain(ctx, chatKey); len(chain) != 2 || holdsSecret(t, st) != nil {
				t.Errorf("after more turns: chain of %d, secret in %v", len(chain), holdsSecret(t, st))
			}
		})
	}
}

func checkRebuilt(t *testing.T, st *sqlite.Store, er *recEraser) {
	t.Helper()
	ctx := context.Background()
	c, _ := st.Chat(ctx, chatKey)
	if c.SummaryDirty || c.SummaryCursor == 0 {
		t.Errorf("chat %+v: want clean, cursor kept", c)
	}
	for _, e := range allEpisodes(t, st) {
		if e.FromSeq <= 30 && 30 <= e.ToSeq && (len(er.eps) == 0 || er.eps[len(er.eps)-1] != e.FromSeq) {
			t.Errorf("episode %d..%d rebuilt without erasing its point first (erased %v)", e.FromSeq, e.ToSeq, er.eps)
		}
		if e.Rebuild || (e.FromSeq <= 30 && 30 <= e.ToSeq && e.Short == "") {
			t.Errorf("episode %d..%d rebuild %v short %q", e.FromSeq, e.ToSeq, e.Rebuild, e.Short)
		}
	}
	if fs, _ := st.PendingDeletions(ctx, 0); len(fs) != 0 {
		t.Errorf("forget rows left: %+v", fs)
	}
	if len(er.turns) != 1 || er.turns[0].Seq != 30 || er.turns[0].Chat != chatKey {
		t.Errorf("erased %+v, want turn 30", er.turns)
	}
	msgs, _ := st.Messages(ctx, chatKey, 0, 1000)
	want := topicTurns(100)
	for i, m := range msgs {
		if (m.Seq == 30) != m.Deleted || (m.Seq != 30 && m.Content != want[i].Content) {
			t.Errorf("turn %d: deleted %v content %.40q", m.Seq, m.Deleted, m.Content)
		}
	}
	prof, _, _ := st.Profile(ctx, chatKey.Tenant, "ann")
	if len(prof.Profile.Topics) == 0 || prof.Profile.Topics[0].Text != "sailing" {
		t.Errorf("profile topics %+v: want the other chat's item kept", prof.Profile.Topics)
	}
}

// TestRebuildLLMCalls: with an LLM the rebuild costs the deleted turn's
// episode's call plus one root call with the compression prompt (only the
// root call when the turn is in the open tail), and neither reads it.
func TestRebuildLLMCalls(t *testing.T) {
	for _, tc := range []struct {
		name            string
		seq             int64
		episodes, roots int
	}{{"in an episode", 30, 1, 1}, {"in the open tail", 0, 0, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, func(n int, _ llmtest.Request) llmtest.Reply {
				return llmtest.Reply{Content: fmt.Sprintf(`{"short":"Episode %d in brief.","topics":["t%d"],"narrative":"n"}`, n, n)}
			})
			prompts := memory.Prompts{Compression: "AGENT COMPRESSION {transcript}", Extension: "AGENT EXTENSION {existing_summary} {new_messages}"}
			sum := llmsum.New(srv.Model(t, "m"), llmsum.Options{ModelName: "m", MaxRetries: -1, Timeout: 5 * time.Second, Fallback: extractive.New()})
			ctx := context.Background()
			st := openStore(t)
			s := episodeSettings()
			s.Prompts = llmsum.ResolvePrompts(prompts, "")
			s.Episodes.Prompt = "EPISODE PROMPT {transcript}"
			w := newWorker(st, sum, "w1", func() Settings { return s })
			rebuilding(w, st, nil, st)
			id := secretChat(t, st, w)
			seq := tc.seq
			if seq == 0 { // the last covered turn no episode owns
				eps := allEpisodes(t, st)
				c, _ := st.Chat(ctx, chatKey)
				if seq = c.SummaryCursor; eps[len(eps)-1].ToSeq >= seq {
					t.Fatalf("no open tail: episodes to %d, cursor %d", eps[len(eps)-1].ToSeq, seq)
				}
				msgs, _ := st.MessagesBySeq(ctx, chatKey, []int64{seq})
				id = msgs[0].ID
			}
			before := len(srv.Requests())
			if _, err := st.DeleteMessage(ctx, chatKey, id); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Rebuild(ctx); err != nil {
				t.Fatal(err)
			}
			var eps, roots int
			for _, r := range srv.Requests()[before:] {
				switch {
				case strings.HasPrefix(r.User(), "EPISODE PROMPT "):
					eps++
				case strings.HasPrefix(r.User(), "AGENT COMPRESSION "):
					roots++
				default:
					t.Errorf("unexpected call %.80q", r.User())
				}
				if strings.Contains(r.User(), secret) || strings.Contains(r.User(), fmt.Sprintf("[%d] ", seq)) {
					t.Errorf("a rebuild call reads the deleted turn: %.200q", r.User())
				}
			}
			if eps != tc.episodes || roots != tc.roots {
				t.Errorf("%d episode calls and %d root calls, want %d and %d", eps, roots, tc.episodes, tc.roots)
			}
			if c, _ := st.Chat(ctx, chatKey); c.SummaryDirty {
				t.Error("still dirty")
			}
			if head, _ := st.SummaryHead(ctx, chatKey); head == nil || head.Model != "m" {
				t.Errorf("rebuilt head %+v, want the LLM's", head)
			}
		})
	}
}

// TestDirtyAfterExtensionIsRebuilt: an extension over a turn deleted
// earlier marks the summary dirty (a summary extension cannot tell when the turn
// went), while the chat has no turns left to summarise, no episode marked
// and no forget row: the next rebuild pass must still take it, or the summary is
// withheld (summary_rebuilding) until new turns arrive.
func TestDirtyAfterExtensionIsRebuilt(t *testing.T) {
	for _, tc := range withAndWithoutEpisodes {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t)
			w := newWorker(st, extractive.New(), "w1", tc.settings)
			rebuilding(w, st, &recEraser{}, st)
			turns := topicTurns(60)
			turns[9].ID = "gone"
			if _, err := st.Append(ctx, memory.AppendRequest{Chat: chatKey, UserID: "ann", Agent: "a", Messages: turns}); err != nil {
				t.Fatal(err)
			}
			// Deleted before any summary: the rebuild it asks for runs at
			// cursor 0, so the extension that follows covers its tombstone.
			if _, err := st.DeleteMessage(ctx, chatKey, turns[9].ID); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Rebuild(ctx); err != nil {
				t.Fatal(err)
			}
			if c, _ := st.Chat(ctx, chatKey); c.SummaryDirty || c.SummaryCursor != 0 {
				t.Fatalf("after the rebuild: dirty %v, cursor %d; want clean at 0", c.SummaryDirty, c.SummaryCursor)
			}
			if err := w.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			c, err := st.Chat(ctx, chatKey)
			if err != nil {
				t.Fatal(err)
			}
			if c.SummaryCursor < 10 {
				t.Fatalf("cursor %d: the extension did not cover the deleted turn, the test cannot fail", c.SummaryCursor)
			}
			if c.SummaryDirty {
				t.Errorf("summary still dirty (mark %d) after the drain, cursor %d of %d", c.DirtyMark, c.SummaryCursor, c.LastSeq)
			}
			if head, err := st.SummaryHead(ctx, chatKey); err != nil || head == nil || head.CoveredToSeq != c.SummaryCursor {
				t.Errorf("head %+v, %v; want one covering to %d", head, err, c.SummaryCursor)
			}
		})
	}
}
