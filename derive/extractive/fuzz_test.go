package extractive

import (
	"context"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/contextd/contextd/memory"
)

// FuzzSummarize: whatever people write, the summary's every field is valid
// UTF-8 (a store refuses a summary that is not, as it refused a fact that
// was not: "👍 I'll …" upper-cased by its first byte).
func FuzzSummarize(f *testing.F) {
	f.Add("Rob", "👍 I'll photograph it when I'm there on Saturday. Éclairs from Ça Va Bakery, £3.20 each", "Ana", "ok change of heart. Oakline wouldn't put it in writing. we're going with Brightwood after all")
	f.Add("", "ünïcödé everywhere: Zürich, São Paulo, Kraków — 12 € each", "", "decision: we go with Münchner Freiheit")
	f.Fuzz(func(t *testing.T, name1, text1, name2, text2 string) {
		for _, x := range []string{name1, text1, name2, text2} {
			// Each field on its own: "0"+"\xcf"+"\x9e" is valid joined, yet
			// "\xcf" is a text the API refuses (a CI failure).
			if !utf8.ValidString(x) {
				return // the API refuses such a turn
			}
		}
		turns := []memory.Message{
			{Seq: 1, Role: memory.RoleUser, Name: name1, Content: text1},
			{Seq: 2, Role: memory.RoleAssistant, Content: text2},
			{Seq: 3, Role: memory.RoleUser, Name: name2, Content: text2 + " " + text1},
		}
		res, err := New().Summarize(context.Background(), memory.SummarizeRequest{Turns: turns, Structured: true, MaxTokens: 200})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res.Summary)
		if err != nil {
			t.Fatal(err)
		}
		var back map[string]any
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(b) || !validStrings(res.Summary) {
			t.Fatalf("summary not UTF-8: %s", b)
		}
	})
}

// validStrings: every text of s is valid UTF-8 (json.Marshal would have
// replaced what is not, so the fields are checked themselves).
func validStrings(s memory.Summary) bool {
	all := append(append(append(append(append([]string{s.Narrative}, s.Topics...), s.ActionsTaken...), s.Decisions...), s.OpenQuestions...), s.UserPreferences...)
	for _, e := range s.Entities {
		all = append(all, e.Name, e.Type, e.Details)
	}
	for _, x := range all {
		if !utf8.ValidString(x) {
			return false
		}
	}
	return true
}
