package extractive

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/memory"
)

func msgs(start int64, pairs ...string) []memory.Message {
	var out []memory.Message
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, memory.Message{Seq: start + int64(i/2), Role: memory.Role(pairs[i]), Content: pairs[i+1]})
	}
	return out
}

func summarize(t *testing.T, prev *memory.Summary, turns []memory.Message, maxTokens int) memory.Summary {
	t.Helper()
	s := New()
	s.now = func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }
	res, err := s.Summarize(context.Background(), memory.SummarizeRequest{Prev: prev, Turns: turns, MaxTokens: maxTokens})
	if err != nil {
		t.Fatal(err)
	}
	return res.Summary
}

func contains(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(strings.ToLower(s), strings.ToLower(sub)) {
			return true
		}
	}
	return false
}

func entity(list []memory.Entity, name string) (memory.Entity, bool) {
	for _, e := range list {
		if strings.EqualFold(e.Name, name) {
			return e, true
		}
	}
	return memory.Entity{}, false
}

func TestEntities(t *testing.T) {
	cases := []struct {
		text, name, typ, detail string
	}{
		{"I'm meeting with Maria Silva tomorrow about the launch.", "Maria Silva", TypePerson, "meeting with Maria Silva"},
		{"The contract is with Acme Corp for the whole year.", "Acme Corp", TypeOrganization, "contract"},
		{"We are flying to New York in spring.", "New York", TypePlace, "flying"},
		{"Please write to bob.smith@example.org when ready.", "bob.smith@example.org", TypeEmail, "write to"},
		{"Reserve Shigetsu for dinner on Oct 2.", "Shigetsu", TypeName, "Reserve Shigetsu"},
		{"Booked Casa Amora for May 3-7.", "Casa Amora", TypeName, "Booked"},
		{"Booked Terre à Terre instead, sat 8:30pm table for 5.", "Terre à Terre", TypeName, "Booked"},
		{"The script raised KeyError on the third row.", "KeyError", TypeCode, "raised"},
		{"I met NullPointerException in the logs.", "NullPointerException", TypeCode, "logs"},
		{"Upgrade the client to v2.3.1 first.", "v2.3.1", TypeVersion, "Upgrade"},
		{"We still run Postgres 15.4 in production.", "Postgres 15.4", TypeVersion, "production"},
		{"Dr Watson said the results look fine.", "Dr Watson", TypePerson, "results"},
		{"She works at Globex and likes it.", "Globex", TypeOrganization, "works at"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := summarize(t, nil, msgs(1, "user", c.text), 0)
			e, ok := entity(s.Entities, c.name)
			if !ok {
				t.Fatalf("entity %q not found in %+v", c.name, s.Entities)
			}
			if e.Type != c.typ {
				t.Errorf("type = %q, want %q", e.Type, c.typ)
			}
			if !strings.Contains(e.Details, c.detail) {
				t.Errorf("details %q lack %q", e.Details, c.detail)
			}
		})
	}
}

// An abbreviation in capitals is an organisation's or a role's, never a
// person's name, whatever word comes before it ("with EPAL", "ask the
// OT"); a name before "said" stays a person.
func TestAcronymIsNoPerson(t *testing.T) {
	sum := summarize(t, nil, msgs(1, "user", "Water is with EPAL and stays in the landlord's name. Call EPAL about the meter. Marta said so, Marta knows."), 2000)
	types := map[string]string{}
	for _, e := range sum.Entities {
		types[e.Name] = e.Type
	}
	if types["EPAL"] == TypePerson || types["EPAL"] == "" {
		t.Errorf("EPAL typed %q, want a name that is no person's: %+v", types["EPAL"], sum.Entities)
	}
	if types["Marta"] != TypePerson {
		t.Errorf("Marta typed %q, want person: %+v", types["Marta"], sum.Entities)
	}
}

// TestEntitiesAreNames: dates are no entities, a verb opening the sentence
// is no part of a name, and one name said in several forms is one entity.
// A name in quotes is a label: "to 'FINAL'" is no place.
func TestQuotedNameIsNoPlace(t *testing.T) {
	sum := summarize(t, nil, msgs(1, "user", "btw i renamed the spreadsheet tab from 'draft' to 'FINAL', ignore the old tabs. we fly to Lisbon on friday"), 2000)
	for _, e := range sum.Entities {
		if e.Type == TypePlace && e.Name != "Lisbon" {
			t.Errorf("a quoted label read as a place: %+v", e)
		}
	}
}

