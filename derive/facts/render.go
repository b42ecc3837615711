package facts

import (
	"regexp"

	"github.com/contextd/contextd/internal/prose"
	"github.com/contextd/contextd/memory"
)

// render states a matched sentence as a fact. A decision reads
// "Decision: …". A sentence in which the speaker says "I"/"my" is put in
// the third person with the speaker's name ("I'm vegetarian" → "Caroline
// is vegetarian", "the user" when the turn has no name); any other is
// quoted: `Caroline said: "We went camping."`.
func render(kind string, s string, sp prose.Speaker) string {
	subject := prose.Subject(sp, memory.RoleUser)
	if kind == memory.FactDecision {
		s = decisionLabel.ReplaceAllString(s, "")
		if sp.Person && prose.FirstPerson(s) {
			s = prose.ThirdPerson(s, subject)
		}
		return "Decision: " + prose.SentenceCase(s)
	}
	if !sp.Person || !prose.FirstPerson(s) {
		return prose.SentenceCase(subject) + ` said: "` + s + `"`
	}
	return prose.SentenceCase(prose.ThirdPerson(s, subject))
}

var decisionLabel = regexp.MustCompile(`(?i)^decision:\s*`)
