package facts

import (
	"fmt"
	"strings"
	"testing"
)

func TestDetectUpdate(t *testing.T) {
	cases := []struct {
		text               string
		ok                 bool
		subject, old, new_ string // "|"-joined; "" = none
	}{
		{"I moved from Berlin to Munich last month.", true, "", "berlin", "munich"},
		{"Check the exact rate in your account, as they change it from time to time.", false, "", "", ""},         // from a value to itself: nothing changed
		{"Thijs said yes to the quote but they want 3 labels not 4, for €700.", true, "", "4 labels", "3 labels"}, // a count put right, the thing counted said once
		{"we need 3 of them not 4.", false, "", "", ""},                                                           // "of them" counts nothing named
		// Moved, the thing unnamed: the old day is the turn's other one
		// said before the move; without one, or with a time said only
		// after it, no update.
		{"double booking on the 15th. they moved us to saturday 22nd nov, same room same price", true, "", "15th", "saturday 22nd nov"},
		{"they moved us to saturday 22nd nov, same room", false, "", "", ""},
		{"they moved it to 10 June, same room. Deadline stays at 22 May.", false, "", "", ""},
		{"the 6pm slot was full so they moved us to 7:30pm", true, "", "6pm", "7:30pm"},
		{"they can't do the friday pickup anymore, some staff thing. they moved it to saturday the 12th at 10am", true, "", "friday pickup", "saturday the 12th at 10am"},
		{"she can't do thursday anymore. they moved it to saturday the 12th", false, "", "", ""}, // a weekday alone names no thing
		{"Plumber pushed to Fri 6/12, 8-10am, their Wed guy is out sick.", true, "plumber", "", "fri 6/12"},
		{"ok new plan, moving methotrexate to saturdays so the bad day is sunday", true, "methotrexate", "", "saturdays"},
		{"you might try moving the exercise to 8:00 AM, right before your first meeting.", false, "", "", ""},
		// A move said with how far it went, by any verb of a plan.
		{"I'm pushing the launch a week to Saturday 21 November, same time.", true, "launch", "", "saturday 21 november"},
		{"we're shifting standup by two days to thursday", true, "standup", "", "thursday"},
		{"dentist pushed back a week to the 14th", true, "dentist", "", "14th"},
		{"they pushed it back a week to saturday the 12th", false, "", "", ""}, // unnamed, and no old day said
		// A thing moved onto a value no time: the old value is the one of
		// its kinds the turn said before the move.
		{"it turns out the printer had 192.168.178.50 set statically. I'm moving the Pi to 192.168.178.60 instead.", true, "", "192.168.178.50", "192.168.178.60"},
		{"I'm moving the Pi to 192.168.178.60 instead.", false, "", "", ""},
		{"the nas is on 192.168.1.40 and the printer on 192.168.1.41, moving the pi to 192.168.1.60", false, "", "", ""}, // two: which moved is not said
		{"port 8080 clashes with the UniFi controller. I moved Nextcloud to 8088 instead.", true, "nextcloud", "8080", "8088"},
		{"new coordinator at brightwater is Mark, direct line 0118 496 0799", true, "coordinator|brightwater", "", "mark"},
		{"New Balance shoe is great for walking", false, "", "", ""},
		// One value put in place of another of its shape, however the
		// sentence goes around it.
		{"An outfit change adds £50, so it'd be £345 instead of £295", true, "", "£295", "£345"},
		{"the credit you chose should have been £25, not £15, as a standard", true, "", "£15", "£25"},
		{"they want to leave 8.15 not 8.45 bc of the roadworks", true, "", "8.45", "8.15"},
		{"the organisers have asked us to wear our yellow away kit for the whole day instead of the home blues, so please dig out the yellow shirts", true, "", "home blues", ""},
		{"so we all went down to the beach for the day instead of the usual, which was lovely", false, "", "", ""},
		{"We relocated from Austin to Denver in May.", true, "", "austin", "denver"},
		{"We changed the step size h from 0.5 to 0.25.", true, "step|size|h", "0.5", "0.25"},
		{"We changed the step size h to 0.25.", true, "step|size|h", "", "0.25"},
		{"I set the learning rate to 0.001 for the run.", true, "learning|rate", "", "0.001"},
		{"The cutover moved from June 15 to June 22.", true, "", "june 15", "june 22"},
		{"We switched from Jira to Linear.", true, "", "jira", "linear"},
		{"correction btw, the cluster is on 1.29, not 1.28, we upgraded last month.", true, "cluster", "1.28", "1.29"},
		{"letter from the landlord 😩 rent's going up to £1,010 from 1 December", true, "rent", "", "£1,010"},
		{`and i quote, "due to rising costs" the rent is bumped up to £1,395 from june.`, true, "rent", "", "£1,395"},
		{"council tax is going up to £128 a month", true, "council|tax", "", "£128"},
		// Every verb of the amount's patterns passes the change-verb gate.
		{"i told dana 29 guests and she says the balance drops to $1,740", true, "balance", "", "$1,740"},
		{"the deposit rose to £400 this week", true, "deposit", "", "£400"},
		{"their quote fell to €2,150 after the survey", true, "quote", "", "€2,150"},
		{"we're extending the budget to $48,000 a year", true, "budget", "", "$48,000 a year"},
		{"sprays can extend the life of your shoes, ensuring they continue to provide the support", false, "", "", ""},
		// One name put in place of another, each written as a name.
		{"Oh and I checked with the school office, they're on AQA not Edexcel. Sorry!", true, "", "edexcel", "aqa"},
		{"it's Nationwide, not Halifax", true, "", "halifax", "nationwide"},
		{"Is it Leeds not York?", false, "", "", ""},
		{"I'm not Sure", false, "", "", ""},
		{"i think we go with the blue one not the red", false, "", "", ""},
		{"It's Henrik Vogt, not Lorenz, no idea where you got that.", true, "", "lorenz", "vogt"},
		{"So all our changes happen in Cloudflare, not GoDaddy.", false, "", "", ""},
		{"the kids are going to 3 parties this weekend", false, "", "", ""},
		{"tickets can go up to £300 at the door", false, "", "", ""},
		{"heart rate went up to 165 bpm on the last hill!", false, "", "", ""},
		// An emoji ends a clause: the "if" is the next clause's.
		{"YES old man is back on 🥾 tarn hows as plan b if it turns.", true, "", "old man cancelled|old man canceled|old man cancel|old man cancelling|old man called off|old man off", ""},
		{"we cancel the boat if it rains 🌧️", false, "", "", ""},
		// An amount set, the verb before its thing; advice sets nothing.
		{"On the positive side finance agreed to stretch the budget to $48,000 a year given the extra seats.", true, "budget", "", "$48,000 a year"},
		{"Consider increasing the block length to 4 hours.", false, "", "", ""},
		{"Increase your monthly contributions to $300 or more.", false, "", "", ""},
		// A thing's number corrected without a verb.
		{"deposit £200 not £150 – misread the email before coffee", true, "deposit", "£150", "£200"},
		{"wait no, room 204 not 240", true, "room", "240", "204"},
		// A thing dropped, on again.
		{"Done: repairer switched to Kennet Bodyworks and courtesy car reinstated.", true, "", "courtesy car cancelled|courtesy car canceled|courtesy car cancel|courtesy car cancelling|courtesy car called off|courtesy car off|courtesy car dropping|courtesy car dropped|courtesy car drop|courtesy car removed|courtesy car removing|courtesy car remove|courtesy car cut|courtesy car scrapped|courtesy car scrapping|courtesy car ditched|courtesy car ditching|courtesy car forget|courtesy car scrap|courtesy car scratch|courtesy car ditch|courtesy car skip", ""},
		{"power restored at 3pm", false, "", "", ""},
		{"good news, the museum restored the 1920s carriage", false, "", "", ""}, // restoring a thing is no thing back on
		{"restored from backup last night", false, "", "", ""},
		// Someone's availability is theirs, not the day's.
		{"bad news guys. Ana can't make the 12th anymore 😭 I've got a client workshop", false, "", "", ""},
		{"So the atorvastatin I switched from mornings to evenings, starting tonight.", true, "", "mornings", "evenings"},
		{"We switched to Linear last week.", true, "", "", "linear"},
		{"The meeting is now on Tuesday.", true, "meeting", "", "tuesday"},
		{"The budget is now $60 a seat.", true, "budget", "", "$60 a seat"},
		{"Our deadline has been moved to Friday.", true, "deadline", "", "friday"},
		{"I now live in Munich.", true, "live", "", "munich"},
		{"We now use Postgres for everything.", true, "use", "", "postgres"},
		{"I no longer eat meat.", true, "", "meat", ""},
		{"We don't use Jira anymore.", true, "", "jira", ""},
		{`The user said: "We changed the step size h to 0.25."`, true, "step|size|h", "", "0.25"},
		{"Let's use Postgres instead of MySQL.", true, "", "mysql", "postgres"},
		{"Book Casa Amora instead of the Ritz.", true, "", "ritz", "casa amora"},
		{"Actually it's Munich, not Berlin.", true, "", "berlin", "munich"},
		{"Actually, the meeting is on Tuesday, not Monday.", true, "meeting", "monday", "tuesday"},
		{"Oh, and we upgraded the API from v1 to v2 yesterday.", true, "api", "v1", "v2"},
		// "Y now, not X": the cue says it, digits or not.
		{"Saturday 10 km went great. Night shifts start on 28 September now, not in October, they moved it forward a week.", true, "night|shifts|start", "october", "28 september"},
		{"we leave friday now, not saturday", true, "leave", "saturday", "friday"},
		{"host said yes. the Airbnb is 4 nights now not 5: check-in Wed 13th, check-out Sun 17th.", true, "airbnb", "5", "4 nights"},
		// Corrections of one number by another, without "actually".
		{"Correction: the budget is 5k, not 3k.", true, "budget", "3k", "5k"},
		{"wait no, it's room 204 not 240", true, "", "240", "room 204"},
		{"ur right its the 27th not the 28th", true, "", "28th", "27th"},
		{"it's 8:30 now, not 8", true, "", "8", "8:30"},
		{"I want more distance between them. Make the brother older, 34 not 28. Mira stays 31.", true, "brother", "28", "34"},
		// What changed, said without its old value.
		{"Update: my new address is 12 Rue Cler.", true, "address", "", "12 rue cler"},
		{"my new email is anna@example.com", true, "email", "", "anna@example.com"},
		{"My phone number changed to 0176 5551234.", true, "phone|number", "", "0176 5551234"},
		{"The deadline got pushed to Friday.", true, "deadline", "", "friday"},
		{"the party moved to saturday", true, "party", "", "saturday"},
		{"Scratch that, the flight is at 7:40 now.", true, "flight", "", "7:40"},
		// A time moved, said without an article or the old time.
		{"They only had the table later. moved dinner to 8, same day, same place.", true, "dinner", "", "8"},
		{"pushed standup to 10:30 tomorrow", true, "standup", "", "10:30"},
		{"ok so dinner is 8pm Thursday now, noted", true, "dinner", "", "8pm thursday"},
		// A plan cancelled, said of it; the kind of plan after its name is
		// left out. A condition is none.
		{"worst news. The Velvet Hours gig is cancelled — their singer has vocal nodules", true, "", "velvet hours", ""},
		{"the ferry got called off because of the storm", true, "", "ferry", ""},
		{"if the match is cancelled we go to the pub", false, "", "", ""},
		{"the kitchen refit is off for this year. no point with marcus in there", true, "", "kitchen refit", ""},
		{"bad news, the house sale fell through", true, "", "house sale", ""},
		{"the heating is off, it's freezing", false, "", "", ""},
		{"buzzer's working again btw, the videx guy swapped the handset in flat B", true, "", "buzzer stopped|buzzer broken|buzzer broke|buzzer dead|buzzer died|buzzer faulty|buzzer leaking", ""},
		{"the boiler got fixed this morning", true, "", "boiler stopped|boiler broken|boiler broke|boiler dead|boiler died|boiler faulty|boiler leaking", ""},
		{"you're right about the impact thing. put the workshop back in, £3,000 as before.", true, "", "workshop dropping|workshop dropped|workshop drop|workshop removed|workshop removing|workshop remove|workshop cut|workshop scrapped|workshop scrapping|workshop ditched|workshop ditching", ""},
		{"he's done his back in and can't come thursday", false, "", "", ""},
		{"ok add the dessert back on the menu", true, "", "dessert dropping|dessert dropped|dessert drop|dessert removed|dessert removing|dessert remove|dessert cut|dessert scrapped|dessert scrapping|dessert ditched|dessert ditching", ""},
		{"Gently bring your focus back to your chosen technique.", false, "", "", ""},
		{"put your phone back in your bag", false, "", "", ""},
		{"i'll put you back in touch with her", false, "", "", ""},
		{"the heating is working fine", false, "", "", ""},
		{"This budget is fixed and needs to be managed carefully.", false, "", "", ""},
		{"if the wifi is working again tomorrow we can stream it", false, "", "", ""},
		{"rang them and kayaking is back on!!", true, "", "kayaking cancelled|kayaking canceled|kayaking cancel|kayaking cancelling|kayaking called off|kayaking off|kayak cancelled|kayak canceled|kayak cancel|kayak cancelling|kayak called off|kayak off", ""},
		{"she's back on apixaban but 2.5mg twice a day", true, "", "apixaban stopped|apixaban stopping|apixaban stop|apixaban paused|apixaban off", ""},
		{"same ref DWK-7752 but now 11am not 9:30", true, "", "9:30", "11am"},
		{"now i know why, not a clue before", false, "", "", ""},
		{"downgrading to SEV2, error rate flat for 30 min", true, "sev", "", "sev2"},
		{"raising it to P2 because of the month end close", true, "p", "", "p2"},
		{"moved it to at 5", false, "", "", ""},
		{"ok moving to v2 of the api", false, "", "", ""},
		{"the dentist has pulled out two of my teeth", false, "", "", ""},
		{"so the car has pulled out in front of me", false, "", "", ""},
		{"Spice Route's pulled out, they're short staffed", true, "", "spice route", ""},
		{"bad news. Spice Route have pulled out — their chef is having surgery", true, "", "spice route", ""},
		{"she's back on her feet", false, "", "", ""},
		{"we're back on track now", false, "", "", ""},
		{"it's back on", false, "", "", ""},
		{"is the gig cancelled?", false, "", "", ""},
		{"perfect she can go straight from football to swimming with zain then", false, "", "", ""},
		{"We went from Jira to Linear in March.", true, "", "jira", "linear"},
		{"registrar could only give us a 3 o'clock slot so the ceremony's at 3 now.", true, "ceremony", "", "3"},
		{"standup's at 10 now", true, "standup", "", "10"},
		{"moved house to Munich", false, "", "", ""},
		{"we moved it to 8", false, "", "", ""},
		{"ok so step is 0.25 now", false, "", "", ""},
		{"she's not coming on saturday anymore, she'll come sunday", true, "", "saturday", ""},
		{"We cancelled the trip to Lisbon.", true, "", "trip to lisbon", ""},
		{"ok no gin, we get her herbs then", true, "", "gin", ""},
		{"I'm not vegetarian anymore, I went vegan last week.", true, "", "vegetarian", ""},
		{"She's no longer single, she married Tom.", true, "", "single", ""},
		{"so no beach after all", true, "", "beach", ""},
		{"ok we dropped the outlier filter completely", true, "", "outlier filter", ""},
		{"Morning. The ledger team says their API is slow at night. Bump the timeout to 30s.", true, "timeout", "", "30s"},
		{"Update!! My start date got pushed to October 1 (onboarding reshuffle), so I need to move in by late September.", true, "start|date", "", "october 1"},
		{"also small correction, i said python 3.12 earlier but staging is actually 3.11, the docker image is python:3.11-slim.", true, "", "python 3.12", "3.11"},
		{"i said tuesday but it's actually wednesday", true, "", "tuesday", "wednesday"},
		{"got a catering job!! so i need way more oil. make it 40 cases, not 25", true, "", "25 cases|25", "40 cases"},
		{"make it a big one, not a small one", false, "", "", ""},
		{"@assistant forget Lisbon. Flat in Porto for 4, Ribeira or Miragaia", true, "", "lisbon", ""},
		{"also I looked at the boat properly. scrap the ferry, we just do the train both ways", true, "", "ferry", ""},
		{"ok forget about the van", true, "", "van", ""},
		{"forget it, not worth it", false, "", "", ""},
		{"scratch that", false, "", "", ""},
		{"forget what I said about Tuesday", false, "", "", ""},
		{"forget to bring the charger and you're stuck", false, "", "", ""},
		{"don't forget the passports", false, "", "", ""},
		{"We removed the nightly cron job last week.", true, "", "nightly cron job", ""},
		{"we got rid of pgbouncer in CI", true, "", "pgbouncer in ci", ""},
		// Advice in long answers: nothing named, a brand, a span of time,
		// a value only pointed at; the verb nearest "from" governs it.
		{"Implement deletion policies to securely erase data when it is no longer needed.", false, "", "", ""},
		{"While the New Balance 990v5 is a great shoe for daily wear and light activity.", false, "", "", ""},
		{"For example, you could set aside 3 hours on a specific day, such as Tuesday evenings from 6 PM to 9 PM.", false, "", "", ""},
		{"I'm trying to reduce my workload, so I've decided to cut down my weekly meetings from 5 to 3 starting September 16", true, "weekly|meetings", "5", "3 starting september 16"},
		{"I don't need the spreadsheet for that purpose anymore", false, "", "", ""},
		{"the meeting moved to tomorrow", true, "meeting", "", "tomorrow"}, // a day said of the change is a value
		{"the dentist moved to this friday", true, "dentist", "", "this friday"},
		// A bare old number takes the new one's unit or currency.
		{"first thing, she weighed her and she's actually 24.5kg not 22, so the rescue's scales must be off", true, "", "22kg|22 kg|22", "24.5kg"},
		{"sorry typo, it's £40 not 35", true, "", "£35|35", "£40"},
		// A unit of measure after the new number: the old one is an amount
		// of it, never the bare number ("30 %" is no "30 days").
		{"Heat loss comes out at 5.9 kW, not the 6.8 Peak Heat said.", true, "", "6.8 kw", "5.9 kw"},
		{"New clients and all new invoices: 14 days, not 30.", true, "", "30 days", "14 days"},
		{"it'll take 2 hours, not 30 minutes", true, "", "30 minutes", "2 hours"},
		// A time moved, the thing first without an article, or after "new".
		{"release pushed back to thu 11 feb, we need the time for TP-1184", true, "release", "", "thu 11 feb"},
		{"ok standup moved to 10:30 from tomorrow", true, "standup", "", "10:30"},
		{"Good news from the hotel: the Atlantic agreed to push the release date to 24 August.", true, "release|date", "", "24 august"},
		{"Push the Docker image to Render.com.", false, "", "", ""}, // "push" onto no time sends, not moves
		{"then push from the dev branch to main", false, "", "", ""},
		{"they're shut on the friday now for a staff thing, so collection moved to saturday 12th, 9am-11am", true, "collection", "", "saturday 12th"},
		{"we pushed back to the main road", false, "", "", ""},
		{"oh right lol. choir moved to Thursday evenings from September, so Wednesdays are free now", true, "choir", "", "thursday evenings"}, // days said in the plural
		{"also small change, choir moved to thursdays from september.", true, "choir", "", "thursdays"},
		{"good news!! extension approved. new deadline mon 22 march 12 noon", true, "deadline", "", "mon 22 march 12 noon"},
		{"new kickoff time: 3pm, same pitch", true, "kickoff", "", "3pm"},
		{"new phone who dis", false, "", "", ""},
		{"you have a firm commitment to start the new job on May 1", false, "", "", ""},
		{"the new deadline is friday 3 april", true, "deadline", "", "friday 3 april"},
		// An amount raised or lowered, said of its thing.
		{"ok i've put nottingham up to £10 a ticket, we've got a support act now", true, "nottingham", "", "£10"},
		{"landlord knocked the rent down to £950", true, "rent", "", "£950"},
		{"put your hand up to ask", false, "", "", ""},
		// A schedule's day moved, the thing first in its clause.
		{"Cobbs Farm have lost a driver so no more Saturday drops, eggs are coming Fridays now. Same price", true, "eggs", "", "fridays"},
		{"bad news. gary just texted, dale cant do tuesday so its thurs 16th now, same 8-12", true, "dale", "", "thurs 16th"},
		{"i cant do tuesday so its thursday now", false, "", "", ""}, // who cannot is named
		{"Also please note my mobile changed, scratch the 07700 900481, use 07700 900736 from now on, the old phone was stolen.", true, "", "07700 900481", ""},
		{"I always forget the milk", false, "", "", ""},
		{"oh and skip reviews, nobody reads them", true, "", "reviews", ""},
		{"skip included.", false, "", "", ""}, // a skip (the bin) in a list, no order
		// A name given in place of another.
		{"Combine 1 and 3, yes. And Duarte becomes Davide Russo, Carabinieri art squad (TPC).", true, "", "duarte", "davide russo"},
		{"fyi the Velvet Room is now called The Attic", true, "", "velvet room", "attic"},
		{"bins are collected on mondays now", true, "bins", "", "mondays"},
		{"we are going fridays now", false, "", "", ""},
		// Amounts halved, going up, from now on.
		{"Consultant ward round today. They've halved the apixaban to 2.5mg because of her kidney function.", true, "apixaban", "", "2.5mg"},
		{"Hartley Mills email. T55 going up to £19.10 a sack from 1 March.", true, "t55", "", "£19.10"},
		{"heads up the league fee went up so subs are £7 a game from now on, sorry lads.", true, "subs", "", "£7"},
		{"we are going up to the lake", false, "", "", ""},
		// A train by its time cancelled; someone out; a fee gone up mid-sentence.
		{"they just emailed, our 9:05 is cancelled. moved us to the 18:05 on 10 may", true, "", "9:05", ""},
		{"Mr Dale can't do it after all, the agency says it's Ms Patel now. Same plan.", true, "", "mr dale", ""},
		{"sorry i can't make it tonight", false, "", "", ""},
		{"she can't come, she's ill", false, "", "", ""},
		{"we've been bumped up to 50 mins, and fee went up to £320 since we're doing more", true, "fee", "", "£320"},
		// Stopped, or chosen and not: "won't … anymore", "not … after all".
		{"hmm she won't touch the harrington's anymore and had an upset tummy overnight.", true, "", "harrington", ""},
		{"walker news: we're not using Kasia after all, she no-showed twice last week.", true, "", "kasia", ""},
		{"I can't eat gluten anymore, doctor's orders", true, "", "gluten", ""},
		{"after all, it's her birthday", false, "", "", ""},
		{"i won't forget it anymore", false, "", "", ""},
		// Mended, said of whoever mended it.
		{"landlord's fixed the latch, it's a self-closing one now", true, "", "latch stopped|latch broken|latch broke|latch dead|latch died|latch faulty|latch leaking", ""},
		{"Dave mended the gate yesterday", true, "", "gate stopped|gate broken|gate broke|gate dead|gate died|gate faulty|gate leaking", ""},
		{"has anyone fixed the printer?", false, "", "", ""},
		{"if he fixed the boiler we'd be fine", false, "", "", ""},
		// Not updates.
		{"The price dropped to 40 EUR.", true, "price", "", "40 eur"}, // an amount moving: nothing removed
		{"I dropped my phone in the sink", false, "", "", ""},
		{"no worries, see you then", false, "", "", ""},
		{"No change. `DATABASE_URL=postgresql://orders@db:5432/orders` works as before.", false, "", "", ""}, // nothing changed
		{"no difference, same as before", false, "", "", ""},
		{"ok do 2 instead", false, "", "", ""},                        // a count names no thing
		{"It becomes clear that the Butler lied.", false, "", "", ""}, // no name becomes another
		{"In chapter 3 the story becomes darker.", false, "", "", ""},
		{"No idea, ask Jana.", false, "", "", ""},
		{"Thanks, it's fine, not a problem.", false, "", "", ""},                 // a correction needs numbers on both sides
		{"The user moved to Denver last month.", false, "", "", ""},              // a person's move: not a thing's new value
		{"The dance studio is on tenuous grounds right now.", false, "", "", ""}, // "right now" dates a state
		{"Please cancel my order.", false, "", "", ""},                           // a request, not done
		{"Now that you mention it, I liked Kyoto more.", false, "", "", ""},
		{"I no longer remember the hotel's name.", false, "", "", ""},
		{"Right now I'm in the lobby.", false, "", "", ""},
		{"She no longer remembers the code.", false, "", "", ""},
		{"We now know the answer.", false, "", "", ""},
		{"I went from the station to the hotel on foot.", true, "", "station", "hotel"}, // read as a change; harmless: no older fact states "station" as a value
		{"We don't eat meat.", false, "", "", ""},
		{"How far is Hakone from Tokyo?", false, "", "", ""},
		{"I love hiking in the Alps.", false, "", "", ""},
		{"Now we know the answer.", false, "", "", ""},
		{"Thanks, that is not what I meant.", false, "", "", ""},
		{"The train goes from Tokyo to Hakone.", false, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			u, ok := DetectUpdate(c.text)
			if ok != c.ok {
				t.Fatalf("ok = %v (%+v), want %v", ok, u, c.ok)
			}
			if !ok {
				return
			}
			got := []string{strings.Join(u.Subject, "|"), strings.Join(u.Old, "|"), strings.Join(u.New, "|")}
			want := []string{c.subject, c.old, c.new_}
			if strings.Join(got, " / ") != strings.Join(want, " / ") {
				t.Errorf("subject / old / new = %q, want %q", got, want)
			}
			if u.Sentence == "" {
				t.Error("no sentence")
			}
		})
	}
}