func TestEntitiesAreNames(t *testing.T) {
	cases := []struct {
		name, text string
		want       []string // the entities' names, in order
	}{
		{"dates", "The deadline is 2025-03-14 for the report. Invoice due March 3, 2025 at the latest. See you Oct 2.", nil},
		{"quantities", "The disk has 512 GB left. Week 6: Sat 11 km easy. Weight down to 62.8 kg.", nil},
		{"in full and in part", "I switched to the Asics Novablast. The Novablast is comfy. My old Brooks Ghost is done. The Ghost lasted.", []string{"Asics Novablast", "Brooks Ghost"}},
		{"two names, kinds, no product", "Can Maren and Duarte meet? Maren waits. Duarte is late. Mount a tmpfs there. Is 3.2 safe?", []string{"Maren", "Duarte"}},
		{"part first", "The Novablast is comfy, I love the Novablast. I switched to the Asics Novablast.", []string{"Asics Novablast"}},
		{"adverb led, one letter", "Instead of Alpro yogurt: soy yogurt. Alpro yogurt is out. Watch vitamin B 12 and plan B.", []string{"Alpro"}},
		// A people or a language, a title alone, a day said as a habit:
		// no entity. The title before a name stays with it.
		{"demonyms, titles, days", "Use British spelling, German first. The Dr said Thursdays are fine, and Dr Amara Osei agreed. British and German again, Thursdays again, the Dr again.", []string{"Dr Amara Osei"}},
		{"a numbered part", "The means are in Table 2, the keys at Flat 3. Table 2 again, and Flat 3 again.", nil},
		{"verb led", "Reserve Shigetsu for dinner. Reserved Shigetsu works. Booking Shigetsu again later.", []string{"Shigetsu"}},
		{"verb led, a message passed on", "Pasting GreenWarm's confirmation email here. Forwarded GreenWarm the form.", []string{"GreenWarm"}},
		{"verb led in a list", "A ball is thrown. (a) Find the height. (b) Find the time it takes. Q5: Find its speed. 2. Check Porto.", []string{"Porto"}},
		{"case and possessive", "We love Tokyo. TOKYO is big. Tokyo's trains are fast.", []string{"Tokyo"}},
		{"kept names", "Call Maria Silva tomorrow. Book Casa Amora in Lisbon.", []string{"Maria Silva", "Casa Amora", "Lisbon"}},
		{"acronyms are names", "The NHS letter came. Ask the NHS again.", []string{"NHS"}},
		// An abbreviation of common words is a kind of thing, not a name.
		{"common acronyms", "Send the PDF with the VAT ID by 5 PM UTC. The PDF again, the VAT again, and German VAT too. Ask the NHS, the NHS knows.", []string{"NHS"}},
		{"a name spelt as an abbreviation", "I'm meeting with Ram tomorrow. Ram is late again, so text Ram.", []string{"Ram"}},
		// A capital opening a quotation starts its sentence or title.
		{"a quotation's first word", `Write in the methods: "Missing items were imputed." Then tick "Limit to one use". The missing items stay, said Duarte. Limit again: "Missing data", and "Duarte" agreed, as Duarte does.`, []string{"Duarte"}},
		// A word running into a number is a code or a model: the name is
		// the words before it, never the word cut ("Backblaze B").
		{"the kind of thing after a name", "Pay into the Sparkasse IBAN, not the GLS IBAN. The IBAN and BIC are below, Sparkasse and GLS again. The OPNsense DHCP hands out leases; OPNsense again.", []string{"Sparkasse", "GLS", "OPNsense"}},
		{"units of measure", "Limit it to 2500 KiB/s, about 40 Mbit. Our 5 GHz Nokia Beacon drops, the Nokia Beacon again. Pay with MB Way, MB Way again.", []string{"Nokia Beacon", "MB Way"}},
		{"a name before its model", "Backing up to Backblaze B2 now. Backblaze B2 is cheap. The office is in Leeds LS1 4DY, Leeds LS1 again. PAPA70 is the ref, PAPA70 again.", []string{"Backblaze", "Leeds"}},
		{"particles inside a name", "The flat is on Rua da Reboleira. Book Casa del Sol in Lisbon. Can Tomás do Tuesday? Ask Tomás.", []string{"Rua da Reboleira", "Casa del Sol", "Lisbon", "Tomás"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := summarize(t, nil, msgs(1, "user", c.text), 0)
			var got []string
			for _, e := range s.Entities {
				got = append(got, e.Name)
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("entities = %q, want %q", got, c.want)
			}
		})
	}
	// A date an older summary listed is dropped at the next merge.
	prev := memory.Summary{Entities: []memory.Entity{{Name: "Oct 2", Type: TypeDate}, {Name: "Lisbon", Type: TypePlace}}}
	s := summarize(t, &prev, msgs(2, "user", "We fly to Lisbon soon."), 0)
	if _, ok := entity(s.Entities, "Oct 2"); ok {
		t.Errorf("a date survived the merge: %+v", s.Entities)
	}
}

