package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/memory"
)

// A value stated anew in words no update pattern reads marks the older
// statement of the same thing: a person's sentence with a word of change,
// a value of a kind the older sentence states, two of its naming words.
func TestRestatedValueMarksTheOlderStatement(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, older, later string
		role               memory.Role
		want               bool
	}{
		{"a request to use a new address", "Ok. The pickup address is Biltstraat 87, 3572 AK Utrecht.",
			"Ah, I'm moving this Saturday, the 25th. Could you send it to my new address instead? Oudegracht 214-bis, 3511 NT Utrecht.", memory.RoleUser, true},
		{"a question about a new address", "Ok. The pickup address is Biltstraat 87, 3572 AK Utrecht.",
			"Could you send it to my new address instead? I'll give it to you tomorrow, we move on the 25th.", memory.RoleUser, false},
		{"a host without a digit, in a config file", "pipeline.yaml next to the script:\n\n```yaml\nsftp:\n  host: sftp.koszyk-partners.net\n  port: 22\n  user: koszyk_ro\n```",
			"Also the partner emailed, they moved to a new server. Host is sftp2.koszyk-partners.net and the port is 2222 now, same user.", memory.RoleUser, true},
		{"let's update is a change", "The delivery address is 3 Mill Lane, Hebden Bridge HX7 8AB.",
			"let's update the delivery address to 14 Broad Street, Ludlow SY8 1NG", memory.RoleUser, true},
		{"a program's update is no change", "MF-NB-A5-SAGE now shows 36 on both the till and the website, and MF-SH-BRASS shows 12 online. Till 2 synced.",
			"New problem. The barcode scanner on till 2 won't pair since yesterday's update. It's a Shelfwise ScanGo S2, serial SG2-448190.", memory.RoleUser, false},
		{"a day", "folic acid 5 mg on Thursdays. and amlodipine 5 mg every morning", "nurse says folic acid on Wednesdays now, so the middle of the week", memory.RoleUser, true},
		{"a time", "and rehearsal dinner is booked! fri 19th, 6:30 at Bridgewater Bistro, back room, up to 30 ppl",
			"bad news from the bistro, they double booked the early slot. they can only do 7:15 for the rehearsal dinner now, same back room. sorry guys", memory.RoleUser, true},
		{"a date and time", "booked the first blood test at the surgery, Tuesday 14 April at 9:10",
			"and the surgery rang, they had a cancellation so my blood test is moved to Friday 10 April at 8:40, earlier is better anyway", memory.RoleUser, true},
		{"a short turn read whole: the change in one sentence, the value in the next", "key safe code 4096, its by the side door",
			"Changed the key safe btw - the old code was written on a card in the hall which isn't ideal. new code: 7312", memory.RoleUser, true},
		{"a thing named with an 's", "glasgow airbnb booked: flat 2/1, 48 otago street, G12 8PQ. door code 4471, check in after 3",
			"airbnb host messaged, door code's been changed to 8830 (they redid the locks)", memory.RoleUser, true},
		{"a keypad's code", "The barrier code for the rear car park is 1966# and it changes every quarter, so please check your confirmation emails.",
			"heads up new barrier code from goalzone, someone tailgated so they changed it early. its 5521# now, the old one doesnt work", memory.RoleUser, true},
		{"an amount made another", "i thought a kitty, £5 each a week into a pot and whoever drives the friday extra takes it? or we keep it simple",
			"agreed, make it £7 a week each from november. same account", memory.RoleUser, true},
		{"a short turn naming the thing in another sentence", "Home carers: the agency is Brightwater Home Care, reablement for 6 weeks, free. They come twice a day, 08:00 and 19:00. Coordinator is Sue, 0113 496 0725.",
			"Update from Brightwater: Sue has left. The new coordinator is Joanne and the new number is 0113 496 0833.", memory.RoleUser, true},
		{"a few lines naming the thing in another line", "Saved:\n- Brightwater Home Care, reablement, 6 weeks, free\n- Visits 08:00 and 19:00\n- Coordinator Sue, 0113 496 0725",
			"Update from Brightwater: Sue has left. The new coordinator is Joanne and the new number is 0113 496 0833.", memory.RoleUser, true},
		{"an identifier of a thing named once", "The printer is the Kyocera TASKalfa in the corridor, IP 192.168.1.40, scan-to-email goes out via the Fasthosts mail server.",
			"Hang on, 192.168.1.40 doesn't load. BT came last week to swap the router and everything's on a new range now. The printer is 192.168.10.40 now, I found it on the printer's own screen.", memory.RoleUser, true},
		{"a new identifier said of its kind, its owner in the sentence before", "oh and meera, auntie kavita's number is 07700 914 552",
			"kavita says that's her old work phone and she barely checks it. new number is 07700 914 583", memory.RoleUser, true},
		{"a new IBAN", "My IBAN is NL20 INGB 0006 5432 10.",
			"Bank news: I moved my business account from ING to bunq over the weekend. New IBAN is NL57 BUNQ 2098 7654 32. The ING one closes at the end of the month.", memory.RoleUser, true},
		{"the new account named, not changed", "heads up that my bank is moving me to a new account, so from the December invoice please pay into sort code 04-00-04, account 71925536.",
			"Yes, 4 sessions at £40 = £160, invoice PN-2027-004. Into the new account please, the 04-00-04 one.", memory.RoleUser, false},
		{"an identifier's kind is not its thing", "Dale's number is 0113 496 0721 and the plumber is called Gary.",
			"Chloe has just texted that she's changed her mobile, her new number is 07412 558 903 and the old one stops working this week.", memory.RoleUser, false},
		{"a program's now", "Keep each result in the cache with its timestamp, and treat a cache entry older than 1800000 as expired.",
			"if (this.cache[key] && this.timestamp[key] > Date.now() - 3600000) { return this.cache[key]; }", memory.RoleUser, false},
		{"two short turns read whole share words by chance", "Ordered 100 from Kite, they fit the large mugs with a bit of tissue. Order number KP-550921, £84.99.",
			"Tamsin said yes to £13! But she's upped the order, they want 36 small mugs now, not 24. Same deadline.", memory.RoleUser, false},
		{"a word of change names nothing changed", "physio just rang, they had a cancellation so they've moved me to this Thursday at 8am instead",
			"email from the organisers, they've moved the orange wave to 9:20, some road closure thing", memory.RoleUser, false},
		{"the old value named beside the new", "62€ for members incl. dorm bed, non members more like 80",
			"yeah the 2026 prices are out, it's 68€ now for members at all four huts. the 62 was last year's list", memory.RoleUser, true},
		{"the old value named as going", "the bike cellar is 2719, then push hard, the door sticks",
			"heads up, the bike cellar code changed. it's 5083 now, the old 2719 doesn't work anymore", memory.RoleUser, true},
		{"the old value named as going, no word in common", "Hi all, Tom here. And my number is 07911 233140 if anyone ever needs a lift for their kid",
			"btw got a new phone, different network. new number is 07911 402557, the 233140 one won't work after friday", memory.RoleUser, true},
		{"a going clause holding the new value too", "If you need me urgently during the day call me on 07700 900 117, I don't check whatsapp at work",
			"lost my phone at the weekend. new number is 07700 900 418, the old one is dead", memory.RoleUser, false},
		{"the old value named as staying", "the bike cellar is 2719, then push hard, the door sticks",
			"heads up, the front door code changed to 5083 now, the bike cellar stays 2719", memory.RoleUser, false},
		{"a number named that is no value of the kind", "shortlist: 2016 Toyota Yaris hybrid, 118k km, €9,950, Swords",
			"he mentioned Toyota's extended warranty now, 3 years for about €600. worth it for a 2016 car?", memory.RoleUser, false},
		{"another thing", "my dentist is on Thursday at 9:10", "nurse says folic acid on Wednesdays now, so the middle of the week", memory.RoleUser, false},
		{"the same value", "folic acid 5 mg on Wednesdays", "nurse says folic acid on Wednesdays now, so the middle of the week", memory.RoleUser, false},
		{"no value of its kind", "folic acid makes me feel sick", "nurse says folic acid on Wednesdays now, so the middle of the week", memory.RoleUser, false},
		{"a list restating the older value beside others", "nurse says folic acid on Wednesdays now, so the middle of the week",
			"ok so now the reminders: methotrexate Saturday 8pm, folic acid Wednesday 8pm", memory.RoleUser, false},
		{"a question", "folic acid 5 mg on Thursdays", "should folic acid go on Wednesdays now?", memory.RoleUser, false},
		{"weighing, not changing", "the budget for the pilot is $5,000", "I'm not sure the pilot budget of $6,000 is enough for now", memory.RoleUser, false},
		{"the assistant's confirmation of a change", "Flat A is the ground floor, tenant Chloe Barnes (07958 210 447)",
			"Updated: Chloe Barnes (Flat A) is now on 07412 558 903. I'll use that number from now on.", memory.RoleAssistant, true},
		{"the assistant's advice", "folic acid 5 mg on Thursdays", "Folic acid on Wednesdays now would keep it apart from the methotrexate.", memory.RoleAssistant, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs := []memory.Message{
				{Seq: 1, Role: memory.RoleUser, Content: tc.older, CreatedAt: at},
				{Seq: 2, Role: tc.role, Content: tc.later, CreatedAt: at.Add(time.Hour)},
			}
			if mark := markedAfter(msgs, 1); (mark != "") != tc.want {
				t.Errorf("marked %q, want marked = %v", mark, tc.want)
			}
		})
	}
}

