package facts

import (
	"fmt"
	"strings"
	"testing"
)

// A turn that changed a choice, and names in another sentence what it
// rejected, replaces an older turn naming that; the cue alone, a hedge, a
// name spoken to or the new choice itself replace nothing.
func TestReplacement(t *testing.T) {
	cases := []struct {
		name, turn, older string
		want              bool
		quote             string // "" = not checked
	}{
		{"changed to, the old one too dark",
			`tile update. we went to the showroom and in real life the Sage Green looked way too dark in our room (north facing). we've changed to "Pebble Grey" same range, same size 7.5x30, it's £48/m2 so also cheaper. floor stays the dark grey porcelain`,
			`great. wall tile we like is the Mandarin Stone "Sage Green" zellige look, 7.5x30cm, £52/m2.`, true,
			`[…] we went to the showroom and in real life the Sage Green looked way too dark in our room (north facing). we've changed to "Pebble Grey" same range, same size 7.5x30, it's £48/m2 so also cheaper. […]`},
		{"someone took another's place",
			`Morning. Given yesterday, full rollout moves a day, so Thursday 19 March instead of Wednesday. Also Ravi is sick, Elena Petrova swapped with him and is on call for checkout the rest of the week.`,
			`Ravi Menon is on call for checkout this week, pager alias checkout-oncall.`, true, ""},
		{"a word a sentence opens with names nothing",
			`Morning. Given yesterday, full rollout moves a day, so Thursday 19 March instead of Wednesday. Also Ravi is sick, Elena Petrova swapped with him and is on call for checkout the rest of the week.`,
			`Also we need a third read replica for orders-db before Wednesday, the fee lookup adds reads.`, false, ""},
		{"covering for someone",
			`front desk update: Priya is unwell today, Joe is covering for her.`,
			`front desk today: Priya until 2, then Sam`, true, ""},
		{"taking over from someone out", "Ravi is off sick. Sam took over from him.", "Ravi runs the release on Thursday.", true, ""},
		{"a drive taking over 3 hours", "The drive takes over 3 hours. Marco doesn't mind though, he loves driving.", "Marco is driving us to Porto on Saturday.", false, ""},
		{"kids taking over a room", "The kids took over the living room with their Lego. Noah wasn't thrilled about sharing.", "Noah is staying with us this weekend.", false, ""},
		{"filling in for no one", "Lisa isn't a morning person, so I'm filling in for the forms.", "Lisa does the forms on Monday.", false, ""},
		{"off as a thing's state, not as the lights'",
			`Please don't park at the club itself, Dad will recognise your cars - park at Broomgrove school car park instead, it's a 3 minute walk down the footpath at the back. Please be inside by 7:30 at the latest because Ben is bringing Dad in at 7:45 and we'll have the lights off.`,
			`one thing from me for the whole party: no seafood anywhere please. Ben's uncle Martin is seriously allergic to shellfish`, false, ""},
		{"out as a thing's state: pulled out",
			`Bad news. Jonas is pulling out, he's leaving GEOMAR for a job in industry. We're going with Dr Marta Ruiz at IEO Vigo instead.`,
			`Partner is Dr Jonas Albrecht at GEOMAR in Kiel, who runs the sequencing.`, true, ""},
		{"off as a thing's state: coming off",
			`also the vet called, she's coming OFF the apoquel. she had her cytopoint injection today instead which lasts about a month.`,
			`vet says it's probably an environmental allergy. she's started her on Apoquel, 5.4mg, half a tablet every morning`, true, ""},
		{"off as a thing's state: called it off",
			`bad news, Ashgrove called it off. we're going with Brookfield Lodge instead.`,
			`booked Ashgrove Hall for the 14th, £300`, true, ""},
		{"off as a discount rejects nothing",
			`change of plan on the promo: scrap SPRING15. We're doing SPRING20 instead, 20% off but lenses only, same dates. Cameras at 15% off kill my margin after the Portra and shipping.`,
			`Stay with Portra. Next: a customer email came in this morning.`, false, ""},
		{"going with after all, the old one would not",
			`ok change of heart. we're going with the second quote after all, Keystone. Harlow wouldn't commit to the 2yr warranty in writing. Keystone can start 12 Oct like they said`,
			`thats really helpful. I think we go with Harlow, the cheapest and earliest.`, true,
			`[…] we're going with the second quote after all, Keystone. Harlow wouldn't commit to the 2yr warranty in writing. […]`},
		{"instead, the old one off, in lower case",
			`change of plan AGAIN ashgrove had a flood so they cant take her. the coordinator found a room at Brookfield Lodge instead, 41 Mercer Street. so ashgrove is off`,
			`Plan is discharge on Thursday to Ashgrove House care home. Address is Ashgrove House, 9 Linden Lane.`, true,
			`change of plan AGAIN ashgrove had a flood so they can't take her. the coordinator found a room at Brookfield Lodge instead, 41 Mercer Street. […]`},
		{"a person's name by its first word",
			`changed my mind on the photographer. leah's contract had a £400 travel fee buried in the small print and she wouldn't drop it. we went with Ollie Brandt, £1,650 all in`,
			`photographer - we both love Leah Marsh's stuff, £1,850 from ceremony to first dance. booking her`, true, ""},
		{"a thing named in lower case, before its negation",
			`scratch that, community fibre doesnt cover our street yet, only up to the corner shop apparently. going with Zen instead, £32/mo, starts 1 may`,
			`community fibre is £25 for 500mb, no contract`, true, ""},
		{"rejected in the clause before instead",
			`change of plan: Felix is off sick all week, Grace is reviewing #4821 instead. she's stricter on tests so we should add some`,
			`Felix is reviewing the PR tomorrow, he knows the feature store code`, true, ""},
		{"the new choice in the clause after instead is not rejected",
			`change of plan: Felix is off sick all week, Grace is reviewing #4821 instead.`,
			`Grace wrote the feature store`, false, ""},
		{"a clause before instead without a name rejects no choice",
			`while the work's on, parents can't wait poolside, there's a viewing gallery upstairs instead, and the lockers need a £1 coin`,
			`hi all! made this group for the 4B parents doing the swim carpool`, false, ""},
		{"a sentence whose lower case is longer is left whole (no panic)",
			"change of plan: " + strings.Repeat("Ⱥ", 32) + " Felix is off, Grace instead",
			`Felix is reviewing the PR`, false, ""},
		{"a pronoun before the negation names nothing",
			`it doesnt matter, we're going with the museum instead`,
			`it is raining, the park is wet`, false, ""},
		{"a thing named in lower case, the old turn not naming it",
			`scratch that, community fibre doesnt cover our street yet. going with Zen instead`,
			`virgin is £30 a month`, false, ""},
		{"a name's common first word does not name it",
			`we went with the Lake District instead. the new flat wasn't ready.`,
			`we looked at the New Forest cabins last week.`, false, ""},
		{"the new choice is no old one",
			`we're going with the second quote after all, Keystone. Harlow wouldn't commit to the warranty.`,
			`Keystone Renovations quoted £11,400 with a 5 yr warranty.`, false, ""},
		{"a name spoken to is rejected nothing",
			`Sorry Melanie, I can't make it. I'll go to the gym instead.`,
			`I told Melanie about the race.`, false, ""},
		{"who says it is no thing rejected",
			`Actually make it Fibre 300 instead. Dev pointed out we never use more than about 200 anyway and I'd rather save the £7.`,
			`Hi, this is Dev, Priya's husband. There's a key safe by the back door instead, code 4471.`, false, ""},
		{"one said of is rejected, whoever tells it",
			`we're going with Keystone instead. Dev says Harlow won't do the warranty.`,
			`I think we go with Harlow, the cheapest.`, true, ""},
		{"a booking cancelled, said of what it was",
			`ugh, Avon Van Hire rang, they double booked the minibus so that's cancelled. we'll go in two cars, me and tomasz driving`,
			`booked a 9 seater from Avon Van Hire, £140 for the day`, true, ""},
		{"a cancellation weighed is none",
			`if Avon Van Hire get cancelled we'll go in two cars`,
			`booked a 9 seater from Avon Van Hire, £140 for the day`, false, ""},
		{"a cancellation asked for is none",
			`Avon Van Hire is too dear, please get it cancelled`,
			`booked a 9 seater from Avon Van Hire, £140 for the day`, false, ""},
		{"a hedge is no change",
			`Harlow wouldn't commit to the warranty. maybe we go with Keystone instead?`,
			`I think we go with Harlow.`, false, ""},
		{"a cue without a rejection names nothing replaced",
			`right, decision made, we're doing Porto instead. Same dates for now.`,
			`I'm thinking Lisbon, 12-17 May.`, false, ""},
		{"instead of is the update patterns' (named both)",
			`Lisbon is too pricey. Let's book Porto instead of it.`,
			`I'm thinking of Lisbon.`, false, ""},
		{"going somewhere is no choice changed",
			`we went to the showroom. Harlow wasn't there.`,
			`I think we go with Harlow.`, false, ""},
		{"a word opening its sentence, capitalised in the rejection too",
			`Harlow wouldn't commit. we've switched to Keystone.`,
			`Harlow & Sons it is: £9,850, starting 28 September.`, true, ""},
		{"a word opening its sentence, not a name in the rejection",
			`no address for the lodge yet. we've switched to Brookfield.`,
			`Address is Ashgrove House.`, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := DetectReplacement(tc.turn)
			i, got := 0, false
			if ok {
				i, got = r.Replaces(tc.older)
			}
			if got != tc.want {
				t.Fatalf("replaces = %v, want %v (detected %v)", got, tc.want, ok)
			}
			if tc.quote != "" {
				if q := r.Quote(i, "[…]"); q != tc.quote {
					t.Errorf("quote\n got %q\nwant %q", q, tc.quote)
				}
			}
		})
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{`wall tile we like is the Mandarin Stone "Sage Green" zellige look`, `["Mandarin Stone" "Sage Green"]`},
		{`Address is Ashgrove House, 9 Linden Lane. Visiting is any time.`, `["Ashgrove House" "Linden Lane"]`},
		{`shes been MOVED to ward 4 on Tuesday, I think`, `[]`},
		{"1. **Static Files**: serve them from `Nginx`", `[]`},
		{"- Mum: up to ten of her friends", `[]`},
		{"Piggin' Out quoted £24 a head", `[]`},
		{"Ceremony at 3pm. Let Leah Marsh know.", `["Leah Marsh"]`},
	} {
		if got := fmt.Sprintf("%q", Names(tc.text)); got != tc.want {
			t.Errorf("Names(%q) = %s, want %s", tc.text, got, tc.want)
		}
	}
}