// A sentence that weighs a change states none; a dash ends the clause of
// "actually X, not Y".
func TestDetectUpdateHedgesAndDashes(t *testing.T) {
	for _, tc := range []struct {
		text     string
		ok       bool
		old, new string
	}{
		{"Open item: whether to upgrade psycopg from 3.1.18 to 3.2.", false, "", ""},
		{"Should we move the standup to Tuesday?", false, "", ""},
		{"Actually it's Postgres 15, not 13 — I just checked the config.", true, "[13]", "[postgres 15]"},
	} {
		u, ok := DetectUpdate(tc.text)
		if ok != tc.ok || (ok && (fmt.Sprint(u.Old) != tc.old || fmt.Sprint(u.New) != tc.new)) {
			t.Errorf("DetectUpdate(%q) = %+v, %v; want ok=%v old=%s new=%s", tc.text, u, ok, tc.ok, tc.old, tc.new)
		}
	}
}

// The values after a question in the same sentence are asked about, not
// changed: "actually it's scalene … - can you help me understand why this
// triangle is scalene and not isosceles".
func TestDetectUpdateSkipsAQuestionAfterActually(t *testing.T) {
	s := "I made a mistake and thought it was isosceles, when actually it's scalene because all sides are of different lengths - can you help me understand why this triangle is scalene and not isosceles, I mean, what's the definition again?"
	if u, ok := DetectUpdate(s); ok {
		t.Errorf("%q: update %+v, want none", s, u)
	}
	if _, ok := DetectUpdate("actually, the meeting is on Tuesday not Monday"); !ok {
		t.Error("a plain correction after actually not detected")
	}
}

func TestSameShape(t *testing.T) {
	for _, c := range []struct {
		nw, old string
		want    bool
	}{
		{"£345", "£295", true},
		{"£35", "30", true},
		{"8.15", "8.45", true},
		{"€25", "£15", false},
		{"9:30", "4", false},
	} {
		if got := sameShape(c.nw, c.old); got != c.want {
			t.Errorf("sameShape(%q, %q) = %v, want %v", c.nw, c.old, got, c.want)
		}
	}
}