func TestNoSpuriousEntities(t *testing.T) {
	cases := []struct{ name, role, text string }{
		{"small talk", "user", "Thanks. Yes, that works. Please continue."},
		{"amounts", "user", "The budget is $12,500 per quarter and the hotel costs 720 EUR for the week."},
		{"links", "user", "The docs are at https://example.com/docs/v2 for reference."},
		{"markup and latex", "assistant", "## Solution\n**Step** one: \\[ \\frac{A}{B} = \\sin x \\]\n| Col | Row |\n|---|---|\n```go\nfunc Main() { Println(X) }\n```"},
		{"greetings and speakers", "assistant", "Maria: Wow, John! Yeah John, it really made a difference for schools. Glad you enjoyed it, John!"},
		{"shouting", "user", "ok team GIG CONFIRMED for sat 12 sept. LETS GOOOO. Honestly AMAZING news."},
		{"a company's unit", "user", "Finance agreed the new budget code. Legal signed it off. Ask Legal again tomorrow."},
		{"a common word in capitals", "user", "hip is bruised, NOT broken, x-ray clear. she is NOT to climb stairs yet."},
		{"a line's value after a colon", "assistant", "Rule one. Action: Allow. Rule two. Action: Allow."},
		{"a part of a token", "user", "the password is kettle-Mango-88 and the Pi is at 192.168.178.23 now. Inspection done, report number K-5521."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := summarize(t, nil, msgs(1, c.role, c.text), 0)
			if len(s.Entities) != 0 {
				t.Fatalf("unexpected entities %+v", s.Entities)
			}
		})
	}
}

func TestEntityNotAPrepositionalFragment(t *testing.T) {
	s := summarize(t, nil, msgs(1, "user", "With Casa Amora we get a terrace. We booked Casa Amora for three nights."), 0)
	for _, e := range s.Entities {
		if strings.HasPrefix(strings.ToLower(e.Name), "with ") {
			t.Fatalf("entity %q starts with a preposition", e.Name)
		}
	}
	if _, ok := entity(s.Entities, "Casa Amora"); !ok {
		t.Fatalf("Casa Amora missing: %+v", s.Entities)
	}
}

func TestLists(t *testing.T) {
	cases := []struct {
		name  string
		turns []memory.Message
		field func(memory.Summary) []string
		want  []string // substrings that must be present
		not   []string // substrings that must be absent
	}{
		{"actions", msgs(1,
			"user", "Can you fix the login bug?",
			"assistant", "I fixed the login bug in auth.go. I will deploy it later. Have you done the review?",
			"assistant", "The build is deployed to staging now."),
			func(s memory.Summary) []string { return s.ActionsTaken },
			[]string{"I fixed the login bug", "deployed to staging"}, []string{"I will deploy", "Have you done"}},
		{"a plan or a state is no action", msgs(1,
			"user", "Which builder and when?",
			"assistant", "All inc VAT, as you asked:\n- Cabin Masters: £18,400 + £1,900 insulation = £20,300.\n- GreenBox Studios: £22,750, fully finished.\n- Marek: £16,900 ex VAT = £20,280 inc VAT.\nStart: Monday 8 September, about two weeks on site — so finished around Friday 19 September.",
			"assistant", "Done: the quote is saved in your folder."),
			func(s memory.Summary) []string { return s.ActionsTaken },
			[]string{"Done: the quote is saved"}, []string{"fully finished", "finished around"}},
		{"actions only from the assistant", msgs(1, "user", "I created a new branch yesterday."),
			func(s memory.Summary) []string { return s.ActionsTaken }, nil, []string{"created"}},
		{"decisions", msgs(1,
			"user", "Postgres or MySQL? Let's go with Postgres for the main store.",
			"assistant", "Agreed, we'll use Postgres and keep Redis for caching. Should we decide on backups?"),
			func(s memory.Summary) []string { return s.Decisions },
			[]string{"Let's go with Postgres", "we'll use Postgres"}, []string{"Should we decide"}},
		{"open questions unanswered at the end", msgs(1,
			"user", "What is the capital of France?",
			"assistant", "Paris.",
			"user", "And how big is its metro network?"),
			func(s memory.Summary) []string { return s.OpenQuestions },
			[]string{"how big is its metro"}, []string{"capital of France"}},
		{"preferences", msgs(1,
			"user", "I prefer short answers. Please always reply in English. My favourite editor is Vim. Do you like cats?",
			"assistant", "I like to help. I prefer nothing."),
			func(s memory.Summary) []string { return s.UserPreferences },
			[]string{"The user prefers short answers", "Please always reply in English", "The user's favourite editor is Vim"}, []string{"Do you like cats", "I like to help", "prefers nothing"}},
		{"topics", msgs(1,
			"user", "The database migration failed again. The migration script times out on the orders table.",
			"assistant", "The database migration needs a longer timeout; the orders table is large. Run the migration in batches."),
			func(s memory.Summary) []string { return s.Topics },
			[]string{"database migration", "orders table"}, []string{"the", "needs"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.field(summarize(t, nil, c.turns, 0))
			for _, w := range c.want {
				if !contains(got, w) {
					t.Errorf("missing %q in %q", w, got)
				}
			}
			for _, w := range c.not {
				for _, g := range got {
					if strings.EqualFold(g, w) || (len(w) > 6 && strings.Contains(strings.ToLower(g), strings.ToLower(w))) {
						t.Errorf("unexpected %q in %q", w, got)
					}
				}
			}
		})
	}
}

