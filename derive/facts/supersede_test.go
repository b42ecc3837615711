package facts

import (
	"reflect"
	"testing"
	"time"

	"github.com/contextd/contextd/memory"
)

func fact(kind, text string, seq int64) memory.Fact {
	seqs := []int64{seq}
	return memory.Fact{ID: memory.FactID("", "", seqs, text), Text: text, Kind: kind, Seqs: seqs, ValidAt: t0.Add(time.Duration(seq) * time.Hour)}
}

func TestSupersede(t *testing.T) {
	A, D, P, E, R, O := memory.FactAttribute, memory.FactDecision, memory.FactPlan, memory.FactEvent, memory.FactPreference, memory.FactOther
	cases := []struct {
		name       string
		old, fresh memory.Fact
		updates    bool
	}{
		{"moved city", fact(A, "The user lives in Boston.", 1), fact(A, "The user moved to Denver last month.", 2), true},
		{"cutover date", fact(D, "Decision: Cutover on June 15", 1), fact(D, "Decision: The cutover moved to June 22.", 2), true},
		{"step size", fact(D, "Decision: For the Euler method let's use step size h = 0.5.", 1), fact(D, "Decision: Use h = 0.25 instead.", 2), true},
		{"job", fact(A, "Caroline works as a nurse.", 1), fact(A, "Caroline now works as a teacher.", 2), true},
		{"employer", fact(A, "The user works at Globex.", 1), fact(A, "The user works for Initech since May.", 2), true},
		{"kids", fact(A, "The user has two kids.", 1), fact(A, "The user has three kids.", 2), true},
		{"favourite", fact(R, "The user's favourite editor is Vim.", 1), fact(R, "The user's favourite editor is Emacs.", 2), true},
		{"flight date", fact(P, "The user is flying to Lisbon on June 3.", 1), fact(P, "The user is flying to Lisbon on June 5.", 2), true},
		{"age", fact(A, "Melanie is 34 years old.", 1), fact(A, "Melanie is 35 years old.", 2), true},

		// Updates beyond the slots (DetectUpdate).
		{"moved from X to Y", fact(A, `The user said: "We live in Berlin with two cats."`, 1), fact(E, "The user moved from Berlin to Munich last month.", 2), true},
		{"changed X to Y", fact(D, "Decision: Let's use a step size h of 0.5.", 1), fact(E, `The user said: "We changed the step size h to 0.25."`, 2), true},
		{"X is now Y", fact(P, "The user is meeting the landlord on Monday for the lease meeting.", 1), fact(O, `The user said: "The meeting is now on Tuesday."`, 2), true},
		{"no longer", fact(R, "The user loves meat dishes.", 1), fact(O, "The user no longer eats meat.", 2), true},
		{"instead of", fact(D, "Decision: We'll use MySQL for the orders.", 1), fact(D, "Decision: Let's use Postgres instead of MySQL.", 2), true},
		{"actually not", fact(A, `The user said: "We live in Berlin."`, 1), fact(O, `The user said: "Actually it's Munich, not Berlin."`, 2), true},
		{"now live", fact(A, "The user lives in Boston.", 1), fact(A, "The user now lives in Denver.", 2), true},
		{"a comparative says how, not what", fact(O, "Her brother Tobias, 28, never left the town and runs the family's boat.", 1), fact(O, `The user said: "Make the brother older, 34 not 28."`, 2), true},
		{"a number changed: a question states none", fact(O, `The user said: "Which step size h should we use?"`, 1), fact(E, `The user said: "We changed the step size h to 0.25."`, 2), false},
		{"one's own words retracted", fact(O, `The user said: "Stack: Python 3.12, FastAPI, Celery."`, 1), fact(O, `The user said: "I said python 3.12 earlier but staging is actually 3.11."`, 2), true},
		{"time moved", fact(P, "Dinner is booked at Taberna do Largo for Thursday, dinner at 19:30.", 1), fact(O, `Tomás said: "Moved dinner to 8, same day, same place."`, 2), true},
		{"time moved, no time said", fact(A, "Priya needs gluten-free food at dinner.", 1), fact(O, `Tomás said: "Moved dinner to 8, same day, same place."`, 2), false},
		{"an event stays", fact(E, "The user visited Berlin in 2019.", 1), fact(E, "The user moved from Berlin to Munich.", 2), false},
		{"standing instruction stays", fact(R, "Standing instruction: Always use bullet points.", 1), fact(O, `The user said: "We now use Postgres."`, 2), false},
		{"new value restated", fact(A, "The user lives in Munich near Berlin Street.", 1), fact(E, "The user moved from Berlin to Munich.", 2), false},
		{"no longer remember", fact(R, "The user loves the hotel's name.", 1), fact(O, "The user no longer remembers the hotel's name.", 2), false},
		{"other subject", fact(D, "Decision: Let's use a step size h of 0.5.", 1), fact(E, `The user said: "We changed the tolerance to 0.01."`, 2), false},

		{"two preferences", fact(R, "The user prefers boutique hotels.", 1), fact(R, "The user prefers aisle seats.", 2), false},
		{"two allergies", fact(A, "The user is allergic to caffeine.", 1), fact(A, "The user is allergic to peanuts.", 2), false},
		{"other person", fact(A, "Caroline lives in Boston.", 1), fact(A, "Melanie lives in Denver.", 2), false},
		{"relative is not self", fact(A, "Caroline's sister lives in Lyon.", 1), fact(A, "Caroline lives in Paris.", 2), false},
		{"same value again", fact(A, "The user lives in Boston.", 1), fact(A, "The user still lives in Boston, near the harbour.", 2), false},
		{"two favourites", fact(R, "The user's favourite color is blue.", 1), fact(R, "The user's favourite editor is Emacs.", 2), false},
		{"two events on dates", fact(E, "The user went to Paris on June 3.", 1), fact(E, "The user went to Paris on June 10.", 2), false},
		{"two variables", fact(D, "Decision: use h = 0.5.", 1), fact(D, "Decision: use n = 10.", 2), false},
		{"two kinds of pets", fact(A, "The user has two dogs.", 1), fact(A, "The user has one cat.", 2), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Supersede([]memory.Fact{c.old}, []memory.Fact{c.fresh})
			want := map[string]string{}
			if c.updates {
				want[c.old.ID] = c.fresh.ID
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Supersede = %v, want %v (slots old %v, fresh %v)", got, want, Slots(c.old), Slots(c.fresh))
			}
		})
	}
}

