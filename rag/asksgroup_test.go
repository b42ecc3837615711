package rag

import (
	"regexp"
	"strings"
	"testing"

	"github.com/contextd/contextd/internal/lex"
)

func TestAsksGroup(t *testing.T) {
	for _, c := range []struct {
		content string
		want    bool
	}{
		{"ok whats everyone's new address for the deposit form?", true},
		{"Can EVERYONE make saturday?", true},
		{"does that work for you guys", true},
		{"y'all free on the 12th?", true},
		{"Everyone's here. What time is it?", false}, // asked of no group: the group is in another sentence
		{"everyone says hi.", false},                 // no question
		{"is everyone1 in?", false},                  // not a word of its own
		{"is the overall plan ok?", false},
		{"Are you_all done?", false},
	} {
		if got := asksGroup(c.content); got != c.want {
			t.Errorf("asksGroup(%q) = %v, want %v", c.content, got, c.want)
		}
	}
}

// FuzzAsksGroup: the words are found as the regular expression they
// replace found them.
func FuzzAsksGroup(f *testing.F) {
	re := regexp.MustCompile(`(?i)\b(?:everyone|everybody|every1|you all|all of you|each of you|y'all|yall|you guys)\b`)
	oracle := func(content string) bool {
		if !lex.EndsWithQuestion(content) {
			return false
		}
		t := strings.TrimRight(content, " \t\n\r")
		return re.MatchString(t[strings.LastIndexAny(strings.TrimRight(t, "?"), ".!?\n")+1:])
	}
	for _, s := range []string{"ok whats everyone's new address?", "YOU GUYS?", "x_everyone?", "évery1 ok?", "all of you?"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !strings.ContainsFunc(s, func(r rune) bool { return r >= 0x80 }) && asksGroup(s) != oracle(s) {
			t.Fatalf("asksGroup(%q) = %v, the expression %v", s, asksGroup(s), oracle(s))
		}
	})
}
