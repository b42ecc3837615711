package facts

import (
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/internal/prose"
	"github.com/contextd/contextd/memory"
)

var t0 = time.Date(2025, 5, 8, 13, 56, 0, 0, time.UTC)

func turn(seq int64, role, content string) memory.Message {
	return memory.Message{Seq: seq, Role: memory.Role(role), Content: content, CreatedAt: t0.Add(time.Duration(seq) * time.Minute)}
}

// extractOne runs Extract over one user turn.
func extractOne(role, content string) []memory.Fact {
	return Extract([]memory.Message{turn(1, role, content)})
}

func TestExtract(t *testing.T) {
	cases := []struct {
		name, role, content string
		kind, text          string // want one fact of this kind and text
	}{
		{"vegetarian", "user", "I am vegetarian, so no meat please.", memory.FactAttribute, "The user is vegetarian, so no meat please."},
		{"allergy", "user", "I'm allergic to caffeine.", memory.FactAttribute, "The user is allergic to caffeine."},
		{"prefers", "user", "I prefer boutique hotels.", memory.FactPreference, "The user prefers boutique hotels."},
		// Wanting to do a thing is a plan or an offer, not a taste.
		{"would like to", "user", "I would like to propose a fee of £225 per illustration.", memory.FactPlan, "The user would like to propose a fee of £225 per illustration."},
		{"would love to", "user", "Femi: I would love to take the Yaris in August.", memory.FactPlan, "Femi would love to take the Yaris in August."},
		{"would rather", "user", "I'd rather not carry cash on the trail.", memory.FactPreference, "The user would rather not carry cash on the trail."},
		{"sister", "user", "My sister lives in Lyon.", memory.FactAttribute, "The user's sister lives in Lyon."},
		{"job", "user", "I work as a nurse at the city hospital.", memory.FactAttribute, "The user works as a nurse at the city hospital."},
		{"kids", "user", "I have two kids.", memory.FactAttribute, "The user has two kids."},
		{"flight", "user", "I'm flying to Lisbon on June 3.", memory.FactPlan, "The user is flying to Lisbon on June 3."},
		{"pottery", "user", "Next month I start a pottery class.", memory.FactPlan, "Next month the user starts a pottery class."},
		{"puppy", "user", "I adopted a puppy last week.", memory.FactEvent, "The user adopted a puppy last week."},
		{"we agreed", "assistant", "We agreed to ship the beta on Friday.", memory.FactDecision, "Decision: We agreed to ship the beta on Friday."},
		{"let's go with", "user", "Let's go with the blue logo.", memory.FactDecision, "Decision: Let's go with the blue logo."},
		{"X it is", "user", "GHA it is then 🎉", memory.FactDecision, "Decision: GHA it is then 🎉"},
		{"we're dropping", "user", "we're dropping Buildkite.", memory.FactDecision, "Decision: We're dropping Buildkite."},

		{"decision label", "user", "Decision: cutover on June 15", memory.FactDecision, "Decision: Cutover on June 15"},
		{"named prefix", "user", "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.", memory.FactEvent, "Caroline went to a LGBTQ support group yesterday and it was so powerful."},
		{"named assistant prefix", "assistant", "Melanie: Yeah, I painted a lake sunrise last year!", memory.FactEvent, "Melanie painted a lake sunrise last year!"},
		{"my favourite", "user", "My favourite editor is Vim.", memory.FactPreference, "The user's favourite editor is Vim."},
		{"we went", "user", "Melanie: We went camping in the mountains last weekend.", memory.FactEvent, `Melanie said: "We went camping in the mountains last weekend."`},
		{"set a value", "user", "Use h = 0.25 instead.", memory.FactDecision, "Decision: Use h = 0.25 instead."},
		{"standing instruction", "user", "Always include version numbers when I ask about libraries.", memory.FactPreference, "Standing instruction: Always include version numbers when I ask about libraries."},
		{"standing, please never", "user", "please never use emojis in your answers", memory.FactPreference, "Standing instruction: please never use emojis in your answers"},
		{"standing, in a clause", "user", "I work from home, please only contact me by text or email, never a phone call before 10am.", memory.FactPreference,
			"Standing instruction: I work from home, please only contact me by text or email, never a phone call before 10am."},
		{"standing, always give", "user", "Please always give paces in min/km, never miles, I get confused.", memory.FactPreference,
			"Standing instruction: Please always give paces in min/km, never miles, I get confused."},
		{"standing, from now on", "user", "ok from now on, reply in Spanish please", memory.FactPreference, "Standing instruction: from now on, reply in Spanish please"},
		{"standing, with the fragment before it", "user", "pnpm pls. never npm in this repo, it wrecks the lockfile", memory.FactPreference,
			"Standing instruction: pnpm pls. never npm in this repo, it wrecks the lockfile"},
		{"standing, a heading opens its own", "user", "perfect size. ground rules before anyone does anything: NOTHING goes to aunt carol until the day before.", memory.FactPreference,
			"Standing instruction: ground rules before anyone does anything: NOTHING goes to aunt carol until the day before."},
		{"standing, a determiner is no pronoun", "user", "Thanks for sorting the printer yesterday, you're a star. Use this template for every invoice from now on.", memory.FactPreference,
			"Standing instruction: Use this template for every invoice from now on."},
		{"standing, with the sentence its pronoun stands for", "user", "Bank change: the new IBAN is DE91 4306 0967 1187 4420 00. Use that on every invoice from now on.", memory.FactPreference,
			"Standing instruction: Bank change: the new IBAN is DE91 4306 0967 1187 4420 00. Use that on every invoice from now on."},
		{"standing, don't ever", "user", "and don't ever cc my manager on these", memory.FactPreference, "Standing instruction: don't ever cc my manager on these"},

		// Preferences hold preferences: not the booking before, not a move,
		// not an errand.
		{"booking before a preference", "user", "Book Casa Amora for May 3-7, I'm vegetarian.", memory.FactAttribute, "The user is vegetarian."},
		{"errand after a preference", "user", "I'm vegetarian, book Casa Amora for May 3-7.", memory.FactAttribute, "The user is vegetarian."},
		{"clause led by but", "user", "It's hard to pick one, but I love the ryokan baths.", memory.FactPreference, "The user loves the ryokan baths."},
		{"a move is an event", "user", "I moved from Berlin to Munich last month.", memory.FactEvent, "The user moved from Berlin to Munich last month."},
		{"moving is a plan", "user", "I'm moving to Munich in June.", memory.FactPlan, "The user is moving to Munich in June."},
		{"would like to book", "user", "I'd like to book the Shigetsu dinner.", memory.FactPlan, "The user would like to book the Shigetsu dinner."},
		{"we live in", "user", "We live in Berlin with two cats.", memory.FactAttribute, `The user said: "We live in Berlin with two cats."`},
		{"a plan after an attribute", "user", "We live in Berlin and we are planning a trip to Japan.", memory.FactAttribute, `The user said: "We live in Berlin."`},
		{"a list of likes stays whole", "user", "I love hiking, swimming and reading.", memory.FactPreference, "The user loves hiking, swimming and reading."},
		// What someone said is not who they are to the speaker.
		{"reported speech", "user", "Also my running club friend Jana told me the Munich half is very crowded.", memory.FactAttribute, "The user's running club friend Jana."},
		{"reported after a statement", "user", "My brother lives in Oslo and says hi.", memory.FactAttribute, "The user's brother lives in Oslo."},
		{"the reporter's pronoun goes with the report", "user", "my friend Lucy does events, she said £250 for 3 hours.", memory.FactAttribute, "The user's friend Lucy does events."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := extractOne(c.role, c.content)
			if len(fs) != 1 {
				t.Fatalf("got %d facts %+v, want 1", len(fs), fs)
			}
			f := fs[0]
			if f.Kind != c.kind || f.Text != c.text {
				t.Fatalf("got %s %q, want %s %q", f.Kind, f.Text, c.kind, c.text)
			}
			if len(f.Seqs) != 1 || f.Seqs[0] != 1 || !f.ValidAt.Equal(t0.Add(time.Minute)) || f.Source != memory.FactSourceExtractive || f.ID != memory.FactID("", "", f.Seqs, f.Text) {
				t.Fatalf("bad fact fields %+v", f)
			}
		})
	}
}

