package facts

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/memory"
)

// Supersession. A fact can hold slots: a subject key and a value, read
// from its text by a few patterns — where someone lives, their job and
// employer, their age, how many of something they have, their favourite
// X, a variable's value ("h = 0.5"), the date of a planned or decided thing
// ("cutover on June 15"). A newer fact with a slot of the same key and a
// different value supersedes the older fact. Everything else — two
// preferences, two allergies, two events — holds no common slot and never
// supersedes: facts that can all be true at once stay current.

// Slot is one keyed value a fact states.
type Slot struct {
	Key   string // e.g. "caroline|home", "var|h", "when|cutover"
	Value string // normalised: lower case, no articles or end punctuation
}

// item is a fact as Supersede weighs it.
type item struct {
	f     memory.Fact
	fresh bool
	order int
	slots []Slot
}

// Supersede decides which facts fresh facts update. existing are the
// chat's current facts, fresh the ones just drawn (both in any order). For
// every slot key, the newest fact holding it (latest ValidAt, then first
// seq, then its place in fresh) supersedes each older fact holding it with
// a different value. Only pairs involving a fresh fact are decided. The
// result maps an old fact's id to the id of the fact that updates it.
func Supersede(existing, fresh []memory.Fact) map[string]string {
	var all []item
	for i, f := range existing {
		all = append(all, item{f, false, i, Slots(f)})
	}
	for i, f := range fresh {
		all = append(all, item{f, true, len(existing) + i, Slots(f)})
	}
	newer := func(a, b item) bool { // a after b
		if !a.f.ValidAt.Equal(b.f.ValidAt) {
			return a.f.ValidAt.After(b.f.ValidAt)
		}
		if a.f.FirstSeq() != b.f.FirstSeq() {
			return a.f.FirstSeq() > b.f.FirstSeq()
		}
		return a.order > b.order
	}
	sort.SliceStable(all, func(i, j int) bool { return newer(all[j], all[i]) }) // oldest first
	out := map[string]string{}
	latest := map[string]int{} // slot key -> index in all of its newest holder so far
	for i := len(all) - 1; i >= 0; i-- {
		it := all[i]
		for _, s := range it.slots {
			j, ok := latest[s.Key]
			if !ok {
				latest[s.Key] = i
				continue
			}
			nw := all[j]
			if (it.fresh || nw.fresh) && nw.f.ID != it.f.ID && valueOf(nw.slots, s.Key) != s.Value {
				if _, done := out[it.f.ID]; !done {
					out[it.f.ID] = nw.f.ID
				}
			}
		}
	}
	supersedeUpdated(all, out)
	return out
}

// supersedeUpdated adds to out the facts that a newer fact stating an
// update (DetectUpdate) makes stale (see stale): all oldest first; only
// pairs with a fresh fact are decided, and a fact already superseded (by
// a slot, or a newer update) keeps that.
func supersedeUpdated(all []item, out map[string]string) {
	for i := len(all) - 1; i >= 0; i-- {
		nw := all[i]
		u, ok := DetectUpdate(nw.f.Text)
		if !ok {
			continue
		}
		for _, old := range all[:i] {
			if _, done := out[old.f.ID]; done || old.f.ID == nw.f.ID || !(nw.fresh || old.fresh) {
				continue
			}
			if stale(u, old.f) {
				out[old.f.ID] = nw.f.ID
			}
		}
	}
}

// stale reports whether an older fact states what update u changed: it
// holds an old value (and the subject's words, when u names one), or,
// when u says no old value, the subject's words; and never the new value.
// Events stay true (they happened) and standing instructions are not
// about the world, so neither is stale.
func stale(u Update, f memory.Fact) bool {
	if f.Kind == memory.FactEvent || IsStanding(f) {
		return false
	}
	if MovedValue(u) { // "moved dinner to 8": a time said of dinner
		return SaysOtherValue(u, strings.ToLower(f.Text))
	}
	text := " " + strings.Join(lemmas(f.Text), " ") + " "
	has := func(phrase string) bool {
		ws := lemmas(phrase)
		return len(ws) > 0 && strings.Contains(text, " "+strings.Join(ws, " ")+" ")
	}
	for _, v := range u.New {
		if has(v) {
			return false // restates the new value
		}
	}
	for _, w := range u.Subject {
		if !has(w) {
			return false
		}
	}
	if len(u.Old) == 0 {
		return len(u.Subject) > 0 && NumberStated(u, f.Text)
	}
	for _, v := range u.Old {
		if has(v) {
			return true
		}
	}
	return false
}

// lemmas are the words of s, verbs folded (verbLemma), so "lives" meets
// "live".
func lemmas(s string) []string {
	ws := lex.Words(s)
	for i, w := range ws {
		ws[i] = verbLemma(w)
	}
	return ws
}

