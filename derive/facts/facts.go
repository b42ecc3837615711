// Package facts draws facts from chat turns without an LLM: what a person
// says about themself (preferences, constraints, attributes, plans,
// events), what was decided, and the questions left unanswered; and it
// decides which newer fact supersedes an older one. It is pure: no store,
// no LLM, no outside dependency.
//
// Precision matters as much as recall: a fact list full of small talk is
// noise in a small budget. A fact comes only from a prose sentence (never
// code, formulas, tables, markup or links) that matches one of a few
// first-person or decision patterns, whose predicate carries content words,
// at most MaxPerTurn per turn.
package facts

import (
	"regexp"
	"strings"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/internal/prose"
	"github.com/contextd/contextd/memory"
)

// Caps.
const (
	MaxPerTurn = 3   // facts drawn from one turn
	MaxChars   = 200 // a fact's text, cut at a sentence, clause or word end
)

// Extract draws the facts of turns (an episode's, in seq order). Each fact
// cites its one source turn (Seqs), is valid from that turn's time, has
// Source extractive and an ID from memory.FactID for an unnamed chat: call
// ForChat to bind the facts to their chat. System, tool and deleted turns
// are skipped.
func Extract(turns []memory.Message) []memory.Fact {
	fs, _ := ExtractAll(turns)
	return fs
}

// ExtractAll returns what Extract and Unanswered return, reading the
// turns once for both.
func ExtractAll(turns []memory.Message) ([]memory.Fact, []Question) {
	return FromReadings(readAll(turns))
}

// FromReadings is ExtractAll over turns already read (prose.ReadProse), in
// seq order: what a caller that reads the turns' prose itself passes on.
// The turns Extract skips are skipped here too.
func FromReadings(all []prose.Reading) ([]memory.Fact, []Question) {
	var rs []read
	for _, r := range all {
		if !skip(r.Msg) {
			rs = append(rs, r)
		}
	}
	names := speakerNames(rs)
	qs := unanswered(rs, names)
	return extract(rs, names, qs), qs
}

// refersBack: an instruction whose object is a pronoun standing for what
// the sentence before said ("Use that on every invoice", "Keep it
// short").
func refersBack(s string) bool {
	ws := lex.Words(s)
	return len(ws) >= 2 && backRefs[ws[1]] && (len(ws) == 2 || lex.IsRankStopword(ws[2])) // "Use this template": a determiner, not a pronoun
}

var backRefs = lex.Set(`that this it them those these`)

func extract(rs []read, names map[string]bool, qs []Question) []memory.Fact {
	open := map[int64][]Question{}
	for _, q := range qs {
		open[q.Seq] = append(open[q.Seq], q)
	}
	var out []memory.Fact
	seen := map[string]bool{}
	for _, r := range rs {
		m, t := r.Msg, r.Turn
		var cs []candidate
		for i, s := range r.Sents {
			if i == len(r.Sents)-1 && bareHeading.MatchString(s) || announcesRules(s) {
				// "… Some ground rules first." ends its turn: the rules
				// come in a later one; before more sentences, they are
				// those (ruleList), and the heading lays down nothing.
				continue
			}
			if c, ok := classify(s, t.Speaker, m.Role, names); ok {
				if i > 0 && strings.HasPrefix(c.text, StandingPrefix) && !standingHeadingRe.MatchString(s) && (len(lex.Words(r.Sents[i-1])) <= 3 || refersBack(s)) {
					// "pnpm pls. never npm in this repo": a fragment just
					// before the instruction is its first half; "… the new
					// IBAN is DE91 4306 …. Use that on every invoice from now
					// on": the sentence before says what "that" is. A
					// heading opens its own ("perfect size. ground rules
					// before anyone does anything: …").
					c.text = StandingPrefix + r.Sents[i-1] + " " + s
				}
				cs = append(cs, c)
			}
		}
		if m.Role == memory.RoleUser && t.Speaker.Person {
			if s, ok := emphasised(t.Body); ok {
				cs = append(cs, candidate{kind: memory.FactPreference, rank: rankPreference, text: StandingPrefix + s})
			}
			if s, ok := ruleList(lex.Sentences(fenced.ReplaceAllString(t.Body, "\n"))); ok { // as written outside code blocks: a rule may be a phrase IsProse refuses ("No `version:` key")
				cs = withRules(cs, s)
			}
		}
		for _, q := range open[m.Seq] {
			cs = append(cs, candidate{kind: memory.FactOther, text: q.Fact(), rank: rankQuestion})
		}
		for _, c := range best(cs, MaxPerTurn) {
			text := lex.Clip(c.text, MaxChars)
			if seen[strings.ToLower(text)] {
				continue
			}
			seen[strings.ToLower(text)] = true
			seqs := []int64{m.Seq}
			out = append(out, memory.Fact{
				ID: memory.FactID("", "", seqs, text), Text: text, Seqs: seqs,
				ValidAt: m.CreatedAt, Kind: c.kind, Source: memory.FactSourceExtractive,
			})
		}
	}
	return out
}