// FuzzTurnValueFields: the fields a restatement keeps of its turn answer
// namesOld's question, whether the turn names a value token, as the whole
// turn does.
func FuzzTurnValueFields(f *testing.F) {
	f.Add("booked! sat 29th at 10:30, booking ref NH-20931. paid £100 deposit, rest (£320) cash on the day", "rest £320 on sat 29th, ref nh-20931")
	f.Add("The printer is 192.168.10.40 now (was 192.168.1.40); mail ops@kestrel.io, #ops", "IP 192.168.1.40, ops@kestrel.io")
	f.Add("we train wednesdays from now on, 17:30–19:00, weds/thurs", "tuesdays 17:00–18:30, Weds")
	f.Add("x-sat and 2nd-floor, mon.", "sat 2nd mon")
	f.Add("rest\u00a0320 on\u2003the 5th", "320 5th")
	f.Fuzz(func(t *testing.T, turn, other string) {
		low := strings.ToLower(turn)
		kept := turnValueFields(low)
		for _, v := range valueTokens(strings.ToLower(other)) {
			n := strings.Trim(v, "$€£%")
			if n == "" {
				continue
			}
			if got, want := lex.HasPhrase(kept, n), lex.HasPhrase(low, n); got != want {
				t.Fatalf("%q in %q: the kept fields %q say %v, the turn %v", n, low, kept, got, want)
			}
		}
	})
}

// retired reads the clause holding the value itself, not a longer number
// holding its digits ("2345" inside "12345").
func TestRetiredReadsTheValuesOwnClause(t *testing.T) {
	for _, tc := range []struct {
		low, v string
		want   bool
	}{
		{"door is 12345 now, the 2345 one is dead", "2345", true},
		{"door 12345 is dead. the 2345 one still works", "2345", false},
		{"new number is 07911 402557, the 233140 one won't work after friday", "233140", true},
	} {
		if got := retired(tc.low, tc.v); got != tc.want {
			t.Errorf("retired(%q, %q) = %v, want %v", tc.low, tc.v, got, tc.want)
		}
	}
}
