package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
	"github.com/contextd/contextd/store/sqlite"
)

func newTestService(t testing.TB) *Service {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return New(testDeps(st))
}

// testDeps is BackendDeps(b) with a summary worker that does nothing
// (enginetest.Deps, which the engine's own tests cannot import).
func testDeps(b memory.Backend) Deps {
	d := BackendDeps(b)
	d.SummaryJobs, d.Previews = nopSummaries{}, nopSummaries{}
	return d
}

// nopSummaries never summarises and previews nothing.
type nopSummaries struct{}

func (nopSummaries) Extend(context.Context, memory.ChatKey, bool) (*memory.SummaryRecord, []string, error) {
	return nil, nil, nil
}
func (nopSummaries) Kick()                                    {}
func (nopSummaries) InlineFor(string) bool                    { return false }
func (nopSummaries) LastDegraded(memory.ChatKey) []string     { return nil }
func (nopSummaries) Stale(string, *memory.SummaryRecord) bool { return false }
func (nopSummaries) Preview(context.Context, memory.Chat, *memory.SummaryRecord) (*memory.SummaryRecord, error) {
	return nil, nil
}

func appendN(t testing.TB, s *Service, chat string, from, to int, words int) {
	t.Helper()
	var msgs []InMessage
	for i := from; i <= to; i++ {
		role := "user"
		if i%2 == 0 {
			role = "assistant"
		}
		msgs = append(msgs, InMessage{ID: fmt.Sprintf("m%d", i), Role: role, Content: fmt.Sprintf("message %d about topic %d %s", i, i%7, strings.Repeat("lorem ", words))})
	}
	if _, err := s.Append(context.Background(), "default", chat, AppendInput{UserID: "u1", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
}

// fakeRetriever returns fixed turns and records the request.
type fakeRetriever struct {
	turns []rag.Turn
	err   error
	got   rag.Request
}

func (f *fakeRetriever) Retrieve(_ context.Context, req rag.Request) ([]rag.Turn, error) {
	f.got = req
	return f.turns, f.err
}

// fakeSummaries writes an extractive-like summary covering up to a seq.
type fakeSummaries struct {
	store memory.Core
	upTo  int64
	kicks int
}

func (f *fakeSummaries) Extend(ctx context.Context, key memory.ChatKey, force bool) (*memory.SummaryRecord, []string, error) {
	head, err := f.store.SummaryHead(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	var cur int64
	if head != nil {
		cur = head.CoveredToSeq
	}
	rec, err := memory.AppendSummary(ctx, f.store, key, cur, memory.SummaryRecord{Summary: memory.Summary{Narrative: "things happened", Topics: []string{"topic"}, CoveredFromSeq: 1, CoveredToSeq: f.upTo, Model: "test"}, FromSeq: cur + 1, ToSeq: f.upTo})
	return &rec, nil, err
}
func (f *fakeSummaries) Kick() { f.kicks++ }

// hangingSummaries is a summariser whose Extend waits for its context, as
// one calling a hanging LLM does.
type hangingSummaries struct{ fakeSummaries }

func (h *hangingSummaries) Extend(ctx context.Context, _ memory.ChatKey, _ bool) (*memory.SummaryRecord, []string, error) {
	<-ctx.Done()
	return nil, nil, ctx.Err()
}

// A wait for the summary ends before the request's own deadline: the
// answer comes, with the summary as it was and summary_wait_timeout, not
// the request's timeout.
func TestSummaryWaitEndsBeforeTheRequest(t *testing.T) {
	s := newTestService(t)
	appendN(t, s, "c1", 1, 12, 1)
	s.jobs.summaries = &hangingSummaries{fakeSummaries{store: s.store.(memory.Core)}}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	res, err := s.Context(ctx, "default", ContextInput{ChatID: "c1", Query: "q", WaitForSummary: true})
	if err != nil {
		t.Fatalf("context: %v, want an answer before the deadline", err)
	}
	if !contains(res.Degraded, DegradedSummaryWait) || len(res.Messages) == 0 {
		t.Errorf("degraded %v, %d messages: want %s and the turns", res.Degraded, len(res.Messages), DegradedSummaryWait)
	}
}

// InlineFor is false: the fake stands for a background (LLM) summariser.
func (f *fakeSummaries) InlineFor(string) bool                    { return false }
func (f *fakeSummaries) LastDegraded(memory.ChatKey) []string     { return nil }
func (f *fakeSummaries) Stale(string, *memory.SummaryRecord) bool { return false }

// Invariant 2: every stored turn except the current query is summarised,
// shown verbatim, filtered, or counted as dropped — at every budget.
func TestNoTurnSilentlyLost(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		strategy  Strategy
		summaryTo int64
		maxLoad   int
	}{
		{"none capped load", StrategyNone, 0, 25},
		{"summary lagging capped load", StrategyRunningSummary, 5, 12},
		{"none", StrategyNone, 0, 0},
		{"summary lagging", StrategyRunningSummary, 0, 0},
		{"summary partial", StrategyRunningSummary, 20, 0},
		{"summary current", StrategyRunningSummary, 50, 0},
		{"rag", StrategyRAG, 30, 0},
	} {
		for _, budget := range []int{30, 200, 800, 4000, 50000} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, budget), func(t *testing.T) {
				s := newTestService(t)
				s.conf.maxLoad = tc.maxLoad
				appendN(t, s, "c1", 1, 60, 15)
				// Routing noise is filtered, not lost.
				if _, err := s.Append(ctx, "default", "c1", AppendInput{Messages: []InMessage{{Role: "assistant", Content: "[Supervisor] routing to billing"}}}); err != nil {
					t.Fatal(err)
				}
				s.conf.policy = func(string) Policy {
					p := DefaultPolicy()
					p.Filters.SkipPrefixes = append(p.Filters.SkipPrefixes, "[Supervisor")
					return p
				}
				if tc.summaryTo > 0 {
					fs := &fakeSummaries{store: s.store.(memory.Core), upTo: tc.summaryTo}
					if _, _, err := fs.Extend(ctx, memory.ChatKey{Tenant: "default", ChatID: "c1"}, true); err != nil {
						t.Fatal(err)
					}
				}
				s.vec.retriever = &fakeRetriever{turns: []rag.Turn{
					{ChatID: "c1", Seq: 3, Role: "user", Content: "message 3", Score: 1},
					{ChatID: "c1", Seq: 35, Role: "user", Content: "message 35 (pending when the summary lags)", Score: 3},
					{ChatID: "c1", Seq: 60, Role: "assistant", Content: "recent!", Score: 2},
					{ChatID: "c1", Seq: 7, Role: "assistant", Content: "[Supervisor] routing noise must not come back through RAG", Score: 4},
				}}
				b := budget
				res, err := s.Context(ctx, "default", ContextInput{ChatID: "c1", Query: "topic 3", BudgetTokens: &b, Strategy: string(tc.strategy)})
				if err != nil {
					t.Fatal(err)
				}
				if res.Usage.TotalTokens > budget {
					t.Fatalf("total %d > budget %d", res.Usage.TotalTokens, budget)
				}
				shown := map[int64]bool{}
				for _, r := range res.Sections.Recent {
					shown[r.Seq] = true
				}
				for _, r := range res.Sections.RAG {
					if shown[r.Seq] {
						t.Fatalf("RAG hit %d repeats a recent turn", r.Seq)
					}
					if strings.Contains(r.Content, "[Supervisor]") {
						t.Fatalf("filtered noise came back as a RAG hit")
					}
				}
				var covered int64
				if res.Sections.Summary != nil {
					covered = res.Sections.Summary.CoveredToSeq
				}
				var recentNotCovered int64
				for _, r := range res.Sections.Recent {
					if r.Seq > covered {
						recentNotCovered++
					}
				}
				total := covered + recentNotCovered + res.Usage.DroppedTurns + res.Usage.FilteredTurns
				if total != 61 {
					t.Fatalf("accounted %d turns (summary %d + recent %d + dropped %d + filtered %d), want 61", total, covered, recentNotCovered, res.Usage.DroppedTurns, res.Usage.FilteredTurns)
				}
			})
		}
	}
}