func TestOpenQuestionsAnsweredLater(t *testing.T) {
	s1 := summarize(t, nil, msgs(1,
		"user", "Which region should we deploy the cluster to?",
		"assistant", "Let me check the latency numbers.",
		"user", "Also, what backup retention do we need?"), 0)
	if !contains(s1.OpenQuestions, "backup retention") {
		t.Fatalf("open questions %q", s1.OpenQuestions)
	}
	s2 := summarize(t, &s1, msgs(4,
		"assistant", "For backup retention we need 30 days according to policy.",
		"user", "Thanks, noted."), 0)
	if contains(s2.OpenQuestions, "backup retention") {
		t.Fatalf("answered question still open: %q", s2.OpenQuestions)
	}
}

func TestNarrativeAppendsAndCaps(t *testing.T) {
	s1 := summarize(t, nil, msgs(1,
		"user", "We need to plan the marketing launch for the new phone in Berlin.",
		"assistant", "The marketing launch for the phone could happen at the Berlin store in May."), 0)
	// Each speaker is named, never with a raw role label.
	if !strings.Contains(s1.Narrative, "The user said: ") || !strings.Contains(s1.Narrative, "The assistant said: ") || strings.Contains(s1.Narrative, "User: ") || strings.Contains(s1.Narrative, "Assistant: ") {
		t.Fatalf("narrative %q", s1.Narrative)
	}
	s2 := summarize(t, &s1, msgs(3,
		"user", "The hiring plan for the support team needs two more engineers.",
		"assistant", "The hiring plan is approved: two support engineers start in June."), 0)
	if !strings.HasPrefix(s2.Narrative, s1.Narrative) || len(s2.Narrative) <= len(s1.Narrative) {
		t.Fatalf("narrative not appended: %q", s2.Narrative)
	}
	// A tight cap drops the oldest sentences first.
	s3 := summarize(t, &s1, msgs(3,
		"user", "The hiring plan for the support team needs two more engineers.",
		"assistant", "The hiring plan is approved: two support engineers start in June."), 60)
	if strings.Contains(s3.Narrative, "marketing launch") || !strings.Contains(s3.Narrative, "hiring plan") {
		t.Fatalf("cap kept the wrong sentences: %q", s3.Narrative)
	}
	if tokens.Summary(s3) > 60 {
		t.Fatalf("summary has %d tokens, cap 60", tokens.Summary(s3))
	}
}

func TestMaxTokens(t *testing.T) {
	var prev *memory.Summary
	var turns []memory.Message
	for i := 1; i <= 60; i++ {
		turns = append(turns, memory.Message{Seq: int64(i), Role: "user", Content: fmt.Sprintf("I prefer option %d for the Project%d rollout? We decided to ship feature %d at $%d.", i, i, i, i*100)})
	}
	for _, max := range []int{50, 120, 300} {
		s := summarize(t, prev, turns, max)
		if got := tokens.Summary(s); got > max {
			t.Errorf("max %d: got %d tokens", max, got)
		}
		if s.Narrative == "" && len(s.Decisions) == 0 {
			t.Errorf("max %d: everything trimmed", max)
		}
	}
	s := summarize(t, prev, turns, 0)
	for name, l := range map[string]int{"topics": len(s.Topics), "entities": len(s.Entities), "decisions": len(s.Decisions), "prefs": len(s.UserPreferences), "questions": len(s.OpenQuestions)} {
		if l > memory.MaxListItems {
			t.Errorf("%s has %d items", name, l)
		}
	}
	// The most recent items are kept.
	if !contains(s.Decisions, "feature 60") || contains(s.Decisions, "feature 1 ") {
		t.Errorf("decisions did not keep the most recent: %q", s.Decisions)
	}
}

func TestCursorFieldsAndDedupe(t *testing.T) {
	s1 := summarize(t, nil, msgs(5, "user", "Let's go with Postgres.", "assistant", "Agreed."), 0)
	if s1.CoveredFromSeq != 5 || s1.CoveredToSeq != 6 || s1.Model != "extractive" || s1.PromptVersion != "extractive-v1" || s1.UpdatedAt.IsZero() {
		t.Fatalf("bad metadata %+v", s1)
	}
	s2 := summarize(t, &s1, msgs(7, "user", "LET'S GO WITH POSTGRES!"), 0)
	if s2.CoveredFromSeq != 5 || s2.CoveredToSeq != 7 {
		t.Fatalf("covered %d..%d", s2.CoveredFromSeq, s2.CoveredToSeq)
	}
	if len(s2.Decisions) != 1 {
		t.Fatalf("decisions not deduplicated: %q", s2.Decisions)
	}
	if s1.Decisions[0] != "Let's go with Postgres." {
		t.Fatalf("prev mutated: %q", s1.Decisions)
	}
}

