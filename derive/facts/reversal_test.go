package facts

import (
	"strings"
	"testing"
)

func TestDetectReversal(t *testing.T) {
	for _, tc := range []struct {
		text string
		back string // "|"-joined; "" = none
	}{
		{"ok this is embarrassing but we've gone back to her old name. nobody ever said June", "name"},
		{"scratch the nottingham price change, back to £8. promoter says £10 kills the walk ups", "£8"},
		{"nah scrap that, afternoons were worse, i just napped. back to mornings but starting at 8 not 7", "mornings"},
		{"we switched back to Postgres 13 because of the extension", "postgres|13"}, // a number with what it numbers
		// Going back to a version or an amount is a return; to a place,
		// a way, or after another verb of going, it is none.
		{"So we're going back to Node 20 for now.", "node|20"},
		{"we went back to £8 a head", "£8|head"},
		{"going back to Berlin next week", ""},
		{"the refund is $1,186.40, going back to the Visa ending 4471", ""},
		{"we're going to drive back to hotel 5 after dinner", ""},
		{"the release got pushed back to 3 june", ""},
		// Wanted or done after all, once dropped: the thing named.
		{"ugh marketing wants reviews after all for the new product pages", "reviews"},
		{"ok the Tuesday Crew CAN do sunday after all", "sunday"},
		{"we don't need the van after all", ""}, // dropped, not wanted
		{"does he want the tickets after all?", ""},
		{"it dates back to the 6th century BCE", ""},
		{"we went back to the original supplier, the new one was late twice", "supplier"},
		{"I'll get back to you tomorrow", ""},
		{"we drove back to the hotel after dinner", ""},
		{"his ankles are back to normal now", ""},
		{"going back to work on monday", ""},
		{"if we go back to the old supplier it costs more", ""},
		{"we went back to the original plan", "latest"}, // names nothing: the newest change
		{"rafa again lol. cousin found a van after all, so back to the original, sat 2nd", "latest"},
		{"ok back to plan A then", "latest"},
		// Read as one; it undoes nothing unless an earlier change's
		// sentence named all three.
		{"consent form back to mrs okafor by friday", "mrs|okafor|friday"},
	} {
		r, ok := DetectReversal(tc.text)
		got := strings.Join(r.Back, "|")
		if r.Latest {
			got = "latest"
		}
		if ok != (tc.back != "") || got != tc.back {
			t.Errorf("DetectReversal(%q) = %q, %v; want %q", tc.text, got, ok, tc.back)
		}
	}
	// A numbered value is found word by word: "Node 22 now, not 20"
	// states the change "back to Node 20" undoes.
	if r, _ := DetectReversal("So we're going back to Node 20 for now."); !r.Reverses("So target is Node 22 now, not 20.") || r.Reverses("Node 22 is the new LTS") {
		t.Errorf("Reverses: the move to Node 22 away from 20 is the one it undoes")
	}
	r, _ := DetectReversal("back to mornings but starting at 8 not 7")
	if !r.Reverses("let's try afternoons instead of mornings for the deep work") || r.Reverses("afternoons are for calls") {
		t.Errorf("Reverses: the change away from mornings is the one it undoes")
	}
}
