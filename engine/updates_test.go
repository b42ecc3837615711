package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/derive/facts"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// Current values: a retrieved turn that a later turn updated carries a
// mark quoting the update; one that no later turn changed carries none.
func TestRetrievedTurnMarkedUpdated(t *testing.T) {
	msgs := []InMessage{
		{ID: "a", Role: "user", Content: "We live in Berlin, near the Tiergarten."},
		{ID: "b", Role: "user", Content: "CI runs Postgres 13 on CircleCI."},
		{ID: "c", Role: "user", Content: "The step size h is 0.5 for the solver."},
		{ID: "d", Role: "user", Content: "I'm vegetarian."},
		{ID: "e", Role: "user", Content: "My phone number is 0151 2345678, text me there."},
		{ID: "h", Role: "user", Content: "We booked room 240 for the workshop."},
	}
	msgs = append(msgs, filler("f", "filler turn %d about the weather and trains", 40)...)
	msgs = append(msgs,
		InMessage{ID: "u1", Role: "user", Content: "Big news: I moved from Berlin to Munich last week."},
		InMessage{ID: "u2", Role: "user", Content: "Actually it's Postgres 15, not 13."},
		InMessage{ID: "u3", Role: "user", Content: "We changed the step size h to 0.25."},
		InMessage{ID: "u4", Role: "user", Content: "My phone number changed to 0176 5551234."},
		InMessage{ID: "u5", Role: "user", Content: "wait no, it's room 204 not 240"})
	msgs = append(msgs, filler("g", "more filler %d", 60)...)
	res := contextOver(t, msgs, 6, "where do I live now", 420) // the chat does not fit: the turns come back retrieved
	for _, want := range []string{
		"user: We live in Berlin, near the Tiergarten.\n(earlier; updated ",
		"turn 47: Big news: I moved from Berlin to Munich last week.)",
		"user: CI runs Postgres 13 on CircleCI.\n(earlier; updated ",
		"turn 48: Actually it's Postgres 15, not 13.)",
		"user: The step size h is 0.5 for the solver.\n(earlier; updated ",
		"user: My phone number is 0151 2345678, text me there.\n(earlier; updated ",
		"turn 50: My phone number changed to 0176 5551234.)",
		"user: We booked room 240 for the workshop.\n(earlier; updated ",
		"turn 51: wait no, it's room 204 not 240)",
	} {
		if !strings.Contains(res.Context, want) {
			t.Errorf("context lacks %q:\n%s", want, res.Context)
		}
	}
	if strings.Contains(res.Context, "I'm vegetarian.\n(earlier") {
		t.Errorf("a turn no update changed is marked:\n%s", res.Context)
	}
}

func TestUpdateValueWords(t *testing.T) {
	for _, tc := range []struct {
		phrase string
		want   string
	}{
		{"pgbouncer in ci after", "[pgbouncer]"},
		{"dairy anymore actually", "[dairy]"},
		{"berlin", "[berlin]"},
		{"postgres 13", "[postgres 13]"},
		{"the", "[]"},
	} {
		if got := fmt.Sprint(valueWords(tc.phrase)); got != tc.want {
			t.Errorf("valueWords(%q) = %s, want %s", tc.phrase, got, tc.want)
		}
	}
}

