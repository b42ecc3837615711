package rag

import "testing"

func TestChoice(t *testing.T) {
	for _, c := range []struct{ content, want string }{
		{"ok we're going with the crown then. booked it, same plan, 7pm start", "crown"},
		{"ok Eneco it is, signing up tonight", "eneco"},
		{"so we're going with seeblick, sunday 11 oct. deposit paid ✅", "seeblick"},
		{"fine, lemon drizzle it is", "lemon"},
		{"that's how it is with landlords", ""},
		{"whatever it is, it smells", ""},
		{"we're going with 3 hours max for the gaps", ""}, // a number, no option named
		{"going with the flow this week", "flow"},         // read as a choice: brings a turn only where one named it
		{"no idea yet", ""},
	} {
		got, _ := choice(c.content)
		if got != c.want {
			t.Errorf("%q: chose %q, want %q", c.content, got, c.want)
		}
	}
}
