package llmsum

import (
	"fmt"
	"strings"

	"github.com/contextd/contextd/memory"
)

// item is one unit of new material for a running-summary call: a closed
// episode's summary or a turn, with the last seq it covers.
type item struct {
	text string
	seq  int64
}

// items lists the request's new material in seq order: the episodes'
// summaries (their turns are never read again), then the turns.
func items(req memory.SummarizeRequest) []item {
	out := make([]item, 0, len(req.Episodes)+len(req.Turns))
	for _, ep := range req.Episodes {
		out = append(out, item{text: formatEpisode(ep), seq: ep.ToSeq})
	}
	for _, t := range req.Turns {
		out = append(out, item{text: formatTurn(t), seq: t.Seq})
	}
	return out
}

// formatTurn is a transcript line: "[<seq>] <role>[ (<name>)]: <content>".
func formatTurn(t memory.Message) string {
	who := string(t.Role)
	if t.Name != "" {
		who += " (" + t.Name + ")"
	}
	return fmt.Sprintf("[%d] %s: %s", t.Seq, who, strings.TrimSpace(t.Content))
}

// formatEpisode renders a closed episode's summary for the running
// summary's prompt: its range and dates, short and long summary, lists
// and facts.
func formatEpisode(ep memory.Episode) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[episode, turns %d-%d, %s]", ep.FromSeq, ep.ToSeq, dateRange(ep))
	if s := strings.TrimSpace(ep.Short); s != "" {
		b.WriteString(" " + s)
	}
	sum := ep.Summary
	if n := strings.TrimSpace(sum.Narrative); n != "" && n != strings.TrimSpace(ep.Short) {
		b.WriteString("\n  " + n)
	}
	list := func(label string, xs []string) {
		if len(xs) > 0 {
			b.WriteString("\n  " + label + ": " + strings.Join(xs, "; "))
		}
	}
	list("decisions", sum.Decisions)
	list("actions taken", sum.ActionsTaken)
	list("user preferences", sum.UserPreferences)
	list("open questions", sum.OpenQuestions)
	if len(sum.Entities) > 0 {
		var es []string
		for _, e := range sum.Entities {
			s := e.Name
			if e.Details != "" {
				s += ": " + e.Details
			}
			es = append(es, s)
		}
		list("entities", es)
	}
	var fs []string
	for _, f := range ep.Facts {
		fs = append(fs, f.Text)
	}
	list("facts", fs)
	return b.String()
}

func dateRange(ep memory.Episode) string {
	const layout = "2 January 2006"
	from, to := ep.StartedAt.UTC().Format(layout), ep.EndedAt.UTC().Format(layout)
	if from == to {
		return from
	}
	return from + " to " + to
}
