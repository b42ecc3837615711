package engine

import (
	"testing"
	"time"
)

func TestEpisodeHeader(t *testing.T) {
	d := func(y int, m time.Month, day, h int) time.Time { return time.Date(y, m, day, h, 0, 0, 0, time.UTC) }
	tests := []struct {
		s, e     time.Time
		from, to int64
		want     string
	}{
		{d(2023, 5, 3, 9), d(2023, 5, 9, 18), 120, 141, "[3–9 May 2023 · turns 120–141]"},
		{d(2023, 5, 3, 9), d(2023, 5, 3, 18), 1, 6, "[3 May 2023 · turns 1–6]"},
		{d(2023, 4, 28, 9), d(2023, 5, 3, 9), 7, 9, "[28 Apr – 3 May 2023 · turns 7–9]"},
		{d(2022, 12, 30, 9), d(2023, 1, 2, 9), 10, 10, "[30 Dec 2022 – 2 Jan 2023 · turn 10]"},
		{time.Time{}, time.Time{}, 3, 4, "[turns 3–4]"},
	}
	for _, tc := range tests {
		if got := EpisodeHeader(tc.s, tc.e, tc.from, tc.to); got != tc.want {
			t.Errorf("EpisodeHeader = %q, want %q", got, tc.want)
		}
	}
}

// TestEpisodeBelowTheShortTurnsItQuotes: an extractive episode ranks no
// higher than a short retrieved turn it quotes; a turn it does not quote,
// a long turn's passage or a neighbour leaves its rank alone.
func TestEpisodeBelowTheShortTurnsItQuotes(t *testing.T) {
	ep := RAGTurn{Score: 1, Content: `The user said: "Home carers: the agency is Brightwater Home Care, reablement for 6 weeks, free."`,
		Episode: &EpisodeRef{FromSeq: 9, ToSeq: 14}}
	quoting := "Home carers: the agency is Brightwater Home Care, reablement for 6 weeks, free. Coordinator is Sue, 0113 496 0725."
	for _, tc := range []struct {
		name string
		turn RAGTurn
		want float32
	}{
		{"a short turn it quotes", RAGTurn{Seq: 13, Score: 0.8, whole: true, Content: quoting}, 0.8},
		{"a turn it does not quote", RAGTurn{Seq: 12, Score: 0.6, whole: true, Content: "ur a star"}, 1},
		{"a long turn's passage", RAGTurn{Seq: 13, Score: 0.8, part: true, Content: quoting}, 1},
		{"a neighbour", RAGTurn{Seq: 13, Score: 0.8, whole: true, Neighbor: true, Content: quoting}, 1},
		{"a turn outside its range", RAGTurn{Seq: 20, Score: 0.8, whole: true, Content: quoting}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eps := []RAGTurn{ep}
			belowOwnTurns(eps, []RAGTurn{tc.turn})
			if eps[0].Score != tc.want {
				t.Errorf("episode score %v, want %v", eps[0].Score, tc.want)
			}
		})
	}
}
