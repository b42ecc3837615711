package eval

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestParseEvidence(t *testing.T) {
	cases := []struct {
		raw  string
		want []string
	}{
		{`["D1:3"]`, []string{"D1:3"}},
		{`["D8:6; D9:17"]`, []string{"D8:6", "D9:17"}},
		{`["D:11:26"]`, []string{"D11:26"}},
		{`["D30:05"]`, []string{"D30:5"}},
		{`["D1:3", "D1:3", "D2:1,D2:2"]`, []string{"D1:3", "D2:1", "D2:2"}},
		{`[]`, nil},
		{`["nonsense"]`, nil},
	}
	for _, c := range cases {
		if got := ParseEvidence(json.RawMessage(c.raw)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseEvidence(%s) = %v, want %v", c.raw, got, c.want)
		}
	}
}

func TestParseSessionDate(t *testing.T) {
	got, err := ParseSessionDate("1:56 pm on 8 May, 2023")
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := ParseSessionDate("yesterday"); err == nil {
		t.Error("want an error for an unparseable date")
	}
}

func TestBaselines(t *testing.T) {
	texts := []string{"the cat sat on the mat", "dogs bark loudly", "a cat and a dog", "nothing relevant here"}
	costs := make([]int, len(texts))
	for i, s := range texts {
		costs[i] = turnCost(s)
	}
	m := newBM25(texts)
	r := m.rank("cat")
	if len(r) != 2 || !(r[0] == 0 || r[0] == 2) {
		t.Fatalf("rank(cat) = %v, want turns 0 and 2", r)
	}
	p := bm25Fill(m, costs, "dog bark", 1000)
	if len(p.turns) == 0 || p.turns[0] != 1 {
		t.Errorf("bm25Fill(dog bark) = %v, want turn 1 first", p.turns)
	}
	rec := recency(costs, costs[3]+costs[2])
	if !reflect.DeepEqual(rec.turns, []int{3, 2}) || rec.tokens != costs[3]+costs[2] {
		t.Errorf("recency = %+v", rec)
	}
	if got := recall([]int64{1, 2}, map[int64]bool{2: true}); got != 0.5 {
		t.Errorf("recall = %v", got)
	}
}
