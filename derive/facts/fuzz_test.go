package facts

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/contextd/contextd/memory"
)

// FuzzExtract: whatever people write, the facts drawn from it are valid
// UTF-8 with their source turns. A fact starting "👍 I'll …" once had its
// first byte upper-cased: the store refused it, and with it the episode
// every later summary refresh of the chat tried to close.
func FuzzExtract(f *testing.F) {
	f.Add("Rob", "👍 I'll photograph it when I'm there on Saturday", "Ana", "éclairs: I'm bringing them. decision: we go with Brightwood")
	f.Add("", "i'm vegetarian and i moved from Berlin to Munich", "", "Where do you live now?")
	f.Add("", "Felix is reviewing the PR", "", "change of plan: ȺȺȺȺȺȺȺȺȺȺȺȺ Felix is off sick, Grace is reviewing instead")
	f.Fuzz(func(t *testing.T, name1, text1, name2, text2 string) {
		for _, s := range []string{name1, text1, name2, text2} {
			if !utf8.ValidString(s) {
				return // the API refuses such a turn (each string: "\xd6" and "\x8d" are invalid apart, "Ö" together)
			}
		}
		turns := []memory.Message{
			{Seq: 1, Role: memory.RoleUser, Name: name1, Content: text1},
			{Seq: 2, Role: memory.RoleUser, Name: name2, Content: text2},
		}
		fs, qs := ExtractAll(turns)
		for _, fc := range fs {
			if !utf8.ValidString(fc.Text) || fc.Text == "" || len(fc.Seqs) == 0 {
				t.Fatalf("fact %q (seqs %v): empty, without source or not UTF-8", fc.Text, fc.Seqs)
			}
		}
		for _, q := range qs {
			if !utf8.ValidString(q.Fact()) {
				t.Fatalf("question %q not UTF-8", q.Fact())
			}
		}
		// The read path's detectors run on every turn of a chat: none
		// may panic ("Ⱥ" grows when lower-cased).
		DetectUpdates(text2, 4)
		DetectReversal(text2)
		if r, ok := DetectReplacement(text2); ok {
			if i, ok := r.Replaces(text1); ok {
				_ = r.Quote(i, "[…]")
			}
		}
	})
}

// FuzzAssignments: whatever a turn holds, its settings are one per key,
// each a key of lower case read from a line it holds, with a value.
func FuzzAssignments(f *testing.F) {
	f.Add("```yaml\nautoscaling:\n  maxReplicas: 12   # was 8\n```\nPut `DB_POOL_SIZE=10` in the env.")
	f.Add("bumped DB_POOL_SIZE up to 10, overflow stays at 10; set `maxRetries` to `3`. moved it to 8")
	f.Add("dev:\n  max_conns: 5\nprod:\n  max_conns: 50\nconst apiKey = 'YOUR_KEY';")
	f.Fuzz(func(t *testing.T, text string) {
		seen := map[string]bool{}
		for _, a := range Assignments(text) {
			if a.Key == "" || a.Value == "" || a.Line == "" || seen[a.Key] || a.Key != strings.ToLower(a.Key) {
				t.Fatalf("Assignments(%q): bad %+v", text, a)
			}
			seen[a.Key] = true
		}
	})
}