func TestExtractRejects(t *testing.T) {
	cases := []struct{ name, role, content string }{
		{"greeting", "user", "Hey Mel! Good to see you! How have you been?"},
		{"assistant's advice", "assistant", "Always back up your data before an upgrade."},
		{"exhortation", "user", "Never give up!"},
		{"clipped statement", "user", "Always here to help."},
		{"love that", "user", "Caroline: I love that! It's so cool."},
		{"hear more", "user", "I'd love to hear more about it."},
		{"thanks", "user", "Thanks, I appreciate it so much!"},
		{"i'm a bit", "user", "I'm a bit tired today."},
		{"assistant first person", "assistant", "I fixed the login bug and I love helping with Go."},
		{"code", "user", "```go\nI love Go\n```"},
		{"latex", "user", `I prefer \frac{a}{b} forms over decimals.`},
		{"url", "user", "I prefer https://example.com/hotels for booking."},
		{"table", "user", "| I prefer | tea |\n|---|---|"},
		{"vague past", "user", "I thought about it and I felt good."},
		{"system", "system", "I prefer concise answers."},
		{"agreed alone", "user", "Maria: Agreed, John!"},
		{"i'll check", "user", "I'll check it out, thanks!"},
		{"only what someone said", "user", "My mom thinks I should rest more."},
		{"here it is", "user", "ok here it is."},
		{"what it is", "user", "That is what it is."},
		{"asking is small talk", "user", "I know its annoying and I hate asking."},
		{"a verb and a pronoun", "user", "I'd love to read it."},
		{"an elided verb", "user", "me, washed them. well my mum did"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if fs := extractOne(c.role, c.content); len(fs) != 0 {
				t.Fatalf("want no fact, got %+v", fs)
			}
		})
	}
}

