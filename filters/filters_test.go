package filters

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/contextd/contextd/memory"
)

func msg(seq int64, role memory.Role, content string) memory.Message {
	return memory.Message{ID: fmt.Sprint("m", seq), Seq: seq, Role: role, Content: content}
}

func seqs(ms []memory.Message) []int64 {
	out := []int64{}
	for _, m := range ms {
		out = append(out, m.Seq)
	}
	return out
}

func contents(ms []memory.Message) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.Content)
	}
	return out
}

func TestApply(t *testing.T) {
	U, A, T := memory.RoleUser, memory.RoleAssistant, memory.RoleTool
	cases := []struct {
		name        string
		in          []memory.Message
		opt         Options
		wantContent []string
		wantRemoved []Removal
	}{
		{
			name:        "zero options keep everything",
			in:          []memory.Message{msg(1, U, "hi"), msg(2, A, "[Research Agent]\nhello"), msg(3, T, "{}")},
			wantContent: []string{"hi", "[Research Agent]\nhello", "{}"},
		},
		{
			name: "supervisor preset skips routing and strips labels",
			in: []memory.Message{
				msg(1, U, "find papers"),
				msg(2, A, "  [Supervisor] routing to Research Agent"),
				msg(3, A, "[Research Agent]\nI found 3 papers."),
				msg(4, A, "[Writer Agent]: Draft ready."),
				msg(5, A, "[Supervisor routing] done"),
			},
			opt:         Supervisor(),
			wantContent: []string{"find papers", "I found 3 papers.", "Draft ready."},
			wantRemoved: []Removal{{2, ReasonSkippedPrefix}, {5, ReasonSkippedPrefix}},
		},
		{
			name: "supervisor preset keeps supervisor turns with content, label stripped",
			in: []memory.Message{
				msg(1, A, "[Supervisor] HubSpot removed. Shortlist: Pipedrive and Zoho CRM."),
				msg(2, A, "[Supervisor] → Research Agent"),
				msg(3, A, "[Supervisor]: The budget is $50 a seat."),
				msg(4, A, "[Supervisor]"),
			},
			opt:         Supervisor(),
			wantContent: []string{"HubSpot removed. Shortlist: Pipedrive and Zoho CRM.", "The budget is $50 a seat."},
			wantRemoved: []Removal{{2, ReasonSkippedPrefix}, {4, ReasonSkippedPrefix}},
		},
		{
			name: "label only becomes empty",
			in:   []memory.Message{msg(1, A, "[Research Agent]\n  \n"), msg(2, A, " \t\n"), msg(3, A, "")},
			opt:  Supervisor(),
			wantRemoved: []Removal{
				{1, ReasonEmpty}, {2, ReasonEmpty}, {3, ReasonEmpty},
			},
		},
		{
			name: "labels are case sensitive and bounded",
			in: []memory.Message{
				msg(1, A, "[research agent] lower"),
				msg(2, A, "[ Agent] blank name"),
				msg(3, A, "[Travel Agent]\n[Booking Agent]\nstacked"),
				msg(4, A, "[Multi\nline Agent] no"),
				msg(5, A, "text [Research Agent] not leading"),
			},
			opt: Options{StripAgentLabels: true},
			wantContent: []string{
				"[research agent] lower", "[ Agent] blank name", "stacked",
				"[Multi\nline Agent] no", "text [Research Agent] not leading",
			},
		},
		{
			name:        "strip prefixes",
			in:          []memory.Message{msg(1, A, "Assistant: hello"), msg(2, A, "  >> >> quoted"), msg(3, A, "no prefix here")},
			opt:         Options{StripPrefixes: []string{"Assistant:", ">>"}},
			wantContent: []string{"hello", "quoted", "no prefix here"},
		},
		{
			name:        "empty prefixes are ignored",
			in:          []memory.Message{msg(1, U, "hi")},
			opt:         Options{SkipPrefixes: []string{""}, StripPrefixes: []string{""}},
			wantContent: []string{"hi"},
		},
		{
			name:        "tool drop",
			in:          []memory.Message{msg(1, U, "q"), msg(2, T, `{"r":1}`), msg(3, A, "a")},
			opt:         Options{ToolMessages: ToolDrop},
			wantContent: []string{"q", "a"},
			wantRemoved: []Removal{{2, ReasonTool}},
		},
		{
			name: "current query: only the last matching user message",
			in: []memory.Message{
				msg(1, U, "what is up?"), msg(2, A, "what is up?"), msg(3, U, "  what is up?\n"), msg(4, A, "x"),
			},
			opt:         Options{ExcludeQuery: "what is up? "},
			wantContent: []string{"what is up?", "what is up?", "x"},
			wantRemoved: []Removal{{3, ReasonCurrentQuery}},
		},
		{
			name:        "current query not present",
			in:          []memory.Message{msg(1, U, "a"), msg(2, U, "b")},
			opt:         Options{ExcludeQuery: "c"},
			wantContent: []string{"a", "b"},
		},
		{
			name:        "blank query excludes nothing",
			in:          []memory.Message{msg(1, U, "  ")},
			opt:         Options{ExcludeQuery: "  "},
			wantRemoved: []Removal{{1, ReasonEmpty}},
		},
		{
			name: "max turns keeps the last N survivors",
			in: []memory.Message{
				msg(1, U, "1"), msg(2, A, "[Supervisor] x"), msg(3, U, "3"), msg(4, A, "4"), msg(5, U, "5"), msg(6, U, "q"),
			},
			opt:         Options{SkipPrefixes: []string{"[Supervisor"}, MaxTurns: 2, ExcludeQuery: "q"},
			wantContent: []string{"4", "5"},
			wantRemoved: []Removal{{1, ReasonMaxTurns}, {2, ReasonSkippedPrefix}, {3, ReasonMaxTurns}, {6, ReasonCurrentQuery}},
		},
		{
			name:        "max turns larger than input",
			in:          []memory.Message{msg(1, U, "1"), msg(2, A, "2")},
			opt:         Options{MaxTurns: 5},
			wantContent: []string{"1", "2"},
		},
		{
			name:        "partial rune prefix never cuts a rune",
			in:          []memory.Message{msg(1, U, "€uro")},
			opt:         Options{StripPrefixes: []string{"\xe2"}},
			wantContent: []string{"€uro"},
		},
		{
			name:        "query matched after label stripping",
			in:          []memory.Message{msg(1, U, "[Front Agent] hello")},
			opt:         Options{StripAgentLabels: true, ExcludeQuery: "hello"},
			wantRemoved: []Removal{{1, ReasonCurrentQuery}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]memory.Message(nil), tc.in...)
			got := Apply(tc.in, tc.opt)
			if c := contents(got.Kept); !reflect.DeepEqual(c, nonNil(tc.wantContent)) {
				t.Errorf("kept = %q, want %q", c, tc.wantContent)
			}
			if !reflect.DeepEqual(nonNilR(got.Removed), nonNilR(tc.wantRemoved)) {
				t.Errorf("removed = %v, want %v", got.Removed, tc.wantRemoved)
			}
			if !reflect.DeepEqual(before, tc.in) {
				t.Errorf("input was mutated")
			}
			checkAccounting(t, tc.in, got)
		})
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilR(s []Removal) []Removal {
	if s == nil {
		return []Removal{}
	}
	return s
}

