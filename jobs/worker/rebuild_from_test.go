package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contextd/contextd/derive/extractive"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/store/sqlite"
)

// readCounter counts the turns the worker reads.
type readCounter struct {
	*sqlite.Store
	mu    sync.Mutex
	turns int
	first int64 // the smallest seq read (0: none)
}

func (r *readCounter) Messages(ctx context.Context, key memory.ChatKey, after int64, limit int) ([]memory.Message, error) {
	ms, err := r.Store.Messages(ctx, key, after, limit)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.turns += len(ms)
	if len(ms) > 0 && (r.first == 0 || ms[0].Seq < r.first) {
		r.first = ms[0].Seq
	}
	return ms, err
}

func (r *readCounter) reset() (turns int, first int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	turns, first = r.turns, r.first
	r.turns, r.first = 0, 0
	return turns, first
}

// TestRebuildKeepsTheCleanStart: a long chat's summary is a chain of
// records a checkpoint apart, however it was extended (here: 1,500 turns
// at once); a delete near its end rebuilds from the last record before the
// deleted turn, reading only the stretch after it (not the chat), keeps
// the records before it as they were, and the deleted text leaves the
// chain.
func TestRebuildKeepsTheCleanStart(t *testing.T) {
	const n, deleted = 1500, 1400
	for _, tc := range withAndWithoutEpisodes {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := openStore(t)
			rc := &readCounter{Store: st}
			w := newWorker(rc, extractive.New(), "w1", tc.settings)
			rebuilding(w, rc, nil, nil)
			turns := topicTurns(n)
			turns[deleted-1].ID = "the-secret"
			turns[deleted-1].Content = "My diagnosis is " + secret + " syndrome, confirmed by Doctor " + secret + "."
			if _, err := st.Append(ctx, memory.AppendRequest{Chat: chatKey, Agent: "a", Messages: turns}); err != nil {
				t.Fatal(err)
			}
			if err := w.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			before, err := st.SummaryChain(ctx, chatKey)
			if err != nil {
				t.Fatal(err)
			}
			if want := (n - 10) / checkpointTurns; len(before) < want {
				t.Fatalf("a chain of %d records over %d turns, want at least %d (a checkpoint every %d)", len(before), n, want, checkpointTurns)
			}
			if !strings.Contains(fmt.Sprint(before[0].Summary), secret) {
				t.Fatalf("the head does not hold the secret before the delete: the test cannot fail")
			}
			if _, err := st.DeleteMessage(ctx, chatKey, turns[deleted-1].ID); err != nil {
				t.Fatal(err)
			}
			rc.reset()
			if done, err := w.Rebuild(ctx); err != nil || done != 1 {
				t.Fatalf("Rebuild = %d, %v", done, err)
			}
			read, first := rc.reset()
			t.Logf("the rebuild read %d turns from seq %d (the chat has %d)", read, first, n)
			if first < deleted-checkpointTurns-int64(tc.settings().Episodes.Overlap)-1 || read > 2*checkpointTurns {
				t.Errorf("the rebuild read %d turns from seq %d: want only the stretch after the last record before %d", read, first, deleted)
			}
			after, err := st.SummaryChain(ctx, chatKey)
			if err != nil {
				t.Fatal(err)
			}
			if c, _ := st.Chat(ctx, chatKey); c.SummaryDirty || c.SummaryCursor != before[0].CoveredToSeq {
				t.Errorf("chat after the rebuild %+v", c)
			}
			kept := 0
			for i := 1; i <= min(len(before), len(after)); i++ {
				if before[len(before)-i].ID != after[len(after)-i].ID {
					break
				}
				kept++
			}
			if kept < len(before)-2 {
				t.Errorf("%d of %d records kept, want all but the ones reaching seq %d", kept, len(before), deleted)
			}
			if strings.Contains(fmt.Sprint(after), secret) {
				t.Errorf("the chain still holds the secret")
			}
		})
	}
}

// fullStore fails every summary write as a full disk does.
type fullStore struct{ *sqlite.Store }

func (fullStore) WriteSummary(context.Context, memory.ChatKey, memory.SummaryWrite) ([]memory.SummaryRecord, error) {
	return nil, fmt.Errorf("sqlite: write summary: %w", memory.ErrFull)
}

// TestBackgroundWriteFailureReported: a background extension whose write
// finds the disk full tells OnWrite (readiness marks storage full).
func TestBackgroundWriteFailureReported(t *testing.T) {
	st := openStore(t)
	w := newWorker(fullStore{st}, extractive.New(), "w1", baseSettings)
	got := make(chan error, 100)
	w.OnWrite = func(err error) {
		select {
		case got <- err:
		default:
		}
	}
	if _, err := st.Append(context.Background(), memory.AppendRequest{Chat: chatKey, Messages: topicTurns(40)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for {
		select {
		case err := <-got:
			if errors.Is(err, memory.ErrFull) {
				return
			}
			t.Logf("OnWrite(%v)", err)
		case <-time.After(10 * time.Second):
			t.Fatal("the failed summary write was not reported")
		}
	}
}

// TestLLMRebuildExtendsTheCleanRecord: with an LLM the rebuild is one call
// extending the last clean record (its summary given as Prev) with the
// turns after it only, not a compression of the whole chat.
func TestLLMRebuildExtendsTheCleanRecord(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	sum := &fakeSum{}
	w := newWorker(st, sum, "w1", baseSettings)
	rebuilding(w, st, nil, nil)
	turns := topicTurns(200)
	turns[149].ID = "the-secret"
	for i := 0; i < len(turns); i += 20 { // a chat the summariser keeps up with
		if _, err := st.Append(ctx, memory.AppendRequest{Chat: chatKey, Agent: "a", Messages: turns[i : i+20]}); err != nil {
			t.Fatal(err)
		}
		if err := w.Drain(ctx); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := st.SummaryChain(ctx, chatKey)
	if len(before) < 5 {
		t.Fatalf("a chain of %d records", len(before))
	}
	if _, err := st.DeleteMessage(ctx, chatKey, "the-secret"); err != nil {
		t.Fatal(err)
	}
	n := len(sum.calls())
	if done, err := w.Rebuild(ctx); err != nil || done != 1 {
		t.Fatalf("Rebuild = %d, %v", done, err)
	}
	calls := sum.calls()[n:]
	if len(calls) != 1 {
		t.Fatalf("the rebuild made %d summariser calls, want 1", len(calls))
	}
	req := calls[0]
	if req.Prev == nil || req.Prev.CoveredToSeq >= 150 || req.Prev.CoveredToSeq < 120 {
		t.Fatalf("the rebuild's Prev %+v: want the last record before seq 150", req.Prev)
	}
	first, last := seqs(req.Turns)
	if first <= req.Prev.CoveredToSeq || last != before[0].CoveredToSeq || len(req.Turns) > 80 {
		t.Errorf("the rebuild read turns %d..%d (%d): want only those after the clean record (%d) up to the cursor (%d)",
			first, last, len(req.Turns), req.Prev.CoveredToSeq, before[0].CoveredToSeq)
	}
	for _, m := range req.Turns {
		if m.Seq == 150 {
			t.Error("the rebuild was given the deleted turn")
		}
	}
	after, _ := st.SummaryChain(ctx, chatKey)
	if c, _ := st.Chat(ctx, chatKey); c.SummaryDirty || len(after) > len(before) || after[len(after)-1].ID != before[len(before)-1].ID {
		t.Errorf("after the rebuild: dirty %v, %d records (%d before), the first kept: %v", c.SummaryDirty, len(after), len(before), after[len(after)-1].ID == before[len(before)-1].ID)
	}
}
