package eval

import (
	"strings"

	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/memory"
)

// SectionView is what one section of a contextd answer shows, as the
// harness measures it: its tokens, the turns it shows verbatim (whole or
// a passage), the turns its items cite (a fact's seqs), and its text (an
// LLM-written observation found in it reaches the turns it cites).
type SectionView struct {
	Name   string
	Tokens int
	Turns  []int64 // seqs shown verbatim
	Cites  []int64 // seqs cited by the section's items
	Text   string
}

// Sectioner reads an answer's sections. DefaultSections reads today's
// engine; the lead swaps in one that also reads sections.facts (Cites =
// each fact's seqs, Tokens = usage.fact_tokens) once the engine has them.
type Sectioner func(res *engine.ContextResult) []SectionView

// Section names, in the order the report prints them.
var sectionNames = []string{"rag", "episodes", "facts", "profile", "summary", "recent"}

// DefaultSections reads the RAG turns, episodes, profile, summary and
// recent turns of an answer, and the facts it shows (with the turns they
// cite).
func DefaultSections(res *engine.ContextResult) []SectionView {
	u, s := res.Usage, res.Sections
	rag := SectionView{Name: "rag", Tokens: u.RAGTokens}
	var b strings.Builder
	for _, r := range s.RAG {
		if r.Episode != nil {
			continue
		}
		if r.ChatID == "" { // another chat's turn is not this chat's evidence
			rag.Turns = append(rag.Turns, r.Seq)
		}
		b.WriteString(r.Content + "\n")
	}
	rag.Text = b.String()
	ep := SectionView{Name: "episodes", Tokens: u.EpisodeTokens}
	b.Reset()
	for _, e := range s.Episodes {
		b.WriteString(e.Short + "\n")
	}
	ep.Text = b.String()
	recent := SectionView{Name: "recent", Tokens: u.RecentTokens}
	b.Reset()
	for _, t := range s.Recent {
		recent.Turns = append(recent.Turns, t.Seq)
		b.WriteString(t.Content + "\n")
	}
	recent.Text = b.String()
	facts := SectionView{Name: "facts", Tokens: u.FactTokens}
	b.Reset()
	for _, f := range s.Facts {
		if f.ChatID == "" {
			facts.Cites = append(facts.Cites, f.Seqs...)
		}
		b.WriteString(f.Text + "\n")
	}
	facts.Text = b.String()
	return []SectionView{rag, ep, facts,
		{Name: "profile", Tokens: u.ProfileTokens, Text: profileText(s.Profile)},
		{Name: "summary", Tokens: u.SummaryTokens, Text: summaryText(s.Summary)}, recent}
}

func summaryText(s *memory.Summary) string {
	if s == nil {
		return ""
	}
	parts := []string{s.Narrative}
	for _, l := range s.Lists() {
		parts = append(parts, *l...)
	}
	for _, e := range s.Entities {
		parts = append(parts, e.Name+": "+e.Details)
	}
	return strings.Join(parts, "\n")
}

func profileText(p *memory.Profile) string {
	if p == nil {
		return ""
	}
	var parts []string
	for _, l := range [][]memory.ProfileItem{p.Entities, p.UserPreferences, p.Topics, p.OpenQuestions} {
		for _, it := range l {
			parts = append(parts, strings.TrimSpace(it.Name+" "+it.Details+" "+it.Text))
		}
	}
	return strings.Join(parts, "\n")
}