// ruleList is what a turn lays down as rules: the sentences after a
// label saying so ("Ground rules: always `docker compose` (the v2
// plugin), never `docker-compose`. No `version:` key … Bind mounts under
// /srv …"), joined, up to MaxChars with the fact's prefix (a rule the
// clip would cut off is left to its own sentence's fact). Each rule may be a bare phrase no
// instruction pattern reads ("No `version:` key"); the label says they
// all stand.
func ruleList(sents []string) (string, bool) {
	for i, s := range sents {
		var rules string
		if m := rulesLabel.FindStringIndex(s); m != nil {
			rules = strings.TrimSpace(s[m[1]:])
		} else if !announcesRules(s) {
			continue
		}
		for _, next := range sents[i+1:] {
			if len(StandingPrefix)+len(rules)+1+len(next) > MaxChars || strings.HasSuffix(strings.TrimSpace(next), "?") || strings.Contains(next, "\n\n") {
				break // a question or a new paragraph is no rule ("some rules: … Who usually wins?")
			}
			rules = strings.TrimSpace(rules + " " + next)
		}
		return rules, rules != "" && !strings.HasSuffix(rules, "?")
	}
	return "", false
}

// withRules adds a turn's rule list to its candidates, once: a standing
// sentence already holding the list ("Ground rules first: everything in
// TypeScript …" read by its heading) keeps it, and standing sentences the
// list holds give way to it, so the rules are not offered twice.
func withRules(cs []candidate, rules string) []candidate {
	var out []candidate
	for _, c := range cs {
		body := strings.TrimPrefix(c.text, StandingPrefix)
		if m := rulesLabel.FindStringIndex(body); m != nil && body != c.text {
			body = body[m[1]:] // "Ground rules first: keep answers short …" holds the list's first rule
		}
		switch {
		case body == c.text: // not standing
		case strings.Contains(rules, body): // the list holds it, without the heading
			continue
		case strings.Contains(body, rules):
			return cs
		}
		out = append(out, c)
	}
	return append(out, candidate{kind: memory.FactPreference, rank: rankPreference, text: StandingPrefix + rules})
}

// fenced is a code block: its "rules: {" is code.
var fenced = regexp.MustCompile("(?s)```.*?(?:```|$)")

// bareHeading is a heading announcing rules and nothing else: "Some
// ground rules first.", "A few standing rules for this project:". Ending a
// turn, it lays down nothing; the turn that follows with the rules does.
var bareHeading = regexp.MustCompile(`(?i)^` + headingLead + `(?:ground |standing |house |basic )?(?:` + ruleNouns + `|` + mindNouns + `)(?: [^:.!?]{1,40}?)?` + headingAsk + `\s*[.!:–—-]?\s*$`)

// announcesRules: sentence s is a heading laying down rules and nothing
// else ("Ground rules first.", "A few rules for the whole process
// please.", "thank you!! also one request for this whole thing."), its
// rules in the sentences after it. A heading the standing pattern would
// not read ("The rules of the game are simple.") announces none.
func announcesRules(s string) bool {
	t := strings.TrimSpace(s)
	if i := strings.LastIndexAny(strings.TrimRight(t, ".!:–—- "), "!?"); i >= 0 {
		t = strings.TrimSpace(t[i+1:]) // "thank you!! also one request …": the heading is the last clause
	}
	return bareHeading.MatchString(t) && standingHeadingRe.MatchString(t)
}