func TestContextDegradedReasons(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	appendN(t, s, "c1", 1, 30, 3)

	res, err := s.Context(ctx, "default", ContextInput{ChatID: "c1", Query: "anything", Strategy: string(StrategyRAG)})
	if err != nil {
		t.Fatal(err)
	}
	if !contains(res.Degraded, DegradedVectorStore) {
		t.Errorf("no retriever: degraded = %v, want %s", res.Degraded, DegradedVectorStore)
	}
	s.vec.retriever = &fakeRetriever{}
	res, _ = s.Context(ctx, "default", ContextInput{ChatID: "c1", Query: "  ", Strategy: string(StrategyRAG)})
	if !contains(res.Degraded, DegradedEmptyQuery) {
		t.Errorf("empty query: degraded = %v", res.Degraded)
	}
	s.vec.retriever = &fakeRetriever{err: fmt.Errorf("boom: %w", rag.ErrEmbedder)}
	res, _ = s.Context(ctx, "default", ContextInput{ChatID: "c1", Query: "q", Strategy: string(StrategyRAG)})
	if !contains(res.Degraded, DegradedEmbedder) || len(res.Sections.Recent) == 0 {
		t.Errorf("embedder down: degraded = %v, recent = %d (want an answer without RAG)", res.Degraded, len(res.Sections.Recent))
	}
	res, _ = s.Context(ctx, "default", ContextInput{ChatID: "c1", Query: "q", Strategy: string(StrategyRunningSummary)})
	if !contains(res.Degraded, DegradedSummaryStale) {
		t.Errorf("no summary yet, 30 turns, window 10: degraded = %v, want summary_stale", res.Degraded)
	}
	res, _ = s.Context(ctx, "default", ContextInput{ChatID: "c1", Query: "q", Strategy: string(StrategyNone)})
	if len(res.Degraded) != 0 {
		t.Errorf("strategy none: degraded = %v, want []", res.Degraded)
	}
}