func TestExtractCapsPerTurn(t *testing.T) {
	fs := extractOne("user", "I adopted a puppy last week. I prefer boutique hotels. I'm allergic to caffeine. We decided to move the launch to June.")
	if len(fs) != MaxPerTurn {
		t.Fatalf("got %d facts, want %d: %+v", len(fs), MaxPerTurn, fs)
	}
	// The higher ranks win (the event is dropped), in sentence order.
	if fs[0].Kind != memory.FactPreference || fs[1].Kind != memory.FactAttribute || fs[2].Kind != memory.FactDecision {
		t.Fatalf("kinds %s %s %s", fs[0].Kind, fs[1].Kind, fs[2].Kind)
	}
}

func TestUnanswered(t *testing.T) {
	turns := []memory.Message{
		turn(1, "user", "What is the capital of France?"),
		turn(2, "assistant", "Paris."),
		turn(3, "user", "How are you? And how big is the Paris metro network?"),
	}
	qs := Unanswered(turns)
	if len(qs) != 1 || qs[0].Seq != 3 || qs[0].Text != "How big is the Paris metro network?" {
		t.Fatalf("Unanswered = %+v", qs)
	}
	fs := Extract(turns)
	if len(fs) != 1 || fs[0].Kind != memory.FactOther || !strings.Contains(fs[0].Text, `Unanswered question from the user: "How big`) {
		t.Fatalf("Extract = %+v", fs)
	}
	// Between two people, a question answered by the other one is closed.
	two := []memory.Message{
		turn(1, "user", "Caroline: Which adoption agencies did you look into last year?"),
		turn(2, "assistant", "Melanie: I looked at two of them."),
		turn(3, "user", "Caroline: Which painting classes would you recommend for beginners?"),
	}
	if qs := Unanswered(two); len(qs) != 1 || qs[0].Seq != 3 || qs[0].Speaker != "Caroline" {
		t.Fatalf("Unanswered = %+v", qs)
	}
}

func TestForChat(t *testing.T) {
	fs := ForChat(memory.ChatKey{Tenant: "t", ChatID: "c"}, extractOne("user", "I prefer boutique hotels."))
	if fs[0].ChatID != "c" || fs[0].ID != memory.FactID("t", "c", fs[0].Seqs, fs[0].Text) {
		t.Fatalf("ForChat = %+v", fs[0])
	}
}

