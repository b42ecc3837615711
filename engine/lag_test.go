package engine

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// lagJob is a background job as the lag check sees it: pending as told;
// a wait runs caughtUp (the job taking in its backlog) when set.
type lagJob struct {
	pending  bool
	caughtUp func()
	waits    int
}

func (j *lagJob) Kick()         {}
func (j *lagJob) Pending() bool { return j.pending }
func (j *lagJob) wait(ctx context.Context) bool {
	j.waits++
	if _, ok := ctx.Deadline(); !ok {
		return false // an unbounded wait could hold a request
	}
	if j.caughtUp != nil {
		j.caughtUp()
	}
	return true
}
func (j *lagJob) WaitIndexed(ctx context.Context) bool { return j.wait(ctx) }
func (j *lagJob) WaitDrawn(ctx context.Context) bool   { return j.wait(ctx) }

// countedLags counts the lag reads.
type countedLags struct {
	memory.ChatLags
	reads atomic.Int32
}

func (c *countedLags) ChatLag(ctx context.Context, key memory.ChatKey, before int64) (memory.ChatLag, error) {
	c.reads.Add(1)
	return c.ChatLags.ChatLag(ctx, key, before)
}

// A context or search for a chat whose memory is not all indexed or drawn
// names it (index_behind); the window's turns never count for a context
// (shown verbatim), nor anything when the whole chat is shown; nothing is
// read while no job has work pending; a job that catches up within the
// wait leaves nothing to name.
func TestIndexBehindNamesTheChatsLag(t *testing.T) {
	ctx := context.Background()
	key := memory.ChatKey{Tenant: "default", ChatID: "c1"}
	all := func(from, to int64) []int64 {
		var out []int64
		for s := from; s <= to; s++ {
			out = append(out, s)
		}
		return out
	}
	tests := []struct {
		name string
		// prepare brings the 30-turn chat's backlog to the case's state
		// (every turn is unindexed and undrawn before it).
		prepare          func(t *testing.T, st memory.Backend)
		pending, arrives bool
		catchUp          bool // the wait indexes and draws everything
		budget           int
		wantCtx, wantSrc bool
		wantReads        bool
	}{
		{"nothing pending: no read", nil, false, true, false, 200, false, false, false},
		{"turns before the window unindexed", nil, true, false, false, 200, true, true, true},
		{"only the window unindexed", func(t *testing.T, st memory.Backend) { mark(t, st, key, all(1, 20)) }, true, false, false, 200, false, true, true},
		{"turns before the window undrawn", func(t *testing.T, st memory.Backend) { mark(t, st, key, all(1, 30)) }, true, true, false, 200, true, true, true},
		{"only the window undrawn", func(t *testing.T, st memory.Backend) {
			mark(t, st, key, all(1, 30))
			drawn(t, st, key, 20)
		}, true, true, false, 200, false, true, true},
		{"an episode unindexed", func(t *testing.T, st memory.Backend) {
			mark(t, st, key, all(1, 30))
			drawn(t, st, key, 30)
			if _, err := st.CloseEpisodes(ctx, key, 0, []memory.Episode{{FromSeq: 1, ToSeq: 8, Short: "s", Summary: memory.Summary{Narrative: "n"}}}); err != nil {
				t.Fatal(err)
			}
		}, true, true, false, 200, true, true, true},
		{"caught up within the wait", nil, true, true, true, 200, false, false, true},
		{"the whole chat fits", nil, true, false, false, 100000, false, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestService(t)
			st := s.store.(memory.Backend)
			appendN(t, s, "c1", 1, 30, 3)
			if tc.prepare != nil {
				tc.prepare(t, st)
			}
			lags := &countedLags{ChatLags: st}
			s.roles.lags, s.vec.retriever = lags, &fakeRetriever{turns: []rag.Turn{{ChatID: "c1", Seq: 2, Role: "assistant", Content: "hit", Score: 0.9}}}
			ix := &lagJob{pending: tc.pending}
			if tc.catchUp {
				ix.caughtUp = func() { mark(t, st, key, all(1, 30)); drawn(t, st, key, 30) }
			}
			s.jobs.indexer = ix
			if tc.arrives {
				s.jobs.arrivals = &lagJob{pending: tc.pending}
			}
			b := tc.budget
			res, err := s.Context(ctx, "default", ContextInput{ChatID: "c1", Query: "topic", Strategy: string(StrategyRAG), BudgetTokens: &b})
			if err != nil {
				t.Fatal(err)
			}
			if got := contains(res.Degraded, DegradedIndexBehind); got != tc.wantCtx {
				t.Errorf("context: degraded %v, want index_behind %v", res.Degraded, tc.wantCtx)
			}
			if !tc.catchUp { // the search waits whatever the lag: its own case
				sres, err := s.Search(ctx, "default", SearchInput{Query: "topic", ChatID: "c1"})
				if err != nil {
					t.Fatal(err)
				}
				if got := contains(sres.Degraded, DegradedIndexBehind); got != tc.wantSrc {
					t.Errorf("search: degraded %v, want index_behind %v", sres.Degraded, tc.wantSrc)
				}
			}
			if got := lags.reads.Load() > 0; got != tc.wantReads {
				t.Errorf("%d lag reads, want some: %v", lags.reads.Load(), tc.wantReads)
			}
		})
	}
}

func mark(t *testing.T, st memory.Backend, key memory.ChatKey, seqs []int64) {
	t.Helper()
	if _, err := st.Done(context.Background(), memory.IndexTurns, []memory.Mark{{Chat: key, Seqs: seqs}}); err != nil {
		t.Fatal(err)
	}
}

func drawn(t *testing.T, st memory.Backend, key memory.ChatKey, to int64) {
	t.Helper()
	if _, err := st.Done(context.Background(), memory.DrawFacts, []memory.Mark{{Chat: key, ToSeq: to}}); err != nil {
		t.Fatal(err)
	}
}

// A search's lag is the lag of the kinds it retrieves: a search for turns
// does not wait for facts to be drawn.
func TestKindsOf(t *testing.T) {
	for _, tc := range []struct {
		kinds    []string
		episodes bool
		want     lagKinds
	}{
		{nil, true, lagKinds{true, true, true}},
		{nil, false, lagKinds{true, true, false}},
		{[]string{"turn"}, true, lagKinds{turns: true}},
		{[]string{"fact", "episode"}, true, lagKinds{facts: true, episodes: true}},
		{[]string{"episode"}, false, lagKinds{}},
	} {
		if got := kindsOf(tc.kinds, tc.episodes); got != tc.want {
			t.Errorf("kindsOf(%v, %v) = %+v, want %+v", tc.kinds, tc.episodes, got, tc.want)
		}
	}
}