func TestContextPassesScopeAndExclusion(t *testing.T) {
	s := newTestService(t)
	appendN(t, s, "c1", 1, 40, 3)
	fr := &fakeRetriever{}
	s.vec.retriever = fr
	if _, err := s.Context(context.Background(), "default", ContextInput{ChatID: "c1", Query: "q", Strategy: string(StrategyRAG), RAGScope: "user"}); err != nil {
		t.Fatal(err)
	}
	if fr.got.Tenant != "default" || fr.got.ChatID != "c1" || fr.got.UserID != "u1" || fr.got.Scope != "user" || fr.got.K != 200 /* rag_fill: 4000/20 */ {
		t.Errorf("request = %+v", fr.got)
	}
	s.conf.policy = func(string) Policy { p := DefaultPolicy(); p.RAGFill = false; return p }
	if _, err := s.Context(context.Background(), "default", ContextInput{ChatID: "c1", Query: "q", Strategy: string(StrategyRAG)}); err != nil {
		t.Fatal(err)
	}
	if fr.got.K != 5 || fr.got.Scope != "chat" {
		t.Errorf("without rag_fill K = %d scope %q, want rag_k 5 and chat", fr.got.K, fr.got.Scope)
	}
	// A ranked budget retrieves all but its floor (the 4 newest turns):
	// a turn of the window beyond the floor may be the one asked for.
	if fr.got.ExcludeFromSeq != 37 {
		t.Errorf("ExcludeFromSeq = %d, want the floor's first turn, 37", fr.got.ExcludeFromSeq)
	}
}

func TestValidation(t *testing.T) {
	s := newTestService(t)
	ctx := context.Background()
	appendN(t, s, "c1", 1, 2, 1)
	zero, neg := 0, -5
	cases := []struct {
		name  string
		call  func() error
		kind  Kind
		field string
	}{
		{"unknown role", func() error {
			_, err := s.Append(ctx, "default", "c1", AppendInput{Messages: []InMessage{{Role: "robot", Content: "x"}}})
			return err
		}, KindInvalid, "messages[0].role"},
		{"empty content", func() error {
			_, err := s.Append(ctx, "default", "c1", AppendInput{Messages: []InMessage{{Role: "user", Content: " \n\t"}}})
			return err
		}, KindInvalid, "messages[0].content"},
		{"invalid utf8", func() error {
			_, err := s.Append(ctx, "default", "c1", AppendInput{Messages: []InMessage{{Role: "user", Content: "ok"}, {Role: "user", Content: "bad \xff"}}})
			return err
		}, KindInvalid, "messages[1].content"},
		{"NUL in content", func() error {
			_, err := s.Append(ctx, "default", "c1", AppendInput{Messages: []InMessage{{Role: "user", Content: "a\x00b"}}})
			return err
		}, KindInvalid, "messages[0].content"},
		{"huge message", func() error {
			_, err := s.Append(ctx, "default", "c1", AppendInput{Messages: []InMessage{{Role: "user", Content: strings.Repeat("a", 1<<20)}}})
			return err
		}, KindTooLarge, "messages[0].content"},
		{"no messages", func() error {
			_, err := s.Append(ctx, "default", "c1", AppendInput{})
			return err
		}, KindInvalid, "messages"},
		{"budget 0", func() error {
			_, err := s.Context(ctx, "default", ContextInput{ChatID: "c1", BudgetTokens: &zero})
			return err
		}, KindInvalid, "budget_tokens"},
		{"budget negative", func() error {
			_, err := s.Context(ctx, "default", ContextInput{ChatID: "c1", BudgetTokens: &neg})
			return err
		}, KindInvalid, "budget_tokens"},
		{"bad strategy", func() error {
			_, err := s.Context(ctx, "default", ContextInput{ChatID: "c1", Strategy: "magic"})
			return err
		}, KindInvalid, "strategy"},
		{"unknown chat", func() error {
			_, err := s.Context(ctx, "default", ContextInput{ChatID: "nope"})
			return err
		}, KindNotFound, ""},
		{"other tenant's chat", func() error {
			_, err := s.Context(ctx, "other", ContextInput{ChatID: "c1"})
			return err
		}, KindNotFound, ""},
		{"missing chat id", func() error {
			_, err := s.Context(ctx, "default", ContextInput{})
			return err
		}, KindInvalid, "chat_id"},
		{"search k 0", func() error { // an explicit 0 is refused, not read as unset
			_, err := s.Search(ctx, "default", SearchInput{Query: "q", ChatID: "c1", K: new(0)})
			return err
		}, KindInvalid, "k"},
		{"search k over 100", func() error {
			_, err := s.Search(ctx, "default", SearchInput{Query: "q", ChatID: "c1", K: new(101)})
			return err
		}, KindInvalid, "k"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			e, ok := AsError(err)
			if !ok {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.Kind != c.kind || e.Field != c.field {
				t.Errorf("kind %d field %q, want %d %q (%v)", e.Kind, e.Field, c.kind, c.field, err)
			}
		})
	}
	// Nothing was stored by the rejected appends.
	msgs, _, err := s.Messages(ctx, "default", "c1", 0, 100)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("stored %d messages (%v), want 2", len(msgs), err)
	}
}

