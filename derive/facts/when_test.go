package facts

import "testing"

func TestSaysOtherTime(t *testing.T) {
	dinner := Update{Subject: []string{"dinner"}, New: []string{"8"}}
	day := Update{Subject: []string{"deadline"}, New: []string{"friday"}}
	for _, tc := range []struct {
		name string
		u    Update
		text string
		want bool
	}{
		{"another clock time", dinner, "dinner sorted, booked taberna do largo for thursday the 14th, dinner at 19:30, table for 4.", true},
		{"am/pm", dinner, "we said dinners at 7pm, right?", true},
		{"no time said", dinner, "cheap dinner wherever we find that priya can eat at.", false},
		{"a count is no time", dinner, "dinner for 4 people, they do gluten-free.", false},
		{"the new time", dinner, "dinner at 8 then, see you there.", false},
		{"the new time inside another", dinner, "dinner at 18:00 is early.", true},
		{"time in another sentence", dinner, "dinner is booked. the train leaves at 19:05.", false},
		{"other thing", dinner, "lunch at 12:30 at the market.", false},
		{"another day", day, "the deadline is thursday, hard stop.", true},
		{"a clock time is not a day", day, "the deadline review is at 10:00.", false},
		{"a date moved: what starts", Update{Subject: []string{"start", "date"}, New: []string{"october 1"}}, "i'm relocating to toronto for a new job starting september 1 and need a flat.", true},
		{"a date moved: the new date", Update{Subject: []string{"start", "date"}, New: []string{"october 1"}}, "the job is starting october 1 now.", false},
		{"two words name the thing: both said", Update{Subject: []string{"job", "start", "date"}, New: []string{"october 1"}}, "the job is starting september 1.", true},
		{"two words name the thing: one said", Update{Subject: []string{"trash", "pickup"}, New: []string{"thursdays"}}, "the trash is full again, tuesday night.", false},
		{"two words name the thing, one sentence", Update{Subject: []string{"trash", "pickup"}, New: []string{"thursdays"}}, "oh and trash + recycling go out tuesday night, pickup is early wed.", true},
		{"not a moved time", Update{Subject: []string{"budget"}, New: []string{"5000"}}, "the budget was 3000 at 10:00.", false},
	} {
		if got := SaysOtherTime(tc.u, tc.text); got != tc.want {
			t.Errorf("%s: SaysOtherTime(%q) = %v, want %v", tc.name, tc.text, got, tc.want)
		}
	}
}

func TestSameDay(t *testing.T) {
	for _, tc := range []struct {
		v, text string
		want    bool
	}{
		{"13th", "cotswold farm park for saturday 13 june", true},
		{"13th", "june 13 works", true},
		{"13th", "13 kids are coming", false},
		{"13 june", "the 13th", true},
		{"13 june", "13 july", false},
		{"weds", "water will be off wednesday 16th", true},
		{"weds", "water will be off thursday 17th", false},
		{"the plumber", "the plumber on wednesday", false}, // no day
		{"sat 13th", "saturday the 13th", true},
		{"thursday slot", "so the new date is thursday 26 february", true}, // what is booked on the day
		{"friday one", "booked for friday 10 april", true},
		{"friday party", "booked for friday 10 april", false},
	} {
		if got := SameDay(tc.v, tc.text); got != tc.want {
			t.Errorf("SameDay(%q, %q) = %v, want %v", tc.v, tc.text, got, tc.want)
		}
	}
}