// conversation returns a deterministic 40-turn chat.
func conversation() []memory.Message {
	subjects := []string{"billing service", "search index", "mobile app", "payment gateway", "data warehouse"}
	var out []memory.Message
	for i := 1; i <= 40; i++ {
		sub := subjects[(i-1)/10]
		if i%2 == 1 {
			out = append(out, memory.Message{Seq: int64(i), Role: "user", Content: fmt.Sprintf("What is the status of the %s work item %d? I prefer weekly updates on the %s.", sub, i, sub)})
		} else {
			out = append(out, memory.Message{Seq: int64(i), Role: "assistant", Content: fmt.Sprintf("I updated the %s ticket %d. We decided to ship the %s on 2025-04-%02d.", sub, i, sub, i%28+1)})
		}
	}
	return out
}

// recorder wraps the summarizer's input to check it sees only new turns.
func TestIncremental(t *testing.T) {
	all := conversation()
	first := summarize(t, nil, all[:20], 800)
	second := summarize(t, &first, all[20:], 800)
	if second.CoveredFromSeq != 1 || second.CoveredToSeq != 40 {
		t.Fatalf("covered %d..%d", second.CoveredFromSeq, second.CoveredToSeq)
	}
	// Fed only turns 21..40, the result still reflects them and keeps the
	// first batch's information that fits.
	if !contains(second.Topics, "payment gateway") || !contains(second.Topics, "mobile app") || !contains(second.Topics, "billing service") {
		t.Errorf("topics of either batch missing: %q", second.Topics)
	}
	if contains(first.Topics, "mobile app") {
		t.Errorf("first summary saw later turns: %q", first.Topics)
	}
	if !strings.Contains(second.Narrative, first.Narrative[:20]) {
		t.Errorf("first narrative lost: %q", second.Narrative)
	}
	// Deterministic: the same inputs give the same summary.
	again := summarize(t, &first, all[20:], 800)
	if !reflect.DeepEqual(second, again) {
		t.Fatalf("not deterministic:\n%+v\n%+v", second, again)
	}
	// The result depends only on Prev and the new turns: summarising 21..40
	// from a Prev that came from elsewhere gives the same extension of it.
	firstCopy := first.Clone()
	third := summarize(t, &firstCopy, append([]memory.Message(nil), all[20:]...), 800)
	if !reflect.DeepEqual(second, third) {
		t.Fatal("extension depends on more than Prev and the new turns")
	}
}

func TestContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New().Summarize(ctx, memory.SummarizeRequest{Turns: msgs(1, "user", "hi")}); err == nil {
		t.Fatal("want error on cancelled context")
	}
}

func TestMergeHelpers(t *testing.T) {
	got := memory.MergeList([]string{"a", "B", "c"}, []string{"b", "d"}, 3)
	if want := []string{"c", "b", "d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("MergeList = %q, want %q", got, want)
	}
	ents := memory.MergeEntities(
		[]memory.Entity{{Name: "Acme", Type: "organization", Details: "client"}, {Name: "Bob", Type: "name"}},
		[]memory.Entity{{Name: "acme", Type: "name", Details: "pays late"}, {Name: "BOB", Type: "person", Details: "CTO"}}, 0)
	if len(ents) != 2 || ents[0].Type != "organization" || ents[0].Details != "client; pays late" || ents[1].Type != "person" {
		t.Errorf("MergeEntities = %+v", ents)
	}
}

// A long batch (a bulk import summarised at once) tells of all of it in
// its narrative, not of its start alone; a short one keeps its one pair.
func TestNarrativeOfALongBatch(t *testing.T) {
	topics := []string{"sailing regatta harbour boats", "pottery kiln glaze clay", "marathon training running shoes"}
	var pairs []string
	for i := range 3000 {
		topic := topics[i*len(topics)/3000]
		pairs = append(pairs, "user", fmt.Sprintf("Today I worked on the %s again, the %s kept me busy.", topic, topic),
			"assistant", fmt.Sprintf("Good luck with the %s, tell me how the %s goes.", topic, topic))
	}
	s := summarize(t, nil, msgs(1, pairs...), 4000)
	for _, word := range []string{"regatta", "kiln", "marathon"} {
		if !strings.Contains(s.Narrative, word) {
			t.Errorf("the narrative of 6,000 turns lacks %q, from a third of them: %q", word, s.Narrative)
		}
	}
	short := summarize(t, nil, msgs(1, pairs[:40]...), 4000)
	if n := strings.Count(short.Narrative, "said") + strings.Count(short.Narrative, "The user"); n > 2 {
		t.Errorf("a short batch's narrative has %d statements: %q", n, short.Narrative)
	}
}