func TestAppendViaContextIsIdempotentAndExcludesQuery(t *testing.T) {
	s := newTestService(t)
	ctx := context.Background()
	in := ContextInput{ChatID: "c9", Query: "what is my plan?", Append: []InMessage{{ID: "q1", Role: "user", Content: "what is my plan?"}}}
	for i := 0; i < 2; i++ {
		res, err := s.Context(ctx, "default", in)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Sections.Recent) != 0 || res.Usage.FilteredTurns != 1 {
			t.Errorf("the current query must not be repeated in recent: %+v usage %+v", res.Sections.Recent, res.Usage)
		}
	}
	msgs, _, _ := s.Messages(ctx, "default", "c9", 0, 10)
	if len(msgs) != 1 {
		t.Fatalf("idempotent append via context stored %d messages", len(msgs))
	}
}

// A query longer than retrieval takes (rag.MaxQueryBytes) is the current
// query all the same: it is not shown again among the recent turns.
func TestLongQueryExcluded(t *testing.T) {
	s := newTestService(t)
	ctx := context.Background()
	long := "Please summarise this document: " + strings.Repeat("lorem ipsum dolor sit amet ", 400)
	if len(long) <= rag.MaxQueryBytes {
		t.Fatalf("the query is %d bytes; the test needs more than %d", len(long), rag.MaxQueryBytes)
	}
	in := ContextInput{ChatID: "c10", Query: long, Append: []InMessage{{ID: "q1", Role: "user", Content: long}}}
	res, err := s.Context(ctx, "default", in)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sections.Recent) != 0 || res.Usage.FilteredTurns != 1 {
		t.Errorf("the long query came back among the recent turns: %d turns, usage %+v", len(res.Sections.Recent), res.Usage)
	}
}

