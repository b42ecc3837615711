package worker

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/derive/extractive"
	"github.com/contextd/contextd/memory"
)

func extractiveWorker(st memory.Core) *Worker {
	ext := extractive.New()
	w := newWorker(st, ext, "w1", baseSettings)
	w.Fallback = ext // no LLM: the summariser is its own fallback
	return w
}

func chatNow(t *testing.T, st memory.Core) memory.Chat {
	t.Helper()
	c, err := st.Chat(context.Background(), chatKey)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A preview covers what the worker would summarise, and leaves no trace in
// the store: no head, no lease, no episode; the worker then writes as usual.
func TestPreviewWritesNothing(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	w := extractiveWorker(st)
	p := previewer(w)
	appendTurns(t, st, chatKey, 60)

	rec, err := p.Preview(ctx, chatNow(t, st), nil)
	if err != nil || rec == nil {
		t.Fatalf("preview = %v, %v; want a record", rec, err)
	}
	if rec.CoveredFromSeq != 1 || rec.CoveredToSeq != 50 || rec.Stale || rec.Narrative == "" {
		t.Fatalf("preview covers %d..%d (stale %v, narrative %q); want 1..50, fresh", rec.CoveredFromSeq, rec.CoveredToSeq, rec.Stale, rec.Narrative)
	}
	if head, err := st.SummaryHead(ctx, chatKey); err != nil || head != nil {
		t.Fatalf("head after a preview = %v, %v; want none", head, err)
	}
	if eps, err := st.Episodes(ctx, chatKey, memory.LatestEpisodes(1)); err != nil || len(eps) != 0 {
		t.Fatalf("episodes after a preview = %v, %v; want none", eps, err)
	}
	if ok, err := memory.TryLease(ctx, st, chatKey, memory.LeaseSummary, "other", time.Minute); err != nil || !ok {
		t.Fatalf("lease after a preview: %v, %v; want it free", ok, err)
	}
	if err := memory.ReleaseLease(ctx, st, chatKey, memory.LeaseSummary, "other"); err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := cursor(t, st); got != 50 {
		t.Fatalf("cursor after the worker = %d, want 50", got)
	}
}

func TestPreviewFollowsTheChat(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	w := extractiveWorker(st)
	p := previewer(w)
	appendTurns(t, st, chatKey, 30)
	for _, tc := range []struct {
		name   string
		before func()
		want   int64 // covered_to_seq; 0: no preview
	}{
		{"lagging", func() {}, 20},
		{"same state again", func() {}, 20},
		// Fewer new turns than a trigger's: the kept preview, those turns
		// shown verbatim after it.
		{"a few new turns keep it", func() { appendTurns(t, st, chatKey, 7) }, 20},
		{"a trigger's new turns extend it", func() { appendTurns(t, st, chatKey, 3) }, 30},
		{"the worker caught up", func() {
			if err := w.Drain(ctx); err != nil {
				t.Fatal(err)
			}
		}, 0},
		{"lagging past the head", func() { appendTurns(t, st, chatKey, 12) }, 42},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.before()
			chat := chatNow(t, st)
			head, err := st.SummaryHead(ctx, chatKey)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := p.Preview(ctx, chat, head)
			if err != nil {
				t.Fatal(err)
			}
			var got int64
			if rec != nil {
				got = rec.CoveredToSeq
			}
			if got != tc.want {
				t.Fatalf("preview covers to %d, want %d", got, tc.want)
			}
		})
	}
}

// A forgotten message never reaches a preview, even one computed before.
func TestPreviewForgetsDeletedMessage(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	w := extractiveWorker(st)
	p := previewer(w)
	var msgs []memory.Message
	for i := 1; i <= 30; i++ {
		text := fmt.Sprintf("turn %d: we planned the Lisbon rollout for service %d.", i, i%3)
		if i == 5 {
			text = "Remember my passport number Zanzibarquux and my doctor Dr Quuxley."
		}
		msgs = append(msgs, memory.Message{ID: fmt.Sprintf("m%d", i), Role: memory.RoleUser, Content: text})
	}
	if _, err := st.Append(ctx, memory.AppendRequest{Chat: chatKey, Agent: "a", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	rec, err := p.Preview(ctx, chatNow(t, st), nil)
	if err != nil || rec == nil {
		t.Fatalf("preview = %v, %v", rec, err)
	}
	if !strings.Contains(fmt.Sprint(rec.Summary), "Quuxley") {
		t.Fatalf("the preview should hold turn 5 before it is forgotten: %+v", rec.Summary)
	}
	if _, err := st.DeleteMessage(ctx, chatKey, "m5"); err != nil {
		t.Fatal(err)
	}
	rec, err = p.Preview(ctx, chatNow(t, st), nil)
	if err != nil || rec == nil {
		t.Fatalf("preview = %v, %v", rec, err)
	}
	if s := fmt.Sprint(rec.Summary); strings.Contains(s, "Quuxley") || strings.Contains(s, "Zanzibarquux") {
		t.Fatalf("a forgotten message is in the preview: %s", s)
	}
}

// With an LLM the summary stays in the background: no preview.
func TestNoPreviewWithLLM(t *testing.T) {
	st := openStore(t)
	w := newWorker(st, &fakeSum{}, "w1", baseSettings)
	p := previewer(w)
	appendTurns(t, st, chatKey, 60)
	if rec, err := p.Preview(context.Background(), chatNow(t, st), nil); rec != nil || err != nil {
		t.Fatalf("preview with an LLM = %v, %v; want none", rec, err)
	}
}
