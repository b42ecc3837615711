package extractive

import (
	"strings"

	"github.com/contextd/contextd/internal/lex"
)

// The text helpers are internal/lex's and internal/prose's, shared with
// derive/facts so that topics, entities, narrative and facts read the same
// clean text, cut into the same sentences and words.

func splitSentences(text string) []string { return lex.Sentences(text) }

func words(s string) []string { return lex.Words(s) }

func keyword(w string) bool { return lex.Keyword(w) }

func clip(s string, max int) string { return lex.Clip(s, max) }

// normKey is the case-insensitive identity of a list item.
func normKey(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	return strings.TrimRight(s, ".!?…;:, ")
}

func toSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}
