package engine

import (
	"context"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// since/until reach the index query (they are not applied after it), and
// search hits carry kind and, for episodes, the id, range and dates.
func TestTimeRangeAndEpisodeHits(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	appendN(t, s, "c1", 1, 30, 5)
	start, end := time.Date(2024, 5, 3, 9, 0, 0, 0, time.UTC), time.Date(2024, 5, 9, 18, 0, 0, 0, time.UTC)
	fr := &fakeRetriever{turns: []rag.Turn{
		{ChatID: "c1", Seq: 3, Role: "user", Content: "message 3", Score: 2, CreatedAt: start},
		{ChatID: "c1", Seq: 10, Kind: memory.KindEpisode, Episode: &rag.EpisodeHit{ID: "ep7", FromSeq: 10, ToSeq: 19, StartedAt: start, EndedAt: end},
			CreatedAt: end, Content: "They planned the Lisbon move.", Score: 3},
	}}
	s.vec.retriever = fr
	in := ContextInput{ChatID: "c1", Query: "lisbon", Strategy: string(StrategyRAG), Since: "2024-05-01T00:00:00Z", Until: "2024-05-31T00:00:00Z"}
	if _, err := s.Context(ctx, "default", in); err != nil {
		t.Fatal(err)
	}
	if !fr.got.Since.Equal(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)) || !fr.got.Until.Equal(time.Date(2024, 5, 31, 0, 0, 0, 0, time.UTC)) || fr.got.Drill == 0 {
		t.Fatalf("retrieval request = %+v", fr.got)
	}
	res, err := s.Search(ctx, "default", SearchInput{Query: "lisbon", ChatID: "c1", Kinds: []string{"episode", "turn"}, Since: "2024-05-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	hits := res.Hits
	if len(fr.got.Kinds) != 2 || fr.got.Since.IsZero() {
		t.Fatalf("search request = %+v", fr.got)
	}
	var ep *SearchHit
	for i := range hits {
		if hits[i].Kind == memory.KindEpisode {
			ep = &hits[i]
		} else if hits[i].Kind != memory.KindTurn {
			t.Errorf("hit without kind: %+v", hits[i])
		}
	}
	if ep == nil || ep.EpisodeID != "ep7" || ep.FromSeq != 10 || ep.ToSeq != 19 || !ep.StartedAt.Equal(start) || !ep.EndedAt.Equal(end) || ep.Content != "They planned the Lisbon move." {
		t.Fatalf("episode hit = %+v", ep)
	}
}