func TestDeleteChat(t *testing.T) {
	s := newTestService(t)
	ctx := context.Background()
	appendN(t, s, "c1", 1, 5, 1)
	if err := s.DeleteChat(ctx, "other", "c1"); err == nil {
		t.Fatal("another tenant deleted the chat")
	}
	if err := s.DeleteChat(ctx, "default", "c1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.Chat(ctx, memory.ChatKey{Tenant: "default", ChatID: "c1"}); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("chat still there: %v", err)
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// BenchmarkContext200 measures /v1/context assembly for a 200-turn chat
// without HTTP (target ≤ 1 ms per call on SQLite).
func BenchmarkContext200(b *testing.B) {
	benchContext200(b, newTestService(b))
}

// benchContext200 fills s with a 200-turn chat summarised up to 190 and
// measures Context on it, reporting p50/p95.
func benchContext200(b *testing.B, s *Service) {
	appendN(b, s, "c1", 1, 200, 20)
	fs := &fakeSummaries{store: s.store.(memory.Core), upTo: 190}
	if _, _, err := fs.Extend(context.Background(), memory.ChatKey{Tenant: "default", ChatID: "c1"}, true); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := s.Context(ctx, "default", ContextInput{ChatID: "c1", Query: "topic 3", Strategy: string(StrategyRunningSummary)}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	reportPercentiles(b, lat)
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	sorted := append([]time.Duration(nil), lat...)
	slices.Sort(sorted)
	b.ReportMetric(float64(sorted[len(sorted)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(sorted[len(sorted)*95/100].Microseconds()), "p95-µs")
}

// reportingSummaries is a fakeSummaries that remembers a fallback.
type reportingSummaries struct{ fakeSummaries }

func (r *reportingSummaries) LastDegraded(memory.ChatKey) []string {
	return []string{"llm_unavailable"}
}

func TestBackgroundSummaryFallbackIsReported(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	appendN(t, s, "c1", 1, 30, 3)
	rs := &reportingSummaries{fakeSummaries{store: s.store.(memory.Core), upTo: 20}}
	if _, _, err := rs.Extend(ctx, memory.ChatKey{Tenant: "default", ChatID: "c1"}, true); err != nil {
		t.Fatal(err)
	}
	s.jobs.summaries = rs
	res, err := s.Context(ctx, "default", ContextInput{ChatID: "c1", Strategy: string(StrategyRunningSummary)})
	if err != nil {
		t.Fatal(err)
	}
	if !contains(res.Degraded, "llm_unavailable") {
		t.Fatalf("degraded = %v, want the summariser's llm_unavailable", res.Degraded)
	}
}

func TestSearchFiltersNoiseAndSortsByScore(t *testing.T) {
	s := newTestService(t)
	appendN(t, s, "c1", 1, 3, 1)
	s.vec.retriever = &fakeRetriever{turns: []rag.Turn{
		{ChatID: "c1", Seq: 1, Role: "user", Content: "low", Score: 0.1},
		{ChatID: "c1", Seq: 2, Role: "user", Content: "[Supervisor] routing", Score: 0.9},
		{ChatID: "c1", Seq: 3, Role: "assistant", Content: "[Travel Agent]\nhigh", Score: 0.5},
	}}
	res, err := s.Search(context.Background(), "default", SearchInput{Query: "q", ChatID: "c1", K: new(5)})
	if err != nil {
		t.Fatal(err)
	}
	hits := res.Hits
	if len(hits) != 2 || hits[0].Seq != 3 || hits[0].Content != "high" || hits[1].Seq != 1 {
		t.Fatalf("hits = %+v, want seq 3 (label stripped) then 1, noise dropped", hits)
	}
	if res.Degraded == nil || len(res.Degraded) != 0 {
		t.Errorf("degraded = %#v without an indexer, want []", res.Degraded)
	}
}

// fakeIndexer answers WaitIndexed as told and counts the waits.
type fakeIndexer struct {
	caughtUp bool
	waits    int
}

func (f *fakeIndexer) Kick()         {}
func (f *fakeIndexer) Pending() bool { return !f.caughtUp }
func (f *fakeIndexer) WaitIndexed(ctx context.Context) bool {
	f.waits++
	if _, ok := ctx.Deadline(); !ok {
		return false // a wait without a bound could hold a search
	}
	return f.caughtUp
}

// A search waits for the indexer (bounded) and names index_behind when
// it had not taken in the turns appended before the search.
func TestSearchSaysWhenTheIndexIsBehind(t *testing.T) {
	s := newTestService(t)
	appendN(t, s, "c1", 1, 2, 1)
	s.vec.retriever = &fakeRetriever{turns: []rag.Turn{{ChatID: "c1", Seq: 1, Role: "user", Content: "hit", Score: 0.5}}}
	for _, caughtUp := range []bool{true, false} {
		ix := &fakeIndexer{caughtUp: caughtUp}
		s.jobs.indexer = ix
		res, err := s.Search(context.Background(), "default", SearchInput{Query: "q", ChatID: "c1"})
		if err != nil {
			t.Fatal(err)
		}
		if ix.waits != 1 || len(res.Hits) != 1 {
			t.Fatalf("caught up %v: %d waits, %d hits; want 1 and 1", caughtUp, ix.waits, len(res.Hits))
		}
		if behind := contains(res.Degraded, DegradedIndexBehind); behind == caughtUp {
			t.Errorf("caught up %v: degraded = %v", caughtUp, res.Degraded)
		}
	}
}

// Uncovered turns below the summary trigger are normal between two
// extensions (shown verbatim), not a fallback; at the trigger they are.
func TestSummaryStaleOnlyWhenLagging(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)        // window 10, trigger 10
	appendN(t, s, "c1", 1, 15, 2) // 5 uncovered: below the trigger
	res, err := s.Context(ctx, "default", ContextInput{ChatID: "c1", Strategy: string(StrategyRunningSummary)})
	if err != nil {
		t.Fatal(err)
	}
	if contains(res.Degraded, DegradedSummaryStale) || len(res.Sections.Recent) != 15 {
		t.Fatalf("5 uncovered turns: degraded %v, recent %d", res.Degraded, len(res.Sections.Recent))
	}
	appendN(t, s, "c1", 16, 20, 2) // 10 uncovered: at the trigger
	res, err = s.Context(ctx, "default", ContextInput{ChatID: "c1", Strategy: string(StrategyRunningSummary)})
	if err != nil {
		t.Fatal(err)
	}
	if !contains(res.Degraded, DegradedSummaryStale) {
		t.Fatalf("10 uncovered turns: degraded %v, want summary_stale", res.Degraded)
	}
	// Uncovered turns below the trigger that do not fit the budget are
	// counted as dropped; that is budget, not a summary fallback.
	b := 60
	s2 := newTestService(t)
	appendN(t, s2, "c2", 1, 13, 10)
	res, err = s2.Context(ctx, "default", ContextInput{ChatID: "c2", Strategy: string(StrategyRunningSummary), BudgetTokens: &b})
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.DroppedTurns == 0 || contains(res.Degraded, DegradedSummaryStale) {
		t.Fatalf("dropped uncovered turns below the trigger: usage %+v degraded %v", res.Usage, res.Degraded)
	}
}

// A turn the server dates and the facts drawn from it on arrival carry the
// same time: a since/until boundary never splits a fact from its source.
func TestFactsOnArrivalAreDatedAsTheirTurn(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	s.roles.facts = s.store.(memory.FactStore)
	if _, err := s.Append(ctx, "default", "c1", AppendInput{UserID: "u1", Messages: []InMessage{{Role: "user", Content: "I am allergic to penicillin."}}}); err != nil {
		t.Fatal(err)
	}
	drawFacts(t, s)
	msgs, _, err := s.Messages(ctx, "default", "c1", 0, 10)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("messages: %v %v", msgs, err)
	}
	fs, _, err := s.Facts(ctx, "default", "c1", 0, 10, true)
	if err != nil || len(fs) == 0 {
		t.Fatalf("no fact drawn on arrival: %v %v", fs, err)
	}
	for _, f := range fs {
		if !f.ValidAt.Equal(msgs[0].CreatedAt) {
			t.Errorf("fact %q valid_at %s, its turn's created_at %s", f.Text, f.ValidAt.Format(time.RFC3339Nano), msgs[0].CreatedAt.Format(time.RFC3339Nano))
		}
	}
}

// A search that fails says which backend is down: the embedder, or the
// vector store.
func TestSearchNamesTheBackendDown(t *testing.T) {
	s := newTestService(t)
	appendN(t, s, "c1", 1, 3, 1)
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("retrieve: %w: 500", rag.ErrEmbedder), "embedder is unavailable"},
		{errors.New("qdrant: connection refused"), "vector store is unavailable"},
	} {
		s.vec.retriever = &fakeRetriever{err: tc.err}
		_, err := s.Search(context.Background(), "default", SearchInput{Query: "q", ChatID: "c1"})
		if e, ok := AsError(err); !ok || e.Code != "backend_unavailable" || e.Message != tc.want {
			t.Errorf("%v: got %v, want backend_unavailable %q", tc.err, err, tc.want)
		}
	}
}

// A fact a newer one supersedes leaves the user's profile: the profile
// does not say the user lives where they moved away from.
func TestSupersededFactLeavesTheProfile(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	st := s.store.(memory.Backend)
	s.roles.facts, s.roles.profiles = st, st
	for _, text := range []string{"I live in Berlin near the Spree river.", "I moved to Munich last month for a new job."} {
		if _, err := s.Append(ctx, "default", "c1", AppendInput{UserID: "alice", Messages: []InMessage{{Role: "user", Content: text}}}); err != nil {
			t.Fatal(err)
		}
		drawFacts(t, s) // one pass per append: the update is in a later batch
	}
	// Both in one append: the update is in the same batch as what it updates.
	if _, err := s.Append(ctx, "default", "c2", AppendInput{UserID: "alice", Messages: []InMessage{
		{Role: "user", Content: "I work as a nurse at the city hospital."}, {Role: "user", Content: "I now work as a teacher at the primary school."}}}); err != nil {
		t.Fatal(err)
	}
	drawFacts(t, s)
	fs, _, err := s.Facts(ctx, "default", "c1", 0, 10, true)
	if err != nil || len(fs) != 2 || fs[0].SupersededBy == "" {
		t.Fatalf("facts %+v (%v): want Berlin superseded by Munich", fs, err)
	}
	pst, _, err := st.Profile(ctx, "default", "alice")
	if err != nil {
		t.Fatal(err)
	}
	var items []string
	for _, it := range pst.Profile.UserPreferences {
		items = append(items, it.Text)
	}
	got := strings.Join(items, " | ")
	// A move is an event, not a preference: it takes Berlin out of the
	// profile and does not put itself in.
	if strings.Contains(got, "Munich") || strings.Contains(got, "Berlin") || !strings.Contains(got, "teacher") || strings.Contains(got, "nurse") {
		t.Errorf("profile preferences %q: want teacher; Berlin, nurse and the move gone", got)
	}
}

// unreadableTurns is a Store whose turn checks fail as a store that went
// away does.
type unreadableTurns struct{ ChatStore }

func (unreadableTurns) MessagesBySeq(context.Context, memory.ChatKey, []int64) ([]memory.Message, error) {
	return nil, fmt.Errorf("read: %w", memory.ErrUnavailable)
}

// Hits the store cannot check are left out, and the answer says so: a
// search is a 503 (not "nothing matched"), a context is poorer and names
// storage_unavailable.
func TestUncheckedHitsAreSaid(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	appendN(t, s, "c1", 1, 12, 1)
	s.store = unreadableTurns{s.store}
	s.vec.retriever = &fakeRetriever{turns: []rag.Turn{{ChatID: "c9", Seq: 1, Role: "user", Content: "from another chat", Score: 0.9}}}
	_, err := s.Search(ctx, "default", SearchInput{Query: "q"})
	if e, ok := AsError(err); !ok || e.Code != "backend_unavailable" {
		t.Errorf("tenant-wide search with the store failing: %v, want backend_unavailable", err)
	}
	res, err := s.Context(ctx, "default", ContextInput{ChatID: "c1", Query: "q", Strategy: string(StrategyRAG)})
	if err != nil {
		t.Fatal(err)
	}
	if !contains(res.Degraded, DegradedStorage) || strings.Contains(res.Context, "from another chat") {
		t.Errorf("degraded %v, context %q: want storage_unavailable and the unchecked hit left out", res.Degraded, res.Context)
	}
}

// A question appended alone is open; the answer appended next closes it:
// its fact is superseded (memory.FactAnswered), not left "unanswered".
func TestOpenQuestionClosedByTheNextAppend(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	s.roles.facts = s.store.(memory.FactStore)
	say := func(role, content string) {
		t.Helper()
		if _, err := s.Append(ctx, "default", "c1", AppendInput{Messages: []InMessage{{Role: role, Content: content}}}); err != nil {
			t.Fatal(err)
		}
		drawFacts(t, s)
	}
	open := func() []string {
		t.Helper()
		fs, _, err := s.Facts(ctx, "default", "c1", 0, 100, false)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range fs {
			if strings.HasPrefix(f.Text, "Unanswered question") {
				out = append(out, f.Text)
			}
		}
		return out
	}
	say("user", "How far is Hakone from Tokyo by train?")
	if got := open(); len(got) != 1 {
		t.Fatalf("open questions %q after the question, want it", got)
	}
	say("user", "And is there a day pass for the Hakone area?")
	if got := open(); len(got) != 2 {
		t.Fatalf("open questions %q after the user's second question, want both", got)
	}
	say("assistant", "About 85 minutes on the Romancecar; the Hakone Free Pass covers the area.")
	if got := open(); len(got) != 0 {
		t.Fatalf("open questions %q after the answer, want none", got)
	}
	all, _, err := s.Facts(ctx, "default", "c1", 0, 100, true)
	if err != nil || len(all) != 2 || all[0].SupersededBy != memory.FactAnswered {
		t.Fatalf("facts %+v (%v): want both questions kept, superseded as answered", all, err)
	}
}

// An update said in another append ("moved from Berlin to Munich", "changed
// the step size h to 0.25") supersedes the older fact it makes stale.
func TestUpdateSupersedesAcrossAppends(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	s.roles.facts = s.store.(memory.FactStore)
	for _, text := range []string{
		"We live in Berlin with two cats.", "Let's use a step size h of 0.5.",
		"I moved from Berlin to Munich last month.", "We changed the step size h to 0.25.",
	} {
		if _, err := s.Append(ctx, "default", "c1", AppendInput{Messages: []InMessage{{Role: "user", Content: text}}}); err != nil {
			t.Fatal(err)
		}
		drawFacts(t, s) // each append's facts drawn, as the job does
	}
	fs, _, err := s.Facts(ctx, "default", "c1", 0, 100, true)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]string{}
	for _, f := range fs {
		by[f.Text] = f.SupersededBy
	}
	for text, superseded := range map[string]bool{
		`The user said: "We live in Berlin with two cats."`:    true,
		"Decision: Let's use a step size h of 0.5.":            true,
		"The user moved from Berlin to Munich last month.":     false,
		`The user said: "We changed the step size h to 0.25."`: false,
	} {
		by, ok := by[text]
		if !ok || (by != "") != superseded {
			t.Errorf("fact %q: stored %v, superseded_by %q; want superseded %v (facts %+v)", text, ok, by, superseded, fs)
		}
	}
}