func TestSupersedeOrderAndFresh(t *testing.T) {
	boston := fact(memory.FactAttribute, "The user lives in Boston.", 1)
	denver := fact(memory.FactAttribute, "The user moved to Denver.", 5)
	austin := fact(memory.FactAttribute, "The user moved to Austin.", 9)
	// A fresh fact older than an existing one is the one superseded.
	if got := Supersede([]memory.Fact{denver}, []memory.Fact{boston}); !reflect.DeepEqual(got, map[string]string{boston.ID: denver.ID}) {
		t.Fatalf("older fresh: %v", got)
	}
	// Within fresh facts, and across both, everything points at the newest.
	got := Supersede([]memory.Fact{boston}, []memory.Fact{austin, denver})
	if want := map[string]string{boston.ID: austin.ID, denver.ID: austin.ID}; !reflect.DeepEqual(got, want) {
		t.Fatalf("chain: %v, want %v", got, want)
	}
	// Existing facts are not re-decided among themselves.
	if got := Supersede([]memory.Fact{boston, denver}, nil); len(got) != 0 {
		t.Fatalf("existing only: %v", got)
	}
}

// TestSupersedeExtracted runs the rule over facts drawn from turns.
func TestSupersedeExtracted(t *testing.T) {
	first := Extract([]memory.Message{
		turn(1, "user", "For the Euler method let's use step size h = 0.5 on this problem."),
		turn(2, "user", "Decision: cutover on June 15"),
		turn(3, "user", "I live in Boston with my partner."),
		turn(4, "user", "I prefer boutique hotels."),
	})
	second := Extract([]memory.Message{
		turn(5, "user", "That is unstable. Use h = 0.25 instead."),
		turn(6, "user", "Update: the cutover moved to June 22."),
		turn(7, "user", "I moved to Denver last month."),
		turn(8, "user", "I prefer aisle seats on long flights."),
	})
	if len(first) != 4 || len(second) != 4 {
		t.Fatalf("extracted %d and %d facts: %+v %+v", len(first), len(second), first, second)
	}
	got := Supersede(first, second)
	want := map[string]string{first[0].ID: second[0].ID, first[1].ID: second[1].ID, first[2].ID: second[2].ID}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Supersede = %v, want %v\nfirst %+v\nsecond %+v", got, want, first, second)
	}
}