func valueOf(slots []Slot, key string) string {
	for _, s := range slots {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// Slots reads the slots a fact's text states.
func Slots(f memory.Fact) []Slot {
	text := strings.TrimSpace(decisionLabel.ReplaceAllString(f.Text, ""))
	var out []Slot
	add := func(key, value string) {
		if v := normValue(value); v != "" && key != "" {
			out = append(out, Slot{key, v})
		}
	}
	if m := subjectRe.FindStringSubmatch(text); m != nil {
		subj, rest := strings.ToLower(m[1]), strings.TrimSpace(m[2])
		for _, sp := range personSlots {
			if v := sp.re.FindStringSubmatch(rest); v != nil {
				key, value := sp.name, v[1]
				if len(v) > 2 {
					thing := v[1]
					if sp.swap {
						thing, value = v[2], v[1]
					} else {
						value = v[2]
					}
					key += ":" + singular(strings.ToLower(thing))
				}
				add(subj+"|"+key, value)
			}
		}
	}
	for _, m := range assignRe.FindAllStringSubmatch(text, -1) {
		add("var|"+m[1], m[2])
	}
	if f.Kind == memory.FactPlan || f.Kind == memory.FactDecision {
		if m := whenRe.FindStringSubmatch(text); m != nil && !stopNoun[strings.ToLower(m[1])] {
			add("when|"+strings.ToLower(m[1]), m[2])
		}
	}
	return out
}

const dateRe = `(?:(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.? \d{1,2}(?:st|nd|rd|th)?|\d{1,2}(?:st|nd|rd|th)? (?:of )?(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)|\d{4}-\d{2}-\d{2}|(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))`

var (
	// subjectRe is a fact's subject: "The user", a name, or their
	// someone ("Caroline's sister"), then the rest of the text.
	subjectRe = regexp.MustCompile(`^((?:[Tt]he user|[A-Z][a-z]+(?: [A-Z][a-z]+)?)(?:'s (?:[a-z]+ )?(?:sister|brother|mom|mum|mother|dad|father|wife|husband|partner|son|daughter|friend|boss|boyfriend|girlfriend|aunt|uncle|cousin|grandma|grandpa|grandmother|grandfather|parents|family))?)('s .+| .+)$`)
	valueEnd  = `([^,.;!?()"]+?)(?:\s+(?:for|since|with|and|but|because|last|next|this|until|now|again|ago|in \d|on |at )|[,.;!?()"]|$)`

	// personSlots are read after the subject. A pattern with two groups
	// keys on the thing it names (the counted noun, the favourite what)
	// and takes the other group as the value.
	personSlots = []struct {
		name string
		re   *regexp.Regexp
		swap bool // the value comes before the thing: "has two kids"
	}{
		{"home", regexp.MustCompile(`(?i)^(?:(?:now|currently|still|has|had|just|recently|finally|also) )*(?:lives?|is living|resides?|moved|has moved|is moving|relocated|has relocated|is relocating|is based)(?: back)? (?:in|to) ` + valueEnd), false},
		{"job", regexp.MustCompile(`(?i)^(?:(?:now|currently|still|also) )*(?:works?|is working|has worked) as (?:an? )?` + valueEnd), false},
		{"employer", regexp.MustCompile(`(?i)^(?:(?:now|currently|still|also) )*(?:works?|is working) (?:at|for) ` + valueEnd), false},
		{"age", regexp.MustCompile(`(?i)^is (\d{1,3}) years old`), false},
		{"count", regexp.MustCompile(`(?i)^(?:now |also )?has (\d+|one|two|three|four|five|six|seven|eight|nine|ten) ([a-z]+)`), true},
		{"favourite", regexp.MustCompile(`(?i)^'s (?:all-time )?favou?rite ([a-z]+(?: [a-z]+)?) (?:is|are) ` + valueEnd), false},
	}
	assignRe = regexp.MustCompile(`(?:^|[^\w.])([A-Za-z_]\w{0,30})\s*=\s*([^\s,;]+)`)
	whenRe   = regexp.MustCompile(`(?i)\b([a-z][\w-]+)(?: is| was| has been| got| will be)?(?: moved| rescheduled| postponed| pushed(?: back)?| brought forward| changed| shifted| set| planned| scheduled)? (?:on|to|for) (` + dateRe + `)`)
	stopNoun = set(`is was be been it this that them him her me us you one go going plan planned moved set back
off out up down so then there here`)
	articles = regexp.MustCompile(`(?i)^(?:the|a|an|my|their|his|her|our) `)
)

func normValue(v string) string {
	v = strings.ToLower(strings.Join(strings.Fields(v), " "))
	v = strings.Trim(v, " .,;:!?\"'")
	return articles.ReplaceAllString(v, "")
}

// singular folds a plural noun so "kid" and "kids" share a key.
func singular(w string) string {
	switch {
	case w == "children":
		return "child"
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && len(w) > 3:
		return w[:len(w)-1]
	}
	return w
}

// SupersedeStored marks the chat's stored current facts that fresh (already
// stored) facts update, by the rule of Supersede, and returns them (as they
// were read, before the mark). Fresh facts that state no slot update
// nothing: the chat's facts are then not read at all (the common case, and
// the one on the append path).
func SupersedeStored(ctx context.Context, store memory.FactStore, key memory.ChatKey, fresh []memory.Fact) ([]memory.Fact, error) {
	slotted := false
	for _, f := range fresh {
		_, update := DetectUpdate(f.Text)
		slotted = slotted || update || len(Slots(f)) > 0
	}
	if !slotted {
		return nil, nil
	}
	cur, err := store.Facts(ctx, key, memory.FactQuery{})
	if err != nil {
		return nil, fmt.Errorf("facts: read current: %w", err)
	}
	m := Supersede(cur, fresh)
	if len(m) == 0 {
		return nil, nil
	}
	if err := store.SupersedeFacts(ctx, key, m); err != nil {
		return nil, err
	}
	var old []memory.Fact
	for _, f := range cur {
		if _, ok := m[f.ID]; ok {
			old = append(old, f)
		}
	}
	return old, nil
}

// NumberStated: text holds a number when what u changed is one (every
// new value holds a digit: "256", "0.25", "v3.2"). A text without one
// states no old value of it ("which batch size should we use?").
func NumberStated(u Update, text string) bool {
	for _, v := range u.New {
		if !hasDigit(v) {
			return true // not a number that changed
		}
	}
	return len(u.New) == 0 || hasDigit(text)
}