// A ranked budget retrieves the window beyond its floor too: the turn the
// query asks for may be one of the last few the budget cannot all show.
// It is shown (under its header) though the tail does not reach it.
func TestRankedBudgetReachesTheWindowBeyondTheFloor(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	const iam = "We use OIDC now, role arn:aws:iam::418295730164:role/billing-ci-fixtures."
	appendN(t, s, "c1", 1, 34, 60) // ~70 tokens a turn; window 10 (32–41), floor 4 (38–41)
	if _, err := s.Append(ctx, "default", "c1", AppendInput{Messages: []InMessage{{Role: "user", Content: iam}}}); err != nil {
		t.Fatal(err)
	}
	appendN(t, s, "c1", 36, 41, 60)
	s.vec.retriever = &fakeRetriever{turns: []rag.Turn{
		{ChatID: "c1", Seq: 35, Role: "user", Content: iam, Score: 3},
		{ChatID: "c1", Seq: 5, Role: "user", Content: "message 5 " + strings.Repeat("ipsum ", 30), Score: 2.9},
		{ChatID: "c1", Seq: 9, Role: "user", Content: "message 9 " + strings.Repeat("ipsum ", 30), Score: 2.8},
	}}
	for _, b := range []int{400, 460} {
		res, err := s.Context(ctx, "default", ContextInput{ChatID: "c1", Query: "Which IAM role does the fixture download use?", BudgetTokens: &b, Strategy: string(StrategyRAG)})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Context, "billing-ci-fixtures") {
			t.Fatalf("budget %d: the window's turn the query asks for is missing:\n%s", b, res.Context)
		}
		if strings.Contains(res.Context, "message 36") {
			t.Fatalf("budget %d: the tail reached the turn: the budget is too large to prove anything", b)
		}
	}
}