func TestThirdPerson(t *testing.T) {
	cases := []struct{ in, want string }{
		{"I love my kids and they love me.", "Caroline loves their kids and they love Caroline."},
		{"My dog is called Max.", "Caroline's dog is called Max."},
		{"I really enjoy pottery.", "Caroline really enjoys pottery."},
		{"I don't eat meat.", "Caroline doesn't eat meat."},
		{"I've been painting for years.", "Caroline has been painting for years."},
		{"I try to relax.", "Caroline tries to relax."},
		{"I watch movies.", "Caroline watches movies."},
		{"I went home.", "Caroline went home."},
		{"I can swim.", "Caroline can swim."},
		{"I'm 34 now, I need a door that locks", "Caroline is 34 now, Caroline needs a door that locks"},
		{"I agreed to it.", "Caroline agreed to it."},
	}
	for _, c := range cases {
		if got := prose.ThirdPerson(c.in, "Caroline"); got != c.want {
			t.Errorf("thirdPerson(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestIsConstraint(t *testing.T) {
	for _, c := range []struct {
		content string
		want    bool
	}{
		{"I'm vegetarian.", true},
		{"btw i dont eat meat anymore, vegetarian since may", true},
		{"I'm allergic to peanuts.", true},
		{"I prefer boutique hotels.", false},
		{"I love hiking in the Alps.", false},
		{"I went to a vegan festival last week.", false}, // an event, not who one is
		{"I went vegan last week.", true},
		{"heads up for restaurants - I'm coeliac, so proper gluten-free", true},
		{"i am celiac btw", true},
		// As texting says it, and of someone named.
		{"also reminder for whoever does food: im veggie and tom is dairy free", true},
		{"my gran is coeliac so no bread", true},
		{"the soup is dairy free", false},
		{"they do a risotto which is vegan", false},
		{"soup is dairy free, bread is vegan, the rest has butter", false},
		{"and pizza is vegan there, and curry is gluten free", false},
		{"so mine is vegan", false},
		{"Metric units please. We're both vegetarian.", true},
		{"we are all vegan btw", true},
		{"we're out of vegan sausages", false},
	} {
		fs := extractOne("user", c.content)
		got := false
		for _, f := range fs {
			got = got || IsConstraint(f)
		}
		if got != c.want {
			t.Errorf("%q: constraint %v (facts %+v), want %v", c.content, got, fs, c.want)
		}
	}
}

func TestIsAboutFood(t *testing.T) {
	for q, want := range map[string]bool{
		"Give me a recovery snack idea for after a long run.": true,
		"Where should we have dinner in Hakone?":              true,
		"what should I eat before the race":                   true,
		"Which Postgres version does CI run?":                 false,
		"When do my night shifts start?":                      false,
	} {
		if got := IsAboutFood(q); got != want {
			t.Errorf("IsAboutFood(%q) = %v, want %v", q, got, want)
		}
	}
}

func TestIsStanding(t *testing.T) {
	for _, c := range []struct {
		content string
		want    bool
	}{
		{"Always cite the source when I ask about statistics.", true},
		{"I prefer boutique hotels.", false},
		// Rules laid down as a list, each a bare phrase.
		{"Ground rules: always `docker compose` (the v2 plugin), never `docker-compose`. No `version:` key at the top of compose files. Bind mounts under /srv, no named volumes.", true},
		{"I've tried:\n```javascript\nmodule.exports = {\n  rules: {\n    'type-enum': ['feat'],\n  },\n};\n```\nBut I'm not sure", false}, // code
		{"Rules of the game are simple", false},
		// Rules announced for the whole of the work, in whatever words
		// the rules then take.
		{"Ground rules first: everything in TypeScript on the JS side, no plain JS.", true},
		{"A few rules for the whole process please. British spelling.", true},
		// One fact: the list's first sentence, its heading left aside, is
		// in the list (it was a second standing fact beside it).
		{"Ground rules first: keep answers short and in bullet points, always use 24-hour times. If something is urgent I'll call the vet.", true},
		{"Standing rules for everything we do: invoices are bilingual, German first, then English underneath.", true},
		{"standing rule for this chat pls - no voice notes, I'm on the ward all day", true},
		{"Not listed, not conservation. Also a standing request: please give me all prices including VAT.", true},
		{"A few ground rules please. Number every step and tell me exactly where to click.", true},
		{"Ground rules please, we have none at the club yet.", false},
		{"I'd like your help with my invoices. Some ground rules first.", false}, // the rules come in the next turn
		{"A few things to keep in mind for all of this: Jonas had knee surgery last year, so avoid long steep descents.", true},
		{"Things to keep in mind when buying a used car.", false},
		{"A few ground rules for the whole time, please: quiz me one question at a time.", true},
		{"Some standing rules before we go further: British spelling throughout.", true},
		{"Ground rules are the same as the last club's, I think.", false},
		// A list under a heading with its asking word: the sentence with
		// code in it no pattern reads, the label says it stands.
		{"Standing rules please: tidyverse style and the native pipe |> everywhere, never %>%. Report p-values to three decimals.", true},
		{"btw house rules pls: no calls after 9, texts are fine", true},
		{"some rules please: where should I park after 6pm?", false},
		{"I read the rules for the whole competition last night and they are strict.", false},
		{"The rules for the whole league changed in May.", false},
		{"some rules: where should I park after 6pm?", false},
		{"Please always answer in French.", true},
		{"Never give up on your dreams.", false},
		{"They were an important part of my wedding decor and always remind me of that day.", false}, // a predicate, not a request
		{"It arrived late, so please don't ever book that courier again.", true},
		{"Only contact me by email.", true},
		{"I work from home, only text me after 6.", true},
		{"The only thing I need is a quiet room.", false},
		{"and cc bea on every invoice email pls, bea@ledgerlane.co.uk, she does my books", true},
		{"I'll put every effort into the launch.", false},
		{"I'll also keep her updated and plan to check in every Wednesday.", false},
		{"pnpm pls. never npm in this repo, it wrecks the lockfile", true},
		{"never mind, found it", false},
		{"can we start putting every receipt for house stuff in the blue folder in the kitchen drawer. ALWAYS.", true},
		{"we went to the beach. always fun.", false},
		// "so never" or "and always" opening a clause, the verb bare, is an
		// order; in the past it tells what happened.
		{"Days: anything except Wednesday, that's choir rehearsal, so never put runs on Wednesdays.", true},
		{"we tried the place once, so never went back", false},
		{"she moved to Leeds, and never looked back", false},
		{"Tom visits every weekend, but never stays the night.", false}, // habits
		{"We go to Spain every summer, and always rent a car in Malaga.", false},
		{"Honestly it's fine, so never mind the invoice then.", false},
		{"House rules for the cabin: no pets, no smoking, checkout by 10am.", false},
	} {
		fs := extractOne("user", c.content)
		got := len(fs) == 1 && IsStanding(fs[0])
		if got != c.want {
			t.Errorf("%q: standing %v (facts %+v), want %v", c.content, got, fs, c.want)
		}
	}
}

// A rule list is one fact that holds every rule it can, in the user's
// words, without its heading: the heading "for the whole project" is the
// scope the standing pattern reads, so a list that is not prose to it
// ("never call sleep() in tick()") is still laid down; and a rule the
// fact's clip would cut is left to a fact of its own, not lost.
func TestRuleListFacts(t *testing.T) {
	for _, c := range []struct {
		content string
		want    []string // each in one standing fact
	}{
		{"Hi, I'm Ola and I'm writing a game loop in C. Ground rules for the whole project: plain C99 with SDL2, one file game.c, and never call sleep() in tick(), frames must not block. SI units only, please.",
			[]string{"never call sleep() in tick()", "one file game.c", "SI units only"}},
		{"I bill 21% VAT. Some standing rules for everything we do: quotes are always in Dutch, English copy below. Amounts written Dutch-style, like 1.250,00 €. And never put my hourly rate in anything a client sees, I quote per job. Sign emails \"Groet, Bram\".",
			[]string{"quotes are always in Dutch", "never put my hourly rate in anything a client sees"}},
		// A heading that is a sentence of its own, before its rules: the
		// rules are the fact, never the heading alone.
		{"Ground rules first. Keep replies short, bullet points where possible. Always give costs in USD with a running total.",
			[]string{"Keep replies short, bullet points where possible"}},
		{"thank you!! also one request for this whole thing. Keep all the hospital stuff in THIS chat, not the family group.",
			[]string{"Keep all the hospital stuff in THIS chat"}},
		{"ok one rule for this chat pls, after last year's chaos: every payment goes into Splitwise, group \"Birchfields\", not just in the chat.",
			[]string{"every payment goes into Splitwise"}},
		// A scope of its own between the heading and its colon.
		{"Ground rules, for today and every day of this rollout: always run a dry run first and paste the plan here before anything is applied. And never deploy on a Friday, no exceptions, not even hotfixes, unless I say so in this thread.",
			[]string{"always run a dry run first", "never deploy on a Friday"}},
		// A rule asked as a question is no rule read here, and its
		// heading lays down nothing.
		{"thank you!! also one request for this whole thing. can we keep all the hospital stuff in THIS chat?", nil},
		// Rules no one lays down.
		{"The rules of the game are simple. We play twice a week and the loser buys coffee.", nil},
	} {
		var standing []string
		for _, f := range extractOne("user", c.content) {
			if IsStanding(f) {
				standing = append(standing, f.Text)
				if c.want == nil {
					t.Errorf("%q: standing fact %q", c.content, f.Text)
				}
				if strings.Contains(f.Text, "rules for") || strings.Contains(f.Text, "request for") || strings.Contains(f.Text, "rules first") || strings.HasSuffix(f.Text, "…") {
					t.Errorf("%q: fact %q keeps its heading or is cut", c.content, f.Text)
				}
			}
		}
		for _, w := range c.want {
			found := false
			for _, s := range standing {
				found = found || strings.Contains(s, w)
			}
			if !found {
				t.Errorf("%q: no standing fact holds %q (standing: %q)", c.content, w, standing)
			}
		}
	}
}
