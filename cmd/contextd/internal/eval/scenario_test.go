package eval

import (
	"strings"
	"testing"
)

// The embedded suite parses, and every chat has the shape the brief asks
// for: 40–120 turns, some long ones, and probes.
func TestScenariosLoad(t *testing.T) {
	scs, err := LoadScenarios()
	if err != nil {
		t.Fatal(err)
	}
	if len(scs) == 0 {
		t.Fatal("no scenarios")
	}
	ids := map[string]bool{}
	for _, sc := range scs {
		if ids[sc.ID] {
			t.Errorf("scenario id %s twice", sc.ID)
		}
		ids[sc.ID] = true
		if n := len(sc.Turns); n < 40 || n > 120 {
			t.Errorf("%s: %d turns, want 40–120", sc.ID, n)
		}
		long := 0
		for _, tr := range sc.Turns {
			if len(tr.Content) >= 600 {
				long++
			}
		}
		if long == 0 && sc.Domain != "texting" {
			t.Errorf("%s: no turn of 600 characters or more", sc.ID)
		}
		if len(sc.Probes) == 0 {
			t.Errorf("%s: no probes", sc.ID)
		}
	}
}

func scenarioOf(t *testing.T, turns ...string) *Scenario {
	t.Helper()
	var b strings.Builder
	b.WriteString("id: x\nturns:\n")
	for _, c := range turns {
		role, text, _ := strings.Cut(c, "|")
		b.WriteString("  - role: " + role + "\n    content: " + quoteYAML(text) + "\n")
	}
	sc, err := ParseScenario([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func quoteYAML(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// The measurements on hand-made context texts in the formats the engine
// uses: headers, role labels, […] marks, "(earlier; updated …)" lines.
func TestJudge(t *testing.T) {
	sc := scenarioOf(t,
		"user|We live in Berlin and I work at the museum.",
		"assistant|That sounds lovely, how long have you been there?",
		"user|[Supervisor] → Research Agent",
		"user|Five years. I moved from Berlin to Munich last month though.",
		"assistant|Congratulations on the move to Munich!",
	)
	p := ScProbe{Name: "p", Query: "where do I live?", Budgets: []int{1}, MustContain: []string{"Munich"},
		Stale: []Stale{{Old: "We live in Berlin", New: "Munich"}}}
	for _, c := range []struct {
		name, ctx                           string
		missing, adjacent, cut, must, stale int
		fits                                bool
	}{
		{name: "whole chat, consecutive", fits: true, ctx: "## Recent turns\nuser: We live in Berlin and I work at the museum.\nassistant: That sounds lovely, how long have you been there?\nuser: Five years. I moved from Berlin to Munich last month though.\nassistant: Congratulations on the move to Munich!"},
		{name: "a turn left out silently", fits: true, missing: 1, adjacent: 1, ctx: "user: We live in Berlin and I work at the museum.\nuser: Five years. I moved from Berlin to Munich last month though.\nassistant: Congratulations on the move to Munich!"},
		{name: "header between", adjacent: 0, ctx: "[Tue 3 October 2026 · turn 1]\nuser: We live in Berlin and I work at the museum.\n[Tue 3 October 2026 · turns 4–5]\nuser: Five years. I moved from Berlin to Munich last month though.\nassistant (Guide): Congratulations on the move to Munich!"},
		{name: "routing line shown in its place", fits: true, ctx: "## Recent turns\nuser: We live in Berlin and I work at the museum.\nassistant: That sounds lovely, how long have you been there?\nuser: → Research Agent\nuser: Five years. I moved from Berlin to Munich last month though.\nassistant: Congratulations on the move to Munich!"},
		{name: "turns out of order", adjacent: 1, ctx: "user: Five years. I moved from Berlin to Munich last month though.\nuser: We live in Berlin and I work at the museum.\n(earlier; updated 5 Oct 2026, turn 4: I moved from Berlin to Munich last month though.)"},
		{name: "stale, marked with the update", ctx: "user: We live in Berlin and I work at the museum.\n(earlier; updated 5 Oct 2026, turn 4: I moved from Berlin to Munich last month though.)"},
		{name: "stale unmarked", stale: 1, must: 1, ctx: "[Tue 3 October 2026 · turn 1]\nuser: We live in Berlin and I work at the museum."},
		{name: "short turn cut", cut: 1, ctx: "user: We live in Berlin and I work at the museum.\n[…]\nuser: Five years. I moved from Berlin\n[…]\nassistant: Congratulations on the move to Munich!"},
	} {
		a := &ProbeAnswer{Context: c.ctx, Fits: c.fits}
		judge(sc, p, a)
		got := []int{len(a.Missing), len(a.Adjacent), len(a.Cut), len(a.MissingMust), len(a.Stale)}
		want := []int{c.missing, c.adjacent, c.cut, c.must, c.stale}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: missing/adjacent/cut/must/stale = %v, want %v\n%v %v %v", c.name, got, want, a.Missing, a.Adjacent, a.Cut)
				break
			}
		}
	}
	if !routingNoise(sc.Turns[2]) || routingNoise(STurn{Content: "[Supervisor] HubSpot removed. Shortlist: Pipedrive and Zoho CRM."}) {
		t.Error("routing noise is the arrow line only")
	}
}

func TestJunkFacts(t *testing.T) {
	sc := scenarioOf(t, "user|Which train goes to Sintra in the morning?", "assistant|The 09:10 from Rossio.")
	sc.Turns[0].Question = "answered"
	junk, n := junkFacts(sc, []scFact{{Text: `Unanswered question from the user: "Which train goes to Sintra in the morning?"`, Seqs: []int64{1}}, {Text: "The user is vegetarian", Seqs: []int64{2}}})
	if n != 1 || len(junk) != 1 {
		t.Fatalf("junk %v of %d", junk, n)
	}
}

// Two tool results of one shape begin alike: one shown whole shows the
// other's first 30 characters, and that is no cut of the other. A short
// turn's own start shown without the rest still is.
func TestJudgeCutSharedStart(t *testing.T) {
	sc := scenarioOf(t,
		`user|{"vendor": "Mixpanel", "quote_id": "MX-Q-55821", "seats": 25, "annual_price_usd": 38400}`,
		"user|ok thanks",
		`user|{"vendor": "Mixpanel", "quote_id": "MX-Q-56107", "seats": 40, "annual_price_usd": 49800}`,
		"user|Five years. I moved from Berlin to Munich last month though, and I love it.",
	)
	p := ScProbe{Name: "p", Query: "q", Budgets: []int{1}}
	for _, c := range []struct {
		ctx string
		cut int
	}{
		{`[turn 3]` + "\n" + `user: {"vendor": "Mixpanel", "quote_id": "MX-Q-56107", "seats": 40, "annual_price_usd": 49800}`, 0},
		{"[turn 4]\nuser: Five years. I moved from Berlin to Munich […]", 1},
	} {
		a := &ProbeAnswer{Context: c.ctx}
		judge(sc, p, a)
		if len(a.Cut) != c.cut {
			t.Errorf("cut %v, want %d:\n%s", a.Cut, c.cut, c.ctx)
		}
	}
}
