// Package filters is the per-agent message filter pipeline: it removes
// routing noise, strips agent labels and other prefixes, drops tool turns on
// request, excludes the current query and caps the number of turns. It is
// pure: Apply never mutates its input and accounts for every message it is
// given, either in Result.Kept or in Result.Removed, so the caller can count
// every turn it does not show.
package filters

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/contextd/contextd/memory"
)

// Removal reasons, in the order the pipeline applies its steps.
const (
	ReasonTool          = "tool"
	ReasonSkippedPrefix = "skipped_prefix"
	ReasonEmpty         = "empty"
	ReasonCurrentQuery  = "current_query"
	ReasonMaxTurns      = "max_turns"
)

// Tool message modes.
const (
	ToolKeep = "keep"
	ToolDrop = "drop"
)

// SupervisorPrefix starts the supervisor's label ("[Supervisor] →
// Research Agent", "[Supervisor routing] ..."): its routing lines are noise
// in any history, its other turns are not (see SkipRouting).
const SupervisorPrefix = "[Supervisor"

// Options configure one run of the pipeline. The zero value keeps everything.
type Options struct {
	// SkipPrefixes: a message whose content, after leading whitespace,
	// starts with one of these is removed ("skipped_prefix").
	SkipPrefixes []string
	// StripPrefixes are removed from the start of content (after leading
	// whitespace); the whitespace that followed a stripped prefix goes too.
	StripPrefixes []string
	// StripAgentLabels strips a leading "[<Name> Agent]" label and the
	// colon, spaces and newlines that follow it.
	StripAgentLabels bool
	// SkipRouting removes the supervisor's routing lines ("[Supervisor] →
	// Research Agent", "[Supervisor routing] ...": see IsRouting) as
	// "skipped_prefix", and strips the "[Supervisor…]" label from its
	// other turns, which carry content ("[Supervisor] HubSpot removed.").
	SkipRouting bool
	// ToolMessages is "keep" (the default, also for "") or "drop".
	ToolMessages string
	// MaxTurns keeps only the last N messages left after the other steps;
	// 0 means no cap.
	MaxTurns int
	// ExcludeQuery is the current query: the last user message whose
	// trimmed content equals it (trimmed) is removed, at most one.
	ExcludeQuery string
}

// Supervisor is the preset for a supervisor's history: its own routing
// lines are noise (its turns with content are kept, label stripped) and
// the agents' "[X Agent]" labels are stripped.
func Supervisor() Options {
	return Options{SkipRouting: true, StripAgentLabels: true}
}

// Agent is the preset for an agent's own history: labels are stripped (the
// agent knows who it is) but supervisor messages are kept, since they carry
// the agent's instructions, and so are tool results.
func Agent() Options {
	return Options{StripAgentLabels: true}
}

// Preset returns the named preset: "" (no filtering), "supervisor" or
// "agent".
func Preset(name string) (Options, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "":
		return Options{}, nil
	case "supervisor":
		return Supervisor(), nil
	case "agent":
		return Agent(), nil
	}
	return Options{}, fmt.Errorf("filters: unknown preset %q (want supervisor or agent)", name)
}

// Merge lays extra (an agent's own settings) over o (a preset): lists are
// appended, scalars are overridden when set in extra (a bool can only be
// switched on, an int only by a positive value, a string only by a
// non-empty one). Neither input is modified.
func (o Options) Merge(extra Options) Options {
	out := o
	out.SkipPrefixes = appendCopy(o.SkipPrefixes, extra.SkipPrefixes)
	out.StripPrefixes = appendCopy(o.StripPrefixes, extra.StripPrefixes)
	if extra.StripAgentLabels {
		out.StripAgentLabels = true
	}
	if extra.SkipRouting {
		out.SkipRouting = true
	}
	if extra.ToolMessages != "" {
		out.ToolMessages = extra.ToolMessages
	}
	if extra.MaxTurns > 0 {
		out.MaxTurns = extra.MaxTurns
	}
	if extra.ExcludeQuery != "" {
		out.ExcludeQuery = extra.ExcludeQuery
	}
	return out
}

// appendCopy returns a fresh slice so a merged Options never shares (and
// later appends never clobber) a preset's backing array.
func appendCopy(a, b []string) []string {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := make([]string, 0, len(a)+len(b))
	return append(append(out, a...), b...)
}

// Validate reports a setting Apply would not understand.
func (o Options) Validate() error {
	switch o.ToolMessages {
	case "", ToolKeep, ToolDrop:
	default:
		return fmt.Errorf("filters: tool_messages %q: want keep or drop", o.ToolMessages)
	}
	if o.MaxTurns < 0 {
		return fmt.Errorf("filters: max_turns %d: must not be negative", o.MaxTurns)
	}
	return nil
}

// Removal is one message Apply did not keep.
type Removal struct {
	Seq    int64
	Reason string
}