// TestNarrativeMovesWithTheChat extends a running summary two turns at a
// time over a 60-turn trip chat: after each extension the narrative ends
// with the newest stretch, begins with the chat's start, keeps a few of
// the stretches between, and stays within its cap.
func TestNarrativeMovesWithTheChat(t *testing.T) {
	places := []string{"Hakone", "Yanaka", "Kyoto", "Nara", "Osaka", "Kanazawa", "Takayama", "Nikko", "Kamakura", "Hiroshima"}
	var prev *memory.Summary
	for i := 0; i < 60; i += 2 {
		p := places[i/6]
		turns := msgs(int64(i+1),
			"user", fmt.Sprintf("What should we do in %s on day %d of the trip?", p, i/6+1),
			"assistant", fmt.Sprintf("In %s the ryokan and the temple walk are best; book the %s ryokan early for day %d.", p, p, i/6+1))
		s := summarize(t, prev, turns, 800) // the default summary_max_tokens
		prev = &s
		n := s.Narrative
		if !strings.Contains(n[max(len(n)-200, 0):], p+" ryokan early") {
			t.Fatalf("after turn %d the narrative does not end with the newest stretch (%s): %q", i+2, p, n)
		}
		if tokens.Count(n) > 400 {
			t.Fatalf("after turn %d the narrative has %d tokens, cap 400", i+2, tokens.Count(n))
		}
	}
	n := prev.Narrative
	older := 0
	for _, p := range places[1:7] {
		if strings.Contains(n, p) {
			older++
		}
	}
	if !strings.Contains(splitSentences(n)[0], "Hakone") || older == 0 || !strings.Contains(n, "Kamakura") {
		t.Errorf("the narrative is not coarse to fine (start, some of the middle, the recent whole): %q", n)
	}
}

// A code is one entity, digits and dashes included; a details window says
// where it cut.
func TestCodesAndDetailsWindows(t *testing.T) {
	sum := summarize(t, nil, msgs(1, "user", "booked 19:00 friday, 2 seats, 39,98. booking code FLX-4K7P2. ill send u half later. table ref TAT0613-7",
		"user", "so first she says the sofa bed is broken now, her flatmate sat on it wrong or whatever, and this is the important bit, her address is Große Bergstraße 212, 2nd floor, the bell says Hansen/Meyer, and the key thing is we have to ring twice bc the bell is weird."), 2000)
	var names []string
	for _, e := range sum.Entities {
		names = append(names, e.Name)
		if e.Name == "FLX-" {
			t.Errorf("a code cut at its digits: %+v", e)
		}
		if strings.HasSuffix(e.Details, ", and") || strings.HasSuffix(e.Details, " and") {
			t.Errorf("details cut mid-sentence without a mark: %q", e.Details)
		}
	}
	for _, code := range []string{"FLX-4K7P2", "TAT0613-7"} {
		if !slices.Contains(names, code) {
			t.Errorf("entities %v lack the booking code %s", names, code)
		}
	}
}

// A running summary lists current values: a preference or decision drawn
// from a later batch supersedes one an earlier batch listed, as the
// facts job supersedes facts; unrelated items stay.
func TestLaterBatchSupersedesListedItems(t *testing.T) {
	first := summarize(t, nil, msgs(1,
		"user", "Food: I'm vegetarian (no meat or fish, I do eat eggs and dairy).",
		"user", "I prefer morning runs before work.",
		"user", "We decided to run the cutover on June 15."), 0)
	if !holds(first.UserPreferences, "vegetarian") || !holds(first.Decisions, "June 15") {
		t.Fatalf("first batch: preferences %q, decisions %q", first.UserPreferences, first.Decisions)
	}
	second := summarize(t, &first, msgs(4,
		"user", "I don't eat dairy anymore actually, I went vegan two weeks ago.",
		"user", "We decided to run the cutover on June 22 instead."), 0)
	if holds(second.UserPreferences, "vegetarian") {
		t.Errorf("a superseded preference is still listed: %q", second.UserPreferences)
	}
	if !holds(second.UserPreferences, "vegan") || !holds(second.UserPreferences, "morning runs") {
		t.Errorf("the current preferences are not all listed: %q", second.UserPreferences)
	}
	if holds(second.Decisions, "June 15") || !holds(second.Decisions, "June 22") {
		t.Errorf("decisions %q: want June 22, not June 15", second.Decisions)
	}
}

func holds(items []string, sub string) bool {
	for _, it := range items {
		if strings.Contains(it, sub) {
			return true
		}
	}
	return false
}

// An entity's details never show a value a later turn changed: in the
// same batch or a later one, "moved dinner to 8" takes the place of
// "dinner at 19:30" in the place's details.
func TestEntityDetailsAreCurrent(t *testing.T) {
	booked := "dinner sorted, booked Taberna do Largo for Thursday the 14th, dinner at 19:30, table for 4."
	moved := "small thing: they've only got the table later. moved dinner to 8, same day, same place."
	check := func(name string, s memory.Summary) {
		t.Helper()
		e, ok := entity(s.Entities, "Taberna")
		if !ok {
			t.Fatalf("%s: no Taberna among %+v", name, s.Entities)
		}
		if strings.Contains(e.Details, "19:30") || !strings.Contains(e.Details, "moved dinner to 8") {
			t.Errorf("%s: want the new time for the old as a detail: %+v", name, e)
		}
	}
	first := summarize(t, nil, msgs(1, "user", booked, "user", "is Taberna do Largo actually safe for coeliacs?"), 0)
	if e, _ := entity(first.Entities, "Taberna"); !strings.Contains(e.Details, "19:30") {
		t.Fatalf("first batch: the time is not a detail: %+v", first.Entities)
	}
	check("a later batch", summarize(t, &first, msgs(4, "user", moved), 0))
	check("the same batch", summarize(t, nil, msgs(1, "user", booked, "user", "is Taberna do Largo actually safe for coeliacs?", "user", moved), 0))
	// The update must come later: a turn stating the old time after the
	// move keeps it.
	late := summarize(t, nil, msgs(1, "user", moved, "user", booked, "user", "is Taberna do Largo actually safe for coeliacs?"), 0)
	if e, _ := entity(late.Entities, "Taberna"); !strings.Contains(e.Details, "19:30") {
		t.Errorf("an older update took a newer detail: %+v", late.Entities)
	}
}

