package rag

import (
	"math"
	"strings"
	"testing"
)

// A turn split into passages is weighed down by its length in passages; a
// turn matched whole, a fact or an episode is not.
func TestSplitTurnWeight(t *testing.T) {
	for _, tc := range []struct {
		name string
		turn Turn
		want float64
	}{
		{"whole turn", Turn{Content: "short"}, 1},
		{"fact", Turn{Kind: "fact", Content: "a fact"}, 1},
		{"one passage of two", Turn{TurnBytes: 1280, Passages: []Passage{{From: 640, To: 1280}}},
			1 / (1 + SplitTurnDiscount*math.Ln2)},
		{"one passage of eight", Turn{TurnBytes: 8 * 600, Passages: []Passage{{From: 0, To: 600}}},
			1 / (1 + SplitTurnDiscount*math.Log(8))},
		{"passage as long as its turn", Turn{TurnBytes: 500, Passages: []Passage{{From: 0, To: 500}}}, 1},
		{"empty passage", Turn{TurnBytes: 500, Passages: []Passage{{From: 10, To: 10}}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := float64(splitTurnWeight(tc.turn)); math.Abs(got-tc.want) > 1e-6 {
				t.Fatalf("weight %v, want %v", got, tc.want)
			}
		})
	}
}

// rank puts a short turn above a long turn whose best passage the index
// ranked just ahead of it, and keeps the order of two short turns.
func TestRankDiscountsSplitTurns(t *testing.T) {
	long := strings.Repeat("x", 640)
	hits := []Hit{
		{Point: Point{Tenant: "t", ChatID: "c", Seq: 1, Passage: 2, Content: long, PassageFrom: 1280, PassageTo: 1920,
			TurnBytes: 10 * 640}, Score: 1 / float32(RRFK+1)},
		{Point: Point{Tenant: "t", ChatID: "c", Seq: 2, Content: "short turn"}, Score: 1 / float32(RRFK+2)},
		{Point: Point{Tenant: "t", ChatID: "c", Seq: 3, Content: "another short turn"}, Score: 1 / float32(RRFK+3)},
	}
	var r Retriever
	got := r.rank(hits, 3, nil)
	var seqs []int64
	for _, h := range got {
		seqs = append(seqs, h.Seq)
	}
	if len(seqs) != 3 || seqs[0] != 2 || seqs[1] != 3 || seqs[2] != 1 {
		t.Fatalf("order %v, want [2 3 1]", seqs)
	}
	if w := got[2].Score * float32(1+SplitTurnDiscount*math.Log(10)); math.Abs(float64(w-1/float32(RRFK+1))) > 1e-6 {
		t.Fatalf("the split turn's score %v is not its passage's score over its weight", got[2].Score)
	}
}