// checkAccounting: every input seq is in exactly one of Kept and Removed,
// both in input order, and kept messages keep their identity fields.
func checkAccounting(t *testing.T, in []memory.Message, res Result) {
	t.Helper()
	if len(res.Kept)+len(res.Removed) != len(in) {
		t.Fatalf("kept %d + removed %d != input %d", len(res.Kept), len(res.Removed), len(in))
	}
	k, r := 0, 0
	for _, m := range in {
		switch {
		case k < len(res.Kept) && res.Kept[k].Seq == m.Seq && res.Kept[k].ID == m.ID:
			if res.Kept[k].Role != m.Role {
				t.Fatalf("seq %d: role changed", m.Seq)
			}
			if !strings.Contains(m.Content, res.Kept[k].Content) {
				t.Fatalf("seq %d: kept content %q is not part of %q", m.Seq, res.Kept[k].Content, m.Content)
			}
			k++
		case r < len(res.Removed) && res.Removed[r].Seq == m.Seq:
			switch res.Removed[r].Reason {
			case ReasonTool, ReasonSkippedPrefix, ReasonEmpty, ReasonCurrentQuery, ReasonMaxTurns:
			default:
				t.Fatalf("seq %d: unknown reason %q", m.Seq, res.Removed[r].Reason)
			}
			r++
		default:
			t.Fatalf("seq %d is neither kept nor removed (in order)", m.Seq)
		}
	}
}

func TestAccountingProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"", " ", "\n", "[Supervisor] ", "[Research Agent]\n", "[Writer Agent]: ", "hello", "query", "é", "👩‍👩‍👧", ">> ", "\t"}
	roles := []memory.Role{memory.RoleUser, memory.RoleAssistant, memory.RoleSystem, memory.RoleTool}
	for iter := range 2000 {
		n := rng.IntN(40)
		in := make([]memory.Message, n)
		for i := range in {
			var b strings.Builder
			for range rng.IntN(4) {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
			in[i] = msg(int64(i+1), roles[rng.IntN(len(roles))], b.String())
		}
		o := Options{
			SkipPrefixes:     []string{"[Supervisor"}[:rng.IntN(2)],
			StripPrefixes:    []string{">>"}[:rng.IntN(2)],
			StripAgentLabels: rng.IntN(2) == 0,
			ToolMessages:     []string{"", ToolKeep, ToolDrop}[rng.IntN(3)],
			MaxTurns:         rng.IntN(6),
			ExcludeQuery:     []string{"", "query", " hello "}[rng.IntN(3)],
		}
		res := Apply(in, o)
		checkAccounting(t, in, res)
		if o.MaxTurns > 0 && len(res.Kept) > o.MaxTurns {
			t.Fatalf("iter %d: kept %d > max %d", iter, len(res.Kept), o.MaxTurns)
		}
		nq := 0
		for _, r := range res.Removed {
			if r.Reason == ReasonCurrentQuery {
				nq++
			}
		}
		if nq > 1 {
			t.Fatalf("iter %d: %d current_query removals", iter, nq)
		}
		for _, m := range res.Kept {
			if isBlank(m.Content) {
				t.Fatalf("iter %d: kept blank message %d", iter, m.Seq)
			}
			if o.ToolMessages == ToolDrop && m.Role == memory.RoleTool {
				t.Fatalf("iter %d: kept tool message", iter)
			}
		}
	}
}

func TestPresetAndMerge(t *testing.T) {
	for _, name := range []string{"", "supervisor", "Agent"} {
		if _, err := Preset(name); err != nil {
			t.Errorf("Preset(%q): %v", name, err)
		}
	}
	if _, err := Preset("boss"); err == nil {
		t.Error("Preset(boss): want error")
	}

	base := Supervisor()
	merged := base.Merge(Options{SkipPrefixes: []string{"[Router"}, StripPrefixes: []string{"Bot:"}, ToolMessages: ToolDrop, MaxTurns: 7})
	want := Options{
		SkipPrefixes: []string{"[Router"}, StripPrefixes: []string{"Bot:"},
		StripAgentLabels: true, SkipRouting: true, ToolMessages: ToolDrop, MaxTurns: 7,
	}
	if !reflect.DeepEqual(merged, want) {
		t.Errorf("merge = %+v, want %+v", merged, want)
	}
	if !reflect.DeepEqual(base, Supervisor()) {
		t.Errorf("merge modified the preset: %+v", base)
	}
	// Unset scalars do not override.
	kept := Options{ToolMessages: ToolDrop, MaxTurns: 3, StripAgentLabels: true}.Merge(Options{})
	if kept.ToolMessages != ToolDrop || kept.MaxTurns != 3 || !kept.StripAgentLabels {
		t.Errorf("empty merge changed scalars: %+v", kept)
	}
	// Appending to a merged result never writes into the preset's array.
	a := Options{SkipPrefixes: make([]string, 1, 10)}
	m1 := a.Merge(Options{SkipPrefixes: []string{"x"}})
	m2 := a.Merge(Options{SkipPrefixes: []string{"y"}})
	if m1.SkipPrefixes[1] != "x" || m2.SkipPrefixes[1] != "y" {
		t.Errorf("merges share a backing array: %q %q", m1.SkipPrefixes, m2.SkipPrefixes)
	}
}