func TestUpdatesMatch(t *testing.T) {
	pg := facts.Update{Old: []string{"13"}, New: []string{"postgres 15"}}
	step := facts.Update{Subject: []string{"step size h"}, New: []string{"0.25"}}
	image := facts.Update{Subject: []string{"image"}, New: []string{"cimg/postgres:15.6"}}
	move := facts.Update{Old: []string{"berlin"}, New: []string{"munich"}}
	dinner := facts.Update{Subject: []string{"dinner"}, New: []string{"8"}}
	for _, tc := range []struct {
		name string
		u    facts.Update
		text string
		want bool
	}{
		{"old number with what it numbers", pg, "ci runs postgres 13 on circleci.", true},
		{"old number alone", pg, "i ran 13 tests and all passed.", false},
		{"subject with an old value", step, "the step size h is 0.5 for the solver.", true},
		{"subject with the new value", step, "the step size h is 0.25 now.", false},
		{"subject, no number: asks, states nothing", step, "which step size h should we use for the solver?", false},
		{"subject with a word value, no number needed", facts.Update{Subject: []string{"meeting room"}, New: []string{"the attic"}}, "the meeting room is the library.", true},
		{"one subject word is a topic", image, "it's python:3.11-slim, our primary image.", false},
		{"a time moved: another time said", dinner, "booked taberna do largo for thursday, dinner at 19:30, table for 4.", true},
		{"a time moved: no time said", dinner, "group dinner booked in the evening (tomás is sorting the restaurant).", false},
		{"an amount moved: another amount of its unit said", facts.Update{Subject: []string{"timeout"}, New: []string{"30s"}}, "our httpx timeout for the ledger call is set to 10s too.", true},
		{"an amount moved: no amount said", facts.Update{Subject: []string{"timeout"}, New: []string{"30s"}}, "we hit a timeout in staging.", false},
		{"old place", move, "we live in berlin, near the tiergarten.", true},
		{"old place inside a word", move, "the berliner was good.", false},
	} {
		if got := updates(tc.u, tc.text); got != tc.want {
			t.Errorf("%s: updates = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Updates said as people say them mark the older turn that said the
// old value, and only that one: detected from the updating turn's text,
// matched against the older turn's.
func TestDetectedUpdateMarks(t *testing.T) {
	for _, tc := range []struct {
		update, older string
		want          bool
	}{
		{"first thing, she weighed her and she's actually 24.5kg not 22, so the scales are off", "rescue says she's 22kg and eats Harrington's grain free", true},
		{"first thing, she weighed her and she's actually 24.5kg not 22, so the scales are off", "she is 2 years old and 22 inches tall", false},
		{"sorry typo, it's £40 not 35", "tickets are £35 each incl 3 courses", true},
		{"Heat loss comes out at 5.9 kW, not the 6.8 Peak Heat said.", "Peak Heat's surveyor said my heat loss is 6.8 kW at −3 °C outside.", true},
		{"New clients and all new invoices: 14 days, not 30.", "Payment due within 30 days, bank transfer please", true},
		{"New clients and all new invoices: 14 days, not 30.", "Losing four days on 9,600 words is significant, so 30 % would be reasonable", false},
		{"crumbs & co rang. they're shut on the friday now for a staff thing, so collection moved to saturday 12th, 9am-11am", "lemon it is. ordered, order number CC-55102, collection friday 11th after 3pm, £64", true},
		{"release pushed back to thu 11 feb, we need the time", "release is planned for tuesday 2 feb", true},
		{"release pushed back to thu 11 feb, we need the time", "release notes are in the shared doc", false},
		{"good news, extension approved. new deadline mon 22 march 12 noon", "deadlines: lab report due thurs 18 march 12 noon on minerva", true},
		{"walker news: we're not using Kasia after all, she no-showed twice", "found a walker! Kasia from Happy Tails, £12 a walk", true},
		{"hmm she won't touch the harrington's anymore", "rescue says she's 22kg and eats Harrington's grain free", true},
		{"landlord's fixed the latch, it's a self-closing one now", "the back gate has a broken latch so she can't go out alone", true},
		{"landlord's fixed the latch, it's a self-closing one now", "the latch is on the left of the gate", false},
		{"Cobbs Farm have lost a driver so no more Saturday drops, eggs are coming Fridays now. Same price", "Eggs from Cobbs Farm, 30 dozen a week at £3.10 a dozen, delivered Saturdays.", true},
		{"Cobbs Farm have lost a driver so no more Saturday drops, eggs are coming Fridays now. Same price", "Eggs from Cobbs Farm, 30 dozen a week at £3.10 a dozen.", false},
		{"Velocity extended the kit deadline to Friday 28 August, so anyone dithering still has time",
			"Kit! Velocity Kit Co are doing the new club jersey. £54 for the jersey. Order deadline Friday 21 August. Sizes come up small.", true},
		{"Velocity extended the kit deadline to Friday 28 August, so anyone dithering still has time",
			"Grant deadline Friday 21 August, the form is online", false},
		{"they just emailed, our 9:05 is cancelled. moved us to the 18:05 on 10 may", "Venice: Frecciarossa 9:05 Milano Centrale, coach 6", true},
		{"Mr Dale can't do it after all, the agency says it's Ms Patel now.", "The agency is sending Mr Dale for Thursday and Friday", true},
		{"PROBLEM. hotel rang, double booking on the 15th. they moved us to saturday 22nd nov, same room same price", "saturday 15th nov it is. venue ideas?", true},
		{"PROBLEM. hotel rang, double booking on the 15th. they moved us to saturday 22nd nov, same room same price", "the cake is ordered for the 3rd", false},
		{"the committee can't do 4 June anymore. They moved it to 10 June, same room. Deadline stays at 22 May.", "Review meeting 4 June, 13:15, room 2:114", true},
		// The move's quote runs from the sentence naming the old day, so
		// the older turn's day is matched with what it was said of.
		{"bad news. il glicine called, they double-booked the terrace with a wedding on the 12th. they moved us to sunday 13 sept, same time, 12:30", "called il glicine. they can do sat 12 sept lunch, 12:30 start, on the garden terrace", true},
		{"bad news. il glicine called, they double-booked the terrace with a wedding on the 12th. they moved us to sunday 13 sept, same time, 12:30", "their actual anniversary is 12 september, that's a saturday this year", false},
		{"rosie's bakes called, they can't do the friday pickup anymore. they moved it to saturday the 12th at 10am", "cake sorted! order number RB-2290. pickup friday 11th at 4pm", true},
		{"rosie's bakes called, they can't do the friday pickup anymore. they moved it to saturday the 12th at 10am", "friday 11th: the band arrives at 6", false},

		{"the committee can't do 4 June anymore. They moved it to 10 June, same room. Deadline stays at 22 May.", "New deadline for the draft: 22 May", false},

		{"we've been bumped up to 50 mins, and fee went up to £320 since we're doing more", "fee is £240 for the night, split four ways", true},
		{"They've halved the apixaban to 2.5mg because of her kidney function.", "discharge meds: apixaban 5mg at 8am and 8pm, bisoprolol 2.5mg mornings", true},
		{"heads up the league fee went up so subs are £7 a game from now on, sorry lads.", "reminder subs are £6 each a game, pay on the night", true},
		{"Hartley Mills email. T55 going up to £19.10 a sack from 1 March.", "flour: Hartley Mills T55, 16kg sack £17.60, 12 sacks a fortnight", true},
		{"bad news. gary just texted, dale cant do tuesday so its thurs 16th now, same 8-12", "ok gary says his repair guy (Dale, DK Appliance Repairs) can come tues 14th between 8 and 12", true},
		{"bad news. gary just texted, dale cant do tuesday so its thurs 16th now, same 8-12", "gary says the washer is a Beko from 2019", false},
		// The thing named in another form: "the launch" is what "the shop
		// launches" said; another thing on that day is not.
		{"I'm pushing the launch a week to Saturday 21 November, same time.", "Dates: the shop launches Saturday 14 November at 10:00, and the newsletter goes out the same morning.", true},
		{"I'm pushing the launch a week to Saturday 21 November, same time.", "The market is Saturday 14 November, stall B14.", false},
		// A price is no time, whatever unit it is by; a rate of a thing
		// named in two words is said of the thing at the same rate.
		{"Heads up!! Hampton emailed, they upped the block rate to $149/night for everyone, the 139 is gone.", "Hampton Inn Westbrook has a block for us, code LIGHT26, $139/night incl breakfast. Book by May 1", true},
		{"And since I'm updating everything, bump the mugs to £24 from Friday.", "Stock update: I sold 15 of the speckled mugs at the Hackney Downs market on Saturday, plus 2 bud vases.", false},
		{"Also the speckled buff has gone up to £17.20 a bag.", "The speckled stoneware mugs are finally here, £28 each, from a buff clay flecked with iron.", false},
		// A host or an email names itself, wherever it is written.
		{"it turns out the printer had 192.168.178.50 set statically. I'm moving the Pi to 192.168.178.60 instead.", "Pi-hole is up, dashboard works at http://192.168.178.50:8081/admin.", true},
		{"it turns out the printer had 192.168.178.50 set statically. I'm moving the Pi to 192.168.178.60 instead.", "the router is 192.168.178.1", false},
		{"Then update the server address in Drive Client on every computer from 192.168.1.40 to 192.168.1.50.", "Found it, it's on 192.168.1.40. The setup wizard is running now.", true},
		{"Also please note my mobile changed, scratch the 07700 900481, use 07700 900736 from now on", "My mobile is 07700 900481.", true},
		{"actually it's Postgres 15, not 13", "we have 13 services in CI", false}, // a short number alone names nothing
		// A numbered thing chosen anew: the same thing under another
		// number is the old choice; a list naming the new one too is not.
		{"Actually make it Fibre 300 instead. Dev pointed out we never use more than about 200 anyway.", "Let's do Fibre 500.", true},
		{"Actually make it Fibre 300 instead. Dev pointed out we never use more than about 200 anyway.", "Fibre 300: £38 a month, Fibre 500: £45 a month", false},
		{"ok use python 3.11 instead please", "CI runs python 3.12 on ubuntu", true},
		{"ok use python 3.11 instead please", "we pinned python 3.11 last week", false},
		// A thing introduced, its time in the next sentence.
		{"Moved for you, the engineer is now Thursday 26 March, 1pm–6pm instead of the Tuesday.", "Canal Wharf needs a new line activated, so an engineer has to visit. The earliest slot is Tuesday 24 March, 8am–1pm. Your order is MOV-339201.", true},
		{"Moved for you, the engineer is now Thursday 26 March, 1pm–6pm instead of the Tuesday.", "an engineer has to visit. Your bill is due on Tuesday 24 March.", false},
		// A grade set anew: the same letters with another number.
		{"downgrading to SEV2, error rate flat for 30 min. handing IC to Ravi", "bumping severity to SEV1, checkout is basically down for EU", true},
		{"downgrading to SEV2, error rate flat for 30 min. handing IC to Ravi", "the SEV2 runbook is in notion", false},
		{"I'm escalating to second line and raising it to P2 because of the month end close.", "I've logged it as INC-0048812, priority P3.", true},
		// Who was booked withdrew.
		{"Not great news I'm afraid: The Velvet Hours have double-booked the 19th (their agent's mistake) and have cancelled on us.", "The Velvet Hours are booked for the 19th, £600 deposit paid", true},
		{"bad news, Spice Route have pulled out, they're short staffed", "i've asked Spice Route on Market St for a quote", true},
		{"bad news, Spice Route have pulled out, they're short staffed", "the route to the venue is via Market St", false},
		{"downgrading to SEV2, all quiet", "sev-1 declared at 02:10, checkout down", true},
		{"I'm raising it to P2 because of the month end close.", "take the p45 form to HR", false},
		// A plan called off is on again; a drug stopped is taken again.
		{"UPDATE forecast changed, wind dropping by sat. rang them and kayaking is back on!!", "kayak company emailed 😭 forecast says 40mph gusts saturday, they've cancelled the 9:30 trip. refund coming to my card", true},
		{"ok good news, the migration is back on for saturday", "ok cancel the file migration, we run out of time", true},
		{"ok good news, the migration is back on for saturday", "the migration took 40 minutes on staging", false},
		{"she's back on apixaban but 2.5mg twice a day", "they've stopped her apixaban because of the surgery", true},
		{"she's back on apixaban but 2.5mg twice a day", "apixaban 5mg at 8am and 8pm", false},
		// An amount set, the verb before its thing.
		{"On the positive side finance agreed to stretch the budget to $48,000 a year given the extra seats.", "Roughly 25 seats. Budget tops out at $40,000 a year.", true},
		// A thing's number corrected without a verb.
		{"deposit £200 not £150 – misread the email before coffee", "paid the deposit, £150, ref BFB-30417", true},
		{"deposit £200 not £150 – misread the email before coffee", "the train is £150 return", false},
		{"ok room 204 not 240 then, I want the balcony", "room 240 is the quiet one, room 204 has the balcony", false}, // both named: a choice
		// A thing dropped, on again.
		{"Done: repairer switched to Kennet Bodyworks and courtesy car reinstated.", "Oh. In that case forget the courtesy car, I'll borrow my sister's car.", true},
		{"Done: repairer switched to Kennet Bodyworks and courtesy car reinstated.", "The courtesy car is a Fiesta or similar.", false},
		// An amount moving, said of its thing.
		{"letter from the landlord 😩 rent's going up to £1,010 from 1 December", "fixed costs: rent £950, council tax £128, phone £12", true},
		{"letter from the landlord 😩 rent's going up to £1,010 from 1 December", "paid the £950 deposit today", false},
		{"the rent is now £1,010 a month", "fixed costs: rent £950, council tax £128", true},
		{"Westcombe have written to say butter goes up to £6.95/kg from March.", "Butter is Westcombe Dairy, £6.40/kg, 25kg a week.", true},
		{"Westcombe have written to say butter goes up to £6.95/kg from March.", "That's £160 a week on butter and £93 on eggs.", false}, // money per kilo is no money a week
		{"your balance is now £89.37 in credit.", "so your balance is now £83.02 in credit", true},
		// A day written otherwise: its date (and month), else its weekday,
		// said of the same thing.
		{"ugh. farm just rang, they've got a wedding in the big barn that weekend 🙄 scrap the 13th, they can only do the 20th.", "I've pencilled in Cotswold Farm Park for Saturday 13 June, they do a group rate", true},
		{"ugh. farm just rang, they've got a wedding in the big barn that weekend 🙄 scrap the 13th, they can only do the 20th.", "my dentist is on 13 June", false}, // another thing's day
		{"Also heads up the water's going off Thursday 17th now, not weds.", "Water will be off Wednesday 16th from 9 till about 3. Thursday 17th: build the false wall.", true},
		{"Also heads up the water's going off Thursday 17th now, not weds.", "bin day is wednesday", false},
		// A thing moved, said as a plan; a time of day by its name.
		{"ok new plan, moving methotrexate to saturdays so the bad day is sunday not a work day.", "methotrexate 15 mg once a week, on Mondays.", true},
		{"ok new plan, moving methotrexate to saturdays so the bad day is sunday not a work day.", "methotrexate makes me tired", false},
		{"went to the GP about my ankles. she's switched the amlodipine to night time, same 5 mg", "and amlodipine 5 mg every morning for my blood pressure", true},
		// A code changed, the thing's name beside the word "code".
		{"FYI there was a break-in at the garage two doors down, so I changed our garage code to 2580.", "garage keypad is 1937", true},
		{"FYI there was a break-in at the garage two doors down, so I changed our garage code to 2580.", "the garage is full of bikes", false},
		// A time moved, the thing named by two words said in one sentence.
		{"Also heads up the city moved our trash pickup to Thursdays starting June 18", "Oh and trash + recycling go out tuesday night, pickup is early wed.", true},
		{"Also heads up the city moved our trash pickup to Thursdays starting June 18", "the trash bags are under the sink. pickup the keys tuesday", false},
		// An ordinal counting a thing is no day.
		{"Brookes rang. They double-booked the 3rd so they've moved us to Thursday the 5th, 8am start. Same crew, same price", "Brookes & Sons quoted £780 for a 2-man team, move date Tuesday 3rd March", true},
		{"Brookes rang. They double-booked the 3rd so they've moved us to Thursday the 5th, 8am start. Same crew, same price", "the wardrobe won't fit in the lift so Brookes need a 3rd man to carry it up the stairs", false},
		// A secret given anew: its value is words of no kind, and the old
		// one stops working; a question about it, or another thing's
		// value, is not it.
		{"ugh sorry, they changed it after the half term, the new password is yellow kite.", "the school pickup password for this term is blue heron", true},
		{"the wifi password is now sunflower22", "wifi password: bluebird7, the router is under the stairs", true},
		{"ugh sorry, they changed it after the half term, the new password is yellow kite.", "what's the pickup password again?", false},
		{"ugh sorry, they changed it after the half term, the new password is yellow kite.", "the new term starts on monday, the gate is open from 8", false},
		{"ugh sorry, they changed it after the half term, the new password is yellow kite.", "i forgot my password for the school app so i reset it", false},
		// Someone new in a role, said without "the".
		{"fyi janine's moved to another branch. new coordinator at brightwater is Mark, direct line 0118 496 0799", "from Brightwater Care. coordinator is janine, 0118 496 0732", true},
	} {
		u, ok := facts.DetectUpdate(tc.update)
		if !ok {
			t.Errorf("%q: no update detected", tc.update)
			continue
		}
		if got := updates(u, strings.ToLower(tc.older)); got != tc.want {
			t.Errorf("%q marks %q = %v, want %v (update %+v)", tc.update, tc.older, got, tc.want, u)
		}
	}
}

// An update of a bare number whose sentence names nothing ("so it's 3.5.1
// not 3.4") names it by the word the turn writes its new value after
// ("built on spark 3.5.1"): "spark 3.4" is marked, another 3.4 is not.
func TestUpdateNamesItsBareNumber(t *testing.T) {
	update := "oh wait, the sparkVersion field says 3.4.1 but the image is actually built on spark 3.5.1, we bumped it in feb and nobody updated the field. so it's 3.5.1 not 3.4"
	for _, tc := range []struct {
		older string
		want  bool
	}{
		{"spark-operator, spark 3.4, image registry.halden.io/etl/orders-etl:2.14.3, namespace data-pipelines", true},
		{"the nodes have 3.4 GB free after the daemonsets", false},
		{"helm chart 3.4 is what we pinned", false},
	} {
		ups := readUpdate(memory.Message{Seq: 10, Role: "user", Content: update}, nil)
		r := RAGTurn{Seq: 3, Content: tc.older}
		markUpdate(ups, &r)
		if got := strings.Contains(r.update, "3.5.1 not 3.4"); got != tc.want {
			t.Errorf("%q marked = %v (%q), want %v", tc.older, got, r.update, tc.want)
		}
	}
}

// A mark quotes a short updating turn whole (the new value may be in the
// sentence after the update's), a long one by its update sentence with
// elision marks where the turn goes on, on one line either way.
func TestUpdateQuote(t *testing.T) {
	long := strings.Repeat("Some context about the trip that goes on for a while. ", 5)
	for _, c := range []struct{ name, content, want string }{
		{"short turn whole", "and ok no gin, we get her herbs then. basil n mint?", "and ok no gin, we get her herbs then. basil n mint?"},
		{"one line", "Actually it's Postgres 15, not 13.\n\n```\nimage: cimg/postgres:15.6\n```", "Actually it's Postgres 15, not 13. ``` image: cimg/postgres:15.6 ```"},
		{"long, sentence in the middle", long + "We moved the launch to 12 May instead. " + long, "[…] We moved the launch to 12 May instead. […]"},
		{"long, sentence first", "We moved the launch to 12 May instead. " + long, "We moved the launch to 12 May instead. […]"},
		{"long, sentence last", long + "We moved the launch to 12 May instead.", "[…] We moved the launch to 12 May instead."},
	} {
		t.Run(c.name, func(t *testing.T) {
			u, ok := facts.DetectUpdate(c.content)
			if !ok {
				t.Fatalf("no update detected in %q", c.content)
			}
			if got := updateQuote(c.content, u.Sentence); got != c.want {
				t.Errorf("updateQuote = %q, want %q (sentence %q)", got, c.want, u.Sentence)
			}
		})
	}
}

// A turn that changed a choice and names what it rejected ("Harlow
// wouldn't commit … going with Keystone after all") marks an older turn
// naming the rejected one, quoting both sentences; a turn naming only the
// new choice is not marked.
func TestRetrievedTurnMarkedReplaced(t *testing.T) {
	msgs := []InMessage{
		{ID: "a", Role: "user", Content: "thats really helpful. I think we go with Harlow, the cheapest and earliest."},
		{ID: "b", Role: "user", Content: "Keystone Renovations quoted £11,400 with a 5 yr warranty."},
	}
	msgs = append(msgs, filler("f", "filler turn %d about the weather and trains", 40)...)
	msgs = append(msgs, InMessage{ID: "u", Role: "user", Content: "ok change of heart. we're going with the second quote after all, Keystone. " +
		"Harlow wouldn't commit to the 2yr warranty in writing and the guy got shirty when I asked. plus my wife really wants the underfloor heating. " +
		"Keystone can start 12 Oct like they said, 10 working days so done by 23 Oct"})
	msgs = append(msgs, filler("g", "more filler %d", 60)...)
	res := contextOver(t, msgs, 2, "which builder did we pick", 300)
	want := "I think we go with Harlow, the cheapest and earliest.\n(earlier; updated "
	quote := "turn 43: […] we're going with the second quote after all, Keystone. Harlow wouldn't commit to the 2yr warranty in writing and the guy got shirty when I asked. […])"
	for _, w := range []string{want, quote} {
		if !strings.Contains(res.Context, w) {
			t.Errorf("context lacks %q:\n%s", w, res.Context)
		}
	}
	if strings.Contains(res.Context, "5 yr warranty.\n(earlier") {
		t.Errorf("the turn naming the new choice is marked:\n%s", res.Context)
	}
}

// A turn stating two values that two later turns changed carries both
// marks, in the chat's order.
func TestRetrievedTurnMarkedTwice(t *testing.T) {
	msgs := []InMessage{{ID: "a", Role: "user", Content: "We live in Berlin, and CI runs Postgres 13 on CircleCI."}}
	msgs = append(msgs, filler("f", "filler turn %d about the weather and trains", 30)...)
	msgs = append(msgs,
		InMessage{ID: "u1", Role: "user", Content: "Big news: I moved from Berlin to Munich last week."},
		InMessage{ID: "u2", Role: "user", Content: "Actually it's Postgres 15, not 13."})
	msgs = append(msgs, filler("g", "more filler %d", 60)...)
	res := contextOver(t, msgs, 1, "where do I live and which postgres", 300)
	want := "user: We live in Berlin, and CI runs Postgres 13 on CircleCI.\n(earlier; updated "
	first, second := "turn 32: Big news: I moved from Berlin to Munich last week.)\n(earlier; updated ", "turn 33: Actually it's Postgres 15, not 13.)"
	for _, w := range []string{want, first, second} {
		if !strings.Contains(res.Context, w) {
			t.Errorf("context lacks %q:\n%s", w, res.Context)
		}
	}
}

// filler is n turns of chatter, user and assistant in turn, with ids
// prefix0, prefix1, … and content format (one %d, the turn's index).
func filler(prefix, format string, n int) []InMessage {
	out := make([]InMessage, n)
	for i := range out {
		out[i] = InMessage{ID: fmt.Sprint(prefix, i), Role: []string{"user", "assistant"}[i%2], Content: fmt.Sprintf(format, i)}
	}
	return out
}

// contextOver stores msgs as chat "c" and answers query at budget tokens
// with the first hits turns as what retrieval found (scores falling in
// order), so the marks under them are the update cache's.
func contextOver(t *testing.T, msgs []InMessage, hits int, query string, budget int) *ContextResult {
	t.Helper()
	ctx := context.Background()
	s := newTestService(t)
	if _, err := s.Append(ctx, "default", "c", AppendInput{UserID: "u", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	var turns []rag.Turn
	for i := range hits {
		turns = append(turns, rag.Turn{ChatID: "c", Seq: int64(i + 1), Role: "user", Content: msgs[i].Content, Score: 1 - float32(i)/10})
	}
	s.vec.retriever = &fakeRetriever{turns: turns}
	res, err := s.Context(ctx, "default", ContextInput{ChatID: "c", Query: query, BudgetTokens: &budget, Strategy: string(StrategyRAG)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A change gone back on ("we've gone back to her old name") is under the
// turn that made it and under the older turn that change marked: either
// alone reads the undone change as current.
func TestRetrievedTurnMarkedReversed(t *testing.T) {
	msgs := []InMessage{
		{ID: "a", Role: "user", Content: "The rescue matched us with a lurcher girl called Maple, pick up is sat 6 march."},
		{ID: "b", Role: "user", Content: "we've decided on a new name. Maple doesn't feel like her, she's Juniper now, June for short"},
	}
	msgs = append(msgs, filler("f", "filler turn %d about the weather and trains", 30)...)
	msgs = append(msgs, InMessage{ID: "r", Role: "user", Content: "ok this is embarrassing but we've gone back to her old name. nobody ever said June and she only answers to Maple"})
	msgs = append(msgs, filler("g", "more filler %d", 12)...)
	res := contextOver(t, msgs, 2, "what is the dog called", 300)
	back := "(earlier; updated "
	for _, w := range []string{
		"called Maple, pick up is sat 6 march.\n" + back,                        // the older turn: the change, then its reversal
		"turn 2: we've decided on a new name.",                                  // the change
		"turn 33: ok this is embarrassing but we've gone back to her old name.", // the reversal
		"June for short\n" + back,                                               // under the change itself
	} {
		if !strings.Contains(res.Context, w) {
			t.Errorf("context lacks %q:\n%s", w, res.Context)
		}
	}
	if n := strings.Count(res.Context, "turn 33: ok this is embarrassing"); n != 2 {
		t.Errorf("the reversal is under %d turns, want 2:\n%s", n, res.Context)
	}
	if testing.Verbose() {
		t.Log(res.Context)
	}
}

// An episode's summary says what its turns said: a later change to it is
// marked under the episode's line as under a turn, and a change inside
// the episode's own turns is not.
func TestRetrievedEpisodeMarked(t *testing.T) {
	var ups []chatUpdate
	for _, m := range []memory.Message{
		{Seq: 5, Role: "user", Content: "ok we go with Oakline then"},
		{Seq: 15, Role: "user", Content: "ok change of heart on the fitter. Oakline wouldn't put the start date in writing. we're going with Brightwood after all"},
	} {
		ups = append(ups, readUpdate(m, ups)...)
	}
	ep := func(to int64) RAGTurn {
		return RAGTurn{Seq: 1, Content: `Tunde said: "Oakline Kitchens £14,200, 3 weeks, start 6 April."`, Episode: &EpisodeRef{FromSeq: 1, ToSeq: to}}
	}
	markedBeforeOnly(t, ups, ep(6), ep(20), "turn 15: ok change of heart", "start 6 April.\"\n(earlier; updated")
}

// markedBeforeOnly: derived line before, made from turns older than the
// update, is marked by it, with the mark quoting want under its line
// (under); after, which holds the update's turn, is not marked.
func markedBeforeOnly(t *testing.T, ups []chatUpdate, before, after RAGTurn, want, under string) {
	t.Helper()
	markUpdate(ups, &before)
	markUpdate(ups, &after)
	if !strings.Contains(before.update, want) {
		t.Errorf("%q not marked with %q: %q", before.Content, want, before.update)
	}
	if after.update != "" {
		t.Errorf("%q, not older than the update, marked: %q", after.Content, after.update)
	}
	if line := renderRAGItem(before); !strings.Contains(line, under) {
		t.Errorf("the mark is not under the line:\n%s", line)
	}
}

// "back to the original" names nothing it goes back to: it undoes the
// newest change, and is marked under the turn that made it and the turn
// that change marked.
func TestReversalOfTheNewestChange(t *testing.T) {
	var ups []chatUpdate
	msgs := []memory.Message{
		{Seq: 3, Role: "user", Content: "booked dinner at Luca's for saturday 7pm, table for 6"},
		{Seq: 9, Role: "user", Content: "luca's had a double booking so we moved dinner to sunday 7pm"},
		{Seq: 14, Role: "user", Content: "luca's again lol. they sorted it, so back to the original, saturday"},
	}
	for _, m := range msgs {
		ups = append(ups, readUpdate(m, ups)...)
	}
	for _, m := range msgs[:2] {
		r := RAGTurn{Seq: m.Seq, Content: m.Content}
		markUpdate(ups, &r)
		if !strings.Contains(r.update, "turn 14: luca's again lol. they sorted it, so back to the original, saturday") {
			t.Errorf("turn %d lacks the reversal: %q", m.Seq, r.update)
		}
	}
}

// A long message carrying several changes marks each older turn with the
// sentence that changed it, not only its first change.
func TestLongMessageOfSeveralUpdates(t *testing.T) {
	var ups []chatUpdate
	msgs := []memory.Message{
		{Seq: 2, Role: "user", Content: "Entry £36 each with the club discount code RIDGE15, it's £45 without."},
		{Seq: 5, Role: "user", Content: "Plan is we all meet at the club hut at 06:15 and ride over to HQ together."},
		{Seq: 20, Role: "user", Content: "Big update, sorry it's long. Velocity extended the kit deadline to Friday 28 August, so anyone dithering still has time. " +
			"Priyanka rang the café and they can take us at 10:15. The organisers sent a new entry code, the new code is WHEELS20. " +
			"And because of the road closures we meet at the hut at 06:00 now, not 06:15."},
	}
	for _, m := range msgs {
		ups = append(ups, readUpdate(m, ups)...)
	}
	for _, c := range []struct {
		i    int
		want string
	}{
		{0, "the new code is WHEELS20."},
		{1, "we meet at the hut at 06:00 now, not 06:15."},
	} {
		r := RAGTurn{Seq: msgs[c.i].Seq, Content: msgs[c.i].Content}
		markUpdate(ups, &r)
		if !strings.Contains(r.update, c.want) {
			t.Errorf("turn %d: mark %q lacks %q", r.Seq, r.update, c.want)
		}
	}
}

// A setting written again with another value ("maxReplicas: 8", later
// "maxReplicas: 12") changed it; only the key's newest setting speaks.
func TestSettingChangedMarks(t *testing.T) {
	older := "```yaml\nautoscaling:\n  minReplicas: 3\n  maxReplicas: 8\n  targetCPUUtilizationPercentage: 70\n```"
	for _, tc := range []struct {
		name  string
		later []string
		want  []string // what each mark quotes, in order
	}{
		{"changed", []string{"```yaml\nautoscaling:\n  maxReplicas: 12\n```"}, []string{"maxReplicas: 12"}},
		{"two keys changed", []string{"bump it: `maxReplicas: 12`", "```yaml\n  targetCPUUtilizationPercentage: 60   # averageUtilization: 60\n```"},
			[]string{"maxReplicas: 12", "targetCPUUtilizationPercentage: 60"}},
		{"same value", []string{"```yaml\n  maxReplicas: 8\n```"}, nil},
		{"two keys in one short turn", []string{"```yaml\n  minReplicas: 4\n  maxReplicas: 12\n```"}, []string{"maxReplicas: 12"}}, // quoted once
		{"changed and back", []string{"```yaml\n  maxReplicas: 12\n```", "ok revert, `maxReplicas: 8` again"}, nil},
		{"another key", []string{"```yaml\n  maxSurge: 2\n```"}, nil},
	} {
		ups := readUpdate(memory.Message{Seq: 1, Role: "assistant", Content: older}, nil)
		for i, l := range tc.later {
			ups = append(ups, readUpdate(memory.Message{Seq: int64(i + 2), Role: "user", Content: l}, ups)...)
		}
		r := RAGTurn{Seq: 1, Content: older}
		markUpdate(ups, &r)
		lines := strings.Split(r.update, "\n")
		if r.update == "" {
			lines = nil
		}
		ok := len(lines) == len(tc.want)
		for i := 0; ok && i < len(lines); i++ {
			ok = strings.Contains(lines[i], tc.want[i])
		}
		if !ok {
			t.Errorf("%s: marks %q, want one quoting each of %q", tc.name, r.update, tc.want)
		}
	}
}

// A command's option given another number in a later command changed
// it; the same option of another command did not.
func TestCommandFlagChangedMarks(t *testing.T) {
	older := "I'd suggest:\n\n```bash\nrestic forget --prune --keep-daily 7 --keep-weekly 4 --keep-monthly 12\nkubectl rollout status deploy/api --timeout=5m\n```"
	for _, tc := range []struct {
		name, later, want string // want: what the mark quotes, "" none
	}{
		{"changed", "Updated:\n\n```ini\nExecStart=/usr/bin/restic forget --prune --keep-daily 14 --keep-weekly 4 --keep-monthly 12\n```", "--keep-daily 14"},
		{"same numbers", "```bash\nrestic forget --prune --keep-daily 7 --keep-weekly 4\n```", ""},
		{"another command's option", "```bash\nhelm upgrade api ./chart --timeout 10m\n```", ""},
		{"said, not run", "maybe --keep-daily 14 would be better?", ""},
	} {
		ups := readUpdate(memory.Message{Seq: 1, Role: "assistant", Content: older}, nil)
		ups = append(ups, readUpdate(memory.Message{Seq: 2, Role: "assistant", Content: tc.later}, ups)...)
		r := RAGTurn{Seq: 1, Content: older}
		markUpdate(ups, &r)
		if tc.want == "" && r.update != "" || tc.want != "" && !strings.Contains(r.update, tc.want) {
			t.Errorf("%s: marks %q, want one quoting %q", tc.name, r.update, tc.want)
		}
	}
}

// A config directive given another number later changed it: the upload
// limit raised in an inline code span marks the server block that set it.
func TestDirectiveChangedMarks(t *testing.T) {
	older := "nginx server block:\n\n```nginx\n    client_max_body_size 25m;\n    location / {\n        proxy_read_timeout 150s;\n    }\n```"
	for _, tc := range []struct {
		name, later, want string // want: what the mark quotes, "" none
	}{
		{"raised", "`client_max_body_size 40m;` in the server block. But a 35 MB bundle will hit the gunicorn timeout.", "client_max_body_size 40m"},
		{"the same value", "keep `client_max_body_size 25m;` as it is", ""},
		{"another directive", "```nginx\nkeepalive_timeout 65s;\n```", ""},
	} {
		update := markOf(older, tc.later, 2, "assistant")
		if tc.want == "" && update != "" || tc.want != "" && !strings.Contains(update, tc.want) {
			t.Errorf("%s: marks %q, want one quoting %q", tc.name, update, tc.want)
		}
	}
}

// A move of "it" that names neither what moved nor from when marks a turn
// just before that says when, when it is the thing the move speaks of.
func TestUnnamedMoveMarks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		turns []string // the last one moves; the first is the one asked about
		role  memory.Role
		want  bool
	}{
		{"named by the mover", []string{"ordered! order nr KPN-7731-0924, install appointment 3 sept between 8:00 and 12:00", "im at the office all day", "called kpn, they moved it to thursday 4 sept 13:00-17:00"}, "user", true},
		{"the question just before", []string{"Also Joanna can't do the 14th. Does that mean the opening moves?", "Yes. They moved it to Thursday 21 May, same time."}, "user", true},
		{"another thing's time just before", []string{"leave by 8:15 i reckon, elm grove backs up", "coding club update, the teacher emailed, they pushed it to 5:45 from next week"}, "user", false},
		{"a word said after the move, apostrophes curled", []string{"8:05 bus. i will set 3 alarms", "ok", "bad news, my BER flight got moved. they’ve moved it to 13:40, lands 15:20. so i miss the 13:00 bus"}, "user", false},
		{"when and who told name nothing moved", []string{"gym at 7:00 tomorrow morning", "work called, they moved it to 14:00 tomorrow"}, "user", false},
		{"a word said after the move", []string{"8:05 bus. i will set 3 alarms", "ok", "bad news, my BER flight got moved. they moved it to 13:40, lands 15:20. so i miss the 13:00 bus"}, "user", false},
		{"too far back", []string{"install appointment 3 sept, kpn", "a", "b", "called kpn, they moved it to thursday 4 sept"}, "user", false},
		{"the turn names the old value itself", []string{"install appointment 3 sept, kpn", "kpn cancelled the 5th, they moved it to thursday 4 sept"}, "user", false},
		{"advice is no move", []string{"install appointment 3 sept, kpn", "if kpn moved it to the 4th you'd be fine"}, "assistant", false},
	} {
		update := firstMarkOf(tc.turns, tc.role)
		if got := update != ""; got != tc.want {
			t.Errorf("%s: marked %v (%q), want %v", tc.name, got, update, tc.want)
		}
	}
}

// A turn setting more keys than settingsPerTurn is a config dump: no
// change read, and no quote built per key (a 100 KB dump took seconds).
func TestConfigDumpIsNoChange(t *testing.T) {
	var b strings.Builder
	for i := 0; i < settingsPerTurn+1; i++ {
		fmt.Fprintf(&b, "key_%d: %d\n", i, i)
	}
	if ups := readUpdate(memory.Message{Seq: 2, Role: "assistant", Content: b.String()}, nil); len(ups) != 0 {
		t.Errorf("a dump of %d settings read as %d updates", settingsPerTurn+1, len(ups))
	}
}

// "Sorry, I meant …" corrects the value of its kind said just before.
func TestIMeantCorrects(t *testing.T) {
	for _, tc := range []struct {
		older string
		gap   int64
		meant string
		want  bool
	}{
		{"Updated your mobile to 07700 900 418.", 2, "Sorry, I meant 07700 900 481 — swapped the last two digits, it's been a long day.", true},
		{"Updated your mobile to 07700 900 418.", 9, "Sorry, I meant 07700 900 481 — swapped the last two digits.", false}, // too far back
		{"The claim reference is CLM-26-048812.", 2, "Sorry, I meant 07700 900 481.", false},                               // another kind
		{"see you thursday at the pub", 1, "i meant friday 🤦", true},
		{"see you thursday at the pub", 3, "i meant friday 🤦", false},    // a day is said of many things: the turn or two before
		{"can mam come?", 1, "i meant can fionn AND my mam come", false}, // no value meant
		{"parking was £12.99", 1, "sorry, I meant £12.50", true},         // the decimals kept: "£12" is in "£12.99"
	} {
		ups := readUpdate(memory.Message{Seq: 10 + tc.gap, Role: "user", Content: tc.meant}, nil)
		r := RAGTurn{Seq: 10, Content: tc.older}
		markUpdate(ups, &r)
		if got := r.update != ""; got != tc.want {
			t.Errorf("%q after %q (%d turns): marked %v (%q), want %v", tc.meant, tc.older, tc.gap, got, r.update, tc.want)
		}
	}
}

// A role mailbox names no one, and "new" elsewhere moves no address.
func TestEmailNotMoved(t *testing.T) {
	for _, tc := range []struct{ update, older string }{
		{"my bakery finally has a website! new email is info@janesbakes.com", "the venue contact is info@grandhall.co.uk"},
		{"send the new invoice to accounts@cafeluna.co.uk please", "supplier invoices come from accounts@brewco.com"},
	} {
		ups := readUpdate(memory.Message{Seq: 20, Role: "user", Content: tc.update}, nil)
		r := RAGTurn{Seq: 5, Content: tc.older}
		markUpdate(ups, &r)
		if r.update != "" {
			t.Errorf("%q marked %q: %q", tc.update, tc.older, r.update)
		}
	}
}

// An address given as the one to use from now on replaces the same
// person's other address, not anyone else's.
func TestEmailMoved(t *testing.T) {
	update := "Fine for a one-off. Also my email is changing, the northmail account is closing. Please use claire.whitfield@protonmail.com from now on."
	for _, tc := range []struct {
		older string
		want  bool
	}{
		{"The email I have is claire.whitfield@northmail.co.uk - is that still right?", true},
		{"cc bea@ledgerlane.co.uk on every invoice please", false},
		{"I've emailed a copy to claire.whitfield@protonmail.com.", false},
	} {
		ups := readUpdate(memory.Message{Seq: 20, Role: "user", Content: update}, nil)
		r := RAGTurn{Seq: 5, Content: tc.older}
		markUpdate(ups, &r)
		if got := strings.Contains(r.update, "protonmail"); got != tc.want {
			t.Errorf("%q marked %v (%q), want %v", tc.older, got, r.update, tc.want)
		}
	}
}

// A correction right after a number reaches it without naming it: "wait
// sorry, 11.2 not 9.2" two turns after "comes to 9.2 sqm". Further back,
// "9.2" alone could be anything's.
func TestCorrectionOfANumberJustSaid(t *testing.T) {
	at := time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)
	msgs := []memory.Message{
		{Seq: 1, Role: memory.RoleUser, Content: "the shower tray is 9.2 kg", CreatedAt: at},
		{Seq: 2, Role: memory.RoleUser, Content: "tile measurements done: walls + floor comes to 9.2 sqm", CreatedAt: at},
		{Seq: 3, Role: memory.RoleUser, Content: "brill ta", CreatedAt: at},
		{Seq: 4, Role: memory.RoleUser, Content: "wait sorry, 11.2 not 9.2, forgot the niche", CreatedAt: at},
		{Seq: 5, Role: memory.RoleUser, Content: "stock check: we've got 48 candles", CreatedAt: at},
		{Seq: 6, Role: memory.RoleUser, Content: "and 20 plants", CreatedAt: at},
		{Seq: 7, Role: memory.RoleUser, Content: "wait no, 36 candles. 12 of the 48 are seconds", CreatedAt: at},
		{Seq: 8, Role: memory.RoleUser, Content: "we sold 30 candles last week", CreatedAt: at},
		{Seq: 9, Role: memory.RoleUser, Content: "sorry 2 mins late", CreatedAt: at},
		{Seq: 10, Role: memory.RoleUser, Content: "We're on Postgres 14 btw if that changes anything for sslmode.", CreatedAt: at},
		{Seq: 11, Role: memory.RoleAssistant, Content: "Use sslmode=require; it works on 12, 13 and 14.", CreatedAt: at},
		{Seq: 12, Role: memory.RoleUser, Content: "Correction, it's 16, we upgraded in January.", CreatedAt: at},
	}
	wantMarked(t, msgs, map[int64]bool{1: false, 2: true, 3: false, 5: true, 6: false, 8: false, 10: true, 11: false})
}

// A correction announced in words ("Small correction, … it's 164 sq ft
// not what I said") reaches a few exchanges back for the count of its
// unit; an assistant's "correction" is no person's going back on a value.
func TestAnnouncedCorrection(t *testing.T) {
	at := time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)
	msgs := []memory.Message{
		{Seq: 1, Role: memory.RoleUser, Content: "the flat is 700 sq ft, bought in 2019", CreatedAt: at},
		{Seq: 2, Role: memory.RoleUser, Content: "Home office question. My apartment is 1,150 sq ft and my studio room is 180 sq ft. Can I deduct that?", CreatedAt: at},
		{Seq: 3, Role: memory.RoleAssistant, Content: "Simplified method: 180 × $5.00 = $900.00.", CreatedAt: at},
		{Seq: 4, Role: memory.RoleUser, Content: "My rent is $2,150/month.", CreatedAt: at},
		{Seq: 5, Role: memory.RoleAssistant, Content: "Rent: $25,800.00 a year.", CreatedAt: at},
		{Seq: 6, Role: memory.RoleAssistant, Content: "Correction: the limit is 300 sq ft.", CreatedAt: at}, // not a person's
		{Seq: 7, Role: memory.RoleUser, Content: "thanks", CreatedAt: at},
		{Seq: 8, Role: memory.RoleUser, Content: "ok", CreatedAt: at},
		{Seq: 9, Role: memory.RoleUser, Content: "fine", CreatedAt: at},
		{Seq: 10, Role: memory.RoleUser, Content: "Small correction, I measured the studio properly this weekend with a real tape measure, it's 164 sq ft not what I said. The closet doesn't count.", CreatedAt: at},
	}
	wantMarked(t, msgs, map[int64]bool{1: false, 2: true, 3: false, 4: false})
	for _, content := range []string{
		"Correction: the limit is 300 sq ft.",          // an assistant's
		"small correction on the address, it's flat 4", // no count: "flat" is no unit counted
		"I was wrong about the venue",                  // no value
	} {
		m := memory.Message{Seq: 1, Role: memory.RoleAssistant, Content: content}
		if _, _, _, ok := announcedFixOf(m); ok {
			t.Errorf("announcedFixOf(assistant %q) = ok", content)
		}
	}
}

// wantMarked checks which turns of msgs (seq i at index i-1) carry a mark
// (markedAfter): want[seq] says whether turn seq does.
func wantMarked(t *testing.T, msgs []memory.Message, want map[int64]bool) {
	t.Helper()
	for seq, w := range want {
		if mark := markedAfter(msgs, seq); (mark != "") != w {
			t.Errorf("turn %d %q marked %q, want marked = %v", seq, msgs[seq-1].Content, mark, w)
		}
	}
}

// markedAfter is the mark turn seq of msgs (seq i at index i-1) carries,
// its chat's updates read from msgs as the update cache reads them.
func markedAfter(msgs []memory.Message, seq int64) string {
	var ups []chatUpdate
	for _, m := range msgs {
		ups = append(ups, readUpdate(m, ups)...)
	}
	m := msgs[seq-1]
	r := RAGTurn{Seq: m.Seq, Role: string(m.Role), Content: m.Content, CreatedAt: m.CreatedAt}
	markUpdate(ups, &r)
	return r.update
}

// "scrap that" takes back the value of its kind said just before: "it's
// the 9th now" under "scrap that" marks "meeting is tues 16th".
func TestRetractionMarksTheValueJustSaid(t *testing.T) {
	at := time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)
	msgs := []memory.Message{
		{Seq: 1, Role: memory.RoleUser, Content: "the juniors final is on the 2nd", CreatedAt: at},
		{Seq: 2, Role: memory.RoleUser, Content: "bring the first aid kit", CreatedAt: at},
		{Seq: 3, Role: memory.RoleUser, Content: "reminder, next committee meeting is tues 16th at the clubhouse, 7:30", CreatedAt: at},
		{Seq: 4, Role: memory.RoleUser, Content: "scrap that, clubhouse has the juniors presentation night. it's the 9th now, same time, same place", CreatedAt: at},
		{Seq: 5, Role: memory.RoleUser, Content: "forget that, i'll bring it", CreatedAt: at}, // no value: takes back nothing marked
	}
	wantMarked(t, msgs, map[int64]bool{1: false, 2: false, 3: true})
}

// "scratch that address" takes back the address just given, whatever
// other values its turn holds: a time there ("DPD always come at 8")
// marks no turn stating a time.
func TestRetractionNamingItsKind(t *testing.T) {
	at := time.Date(2026, 5, 20, 9, 0, 0, 0, time.UTC)
	msgs := []memory.Message{
		{Seq: 1, Role: memory.RoleUser, Content: "Collection window is 8 to 12 on the day.", CreatedAt: at},
		{Seq: 2, Role: memory.RoleAssistant, Content: "What address should we send it to?", CreatedAt: at},
		{Seq: 3, Role: memory.RoleUser, Content: "The shop: 14 Broad Street, Ludlow SY8 1NG.", CreatedAt: at},
		{Seq: 4, Role: memory.RoleAssistant, Content: "Thanks. Replacement order RPL-5521 is booked to 14 Broad Street, dispatched within 2 working days.", CreatedAt: at},
		{Seq: 5, Role: memory.RoleUser, Content: "Actually, scratch that address. DPD always come at 8 and I'm never at the shop before 9. Can it go to our storage unit instead: Unit 4B, Weyman Road Trading Estate, Ludlow SY8 1QH.", CreatedAt: at},
	}
	wantMarked(t, msgs, map[int64]bool{1: false, 3: true, 4: true})
}

// A mark repeats its updating turn: when that turn is shown too (here in
// the recent tail), the older turn is shown beside it without the mark;
// when it is not, the mark is there.
func TestMarkLeftOutBesideItsUpdate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		trailing int
		marked   bool
	}{
		{"the update in the tail", 4, false},
		{"the update out of the context", 80, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs := []InMessage{{ID: "a", Role: "user", Content: "We live in Berlin, near the Tiergarten."}}
			msgs = append(msgs, filler("f", "filler turn %d about the weather and trains", 40)...)
			msgs = append(msgs, InMessage{ID: "u", Role: "user", Content: "Big news: I moved from Berlin to Munich last week."})
			msgs = append(msgs, filler("g", "more filler %d", tc.trailing)...)
			res := contextOver(t, msgs, 1, "where do I live now", 300)
			older, update := "user: We live in Berlin, near the Tiergarten.", "user: Big news: I moved from Berlin to Munich last week."
			if !strings.Contains(res.Context, older) {
				t.Fatalf("the older turn is not shown:\n%s", res.Context)
			}
			if got := strings.Contains(res.Context, older+"\n(earlier; updated "); got != tc.marked {
				t.Errorf("marked = %v, want %v:\n%s", got, tc.marked, res.Context)
			}
			if !tc.marked && !strings.Contains(res.Context, update) {
				t.Errorf("neither the mark nor its update is shown:\n%s", res.Context)
			}
		})
	}
}

// A retrieved fact says what its turns said: a later turn that changed it
// marks it as it marks a turn ("The user booked the blood test for
// Tuesday 14 April at 9:10" under "it is 14 April at 9:30 not 9:10").
func TestRetrievedFactMarked(t *testing.T) {
	ups := readUpdate(memory.Message{Seq: 7, Role: "user", Content: "wait sorry, it is 14 April at 9:30 not 9:10"}, nil)
	fact := func(seq int64) RAGTurn {
		return RAGTurn{Seq: seq, Content: "The user booked the blood test for Tuesday 14 April at 9:10", Fact: &FactRef{Seqs: []int64{seq}}}
	}
	markedBeforeOnly(t, ups, fact(3), fact(9), "turn 7: wait sorry, it is 14 April at 9:30 not 9:10", "(turn 3)\n(earlier; updated")
}

// Old values that name nothing as their words lie apart: a thing numbered
// ("week 6") is stated only as that phrase, and an aside ("btw") is no
// thing cancelled.
func TestOldValueSaidApartMarksNothing(t *testing.T) {
	for _, tc := range []struct {
		name, older, later string
		want               bool
	}{
		{"a numbered thing apart", "Week 1 done, all 4 runs. Long run 10 km at 6:38 average, felt easy.",
			"She also said my Pegasus have about 900 km on them, so new shoes now, not in week 6.", false},
		{"a numbered thing as written", "The Pegasus is fine for now, no need to buy before week 6.",
			"She also said my Pegasus have about 900 km on them, so new shoes now, not in week 6.", true},
		{"an aside", "btw reminder i cant carry heavy stuff, ill do all the packing instead, deal?",
			"vodafone cancelled btw, confirmation says the line ends 31 march", false},
		{"an amount", "you will receive an invoice of €0.00 by email.",
			"One more thing, the invoice email came but it says €89.00, not €0.00.", true},
	} {
		update := markOf(tc.older, tc.later, 2, "user")
		if got := update != ""; got != tc.want {
			t.Errorf("%s: marked %v (%q), want %v", tc.name, got, update, tc.want)
		}
	}
}

// "ok make it 10:30 at mine then" sets anew the time said a turn or two
// before, a bare hour after "at" among them; further back, a count, or
// the assistant's "make it" sets nothing.
func TestMakeItSetsTheValueJustSaid(t *testing.T) {
	plan := "one week!! plan for the 9th: meet at mine at 11, load the van, leave by 12, leeds by 3"
	for _, tc := range []struct {
		name   string
		turns  []string // the first is the one asked about, the last sets the value
		role   memory.Role
		marked bool
	}{
		{"a time just said", []string{plan, "can we go earlier, i want a proper soundcheck", "ok make it 10:30 at mine then, same address obv"}, "user", true},
		{"too far back", []string{plan, "a", "b", "c", "ok make it 10:30 at mine then"}, "user", false},
		{"a number of no kind", []string{"price £15 at the table, 40 shirts", "still 15?", "make it 18"}, "user", false},
		{"a level, not an hour", []string{"ok we're at 4. need 2 more volunteers", "anyone?", "make it 9am sharp then"}, "user", false},
		{"the assistant's advice", []string{plan, "can we go earlier?", "Make it 10:30 if the venue allows an early soundcheck."}, "assistant", false},
	} {
		update := firstMarkOf(tc.turns, tc.role)
		if got := update != ""; got != tc.marked {
			t.Errorf("%s: marked %v (%q), want %v", tc.name, got, update, tc.marked)
		}
	}
}

// A bare old number is stated where it counts what the update names: "5"
// in "5-minute breaks" or a list's "5." is none of the meetings cut "from 5
// to 3", "9am" is the 9 moved to 7:30. A long answer naming the subject
// in one sentence and a number in another states nothing of it.
func TestBareNumberStatedWhereItCounts(t *testing.T) {
	for _, tc := range []struct {
		name, older, later string
		want               bool
	}{
		{"counted", "we have 5 weekly meetings right now, too many", "so I've decided to cut down my weekly meetings from 5 to 3 starting September 16", true},
		{"a compound", "adding 5-minute deep breathing exercises before meetings helped", "so I've decided to cut down my weekly meetings from 5 to 3 starting September 16", false},
		{"a list's number", "Here is a plan for your weekly meetings:\n\n### 5. **Delegate Effectively**\n- Identify tasks you can hand off.", "so I've decided to cut down my weekly meetings from 5 to 3 starting September 16", false},
		{"an hour with am", "gaz says yes. collect thursday 9am from his yard on calder rd", "ya thursday but gaz wants it at 7:30 now not 9, he starts work at 8", true},
		{"a long answer, subject and number apart", "Great question. Your step size h matters a lot for accuracy. There are many methods. " +
			"Euler's method is the simplest one. It is first order. Runge-Kutta is fourth order. Try 3 variants and compare them over 10 runs on your data.",
			"we changed the step size h to 0.25", false},
		{"a short turn read whole", "the step size h is 0.5", "we changed the step size h to 0.25", true},
	} {
		update := markOf(tc.older, tc.later, 9, "user") // beyond justSaidReach
		if got := update != ""; got != tc.want {
			t.Errorf("%s: marked %v (%q), want %v", tc.name, got, update, tc.want)
		}
	}
}

// markOf is the mark under older (turn 1, the user's) once later, turn
// at, by role, was read.
func markOf(older string, later string, at int64, role memory.Role) string {
	ups := readUpdate(memory.Message{Seq: 1, Role: "user", Content: older}, nil)
	ups = append(ups, readUpdate(memory.Message{Seq: at, Role: role, Content: later}, ups)...)
	r := RAGTurn{Seq: 1, Content: older}
	markUpdate(ups, &r)
	return r.update
}

// firstMarkOf is the mark under the first of turns (the user's, as all
// but the last, which role says).
func firstMarkOf(turns []string, role memory.Role) string {
	var ups []chatUpdate
	for i, c := range turns {
		r := memory.Role("user")
		if i == len(turns)-1 {
			r = role
		}
		ups = append(ups, readUpdate(memory.Message{Seq: int64(i + 1), Role: r, Content: c}, ups)...)
	}
	r := RAGTurn{Seq: 1, Content: turns[0]}
	markUpdate(ups, &r)
	return r.update
}
