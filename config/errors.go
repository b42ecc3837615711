package config

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one config error, located in the YAML source.
type Problem struct {
	Line, Column int    // 1-based; 0 when the problem has no place in the file (e.g. CONTEXTD_ADDR)
	Path         string // e.g. "agents[1].memory.rag_k"; "" for the document itself
	Message      string
}

// Errors is every problem found in one config; Parse and Load return it
// (never a bare error) for anything wrong with the document's content or syntax.
type Errors struct {
	// File is the path the config was loaded from ("" for Parse).
	File     string
	Problems []Problem
}

// Error gives one line per problem: `agents.yaml:12: agents[1].memory.rag_k: must be ≥ 1`.
func (e *Errors) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = format(e.File, p)
	}
	return strings.Join(lines, "\n")
}

// Summary is a one-line reason for a process that refuses to start: the
// first problem, and how many more there are.
func (e *Errors) Summary() string {
	if len(e.Problems) == 0 {
		return "invalid config"
	}
	s := format(e.File, e.Problems[0])
	if n := len(e.Problems) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more; run `contextd check-config`)", n)
	}
	return strings.ReplaceAll(s, "\n", " ")
}

// format renders one problem or warning; without a file name the line is
// given as "line N".
func format(file string, p Problem) string {
	var b strings.Builder
	switch {
	case file != "" && p.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", file, p.Line)
	case file != "":
		fmt.Fprintf(&b, "%s: ", file)
	case p.Line > 0:
		fmt.Fprintf(&b, "line %d: ", p.Line)
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// sortProblems orders problems by position; the decoder visits sections in a
// fixed order, not file order.
func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Line != ps[j].Line {
			return ps[i].Line < ps[j].Line
		}
		return ps[i].Column < ps[j].Column
	})
}
