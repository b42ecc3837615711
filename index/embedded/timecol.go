package embedded

import (
	"math"
	"slices"
)

// timeColumn holds a chat's point times (unix seconds; noTime: none) in 4
// bytes a point, not 8: as seconds from the chat's first known time, an
// int32 (narrowNone for noTime), while every time is within about 68
// years of it; a time beyond that turns the column into int64s for good.
// A chat's turns span days or months, so the narrow form is the rule
// (4 MB less at a million points).
type timeColumn struct {
	base    int64
	hasBase bool
	narrow  []int32 // nil once wide
	wide    []int64 // nil while narrow
}

// narrowNone is noTime in the narrow form; no offset takes it.
const narrowNone = math.MinInt32

func (tc *timeColumn) len() int {
	if tc.wide != nil {
		return len(tc.wide)
	}
	return len(tc.narrow)
}

// at is slot i's time.
func (tc *timeColumn) at(i int) int64 {
	if tc.wide != nil {
		return tc.wide[i]
	}
	d := tc.narrow[i]
	if d == narrowNone {
		return noTime
	}
	return tc.base + int64(d)
}

// enc is t in the narrow form, and whether it has one; the first known
// time becomes the base.
func (tc *timeColumn) enc(t int64) (int32, bool) {
	if t == noTime {
		return narrowNone, true
	}
	if !tc.hasBase {
		tc.base, tc.hasBase = t, true
	}
	// t - base may wrap around int64: at adds it back with the same wrap,
	// so any d that fits in an int32 reads back as t.
	d := t - tc.base
	if d <= narrowNone || d > math.MaxInt32 {
		return 0, false
	}
	return int32(d), true
}

// widen turns the column into int64s.
func (tc *timeColumn) widen() {
	w := make([]int64, len(tc.narrow), cap(tc.narrow))
	for i := range tc.narrow {
		w[i] = tc.at(i)
	}
	tc.wide, tc.narrow = w, nil
}

// insert puts t at slot i, growing the column as grow does.
func (tc *timeColumn) insert(i int, t int64) {
	if tc.wide == nil {
		if d, ok := tc.enc(t); ok {
			tc.narrow = slices.Insert(grow(tc.narrow, 1, 8), i, d)
			return
		}
		tc.widen()
	}
	tc.wide = slices.Insert(grow(tc.wide, 1, 8), i, t)
}

// set makes slot i's time t.
func (tc *timeColumn) set(i int, t int64) {
	if tc.wide == nil {
		if d, ok := tc.enc(t); ok {
			tc.narrow[i] = d
			return
		}
		tc.widen()
	}
	tc.wide[i] = t
}

// move copies slot r's time to slot w (keep's compaction).
func (tc *timeColumn) move(w, r int) {
	if tc.wide != nil {
		tc.wide[w] = tc.wide[r]
	} else {
		tc.narrow[w] = tc.narrow[r]
	}
}

// truncate keeps the first n times; clone gives back spare capacity.
func (tc *timeColumn) truncate(n int) {
	if tc.wide != nil {
		tc.wide = tc.wide[:n]
	} else {
		tc.narrow = tc.narrow[:n]
	}
}

func (tc *timeColumn) clone() { tc.narrow, tc.wide = slices.Clone(tc.narrow), slices.Clone(tc.wide) }