// The chat's standing turns follow the facts job: a constraint drawn after
// a context already read the chat past its turn joins them, and one a
// later update supersedes leaves them.
func TestStandingTurnsFollowTheFactsJob(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	s.roles.facts = s.store.(memory.FactStore)
	s.vec.retriever = &fakeRetriever{turns: []rag.Turn{{ChatID: "c1", Seq: 2, Role: "assistant", Content: "message 2", Score: 1}}}
	if _, err := s.Append(ctx, "default", "c1", AppendInput{UserID: "u1", Messages: []InMessage{{Role: "user", Content: "I'm vegetarian."}}}); err != nil {
		t.Fatal(err)
	}
	appendN(t, s, "c1", 2, 30, 20)
	standing := func() []int64 {
		p := s.newPlan(mustChat(t, s, "c1"), ContextInput{ChatID: "c1", Query: "dinner ideas?", Strategy: string(StrategyRAG)})
		var seqs []int64
		for _, tr := range s.withStanding(ctx, p, nil) {
			if !tr.StandsIn {
				seqs = append(seqs, tr.Seq)
			}
		}
		return seqs
	}
	if got := standing(); len(got) != 0 { // read before the facts are drawn
		t.Fatalf("standing turns before any fact: %v", got)
	}
	drawFacts(t, s)
	if got := standing(); len(got) != 1 || got[0] != 1 {
		t.Fatalf("standing turns once the diet is drawn: %v, want [1]", got)
	}
	if _, err := s.Append(ctx, "default", "c1", AppendInput{UserID: "u1", Messages: []InMessage{{Role: "user", Content: "I'm not vegetarian anymore, I went vegan last week."}}}); err != nil {
		t.Fatal(err)
	}
	appendN(t, s, "c1", 32, 60, 20)
	drawFacts(t, s)
	if got := standing(); len(got) != 1 || got[0] != 31 {
		t.Fatalf("standing turns after the update: %v, want [31]", got)
	}
}

