package engine

import (
	"testing"

	"github.com/contextd/contextd/memory"
)

// A value settled on ("deal, $35 a day it is") marks the question shortly
// before that asked about another value of its kind; not one asking about
// the same value, not a statement, not one too far back.
func TestAgreedValueMarks(t *testing.T) {
	for _, tc := range []struct {
		name, older, later string
		between            int // turns between them
		want               bool
	}{
		{"a price settled lower", "amazing. is $40 a day ok?", "deal, $35 a day it is", 2, true},
		{"another day", "ok I'll put the deposit down for saturday the 12th then?", "sunday 13 september it is, 12:30 start", 3, true},
		{"the day asked for", "argh. dad can you still do the 23rd?", "ok 23 May it is. I'll redo the invites", 1, false},
		{"the time asked for", "lunch at 1pm?", "BBQ at Abbey Park, 1pm it is", 0, false},
		{"said, not asked", "we pay $40 a day for the kennel", "deal, $35 a day it is", 1, false},
		{"too far back", "is $40 a day ok?", "deal, $35 a day it is", agreedReach, false},
		{"no value agreed", "is $40 a day ok?", "leave it where it is", 0, false},
		{"a time with its colon", "can we do 12:30?", "ok 13:00 it is", 1, true},
		{"a price with its point", "is £35.00 a day ok?", "deal, £37.50 a day it is", 1, true},
		{"it is, mid-clause", "walk at 1pm?", "at 3pm it is too hot to walk though", 0, false},
	} {
		turns := []memory.Message{{Seq: 1, Role: "user", Content: tc.older}}
		for i := 0; i < tc.between; i++ {
			turns = append(turns, memory.Message{Seq: int64(i + 2), Role: "user", Content: "ok"})
		}
		turns = append(turns, memory.Message{Seq: int64(tc.between + 2), Role: "user", Content: tc.later})
		var ups []chatUpdate
		for _, m := range turns {
			ups = append(ups, readUpdate(m, ups)...)
		}
		r := RAGTurn{Seq: 1, Content: tc.older}
		markUpdate(ups, &r)
		if got := r.update != ""; got != tc.want {
			t.Errorf("%s: marked %v (%q), want %v", tc.name, got, r.update, tc.want)
		}
	}
}