// Result is the outcome of Apply. Every input message is in exactly one of
// Kept and Removed; both are in input order.
type Result struct {
	Kept    []memory.Message
	Removed []Removal
}

// Apply runs the pipeline over msgs in this order: drop tool turns, skip
// prefixed noise, strip prefixes and labels, drop what is then empty,
// exclude the current query, cap to the last MaxTurns. Kept messages are
// copies (content possibly stripped); Metadata maps are shared, not cloned.
// An unknown ToolMessages value behaves as "keep"; see Validate.
func Apply(msgs []memory.Message, o Options) Result {
	if len(msgs) == 0 {
		return Result{}
	}
	// reason[i] == "" means kept so far.
	reason := make([]string, len(msgs))
	content := make([]string, len(msgs))
	queryIdx := -1
	for i := range msgs {
		m := &msgs[i]
		content[i], reason[i] = o.Item(m.Role, m.Content)
		if reason[i] == "" && o.IsQuery(m.Role, m.Content, content[i]) {
			queryIdx = i
		}
	}
	kept := 0
	if queryIdx >= 0 {
		reason[queryIdx] = ReasonCurrentQuery
	}
	for i := range reason {
		if reason[i] == "" {
			kept++
		}
	}
	if o.MaxTurns > 0 && kept > o.MaxTurns {
		over := kept - o.MaxTurns
		for i := 0; i < len(reason) && over > 0; i++ {
			if reason[i] == "" {
				reason[i] = ReasonMaxTurns
				over--
			}
		}
		kept = o.MaxTurns
	}
	res := Result{Kept: make([]memory.Message, 0, kept)}
	if len(msgs) > kept {
		res.Removed = make([]Removal, 0, len(msgs)-kept)
	}
	for i := range msgs {
		if reason[i] != "" {
			res.Removed = append(res.Removed, Removal{Seq: msgs[i].Seq, Reason: reason[i]})
			continue
		}
		m := msgs[i] // a copy: the caller's message is never touched
		m.Content = content[i]
		res.Kept = append(res.Kept, m)
	}
	return res
}

// Item runs the per-message steps of the pipeline on one message: it
// returns the content as shown and "" when the message is kept, or the
// reason it is removed (ReasonTool, ReasonSkippedPrefix, ReasonEmpty). The
// sequence steps, the current query and the turn cap, are Apply's.
func (o Options) Item(role memory.Role, content string) (string, string) {
	switch {
	case o.ToolMessages == ToolDrop && role == memory.RoleTool:
		return "", ReasonTool
	case hasAnyPrefix(strings.TrimLeftFunc(content, unicode.IsSpace), o.SkipPrefixes):
		return "", ReasonSkippedPrefix
	}
	if o.SkipRouting {
		if IsRouting(content) {
			return "", ReasonSkippedPrefix
		}
		if rest, ok := cutSupervisorLabel(strings.TrimLeftFunc(content, unicode.IsSpace)); ok {
			content = strings.TrimLeftFunc(rest, unicode.IsSpace)
		}
	}
	c := strip(content, o)
	if isBlank(c) {
		return "", ReasonEmpty
	}
	return c, ""
}

// IsQuery reports whether a kept message (original and stripped content)
// is the current query (ExcludeQuery), which the caller already holds.
func (o Options) IsQuery(role memory.Role, original, stripped string) bool {
	query := strings.TrimSpace(o.ExcludeQuery)
	return query != "" && role == memory.RoleUser &&
		(strings.TrimSpace(stripped) == query || strings.TrimSpace(original) == query)
}

// maxStripPasses bounds repeated stripping ("[A Agent]\n[B Agent]\n...").
const maxStripPasses = 8

// strip removes configured prefixes and agent labels from the start of s,
// repeatedly, as long as one matches. Leading whitespace before a match
// goes with it; without a match s is returned unchanged.
func strip(s string, o Options) string {
	if len(o.StripPrefixes) == 0 && !o.StripAgentLabels {
		return s
	}
	for range maxStripPasses {
		t := strings.TrimLeftFunc(s, unicode.IsSpace)
		rest, ok := cutAnyPrefix(t, o.StripPrefixes)
		if !ok && o.StripAgentLabels {
			rest, ok = cutAgentLabel(t)
		}
		if !ok {
			return s
		}
		s = strings.TrimLeftFunc(rest, unicode.IsSpace)
	}
	return s
}

func hasAnyPrefix(s string, prefixes []string) bool {
	_, ok := cutAnyPrefix(s, prefixes)
	return ok
}

// cutAnyPrefix cuts the first non-empty prefix of the list that s starts
// with. Empty prefixes are ignored: they would match everything. A match
// that would end inside a rune (a prefix holding a partial UTF-8 sequence)
// does not count, so stripping never turns valid UTF-8 invalid.
func cutAnyPrefix(s string, prefixes []string) (string, bool) {
	for _, p := range prefixes {
		if p != "" && strings.HasPrefix(s, p) && (len(s) == len(p) || utf8.RuneStart(s[len(p)])) {
			return s[len(p):], true
		}
	}
	return s, false
}

