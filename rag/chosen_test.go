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

func TestPlaceChosen(t *testing.T) {
	for _, c := range []struct {
		content string
		want    int
	}{
		{"ok do the second one", 2},
		{"Ok do the first one, I'll pay you back with the rest. Thank you!!", 1},
		{"agreed, ok go with the 3rd option", 3},
		{"let's do option 2 then", 2},
		{"the second one was better anyway", 0}, // no choice made
		{"one more thing: the first train is at 6", 0},
		{"ok do it", 0},
		{"I don't want the second one", 0},
		{"option 2 is way too expensive", 0},
		{"choose the first one?", 0},
		{"is option 1 or option 2 cheaper", 0},
	} {
		if got := placeChosen(c.content); got != c.want {
			t.Errorf("%q: place %d, want %d", c.content, got, c.want)
		}
	}
}

func TestListsOptions(t *testing.T) {
	for _, c := range []struct {
		content string
		place   int
		want    bool
	}{
		{"Two options:\n\n1. Move your Wi-Fi to channel 11.\n2. Move Zigbee to channel 25.", 2, true},
		{"3 options: 1) DJ Sunny, £300 2) dev does it for free 3) a spotify playlist", 3, true},
		{"3 options: 1) DJ Sunny, £300 2) dev does it for free", 3, false}, // no third
		{"Option 1: firm. Option 2: friendly.", 2, true},
		{"2) comes first here 1) then this", 2, false}, // out of order
		{"we paid 1. then 2. lol", 2, false},           // numbers closing sentences, no options
		{"room for 12. ok?", 1, false},
		{"**Version 1 (formal)** Dear … **Version 2 (friendly)** Hi …", 2, true},
		{"I can either grab a bag at the Pet Valu ($89.99) or at the Ossington one, on sale for $74.99. Which one?", 2, true},
		{"two options i found. Hyperoptic 500Mb for £30/month, or Virgin 350Mb for £29/month", 2, true},
		{"for walks i could do 6:30am, or lunchtime around 12:30, or evenings after 6. which is best for him?", 3, true},
		{"tea or coffee, whatever you like", 2, false}, // an "or" offers nothing to choose by place
		{"I either forgot or lost it", 2, false},       // "either … or" that asks nothing
		{"either a DJ or a playlist", 4, false},        // a fourth is never in prose
	} {
		if got := listsOptions(c.content, c.place); got != c.want {
			t.Errorf("%q, option %d: lists = %v, want %v", c.content, c.place, got, c.want)
		}
	}
}

// A turn numbering options offers them, whatever words of choosing it
// holds: "Option 1: … Option 2: …" chooses neither.
func TestReadChoiceOffersBeforeChoosing(t *testing.T) {
	c := readChoice("Option 1: move the Wi-Fi to channel 11. Option 2: go with option 2, move Zigbee to 25. Which do you prefer?")
	if !c.lists || c.ok || c.place != 0 {
		t.Errorf("options read as %+v, want offered, not chosen", c)
	}
	if c := readChoice("ok do the second one"); c.lists || !c.ok || c.place != 2 {
		t.Errorf("a choice read as %+v", c)
	}
}