// A choice replaced in another sentence ("Oakline wouldn't put the start
// date in writing … we're going with Brightwood after all") is what the
// rejected thing's detail says next, not the old choice; and "go with
// Oakline" names a choice, not a person.
func TestEntityDetailsFollowAReplacedChoice(t *testing.T) {
	chose := "I think we go with Oakline, earliest and the showroom was lovely. Oakline can start Monday 6 April."
	ask := "does Oakline do the worktop templating too?"
	changed := "ok change of heart on the fitter. Oakline wouldn't put the start date in writing. we're going with Brightwood after all, they can do 20 April"
	check := func(name string, s memory.Summary) {
		t.Helper()
		e, ok := entity(s.Entities, "Oakline")
		if !ok {
			t.Fatalf("%s: no Oakline among %+v", name, s.Entities)
		}
		if strings.Contains(e.Details, "I think we go with Oakline") || !strings.Contains(e.Details, "going with Brightwood after all") {
			t.Errorf("%s: want the change for the old choice as a detail: %+v", name, e)
		}
		if e.Type == TypePerson {
			t.Errorf("%s: a fitter chosen is typed a person: %+v", name, e)
		}
	}
	first := summarize(t, nil, msgs(1, "user", chose, "user", ask), 0)
	if e, _ := entity(first.Entities, "Oakline"); !strings.Contains(e.Details, "I think we go with Oakline") {
		t.Fatalf("first batch: the choice is not a detail: %+v", first.Entities)
	}
	check("a later batch", summarize(t, &first, msgs(3, "user", changed), 0))
	check("the same batch", summarize(t, nil, msgs(1, "user", chose, "user", ask, "user", changed), 0))
	// Another thing whose detail names the old choice keeps it: Sandra
	// said what she said, whatever was chosen after.
	told := "i was talking to Sandra Mills from the choir and she says Oakline fitted her kitchen in a week. Sandra Mills knows."
	s := summarize(t, nil, msgs(1, "user", told, "user", changed), 0)
	if e, ok := entity(s.Entities, "Sandra Mills"); !ok || !strings.Contains(e.Details, "fitted her kitchen") {
		t.Errorf("Sandra's detail gave way to the change of fitter: %+v (found %v)", e, ok)
	}
}

// A narrative moves as the chat moves: an earlier sentence stating a value
// a later turn changed is dropped, one stating the new value stays.
func TestNarrativeDropsChangedValues(t *testing.T) {
	s := New()
	ctx := context.Background()
	prev := memory.Summary{Narrative: `The user said: "We live in Berlin, near the park." The user said: "Our cat is called Miso."`}
	turns := []memory.Message{
		{Seq: 10, Role: memory.RoleUser, Content: "Big news: I moved from Berlin to Munich last week."},
		{Seq: 11, Role: memory.RoleAssistant, Content: "Congratulations on the move!"},
	}
	res, err := s.Summarize(ctx, memory.SummarizeRequest{Prev: &prev, Turns: turns, Structured: true})
	if err != nil {
		t.Fatal(err)
	}
	n := res.Summary.Narrative
	if strings.Contains(n, "We live in Berlin") {
		t.Errorf("narrative keeps the old home: %q", n)
	}
	if !strings.Contains(n, "Miso") {
		t.Errorf("narrative lost a sentence nothing changed: %q", n)
	}
}

// A window of a long sentence around a name keeps the sentence's own
// spacing: "Marcus's family", not "Marcus 's family".
func TestDetailsKeepSpacing(t *testing.T) {
	sentence := "I'd put the long table along the window wall, with the raffle prizes at the front for the trustees and Marcus's family, then the bar by the kitchen door so the queue does not block the fire exit at the back of the hall."
	a := strings.Index(sentence, "Marcus")
	got := detailsAround(sentence, a, a+len("Marcus"))
	if !strings.Contains(got, "Marcus's family") {
		t.Errorf("details = %q, want the sentence's own spacing", got)
	}
}