// maxLabelName bounds the name in "[<Name> Agent]" so that an ordinary
// bracketed sentence ending in " Agent]" far away is not taken as a label.
const maxLabelName = 64

// cutAgentLabel cuts a leading "[<Name> Agent]" (Name non-empty, on one
// line, without brackets; "Agent" case-sensitive) plus any following colon.
func cutAgentLabel(s string) (string, bool) {
	const suffix = " Agent]"
	if !strings.HasPrefix(s, "[") {
		return s, false
	}
	end := strings.IndexAny(s[1:], "[]\n")
	if end < 0 || s[1+end] != ']' {
		return s, false
	}
	label := s[:1+end+1] // "[...]"
	if !strings.HasSuffix(label, suffix) {
		return s, false
	}
	name := label[1 : len(label)-len(suffix)]
	if strings.TrimSpace(name) == "" || len(name) > maxLabelName {
		return s, false
	}
	rest := s[len(label):]
	rest = strings.TrimLeft(rest, " \t")
	rest = strings.TrimPrefix(rest, ":")
	return rest, true
}

// isBlank reports whether s holds nothing but whitespace. Invalid UTF-8
// bytes count as content.
func isBlank(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return false
		}
		if !unicode.IsSpace(r) {
			return false
		}
		i += size
	}
	return true
}

// cutSupervisorLabel cuts a leading "[Supervisor…]" label (on one line,
// without nested brackets) and a following colon; label is what was
// inside the brackets after "Supervisor" ("", " routing").
func cutSupervisorLabel(s string) (rest string, ok bool) {
	_, rest, ok = supervisorLabel(s)
	return rest, ok
}

func supervisorLabel(s string) (label, rest string, ok bool) {
	if !strings.HasPrefix(s, SupervisorPrefix) {
		return "", s, false
	}
	end := strings.IndexAny(s[1:], "[]\n")
	if end < 0 || s[1+end] != ']' || 1+end > maxLabelName {
		return "", s, false
	}
	label = s[len(SupervisorPrefix) : 1+end]
	rest = strings.TrimLeft(s[1+end+1:], " \t")
	return label, strings.TrimPrefix(rest, ":"), true
}

// IsRouting reports whether content is one of the supervisor's routing
// lines, which say only who handles the turn next: a "[Supervisor …]"
// label naming routing or a handoff ("[Supervisor routing] …"), or one
// followed by nothing, by an arrow or a routing verb and an agent's name
// ("→ Research Agent", "routing to Research Agent"), or by an agent's
// name alone. A supervisor turn that says anything more is content.
func IsRouting(content string) bool {
	label, rest, ok := supervisorLabel(strings.TrimSpace(content))
	if !ok {
		return false
	}
	if routingLabel.MatchString(label) {
		return true
	}
	rest = strings.TrimSpace(rest)
	return rest == "" || (!strings.Contains(rest, "\n") && routingLine.MatchString(rest))
}

var (
	routingLabel = regexp.MustCompile(`(?i)\b(?:rout(?:e|es|ed|ing)|hand-?offs?|handing off|dispatch(?:ing)?|delegat(?:e|es|ed|ing|ion))\b`)
	// routingLine: an arrow or a routing verb, then a name of at most
	// four words (optionally "agent"); "<Name> Agent" or the verb alone; a short
	// parenthesis may follow (a request id).
	routingLine = regexp.MustCompile(`(?i)^(?:` +
		`(?:→|->|=>|➜|⇒|»)\s*` + routeName + // "→ Research Agent"
		`|(?:now |next:? )?` + routeVerb + `(?: (?:this|it|the (?:request|task|query|question|turn|user)))?(?: back)?(?: to|:|\s*→|\s*->)\s+` + routeName +
		`|(?:the )?[\w'.-]+(?: [\w'.-]+){0,2} agent` + // "Research Agent"
		`|` + routeVerb + `(?:\.\.\.)?` + // "routing"
		`)(?: \([^()]{0,40}\))?[.!…]?$`) // "(req 42)"
)

// routeVerb and routeName are the parts of a routing line: a verb of
// handing a turn on, and a name of at most four words.
const (
	routeVerb = `(?:rout(?:e|es|ed|ing)|hand(?:s|ed|ing)?(?: it| this)? (?:off|over)|handoff|delegat(?:e|es|ed|ing)|forward(?:s|ed|ing)?|transferr?(?:s|ed|ing)?|dispatch(?:es|ed|ing)?|send(?:s|ing)?|pass(?:es|ed|ing)?)`
	routeName = `(?:the )?[\w'.-]+(?: [\w'.-]+){0,3}`
)
