package engine

import (
	"testing"

	"github.com/contextd/contextd/memory"
)

// A headcount is a number of people said as one, by a cue bound to the
// number; firm when said as a count of us or of replies.
func TestHeadcountOf(t *testing.T) {
	for _, tc := range []struct {
		text string
		n    int // 0: none
		firm bool
	}{
		{"i made a list, 40 people roughly. family, her book club", 40, false},
		{"i made a rough list, 38 incl us", 38, true},
		{"guest list update, we're at 52 now", 52, true},
		{"so we're 31 now", 31, true},
		{"two more yeses, lorna and her husband. 48 total", 48, true},
		{"yes, told daniela today, final number is 43", 43, true},
		{"guest count update, 27 confirmed now incl. gisela", 27, true},
		{"update on the list, 44 ppl now", 44, true},
		// Sizes, thresholds, capacities, other numbers: none.
		{"ordered: lemon poppyseed, 3 tiers for 30 people, 145 €", 0, false},
		{"potluck with 40 people is chaos", 0, false},
		{"no cake fee because we're over 30 people", 0, false},
		{"that's £4 each if 8 of us turn up", 0, false},
		{"the hall holds 60 people", 0, false},
		{"her number is 912 448 309", 0, false},
		{"L, number 9", 0, false},
		{"it's £48 total", 0, false},
		{"flowers came to €45 total", 0, false},
		{"we're at 25 degrees already", 0, false},
		{"battery check: we're at 35% now", 0, false},
		{"3 people submitted the survey twice", 0, false},
		{"we're at 12:30 on the platform", 0, false},
		{"there were 40 people at the open day", 40, false}, // "were" alone is no "we're"
		{"rsvps so far, were at 68 yeses", 68, true},
		{"34 people incl us and 40 people with the kids", 0, false}, // two: which one is meant is not known
	} {
		c, ok := headcountOf(tc.text, true)
		if tc.n == 0 && ok || tc.n != 0 && (c.n != tc.n || c.firm != tc.firm) {
			t.Errorf("headcountOf(%q) = %+v, %v; want n %d firm %v", tc.text, c, ok, tc.n, tc.firm)
		}
	}
}

// A person's later firm headcount marks an older turn stating another
// count of the same gathering; not a count of something else, not an
// assistant's, and not one that trebled.
func TestHeadcountMarks(t *testing.T) {
	older := "i made a list, 18 people incl us. the Leicester lot probably can't come"
	for _, tc := range []struct {
		name  string
		later string
		role  memory.Role
		want  bool
	}{
		{"restated", "so the Leicester cousins CAN come now, the wedding got moved. we're at 22 now", "user", true},
		{"the same count", "still 18 incl us", "user", false},
		{"asked, not said", "are we at 22 now?", "user", false},
		{"another gathering", "the choir concert is 60 people total", "user", false},
		{"a number of people, not firm", "North only has 22 people", "user", false},
		{"the assistant's", "So we're at 22 now.", "assistant", false},
		{"a total of no one", "the caterer quote came to 20 total", "user", false},
	} {
		ups := readUpdate(memory.Message{Seq: 1, Role: "user", Content: older}, nil)
		ups = append(ups, readUpdate(memory.Message{Seq: 2, Role: tc.role, Content: tc.later}, ups)...)
		r := RAGTurn{Seq: 1, Content: older}
		markUpdate(ups, &r)
		if got := r.update != ""; got != tc.want {
			t.Errorf("%s: marked %v (%q), want %v", tc.name, got, r.update, tc.want)
		}
	}
}