// A letter's opening names whom it is written to, as a vocative does.
func TestSalutation(t *testing.T) {
	s := "Dear Parents and Carers, the trip with Mrs Hughes is on 23 October."
	for _, c := range []struct {
		word string
		want bool
	}{{"Parents", true}, {"Carers", true}, {"Hughes", false}} {
		if got := salutation(s, strings.Index(s, c.word)); got != c.want {
			t.Errorf("salutation at %q = %v, want %v", c.word, got, c.want)
		}
	}
	if salutation("Parents and Carers are welcome.", 0) {
		t.Errorf("no letter opens a plain sentence")
	}
}

// A topic is listed in one form, the newest: "walk" and "walks" are one.
func TestTopicsInOneForm(t *testing.T) {
	got := oneForm([]string{"walk", "group", "walks", "dog walks", "dog walk", "morning"})
	want := []string{"group", "walks", "dog walk", "morning"}
	if !slices.Equal(got, want) {
		t.Errorf("oneForm = %q, want %q", got, want)
	}
}

// A business dealt with ("insured with PetPlan") or a thing named ("its
// called Masseria Ulivo Bianco") is not typed a person; someone met is.
// A name whose last word says what kind of body it is ("… Credit Union",
// "… City Council", "… Animal Clinic") is an organisation, whatever the
// words around it: "ask Leeds Credit Union for a quote" asks no person.
func TestEntityOrganisationByItsLastWord(t *testing.T) {
	s := summarize(t, nil, msgs(1, "user", "Ask Leeds Credit Union for a quote. Email Bristol City Council about the bins. Call Lakeshore Animal Clinic first."), 0)
	for _, name := range []string{"Leeds Credit Union", "Bristol City Council", "Lakeshore Animal Clinic"} {
		if e, ok := entity(s.Entities, name); !ok || e.Type != TypeOrganization {
			t.Errorf("%s: %+v (found %v), want an organisation", name, e, ok)
		}
	}
}

// The summary's preferences hold preferences and states, not what
// someone is doing: a task under way or a plan stays a fact.
func TestPreferencesNotWhatSomeoneIsDoing(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool // listed among the preferences
	}{
		{"Josh is doing the chalkboard", false},
		{"The user is raising their day rate from March.", false},
		{"The user is living in Leeds now.", true},
		{"The user is doing two glaze firings a week at cone 6.", true},
		{"The user is vegetarian.", true},
	} {
		if got := doing(tc.text); got == tc.want {
			t.Errorf("doing(%q) = %v: listed %v, want %v", tc.text, got, !got, tc.want)
		}
	}
}

// One speaks to a person: "talking to Sandra" is no place, as "to Leeds"
// after a verb of going is.
func TestEntitySpokenToIsAPerson(t *testing.T) {
	s := summarize(t, nil, msgs(1, "user", "i was talking to Sandra from the choir. we drove to Harrogate after."), 0)
	if e, ok := entity(s.Entities, "Sandra"); !ok || e.Type != TypePerson {
		t.Errorf("Sandra: %+v (found %v), want a person", e, ok)
	}
	if e, ok := entity(s.Entities, "Harrogate"); !ok || e.Type != TypePlace {
		t.Errorf("Harrogate: %+v (found %v), want a place", e, ok)
	}
}

func TestEntityNotAPersonWhenDealtWithOrCalled(t *testing.T) {
	for _, tc := range []struct {
		text, name string
		person     bool
	}{
		{"she's insured with PetPlan, policy number PP-7730-4419", "PetPlan", false},
		{"its called Masseria Ulivo Bianco, via the agency", "Masseria Ulivo Bianco", false},
		{"had a long chat with Deborah about the rota", "Deborah", true},
		{"the new coordinator is called Joanne Whitfield", "Joanne Whitfield", true},
	} {
		s := summarize(t, nil, msgs(1, "user", tc.text, "user", "ok thanks, "+tc.name+" again later"), 0)
		e, ok := entity(s.Entities, tc.name)
		if !ok {
			t.Errorf("%q: no %s among %+v", tc.text, tc.name, s.Entities)
			continue
		}
		if (e.Type == TypePerson) != tc.person {
			t.Errorf("%q: %s typed %q", tc.text, tc.name, e.Type)
		}
	}
}

// Words said often that are no subject — when ("day", "saturday",
// "march", "week"), how it went ("fine"), an "ill" for "I'll" — are no
// topics; the subjects said as often are.
func TestTopicsAreSubjects(t *testing.T) {
	sum := summarize(t, nil, msgs(1,
		"user", "the plant sale is on saturday, a long day. fine by me",
		"user", "plant sale day: saturday 14 march, stall setup from 9. ill bring the tables",
		"user", "fine, ill do the plant labels next week, the sale tables too",
		"user", "week after is the raffle, same day of the week, saturday in march. fine"), 0)
	for _, w := range []string{"day", "saturday", "march", "week", "fine", "ill"} {
		if contains(sum.Topics, w) {
			t.Errorf("topic %q is no subject: %q", w, sum.Topics)
		}
	}
	if !contains(sum.Topics, "plant sale") && !contains(sum.Topics, "sale") {
		t.Errorf("the subject is lost: %q", sum.Topics)
	}
}
