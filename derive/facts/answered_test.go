package facts

import (
	"testing"

	"github.com/contextd/contextd/memory"
)

func TestAnswered(t *testing.T) {
	q := func(seq int64, role, content string) memory.Fact {
		_, qs := ExtractAll([]memory.Message{turn(seq, role, content)})
		if len(qs) != 1 {
			t.Fatalf("no open question in %q", content)
		}
		fs := Extract([]memory.Message{turn(seq, role, content)})
		return fs[len(fs)-1]
	}
	user := q(1, "user", "How far is Hakone from Tokyo by train?")
	named := q(1, "assistant", "Melanie: Which pottery classes would you recommend?")
	cases := []struct {
		name  string
		open  memory.Fact
		turns []memory.Message
		want  bool
	}{
		{"the assistant answers the user", user, []memory.Message{turn(2, "assistant", "About 85 minutes.")}, true},
		{"the user again is no answer", user, []memory.Message{turn(2, "user", "Also, is there a day pass for the area?")}, false},
		{"a turn before the question is no answer", user, []memory.Message{turn(1, "assistant", "Hi.")}, false},
		{"a tool turn is no answer", user, []memory.Message{turn(2, "tool", `{"km": 85}`)}, false},
		{"another name answers", named, []memory.Message{turn(2, "user", "Caroline: The Tuesday wheel class is great.")}, true},
		{"the asker again is no answer", named, []memory.Message{turn(2, "assistant", "Melanie: Or maybe a glazing class for kids?")}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Answered([]memory.Fact{c.open}, c.turns)
			if _, ok := got[c.open.ID]; ok != c.want || (ok && got[c.open.ID] != memory.FactAnswered) {
				t.Errorf("Answered = %v, want answered %v", got, c.want)
			}
		})
	}
	// A fact that is no open question, or is already superseded, is left.
	other := extractOne("user", "I prefer boutique hotels.")[0]
	done := user
	done.SupersededBy = "f-x"
	if got := Answered([]memory.Fact{other, done}, []memory.Message{turn(2, "assistant", "Sure.")}); len(got) != 0 {
		t.Errorf("Answered = %v, want nothing", got)
	}
}
