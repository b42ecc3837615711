package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// TestDeletedMessageWhileRebuilding: with the marks left and no worker to
// rebuild, nothing derived from the deleted turn is served: no summary
// (summary_rebuilding), the marked episode without its summaries and not
// among the newest, retrieval hits of the tombstone or the marked episode
// dropped, the export without the dirty chain; the tombstone is counted in
// filtered_turns; a second delete is not_found.
func TestDeletedMessageWhileRebuilding(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	st := s.store.(interface {
		memory.Core
		memory.EpisodeStore
		memory.MessageDeleter
		memory.Dumper
	})
	s.roles.episodes, s.roles.forget, s.roles.dumper = st, st, st
	appendN(t, s, "c", 1, 30, 1)
	key := memory.ChatKey{Tenant: "default", ChatID: "c"}
	if _, err := memory.AppendSummary(ctx, st, key, 0, memory.SummaryRecord{Summary: memory.Summary{Narrative: "SECRET narrative", CoveredFromSeq: 1, CoveredToSeq: 20}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CloseEpisodes(ctx, key, 0, []memory.Episode{{FromSeq: 1, ToSeq: 10, Short: "SECRET short"}, {FromSeq: 11, ToSeq: 20, Short: "kept"}}); err != nil {
		t.Fatal(err)
	}
	ret := &fakeRetriever{turns: []rag.Turn{
		{ChatID: "c", Seq: 5, Role: "user", Content: "SECRET turn", Score: 0.9},
		{ChatID: "c", Seq: 6, Role: "assistant", Content: "message 6", Score: 0.8},
		{ChatID: "c", Kind: memory.KindEpisode, Episode: &rag.EpisodeHit{ID: "e1", FromSeq: 1, ToSeq: 10}, Seq: 1, Content: "SECRET short", Score: 0.7},
		{ChatID: "c", Kind: memory.KindEpisode, Episode: &rag.EpisodeHit{FromSeq: 11, ToSeq: 20}, Seq: 11, Content: "stale index text", Score: 0.6},
	}}
	s.vec.retriever = ret
	if err := s.DeleteMessage(ctx, "default", "c", "m5"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ chat, id, code string }{{"c", "m5", "not_found"}, {"c", "nope", "not_found"}, {"nope", "m5", "not_found"}, {"c", "", "missing_field"}} {
		err := s.DeleteMessage(ctx, "default", tc.chat, tc.id)
		if e, ok := AsError(err); !ok || e.Code != tc.code {
			t.Errorf("DeleteMessage(%q, %q) = %v, want %s", tc.chat, tc.id, err, tc.code)
		}
	}
	budget := 150 // the chat does not fit whole: retrieval and episodes stand in
	res, err := s.Context(ctx, "default", ContextInput{ChatID: "c", Query: "what was said", Strategy: string(StrategyRAG), BudgetTokens: &budget})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if strings.Contains(string(b), "SECRET") || strings.Contains(string(b), "stale index text") || res.Sections.Summary != nil {
		t.Errorf("context serves what the delete marked: %s", b)
	}
	if !containsString(res.Degraded, DegradedSummaryRebuilding) || containsString(res.Degraded, DegradedSummaryStale) {
		t.Errorf("degraded %v, want summary_rebuilding", res.Degraded)
	}
	kept := false
	for _, e := range res.Sections.Episodes {
		kept = kept || e.Short == "kept"
	}
	if !kept || res.Usage.FilteredTurns != 1 {
		t.Errorf("episodes %+v, filtered %d: want the stored short of the unmarked episode, the tombstone filtered", res.Sections.Episodes, res.Usage.FilteredTurns)
	}
	sum, chain, err := s.SummaryOf(ctx, "default", "c", 0)
	if err != nil || sum != nil || len(chain) != 0 {
		t.Errorf("SummaryOf = %v, %v, %v: want none while rebuilding", sum, chain, err)
	}
	eps, _, err := s.Episodes(ctx, "default", "c", 0, 10)
	if err != nil || len(eps) != 2 || eps[0].Short != "" || !eps[0].Rebuild || eps[1].Short != "kept" {
		t.Errorf("Episodes = %+v, %v", eps, err)
	}
	if latest, _ := s.LatestEpisodes(ctx, "default", "c", 5); len(latest) != 1 || latest[0].Short != "kept" {
		t.Errorf("LatestEpisodes = %+v, want the unmarked one", latest)
	}
	var dump strings.Builder
	if err := s.ExportChat(ctx, "default", "c", func(r memory.DumpRecord) error {
		b, _ := json.Marshal(r)
		dump.Write(b)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(dump.String(), "SECRET") {
		t.Errorf("export holds marked state: %s", dump.String())
	}
	msgs, _, _ := s.Messages(ctx, "default", "c", 4, 1)
	if len(msgs) != 1 || !msgs[0].Deleted || msgs[0].Content != "" {
		t.Errorf("listing %+v, want the tombstone", msgs)
	}
}

// BenchmarkDropForgotten: what checking a context's retrieval hits against
// the store costs (8 turn hits and 2 episode hits of one chat, SQLite).
func BenchmarkDropForgotten(b *testing.B) {
	ctx := context.Background()
	s := newTestService(b)
	st := s.store.(interface {
		memory.Core
		memory.EpisodeStore
	})
	s.roles.episodes = st
	appendN(b, s, "c", 1, 200, 20)
	key := memory.ChatKey{Tenant: "default", ChatID: "c"}
	var eps []memory.Episode
	for from := int64(1); from < 190; from += 10 {
		eps = append(eps, memory.Episode{FromSeq: from, ToSeq: from + 9, Short: "gist"})
	}
	if _, err := st.CloseEpisodes(ctx, key, 0, eps); err != nil {
		b.Fatal(err)
	}
	var hits []rag.Turn
	for i := range 8 {
		hits = append(hits, rag.Turn{ChatID: "c", Seq: int64(10 + 17*i), Content: "x"})
	}
	hits = append(hits, rag.Turn{ChatID: "c", Kind: memory.KindEpisode, Episode: &rag.EpisodeHit{FromSeq: 41, ToSeq: 50}}, rag.Turn{ChatID: "c", Kind: memory.KindEpisode, Episode: &rag.EpisodeHit{FromSeq: 121, ToSeq: 130}})
	b.ReportAllocs()
	for b.Loop() {
		in := append([]rag.Turn(nil), hits...)
		if out, err := s.dropForgotten(ctx, "default", in, ""); err != nil || len(out) != 10 {
			b.Fatalf("%d hits kept", len(out))
		}
	}
}

// TestRebuildingWakesTheWorker: a read that withholds a dirty summary wakes
// the worker, even when no turn waits to be summarised (a short chat): the
// rebuild is then the only work left.
func TestRebuildingWakesTheWorker(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	st := s.store.(interface {
		memory.Core
		memory.MessageDeleter
	})
	s.roles.forget = st
	sums := &fakeSummaries{store: st}
	s.jobs.summaries = sums
	appendN(t, s, "c", 1, 4, 1)
	if err := s.DeleteMessage(ctx, "default", "c", "m2"); err != nil {
		t.Fatal(err)
	}
	sums.kicks = 0 // the delete woke it too
	res, err := s.Context(ctx, "default", ContextInput{ChatID: "c", Strategy: string(StrategyRunningSummary)})
	if err != nil {
		t.Fatal(err)
	}
	if !containsString(res.Degraded, DegradedSummaryRebuilding) || containsString(res.Degraded, DegradedSummaryStale) {
		t.Fatalf("degraded %v, want summary_rebuilding alone", res.Degraded)
	}
	if sums.kicks == 0 {
		t.Error("the worker was not woken")
	}
}

// TestDirtyChatServesItsCleanStart: while a deleted turn waits for the
// rebuild, a context serves the last summary record ending before it (not
// none, not the head that holds it), says summary_rebuilding, and shows
// the turns after that record as it would an older summary's; a delete
// before every record leaves no summary to serve.
func TestDirtyChatServesItsCleanStart(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	st := s.store.(interface {
		memory.Core
		memory.MessageDeleter
	})
	s.roles.forget = st
	appendN(t, s, "c", 1, 40, 1)
	key := memory.ChatKey{Tenant: "default", ChatID: "c"}
	for i, to := range []int64{10, 20, 30} {
		narr := []string{"Clean start one.", "Clean start two.", "SECRET stretch."}[i]
		rec := memory.SummaryRecord{Summary: memory.Summary{Narrative: narr, CoveredFromSeq: 1, CoveredToSeq: to}, FromSeq: to - 9, ToSeq: to}
		if _, err := memory.AppendSummary(ctx, st, key, to-10, rec); err != nil {
			t.Fatal(err)
		}
	}
	budget := 300 // the chat does not fit whole: the summary stands in
	in := ContextInput{ChatID: "c", Strategy: string(StrategyRunningSummary), BudgetTokens: &budget}
	if err := s.DeleteMessage(ctx, "default", "c", "m25"); err != nil {
		t.Fatal(err)
	}
	res, err := s.Context(ctx, "default", in)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if res.Sections.Summary == nil || !strings.Contains(string(b), "Clean start two.") || strings.Contains(string(b), "SECRET") {
		t.Errorf("context while rebuilding: %s\nwant the record to 20, not the head", b)
	}
	if !containsString(res.Degraded, DegradedSummaryRebuilding) {
		t.Errorf("degraded %v, want summary_rebuilding", res.Degraded)
	}
	if strings.Contains(string(b), "message 25 ") || res.Usage.SummarizedTurns != 20 {
		t.Errorf("summarised %d turns: want the 20 the record covers, the tombstone not shown: %s", res.Usage.SummarizedTurns, b)
	}
	if err := s.DeleteMessage(ctx, "default", "c", "m3"); err != nil {
		t.Fatal(err)
	}
	res, err = s.Context(ctx, "default", in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sections.Summary != nil || !containsString(res.Degraded, DegradedSummaryRebuilding) {
		t.Errorf("a delete before every record: summary %+v, degraded %v; want none, summary_rebuilding", res.Sections.Summary, res.Degraded)
	}
}