func TestValidate(t *testing.T) {
	if err := (Options{ToolMessages: "maybe"}).Validate(); err == nil {
		t.Error("want error for tool_messages maybe")
	}
	if err := (Options{MaxTurns: -1}).Validate(); err == nil {
		t.Error("want error for negative max_turns")
	}
}

func FuzzApply(f *testing.F) {
	f.Add("[Supervisor] route", "[Research Agent]\nfound it", "query", "[Supervisor", ">>", true, uint8(0), uint8(2))
	f.Add("  ", "\xff\xfe", "", "", "", false, uint8(1), uint8(0))
	f.Add("€uro", "[X Agent]: 👩‍👩‍👧", "€uro", "", "\xe2", true, uint8(2), uint8(1))
	f.Fuzz(func(t *testing.T, a, b, query, skip, stripP string, labels bool, tool, maxTurns uint8) {
		in := []memory.Message{
			msg(1, memory.RoleUser, a), msg(2, memory.RoleAssistant, b), msg(3, memory.RoleTool, a+b),
			msg(4, memory.RoleUser, query), msg(5, memory.RoleAssistant, b+a),
		}
		o := Options{
			SkipPrefixes: []string{skip}, StripPrefixes: []string{stripP}, StripAgentLabels: labels,
			ToolMessages: []string{"", ToolKeep, ToolDrop}[int(tool)%3], MaxTurns: int(maxTurns % 8), ExcludeQuery: query,
		}
		res := Apply(in, o)
		checkAccounting(t, in, res)
		for i, m := range res.Kept {
			orig := in[0]
			for _, x := range in {
				if x.Seq == m.Seq {
					orig = x
				}
			}
			if utf8.ValidString(orig.Content) && !utf8.ValidString(m.Content) {
				t.Fatalf("kept[%d] %q: invalid UTF-8 from valid %q", i, m.Content, orig.Content)
			}
		}
	})
}

func BenchmarkApply200(b *testing.B) {
	in := make([]memory.Message, 200)
	for i := range in {
		c := "Some ordinary answer text that goes on for a while, like a real turn would."
		switch i % 5 {
		case 1:
			c = "[Supervisor] routing to Research Agent"
		case 2:
			c = "[Research Agent]\n" + c
		}
		in[i] = msg(int64(i+1), []memory.Role{memory.RoleUser, memory.RoleAssistant}[i%2], c)
	}
	o := Supervisor().Merge(Options{MaxTurns: 50, ExcludeQuery: "latest question"})
	b.ReportAllocs()
	for b.Loop() {
		Apply(in, o)
	}
}

func TestIsRouting(t *testing.T) {
	cases := []struct {
		in   string
		want bool
	}{
		{"[Supervisor] → Research Agent", true},
		{"  [Supervisor] -> Writer Agent.", true},
		{"[Supervisor routing] sending the user to billing", true},
		{"[Supervisor handoff] Research Agent", true},
		{"[Supervisor] routing to Research Agent", true},
		{"[Supervisor] Handing off to the CRM agent", true},
		{"[Supervisor] Research Agent", true},
		{"[Supervisor]:", true},
		{"[Supervisor] Routing: Travel Agent", true},
		{"[Supervisor] routing...", true},
		{"[Supervisor] → Research Agent (r-42)", true},
		{"[Supervisor] HubSpot removed. Shortlist: Pipedrive and Zoho CRM.", false},
		{"[Supervisor] Sending the shortlist to Pipedrive and Zoho for quotes", false},
		{"[Supervisor] → Research Agent\nFind three CRM vendors under $50.", false},
		{"[Supervisor] The user is vegetarian; plan around that.", false},
		{"Routing to Research Agent", false}, // no supervisor label
		{"[Research Agent] → Writer Agent", false},
	}
	for _, c := range cases {
		if got := IsRouting(c.in); got != c.want {
			t.Errorf("IsRouting(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}