// A diet governs a question about food most directly: there its turn is
// offered as relevant as the best hit; elsewhere, as a standing
// instruction is, at half of it.
func TestDietWeighsAsTheBestHitForFood(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	s.roles.facts = s.store.(memory.FactStore)
	s.vec.retriever = &fakeRetriever{turns: []rag.Turn{{ChatID: "c1", Seq: 2, Role: "assistant", Content: "message 2", Score: 1}}}
	if _, err := s.Append(ctx, "default", "c1", AppendInput{UserID: "u1", Messages: []InMessage{
		{Role: "user", Content: "I'm allergic to peanuts."}, {Role: "user", Content: "Please always answer in metric units."}}}); err != nil {
		t.Fatal(err)
	}
	appendN(t, s, "c1", 3, 30, 20)
	drawFacts(t, s)
	for _, c := range []struct {
		query      string
		diet, unit float32
	}{
		{"any snack ideas for the hike?", 1, 0.5},
		{"where should we have dinner tonight?", 1, 0.5},
		{"how long is the trail?", 0.5, 0.5},
	} {
		p := s.newPlan(mustChat(t, s, "c1"), ContextInput{ChatID: "c1", Query: c.query, Strategy: string(StrategyRAG)})
		got := map[int64]float32{}
		for _, tr := range s.withStanding(ctx, p, []rag.Turn{{ChatID: "c1", Seq: 20, Content: "best hit", Score: 1}}) {
			got[tr.Seq] = tr.Score
		}
		if got[1] != c.diet || got[2] != c.unit {
			t.Errorf("%q: the allergy %v, the instruction %v; want %v, %v", c.query, got[1], got[2], c.diet, c.unit)
		}
	}
}

func mustChat(t *testing.T, s *Service, id string) memory.Chat {
	t.Helper()
	c, err := s.store.Chat(context.Background(), memory.ChatKey{Tenant: "default", ChatID: id})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
