package llmsum

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/contextd/contextd/memory"
)

const goodJSON = `{"topics":["hotel booking","Lisbon trip"],"entities":[{"name":"Maria","type":"person","details":"travels with the user"}],"actions_taken":["booked the hotel"],"decisions":["stay in Alfama"],"open_questions":["is breakfast included?"],"user_preferences":["rooms with a balcony"],"narrative":"The user planned a trip to Lisbon."}`

func TestParseSummary(t *testing.T) {
	cases := []struct {
		name, raw string
		check     func(t *testing.T, s memory.Summary)
		wantErr   bool
	}{
		{"plain", goodJSON, func(t *testing.T, s memory.Summary) {
			if len(s.Topics) != 2 || s.Entities[0].Name != "Maria" || s.Narrative != "The user planned a trip to Lisbon." || s.UserPreferences[0] != "rooms with a balcony" {
				t.Errorf("%+v", s)
			}
		}, false},
		{"fenced", "```json\n" + goodJSON + "\n```", func(t *testing.T, s memory.Summary) {
			if s.Decisions[0] != "stay in Alfama" {
				t.Errorf("%+v", s)
			}
		}, false},
		{"template tokens and prose", "<|im_start|>assistant\nHere is the summary:\n" + goodJSON + "<|im_end|><|eot_id|></s>", func(t *testing.T, s memory.Summary) {
			if s.ActionsTaken[0] != "booked the hotel" {
				t.Errorf("%+v", s)
			}
		}, false},
		{"llama tokens and think block", "<s>[INST] summarise [/INST] <think>{\"narrative\":\"wrong\"}</think>" + goodJSON + " </s>", func(t *testing.T, s memory.Summary) {
			if s.Narrative != "The user planned a trip to Lisbon." {
				t.Errorf("narrative %q", s.Narrative)
			}
		}, false},
		{"wrapped", `{"summary":` + goodJSON + `}`, func(t *testing.T, s memory.Summary) {
			if len(s.Topics) != 2 {
				t.Errorf("%+v", s)
			}
		}, false},
		{"wrong types coerced", `{"topics":"one topic","entities":["Acme",{"name":"Bob","details":["CTO","likes Go"]},{"type":"x"},42],"decisions":[1,true,{"a":1},null,"ship"],"narrative":["First.","Second."]}`, func(t *testing.T, s memory.Summary) {
			if len(s.Topics) != 1 || s.Topics[0] != "one topic" {
				t.Errorf("topics %q", s.Topics)
			}
			if len(s.Entities) != 2 || s.Entities[1].Details != "CTO; likes Go" {
				t.Errorf("entities %+v", s.Entities)
			}
			if strings.Join(s.Decisions, "|") != "1|true|ship" {
				t.Errorf("decisions %q", s.Decisions)
			}
			if s.Narrative != "First. Second." {
				t.Errorf("narrative %q", s.Narrative)
			}
			if s.OpenQuestions == nil {
				t.Error("lists must be [] not nil")
			}
		}, false},
		{"entities deduplicated", `{"entities":[{"name":"Acme Corp","type":"organization","details":"client"},{"name":"ACME corp","type":"company","details":"pays in EUR"}]}`, func(t *testing.T, s memory.Summary) {
			if len(s.Entities) != 1 || s.Entities[0].Details != "client; pays in EUR" || s.Entities[0].Type != "organization" {
				t.Errorf("%+v", s.Entities)
			}
		}, false},
		{"caps", `{"topics":[` + strings.Repeat(`"t",`, 5) + strings.TrimSuffix(strings.Repeat(`"x`+strings.Repeat("y", 500)+`",`, 1), ",") + `],"decisions":[` + func() string {
			var parts []string
			for i := 0; i < 50; i++ {
				parts = append(parts, `"d`+strings.Repeat("x", i)+`"`)
			}
			return strings.Join(parts, ",")
		}() + `]}`, func(t *testing.T, s memory.Summary) {
			if len(s.Decisions) != MaxListItems || len(s.Topics) != 2 {
				t.Errorf("decisions %d topics %q", len(s.Decisions), s.Topics)
			}
			if n := utf8.RuneCountInString(s.Topics[1]); n != MaxItemChars {
				t.Errorf("item has %d runes", n)
			}
		}, false},
		{"trailing garbage", goodJSON + "\n\nLet me know if you need more!", func(t *testing.T, s memory.Summary) {
			if len(s.Topics) != 2 {
				t.Errorf("%+v", s)
			}
		}, false},
		{"broken", `{"topics":["a","b"], "narrative": "cut off`, nil, true},
		{"no json", "The user talked about hotels.", nil, true},
		{"unrelated object", `{"error":"rate limited"}`, nil, true},
		{"empty", "", nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := ParseSummary(c.raw)
			if c.wantErr {
				if !errors.Is(err, ErrNoJSON) {
					t.Fatalf("err = %v, want ErrNoJSON", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, s)
		})
	}
}

func FuzzParseSummary(f *testing.F) {
	for _, seed := range []string{goodJSON, "```json\n" + goodJSON + "\n```", "<|im_start|>" + goodJSON, `{"summary":{"topics":[1]}}`, `{"entities":[{"name":"a"},{"name":"A"}]}`, `{{{"narrative":"x"`, "[INST]{}"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		s, err := ParseSummary(raw)
		if err != nil {
			return
		}
		check := func(list []string, max int) {
			if len(list) > max {
				t.Fatalf("list of %d", len(list))
			}
			for _, it := range list {
				if utf8.RuneCountInString(it) > MaxItemChars || !utf8.ValidString(it) || it == "" {
					t.Fatalf("bad item %q", it)
				}
			}
		}
		for _, l := range [][]string{s.Topics, s.ActionsTaken, s.Decisions, s.OpenQuestions, s.UserPreferences} {
			check(l, MaxListItems)
		}
		if len(s.Entities) > MaxEntities {
			t.Fatalf("%d entities", len(s.Entities))
		}
		seen := map[string]bool{}
		for _, e := range s.Entities {
			k := strings.ToLower(e.Name)
			if seen[k] || e.Name == "" {
				t.Fatalf("duplicate or empty entity %q", e.Name)
			}
			seen[k] = true
			check([]string{e.Name}, 1)
		}
		if utf8.RuneCountInString(s.Narrative) > MaxNarrativeChars || !utf8.ValidString(s.Narrative) {
			t.Fatal("narrative too long or invalid")
		}
		// What we parse we can parse again to the same thing.
		again, err := ParseSummary(summaryJSON(s))
		if err != nil {
			t.Fatalf("re-parse: %v", err)
		}
		a, _ := json.Marshal(s)
		b, _ := json.Marshal(again)
		if string(a) != string(b) {
			t.Fatalf("not idempotent:\n%s\n%s", a, b)
		}
	})
}
