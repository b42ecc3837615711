package storetest

import (
	"errors"
	"math"
	"testing"

	"github.com/contextd/contextd/memory"
)

// testChatLag: one chat's lag follows its own backlogs step by step —
// unindexed turns from the first one, the facts cursor, episodes and facts
// not yet indexed — and never another chat's or tenant's.
func testChatLag(t *testing.T, s memory.Backend) {
	ctx := ctxT(t)
	a, other := key("t1", "a"), key("t2", "a")
	if _, err := s.ChatLag(ctx, a, math.MaxInt64); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("unknown chat: %v, want ErrNotFound", err)
	}
	mustAppend(t, s, memory.AppendRequest{Chat: a, Messages: turns("a", 6)})
	mustAppend(t, s, memory.AppendRequest{Chat: other, Messages: turns("o", 4)})
	var eps []memory.Episode
	steps := []struct {
		name string
		run  func() error
		want memory.ChatLag
	}{
		{"appended", nil, memory.ChatLag{LastSeq: 6, FirstUnindexed: 1}},
		{"turns 1-3 indexed", func() error { mustMark(t, s, a, 1, 2, 3); return nil }, memory.ChatLag{LastSeq: 6, FirstUnindexed: 4}},
		{"facts drawn to 5", func() error { return drawn(ctx, s, []memory.Mark{{Chat: a, ToSeq: 5}}) },
			memory.ChatLag{LastSeq: 6, FirstUnindexed: 4, FactsCursor: 5}},
		{"an episode with a fact closed", func() error {
			var err error
			eps, err = s.CloseEpisodes(ctx, a, 0, []memory.Episode{withFacts(episode(1, 4), fact("x", 2))})
			return err
		}, memory.ChatLag{LastSeq: 6, FirstUnindexed: 4, FactsCursor: 5, UnindexedEpisodes: true, UnindexedFacts: true}},
		{"the episode indexed", func() error { return doneIDs(ctx, s, memory.IndexEpisodes, a, []string{eps[0].ID}) },
			memory.ChatLag{LastSeq: 6, FirstUnindexed: 4, FactsCursor: 5, UnindexedFacts: true}},
		{"its fact and the turns indexed", func() error {
			mustMark(t, s, a, 4, 5, 6)
			return doneIDs(ctx, s, memory.IndexFacts, a, []string{mustFacts(t, s, a, 0, 0, true)[0].ID})
		}, memory.ChatLag{LastSeq: 6, FactsCursor: 5}},
	}
	for _, st := range steps {
		if st.run != nil {
			if err := st.run(); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
		}
		got, err := s.ChatLag(ctx, a, math.MaxInt64)
		if err != nil || got != st.want {
			t.Errorf("%s: ChatLag = %+v, %v; want %+v", st.name, got, err, st.want)
		}
		// Before seq 2 nothing derived starts but the episode (1-4): the
		// fact (from turn 2) is the recent window's.
		early := st.want
		early.UnindexedFacts = false
		if got, err := s.ChatLag(ctx, a, 2); err != nil || got != early {
			t.Errorf("%s: ChatLag before 2 = %+v, %v; want %+v", st.name, got, err, early)
		}
		// Asked again with nothing written (a store may keep the answer),
		// then asked after the next step's write: never the answer from
		// before it.
		if got, err := s.ChatLag(ctx, a, math.MaxInt64); err != nil || got != st.want {
			t.Errorf("%s, asked again: ChatLag = %+v, %v; want %+v", st.name, got, err, st.want)
		}
	}
	if got, err := s.ChatLag(ctx, other, math.MaxInt64); err != nil || got != (memory.ChatLag{LastSeq: 4, FirstUnindexed: 1}) {
		t.Errorf("the other tenant's chat: %+v, %v", got, err)
	}
}