// rulesLabel opens a list of rules: "Ground rules:", "a few rules -",
// "Ground rules, for today and every day of this rollout:" (a scope of
// the work at hand, not "for my 5-year-old" or a cabin's house rules),
// "house rules for this chat:", "Standing rules please:", "Ground rules
// for the whole project:" (the scope the standing pattern reads, so a
// list it cannot read as prose — "never use delay() in loop()" — is still
// laid down).
var rulesLabel = regexp.MustCompile(`(?i)^` + headingLead + `(?:(?:ground |house |basic |standing )?rules(?:` + ruleScope + `| (?:for|in) (?:this|the) (?:chat|repo|project|thread|group))?(?: before (?:we start|you start|you send me anything|anything else))?` + headingAsk + `\s*[:\-–—]` +
	`|(?:ground|standing) rules,? for [^:.!?]{0,40}?\b(?:today|every|this|these)\b[^:.!?]{0,40}?\s*:)\s*`)

// emphasised is the sentence of body a sentence of its own makes a
// standing instruction: "… in the blue folder in the kitchen drawer.
// ALWAYS." ("always", "every time", "from now on" alone, after it).
func emphasised(body string) (string, bool) {
	if !strings.Contains(body, "lways") && !strings.Contains(body, "LWAYS") && !strings.Contains(body, "very time") &&
		!strings.Contains(body, "now on") && !strings.Contains(body, "forward") {
		return "", false
	}
	sents := lex.Sentences(prose.Clean(body))
	for i := 1; i < len(sents); i++ {
		if emphasis.MatchString(strings.TrimSpace(sents[i])) && prose.IsProse(sents[i-1]) && !strings.HasSuffix(sents[i-1], "?") {
			return sents[i-1], true
		}
	}
	return "", false
}

// emphasis is a sentence that is only "always" or "every time" (or "from
// now on").
var emphasis = regexp.MustCompile(`(?i)^(?:always|every (?:single )?time|from now on|going forward)[.!]*$`)

// ForChat binds facts to their chat: it sets ChatID and recomputes each ID
// with the chat's key, so the same fact of the same chat always gets the
// same id. It returns fs, changed in place.
func ForChat(key memory.ChatKey, fs []memory.Fact) []memory.Fact {
	for i := range fs {
		fs[i].ChatID = key.ChatID
		fs[i].ID = memory.FactID(key.Tenant, key.ChatID, fs[i].Seqs, fs[i].Text)
	}
	return fs
}

// read is a turn read once: its speaker, body and prose sentences.
type read = prose.Reading

// readAll reads the user and assistant turns that are not deleted.
func readAll(turns []memory.Message) []read {
	var out []read
	for _, m := range turns {
		if skip(m) {
			continue
		}
		out = append(out, prose.ReadProse(m))
	}
	return out
}

func skip(m memory.Message) bool {
	return m.Deleted || (m.Role != memory.RoleUser && m.Role != memory.RoleAssistant)
}

// speakerNames are the lowercased names of the people talking: words that
// are not content in a fact ("Thanks, Caroline!").
func speakerNames(rs []read) map[string]bool {
	out := map[string]bool{}
	for _, r := range rs {
		for _, w := range lex.Words(r.Turn.Speaker.Name) {
			out[w] = true
		}
	}
	return out
}

// candidate is one sentence that matched a pattern.
type candidate struct {
	kind string
	text string
	rank int // higher wins when a turn holds more than MaxPerTurn
	pos  int
}

const (
	rankQuestion = iota + 1
	rankEvent
	rankFeeling
	rankPreference
	rankAttribute
	rankPlan
	rankDecision
)

// best keeps the n highest-ranked candidates, in sentence order.
func best(cs []candidate, n int) []candidate {
	for i := range cs {
		cs[i].pos = i
	}
	if len(cs) <= n {
		return cs
	}
	keep := make([]bool, len(cs))
	for k := 0; k < n; k++ {
		bi := -1
		for i, c := range cs {
			if !keep[i] && (bi < 0 || c.rank > cs[bi].rank) {
				bi = i
			}
		}
		keep[bi] = true
	}
	var out []candidate
	for i, c := range cs {
		if keep[i] {
			out = append(out, c)
		}
	}
	return out
}
