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
		{"we switched back to Postgres 13 because of the extension", "postgres 13"}, // a number with what it numbers, one phrase
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
	r, _ := DetectReversal("back to mornings but starting at 8 not 7")
	if !r.Reverses("let's try afternoons instead of mornings for the deep work") || r.Reverses("afternoons are for calls") {
		t.Errorf("Reverses: the change away from mornings is the one it undoes")
	}
}
