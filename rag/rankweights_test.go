package rag

import (
	"math"
	"slices"
	"strconv"
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
// ranked just ahead of it, and keeps the order of two short turns (none
// next to another, so no adjacent score is added).
func TestRankDiscountsSplitTurns(t *testing.T) {
	long := strings.Repeat("x", 640)
	hits := []Hit{
		{Point: Point{Tenant: "t", ChatID: "c", Seq: 1, Passage: 2, Content: long, PassageFrom: 1280, PassageTo: 1920,
			TurnBytes: 10 * 640}, Score: 1 / float32(RRFK+1)},
		{Point: Point{Tenant: "t", ChatID: "c", Seq: 5, Content: "short turn"}, Score: 1 / float32(RRFK+2)},
		{Point: Point{Tenant: "t", ChatID: "c", Seq: 9, Content: "another short turn"}, Score: 1 / float32(RRFK+3)},
	}
	var r Retriever
	got, _ := r.rank(hits, 3, nil, rankOpts{adjacent: true})
	var seqs []int64
	for _, h := range got {
		seqs = append(seqs, h.Seq)
	}
	if len(seqs) != 3 || seqs[0] != 5 || seqs[1] != 9 || seqs[2] != 1 {
		t.Fatalf("order %v, want [5 9 1]", seqs)
	}
	if w := got[2].Score * float32(1+SplitTurnDiscount*math.Log(10)); math.Abs(float64(w-1/float32(RRFK+1))) > 1e-6 {
		t.Fatalf("the split turn's score %v is not its passage's score over its weight", got[2].Score)
	}
}

// A turn whose neighbour is a candidate too gains a share of the
// neighbours' scores (both sides): a question and its answer overtake a
// lone turn ranked above both; a fact next to a turn's seq neither gives
// nor takes, nor does a turn of another chat.
func TestRankAddsAdjacentScores(t *testing.T) {
	score := func(rank int) float32 { return 1 / float32(RRFK+rank) }
	hits := []Hit{
		{Point: Point{Tenant: "t", ChatID: "c", Seq: 10, Content: "alone"}, Score: score(1)},
		{Point: Point{Tenant: "t", ChatID: "c", Seq: 20, Content: "the question"}, Score: score(2)},
		{Point: Point{Tenant: "t", ChatID: "c", Seq: 30, Kind: "fact", FactID: "f", Seqs: []int64{30}, Content: "a fact"},
			Score: score(3)},
		{Point: Point{Tenant: "t", ChatID: "c", Seq: 31, Content: "next to the fact"}, Score: score(4)},
		{Point: Point{Tenant: "t", ChatID: "c", Seq: 21, Content: "its answer"}, Score: score(5)},
		{Point: Point{Tenant: "t", ChatID: "other", Seq: 11, Content: "same seq, other chat"}, Score: score(6)},
		{Point: Point{Tenant: "t", ChatID: "c", Seq: 40, Content: "before"}, Score: score(50)},
		{Point: Point{Tenant: "t", ChatID: "c", Seq: 41, Content: "between"}, Score: score(60)},
		{Point: Point{Tenant: "t", ChatID: "c", Seq: 42, Content: "after"}, Score: score(70)},
	}
	var r Retriever
	own := map[string]float32{}
	for _, h := range hits {
		own[h.ChatID+"/"+strconv.FormatInt(h.Seq, 10)] = h.Score
	}
	plain, _ := r.rank(slices.Clone(hits), len(hits), nil, rankOpts{})
	for _, h := range plain {
		if k := h.ChatID + "/" + strconv.FormatInt(h.Seq, 10); h.Score != own[k] {
			t.Fatalf("without adjacent scores, %s scores %v, want its own %v", k, h.Score, own[k])
		}
	}
	got, _ := r.rank(hits, len(hits), nil, rankOpts{adjacent: true})
	want := map[string]float32{
		"c/10": score(1), "c/20": score(2) + AdjacentTurnWeight*score(5), "c/30": score(3), "c/31": score(4),
		"c/21": score(5) + AdjacentTurnWeight*score(2), "other/11": score(6),
		"c/40": score(50) + AdjacentTurnWeight*score(60), "c/42": score(70) + AdjacentTurnWeight*score(60),
		"c/41": score(60) + AdjacentTurnWeight*(score(50)+score(70)),
	}
	for _, h := range got {
		k := h.ChatID + "/" + strconv.FormatInt(h.Seq, 10)
		if math.Abs(float64(h.Score-want[k])) > 1e-7 {
			t.Errorf("%s: score %v, want %v", k, h.Score, want[k])
		}
	}
	if got[0].Seq != 20 || got[1].Seq != 21 || got[2].Seq != 10 {
		t.Fatalf("first three %d, %d, %d; want the exchange (20, 21) before the lone turn (10)", got[0].Seq, got[1].Seq, got[2].Seq)
	}
}

// A context's hits score by how well they matched, each side relative to
// its best: a turn holding every rare query word outscores one holding a
// common word by its BM25 margin, not by the 1/(60+rank) step that
// separates neighbouring ranks. Search keeps the fused scores, and hits
// from an index reporting no side scores keep theirs.
func TestRelevanceScoresByMatch(t *testing.T) {
	hits := func() []Hit {
		return []Hit{
			{Point: Point{Tenant: "t", ChatID: "c", Seq: 1, Content: "the log"}, Score: 1 / float32(RRFK+1), SparseScore: 12},
			{Point: Point{Tenant: "t", ChatID: "c", Seq: 3, Content: "ok"}, Score: 1 / float32(RRFK+2), SparseScore: 3},
			{Point: Point{Tenant: "t", ChatID: "c", Seq: 5, Content: "both"}, Score: 2 / float32(RRFK+3), SparseScore: 6, DenseScore: 0.8},
			{Point: Point{Tenant: "t", ChatID: "c", Seq: 7, Content: "dense"}, Score: 1 / float32(RRFK+4), DenseScore: 0.4},
		}
	}
	var r Retriever
	got, _ := r.rank(hits(), 4, nil, rankOpts{relevance: true})
	want := map[int64]float32{1: 1, 3: 0.25, 5: 0.5 + 1, 7: 0.5}
	for _, h := range got {
		if math.Abs(float64(h.Score-want[h.Seq])) > 1e-6 {
			t.Errorf("seq %d: score %v, want %v", h.Seq, h.Score, want[h.Seq])
		}
	}
	fused := map[int64]float32{}
	for _, h := range hits() {
		fused[h.Seq] = h.Score
	}
	plain, _ := r.rank(hits(), 4, nil, rankOpts{})
	bare := hits()
	for i := range bare {
		bare[i].SparseScore, bare[i].DenseScore = 0, 0
	}
	kept, _ := r.rank(bare, 4, nil, rankOpts{relevance: true})
	for _, h := range append(plain, kept...) {
		if h.Score != fused[h.Seq] {
			t.Errorf("seq %d: score %v, want the fused %v (search, or no side scores)", h.Seq, h.Score, fused[h.Seq])
		}
	}
}

// A long turn's best passage is its hit; the other passages the query
// matched come with it in More, best first, each weighed as a hit of its
// own, and do not take a place among the k hits.
func TestRankKeepsTheOtherMatchingPassages(t *testing.T) {
	passage := func(n int, score float32) Hit {
		return Hit{Point: Point{Tenant: "t", ChatID: "c", Seq: 10, Passage: n, Content: "passage " + strconv.Itoa(n),
			PassageFrom: n * 400, PassageTo: (n + 1) * 400, TurnBytes: 4 * 400}, Score: score}
	}
	hits := []Hit{passage(3, 0.9), {Point: Point{Tenant: "t", ChatID: "c", Seq: 30, Content: "short"}, Score: 0.8},
		passage(1, 0.7), passage(2, 0.5)}
	var r Retriever
	got, _ := r.rank(hits, 2, nil, rankOpts{})
	if len(got) != 2 || got[0].Seq+got[1].Seq != 40 {
		t.Fatalf("hits %+v, want turns 10 and 30", got)
	}
	long := got[0]
	if long.Seq != 10 {
		long = got[1]
	}
	if len(long.Passages) != 1 || long.Passages[0].N != 3 {
		t.Fatalf("passages %+v, want passage 3", long.Passages)
	}
	w := splitTurnWeight(long)
	if len(long.More) != 2 || long.More[0].N != 1 || long.More[1].N != 2 ||
		math.Abs(float64(long.More[0].Score-0.7*w)) > 1e-6 || math.Abs(float64(long.More[1].Score-0.5*w)) > 1e-6 {
		t.Fatalf("more %+v, want passages 1 and 2 weighed by %v", long.More, w)
	}
	if !strings.HasPrefix(long.Content, Elision+"\npassage 3") {
		t.Fatalf("content %q", long.Content)
	}
}

// Passages that touch are joined on a line break, not run together.
func TestJoinPassages(t *testing.T) {
	got := JoinPassages([]Passage{{From: 40, To: 80, Text: "second. "}, {From: 0, To: 40, Text: "first."}, {From: 100, To: 120, Text: "third"}}, 200)
	if want := "first.\nsecond.\n" + Elision + "\nthird\n" + Elision; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// A hit holding no value of the kind the question asks for counts
// kindlessWeight of its match: the turn with the address outranks one
// matching as many words that holds none. A question asking when counts
// "yesterday" as its kind (the block's header dates it); a question
// asking for no kind changes nothing.
func TestKindlessHitsCountLess(t *testing.T) {
	hit := func(seq int64, content string, sparse float32) Hit {
		return Hit{Point: Point{Tenant: "t", ChatID: "c", Seq: seq, Content: content}, SparseScore: sparse}
	}
	hits := func() []Hit {
		return []Hit{
			hit(50, "perfect. and someone needs to get milk in at the new flat", 10),
			hit(1, "Linden Court confirmed Mum's flat! Flat 12, Linden Court, 48 Harrogate Road, Ilkley LS29 8EN", 9),
			hit(7, "I went to the support group yesterday, it was powerful", 8),
		}
	}
	var r Retriever
	for _, tc := range []struct {
		query string
		first int64
		score map[int64]float32
	}{
		{"whats Mum's full new address, the bank needs it", 1, map[int64]float32{50: 0.75, 1: 0.9, 7: 0.8 * 0.75}},
		{"when did she go to the support group?", 7, map[int64]float32{50: 0.75, 1: 0.9 * 0.75, 7: 0.8}},
		{"who is going to the flat", 50, map[int64]float32{50: 1, 1: 0.9, 7: 0.8}},
	} {
		got, _ := r.rank(hits(), 3, nil, rankOpts{relevance: true, kinds: askedKindsOf(tc.query)})
		for _, h := range got {
			if math.Abs(float64(h.Score-tc.score[h.Seq])) > 1e-6 {
				t.Errorf("%q: seq %d scores %v, want %v", tc.query, h.Seq, h.Score, tc.score[h.Seq])
			}
		}
		if got[0].Seq != tc.first {
			t.Errorf("%q: first hit %d, want %d", tc.query, got[0].Seq, tc.first)
		}
	}
}
