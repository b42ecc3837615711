package facts

import (
	"regexp"
	"strings"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/memory"
)

// Question is a question a person asked that nobody answered within the
// turns given.
type Question struct {
	Seq     int64
	Speaker string // the asker's name, "" when the turn has none
	Text    string // the question as asked
}

// Fact states the question as a fact's text.
func (q Question) Fact() string {
	who := "the user"
	if q.Speaker != "" {
		who = q.Speaker
	}
	return "Unanswered question from " + who + `: "` + q.Text + `"`
}

// Unanswered returns the substantive questions people asked in turns that
// no later turn by someone else follows: the last word of the turns was
// theirs, so the question is still open. Small talk ("How are you?",
// "What about you?") and questions with fewer than two content words are
// not questions worth keeping.
func Unanswered(turns []memory.Message) []Question {
	rs := readAll(turns)
	return unanswered(rs, speakerNames(rs))
}

func unanswered(rs []read, names map[string]bool) []Question {
	var out []Question
	for i, r := range rs {
		m, t := r.Msg, r.Turn
		if !t.Speaker.Person || repliedTo(rs[i+1:], m, t.Speaker.Name) {
			continue
		}
		for _, s := range r.Sents {
			s = trimFiller(s)
			if !strings.HasSuffix(s, "?") || smallTalk.MatchString(s) || content(s, names) < 2 {
				continue
			}
			out = append(out, Question{Seq: m.Seq, Speaker: t.Speaker.Name, Text: lex.Clip(s, MaxChars)})
		}
	}
	return out
}

// repliedTo reports whether someone other than the asker speaks after.
func repliedTo(after []read, asked memory.Message, name string) bool {
	for _, r := range after {
		sp := r.Turn.Speaker
		if r.Msg.Role != asked.Role || (name != "" && sp.Name != "" && !strings.EqualFold(sp.Name, name)) {
			return true
		}
	}
	return false
}

var smallTalk = regexp.MustCompile(`(?i)^(?:and |so |but )?(?:how (?:are|have|has|was|were|is|about|'s|did)|what(?:'s| is) up|what about|anything new|you\?|right\?|really\?|how come|any (?:plans|news)|did you (?:have|enjoy)|what (?:have you been|did you do)|how(?:'s| is) (?:it|everything|life|work|your))`)
