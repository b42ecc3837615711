package lex

import (
	"slices"
	"strings"
	"testing"
)

func TestValueKinds(t *testing.T) {
	for _, c := range []struct {
		text string
		want string // kinds joined by spaces
	}{
		{"sorry typo, its 07836 551 240 not 204", "#phone"},
		{"brand colours are forest green #2E4A3F and cream #F3E9DC", "#colour"},
		{"that was #bad of them #fail", ""},
		{"call me on +44 20 7946 0958 after 6", "#phone"},
		{"the US office is 555-123-4567", "#phone"},
		{"ok changed it, it's 2803 now", "#code"},
		{"The barrier code for the rear car park is 1966# and it changes every quarter", "#code"},
		{"press 12# for the lift", ""},
		{"PP-7731-MH. and i need a packed lunch that day, no nuts", "#code"},
		{"logged it as INC-0048812, priority P3", "#code"},
		{"yes same acc, sort 30-94-57 acc ending 4417, ref LARK14 like always", "#code"},
		{"it's £1,895 not £1,920. agent gave me the wrong figure", "#money"},
		{"max 180 euro a night pls", "#money"},
		{"From 5 February: Thursdays 18:30, same Zoom.", "#time #day"},
		{"dont ring me after 9pm unless its an actual emergency", "#time"},
		{"visiting is 10am-8pm", "#time"},
		{"we've been moved to saturday 21 november, same time", "#day"},
		{"release pushed back to thu 11 feb", "#day"},
		{"a wedding reception pencilled in on the 14th before us", "#day"},
		{"new url is rediss://default:<token>@eu1-sharp-owl-31337.upstash.io:6379. now on boot", "#host"},
		{"host db-shop-pg-do-user-1184-0.b.db.ondigitalocean.com port 25060, db shop", "#host #code"},
		{"I'll add ap-invoices@harrowvale.co.uk once Dana's approval is on the ticket", "#email"},
		{"the api is on api.example.com now", "#host"},
		{"see you Thursday!", "#day"},
		{"drop off at 14 Larch Close before 2pm", "#time #address"},
		{"Unit 4, Coldharbour Yard, Leeds LS9 8AB", "#address"},
		{"we live at 41 mercer street now", "#address"},
		{"Seaview House, 14 Marine Parade, sleeps 8", "#address"},
		{"office is at 350 Fifth Avenue", "#address"},
		{"the flat is 12 Primrose Hill, top bell", "#address"},
		{"we walked up 2 hills before lunch", ""},
		// None.
		{"order history p95 went from 420ms to 35ms lol", ""},
		{"she's 24.5kg now, on 2.5mg twice a day", ""},
		{"set primary_region in fly.toml; version 4.2.2 is out", ""},
		{"we have 2 close friends coming", ""},
		{"back in 2026 we had 3 of them", ""},
		{"Yes, each machine runs its own node-cron.", ""},
		{"26 119 rows copied", ""},
		// Found in review: fractions, ratings, ordinals, counts, sizes, a
		// video's lines, a man who sat.
		{"open 24/7, rate it 9/10, add 3/4 cup", ""},
		{"the 2nd one is better, on the 3rd floor, the 1st attempt", ""},
		{"I sat 4 hours in traffic", ""},
		{"the 2 may conflict", ""},
		{"walked 10000 steps and wrote 1500 words", ""},
		{"sizes 10 12 14 16 18, p 0.05 0.01 0.001", ""},
		{"watch it in 720p", ""},
		// And what the first look missed.
		{"see you Thurs", "#day"},
		{"it's on gov.uk", "#host"},
		{"due 12/06, or on the 14th.", "#day"},
		{"+1 555 123 4567", "#phone"},
		// A mobile prefix of one digit after the country code (Dutch, French).
		{"it's +31 6 4188 2093 now", "#phone"},
		{"+33 6 12 34 56 78", "#phone"},
		{"30 6 4188 2093", "#code"}, // no country code: no number to ring
		{"+1.5 22.50 33.75", ""},    // numbers, no phone
	} {
		got := strings.Join(ValueKinds(c.text), " ")
		if got != c.want {
			t.Errorf("ValueKinds(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestAskedKinds(t *testing.T) {
	for _, c := range []struct {
		query string
		want  string
	}{
		{"what's the best number to call Olu on?", "#phone"},
		{"what hex codes should the design use", "#code #colour"},
		{"the new carer can't get in, what's the code for the key box", "#code"},
		{"did the museum trip get paid? school wants the reference", "#code #money"},
		{"how much do we owe each month from april and which account does it go to?", "#money"},
		{"remind me what day and time our weekly lesson is now?", "#time #day"},
		{"when is baba seeing the surgeon and who's driving him", "#time #day"},
		{"which evening do the bins have to go out now?", "#day"},
		{"give me the connection details for the new database", "#host"},
		{"which shared inbox does Olu need set up?", "#email"},
		{"what's the delivery address for the market stall?", "#address"},
		{"the market wants my insurance policy number again", "#code"},
		{"biscuit is limping, whats the vet's number?", "#phone #code"}, // someone's number: one to ring
		{"what’s her number", "#phone #code"},
		{"what's the PO number for the invoice", "#code"},
		{"what time is the ceremony now?", "#time"},
		{"is the fundraiser still on the 14th, and what date is the raffle?", "#day"},
		// None.
		{"how many miles were on it when I took it home?", ""},
		{"what did we cancel due to the rain", ""},
		{"who's in charge of the kids", ""},
		{"how much time do we need", ""},
		{"what did Caroline think of the support group?", ""},
		{"which postgres user should the application log in with now?", ""},
	} {
		got := strings.Join(AskedKinds(c.query), " ")
		if got != c.want {
			t.Errorf("AskedKinds(%q) = %q, want %q", c.query, got, c.want)
		}
	}
}

// A kind is no word: no run of any text is one.
func TestKindsMeetNoWord(t *testing.T) {
	for _, k := range kindNames {
		if slices.Contains(Runs(k), k) || len(Terms(k)) > 0 && Terms(k)[0] == k {
			t.Errorf("%s is a term of text", k)
		}
	}
}

// BenchmarkValueKinds: the cost each indexed turn pays (the sparse
// encoder calls it once per document).
func BenchmarkValueKinds(b *testing.B) {
	turns := []string{
		"ok couple of things before tuesday so you have it all. first, excel in citrix is fine for small stuff but the big consolidation workbook crashes it",
		"sorry typo, its 07836 551 240 not 204",
		"Yes, each machine runs its own node-cron. Either pin it to one machine via `FLY_MACHINE_ID`, or take a Redis lock with `SET NX EX` and skip if it's held.",
		"I went to a LGBTQ support group yesterday and it was so powerful.",
		"Fracture clinic rang. The 9th is off, consultant's away. They've moved her to Thursday 11 June at 9:50am, same place.",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ValueKinds(turns[i%len(turns)])
	}
}

// FuzzValueKinds: any text gives known kinds, each once, in order, and
// never panics (every indexed turn is read for values).
func FuzzValueKinds(f *testing.F) {
	for _, s := range []string{"sorry typo, its 07836 551 240 not 204", "From 5 February: Thursdays 18:30", "£1,895 at 14 Larch Close", "a@b.co rediss://x:1@h.upstash.io:6379", "+44 ( 0) 20", "the 1st", "1/", "HG2 0LS", "12:6", "-£", "5p", "2026-11-0", "Street", "9 Street", "é日本 12 november"} {
		f.Add(s, "what's the number to call on, and when?")
	}
	f.Fuzz(func(t *testing.T, text, query string) {
		for _, ks := range [][]string{ValueKinds(text), AskedKinds(query)} {
			last := -1
			for _, k := range ks {
				i := slices.Index(kindNames[:], k)
				if i < 0 || i <= last {
					t.Fatalf("kinds %q: unknown, repeated or out of order", ks)
				}
				last = i
			}
		}
	})
}
