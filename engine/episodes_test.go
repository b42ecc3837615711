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
