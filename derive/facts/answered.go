package facts

import (
	"context"
	"fmt"
	"strings"

	"github.com/contextd/contextd/memory"
)

// Questions answered later. An open question's fact is drawn from the turns
// at hand (an append batch, an episode): a question asked last in one
// batch is open there, though the next batch may answer it at once. So
// whenever later turns come, the chat's open-question facts that they
// answer are superseded — by memory.FactAnswered, there being no newer
// fact that states the answer.

// openWindow bounds how far back open questions are looked for: a
// question stays open only while its asker has the last word, so it sits
// in the last run of one speaker's turns; a run longer than this leaves
// its earliest questions open.
const openWindow = 32

const questionLead = "Unanswered question from "

// IsOpenQuestion reports whether f states a question nobody answered
// (Question.Fact).
func IsOpenQuestion(f memory.Fact) bool {
	return f.Kind == memory.FactOther && f.Source == memory.FactSourceExtractive && strings.HasPrefix(f.Text, questionLead)
}

// asker is who asked an open question: the name in its text, "" for the
// user.
func asker(f memory.Fact) string {
	who, _, _ := strings.Cut(strings.TrimPrefix(f.Text, questionLead), `: "`)
	if who == "the user" {
		return ""
	}
	return who
}

// Answered returns, of the open-question facts among existing, those that a
// turn of turns answers — a turn after the question's by someone else:
// another named speaker, or the assistant when the user asked — mapped to
// memory.FactAnswered (the argument SupersedeFacts takes).
func Answered(existing []memory.Fact, turns []memory.Message) map[string]string {
	out := map[string]string{}
	var rs []read // read at the first open question: most appends find none
	for _, f := range existing {
		if f.SupersededBy != "" || !IsOpenQuestion(f) {
			continue
		}
		if rs == nil {
			rs = readAll(turns)
		}
		who := asker(f)
		for _, r := range rs {
			if r.Msg.Seq > f.FirstSeq() && answers(r.Msg.Role, r.Turn.Speaker.Name, who) {
				out[f.ID] = memory.FactAnswered
				break
			}
		}
	}
	return out
}

// answers reports whether a turn (its role and speaker's name) is by
// someone other than the asker (a name, "" for the user), as repliedTo
// judges within one batch.
func answers(role memory.Role, name, who string) bool {
	if who == "" {
		return role != memory.RoleUser || name != ""
	}
	if name == "" {
		return role == memory.RoleAssistant
	}
	return !strings.EqualFold(name, who)
}

// SupersedeAnswered marks the chat's open-question facts that turns (just
// stored, in seq order) answer, and returns them as they were. It reads
// only the facts of the openWindow seqs before the first of turns.
func SupersedeAnswered(ctx context.Context, store memory.FactStore, key memory.ChatKey, turns []memory.Message) ([]memory.Fact, error) {
	if len(turns) == 0 {
		return nil, nil
	}
	cur, err := store.Facts(ctx, key, memory.FactQuery{AfterSeq: max(turns[0].Seq-1-openWindow, 0)})
	if err != nil {
		return nil, fmt.Errorf("facts: read open questions: %w", err)
	}
	m := Answered(cur, turns)
	if len(m) == 0 {
		return nil, nil
	}
	if err := store.SupersedeFacts(ctx, key, m); err != nil {
		return nil, fmt.Errorf("facts: supersede answered questions: %w", err)
	}
	var old []memory.Fact
	for _, f := range cur {
		if _, ok := m[f.ID]; ok {
			old = append(old, f)
		}
	}
	return old, nil
}
