package engine

import (
	"cmp"
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/contextd/contextd/derive/facts"
	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// Current values. A retrieved turn may state what a later turn changed
// ("We live in Berlin" before "I moved from Berlin to Munich"): shown
// alone, it reads as the present. Each chat's update sentences
// (facts.DetectUpdate) are kept per chat, read once and then only for the
// turns appended since; a retrieved turn that holds an update's old value
// (or its subject with a value, or a name a replacement rejected) gets a
// mark under it quoting each such update, the newest three: "(earlier;
// updated Thu 5 October 2026, turn 34: I moved from Berlin to Munich.)".

// chatUpdate is one turn's update sentence, or the choice it replaced
// (rep), and what its mark quotes. A turn going back on an earlier change
// (rev) names the update it undoes. Each kind's own fields are behind a
// pointer: a hot chat keeps every update of its turns (the update cache),
// and inline they made an entry 304 bytes.
type chatUpdate struct {
	seq   int64
	at    time.Time
	u     *facts.Update // nil: no update sentence
	rep   *facts.Replacement
	quote string
	// names are the words the turn writes its new value after ("built
	// on spark 3.5.1 … so it's 3.5.1 not 3.4": spark), for an update
	// whose sentence names nothing but numbers (valueNames).
	names []string
	// set is a setting the turn writes as code or config ("maxReplicas:
	// 12"): it changes the same key set to another value before.
	set *facts.Assignment
	// meant is a correction of a value just said.
	meant *correction
	// email is an address a turn gives as the one to use from now on
	// ("Please use claire.whitfield@protonmail.com from now on"): it
	// replaces the same person's other address (movedEmail).
	email string
	// restated is a person's sentence stating a value anew in words no
	// update pattern reads (restated.go).
	restated *restatement
	rev      *reversedUpdate
	// still is a value asked after ("still £320?") that the answer gave
	// anew (stillasked.go).
	still *stillAnswer
	// moved is a move that names neither what moved nor from when ("they
	// moved it to thursday 4 sept"): a turn just before saying when is
	// what moved (movedReach).
	moved *unnamedMove
	// count is a headcount a person states (headcount.go).
	count *headcount
	// agreed is a value a person settled on ("deal, $35 a day it is",
	// agreed.go).
	agreed *agreedValue
	// versions are names given new dotted versions ("we're on python
	// 3.12 now", versions.go).
	versions *versionChange
}

// correction is the value a user's "sorry, I meant 07700 900 481"
// corrects to (v), and its kinds (lex.ValueKinds): it corrects the value
// of that kind said just before (meantReach). unit is the word a quick
// correction counts ("wait no, 36 candles"): it corrects that count said
// just before (quickFix); bareNumber for a number alone ("Correction,
// it's 16"), which corrects a number the same speaker's turn (role) just
// before said.
type correction struct {
	v     string
	kinds []string
	unit  string
	role  memory.Role
	// made: "ok make it 10:30 at mine then" (madeOf), which reaches a
	// time said as its hour alone ("meet at mine at 11").
	made bool
	// announced: the turn says in words that it corrects what was said
	// ("Small correction, … it's 164 sq ft not what I said"), so it
	// reaches further back than a slip's quick fix (announcedFixReach).
	announced bool
}

// reversedUpdate is the update a turn goes back on (of, its seq) and what
// the mark quotes.
type reversedUpdate struct {
	of    int64
	quote string
}

// said is the sentence (or the short turn) that stated the change.
func (c chatUpdate) said() string {
	switch {
	case c.rep != nil && c.quote == "":
		return c.rep.Cue()
	case c.rep != nil:
		return c.quote
	}
	if c.u == nil {
		return ""
	}
	return c.u.Sentence
}

// markFor is the mark under a turn saying content (low, its lower case)
// when the update changed what it says.
func (c chatUpdate) markFor(content, low string, near bool) (string, bool) {
	if c.rep == nil {
		if c.u == nil || !updates(*c.u, low) && !namedOld(*c.u, c.names, low) && !(near && justSaid(*c.u, low)) {
			return "", false
		}
		return updateMark(c, c.quote), true
	}
	i, ok := c.rep.Replaces(content)
	switch {
	case !ok:
		return "", false
	case c.quote != "": // a short turn is quoted whole
		return updateMark(c, c.quote), true
	}
	q := c.rep.Quote(i, rag.Elision)
	if r := []rune(q); len(r) > 2*updateMarkChars { // two sentences at most, each as an update's
		q = string(r[:2*updateMarkChars]) + " " + rag.Elision
	}
	return updateMark(c, q), true
}

// updateCache keeps each hot chat's updates, valid while the chat's
// created_at and dirty mark are unchanged (a delete moves the mark), as
// the standing-instruction cache does.
type updateCache struct {
	mu      sync.Mutex
	entries map[memory.ChatKey]updateEntry
}

type updateEntry struct {
	created time.Time
	mark    int64
	upTo    int64        // turns read up to this seq
	ups     []chatUpdate // oldest first
	asked   *stillAsked  // the turn at upTo asks whether a value still holds
}

// updateCacheChats bounds the entries (cleared when full); updatePage is
// how many turns one read scans.
const (
	updateCacheChats = 4096
	updatePage       = 1000
	updateScanMax    = 10000 // turns a chat's first read scans for updates
	updateMarkChars  = 240
	updateMarksMax   = 3 // marks under one turn
	updatesPerTurn   = 4 // update sentences read of one turn
	// settingsPerTurn: a turn setting more keys than this is a config
	// dump (a whole values file), read as no change: marking it costs a
	// quote per key, and what it changes is not said.
	settingsPerTurn = 20
	// reversalReach: how far back a reversal looks for the change it
	// undoes ("back to the original" undoes the newest one within it).
	reversalReach = 200
)

func (c *updateCache) drop(key memory.ChatKey) {
	c.mu.Lock()
	delete(c.entries, key)
	c.mu.Unlock()
}

// get returns the chat's updates, oldest first.
func (c *updateCache) get(ctx context.Context, st memory.ChatReader, chat memory.Chat) ([]chatUpdate, error) {
	key := chat.Key()
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if !ok || !e.created.Equal(chat.CreatedAt) || e.mark != chat.DirtyMark {
		// A first read scans the newest updateScanMax turns: a 60,000-turn
		// chat is not read whole on its first context.
		e = updateEntry{created: chat.CreatedAt, mark: chat.DirtyMark, upTo: max(0, chat.LastSeq-updateScanMax)}
	}
	if e.upTo >= chat.LastSeq {
		return e.ups, nil
	}
	ups := e.ups[:len(e.ups):len(e.ups)] // never into a slice a reader holds
	for e.upTo < chat.LastSeq {
		msgs, err := st.Messages(ctx, key, e.upTo, updatePage)
		if err != nil {
			return nil, err
		}
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			ups, e.asked = readUpdates(ups, e.asked, m)
		}
		e.upTo = msgs[len(msgs)-1].Seq
	}
	e.ups, e.upTo = ups, max(e.upTo, chat.LastSeq)
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= updateCacheChats {
		c.entries = map[memory.ChatKey]updateEntry{}
	}
	c.entries[key] = e
	c.mu.Unlock()
	return ups, nil
}

// readUpdate reads what m changed: its update sentences (a long message
// may state several, each its own entry quoting its sentence), a choice
// replaced, and whether it goes back on one of the earlier ups.
func readUpdate(m memory.Message, ups []chatUpdate) []chatUpdate {
	c := chatUpdate{seq: m.Seq, at: m.CreatedAt}
	us := facts.DetectUpdates(m.Content, updatesPerTurn)
	if len(us) > 0 {
		c.u, c.quote, c.names = &us[0], updateQuote(m.Content, us[0].Sentence), valueNames(m.Content, us[0])
	} else if r, ok := replacement(m); ok {
		c.rep, c.quote = &r, shortQuote(m.Content)
	}
	if rv, ok := facts.DetectReversal(m.Content); ok && m.Role == "user" { // an assistant's "switching back to print can help" is advice
		for j := len(ups) - 1; j >= 0 && m.Seq-ups[j].seq <= reversalReach; j-- {
			if ups[j].said() != "" && (rv.Latest || rv.Reverses(ups[j].said()) || ups[j].u != nil && namesSubject(rv.Sentence, *ups[j].u)) {
				c.rev = &reversedUpdate{of: ups[j].seq, quote: updateQuote(m.Content, rv.Sentence)}
				break
			}
		}
	}
	var out []chatUpdate
	if c.u != nil || c.rep != nil || c.rev != nil {
		out = append(out, c)
	}
	if c.u == nil && (m.Role == memory.RoleUser || confirmsChange(m.Content)) {
		if sentence, upTo, nw := facts.MovedUnnamed(m.Content); nw != nil {
			// The turn up to the move names what moved: "… they moved it
			// to 13:40. so i miss the 13:00 bus" did not move the bus.
			mv := &unnamedMove{nw: nw, words: moveWords(strings.ToLower(upTo))}
			out = append(out, chatUpdate{seq: m.Seq, at: m.CreatedAt, moved: mv, quote: updateQuote(m.Content, sentence)})
		}
	}
	if m.Role == memory.RoleUser {
		if a, sentence, ok := agreedIn(m.Content); ok {
			out = append(out, chatUpdate{seq: m.Seq, at: m.CreatedAt, agreed: &a, quote: updateQuote(m.Content, sentence)})
		}
		if hc, sentence, ok := headcountsOf(m.Content); ok {
			out = append(out, chatUpdate{seq: m.Seq, at: m.CreatedAt, count: &hc, quote: updateQuote(m.Content, sentence)})
		}
	}
	if v, sentence, ok := versionsIn(m.Content); ok && (m.Role == memory.RoleUser || confirmsChange(m.Content)) { // the assistant's "Extended wear: try the 990v5 size 10.5" is advice
		out = append(out, chatUpdate{seq: m.Seq, at: m.CreatedAt, versions: v, quote: updateQuote(m.Content, sentence)})
	}
	if e, ok := movedEmail(m.Content); ok {
		out = append(out, chatUpdate{seq: m.Seq, at: m.CreatedAt, email: e, quote: updateQuote(m.Content, emailSentence(m.Content, e))})
	}
	if v, ok := meantValue(m); ok {
		out = append(out, chatUpdate{seq: m.Seq, at: m.CreatedAt, meant: &correction{v: v, kinds: lex.ValueKinds(v)}, quote: shortQuote(m.Content)})
	} else if v, kinds, ok := retractedValue(m); ok {
		out = append(out, chatUpdate{seq: m.Seq, at: m.CreatedAt, meant: &correction{v: v, kinds: kinds}, quote: updateQuote(m.Content, m.Content)})
	} else if v, kinds, ok := madeOf(m); ok {
		out = append(out, chatUpdate{seq: m.Seq, at: m.CreatedAt, meant: &correction{v: v, kinds: kinds, made: true}, quote: updateQuote(m.Content, firstSentence(m.Content))})
	} else if v, unit, ok := quickFixOf(m.Content); ok {
		out = append(out, chatUpdate{seq: m.Seq, at: m.CreatedAt, meant: &correction{v: v, unit: unit, role: m.Role}, quote: updateQuote(m.Content, firstSentence(m.Content))})
	} else if v, unit, sentence, ok := announcedFixOf(m); ok {
		out = append(out, chatUpdate{seq: m.Seq, at: m.CreatedAt, meant: &correction{v: v, unit: unit, role: m.Role, announced: true}, quote: updateQuote(m.Content, sentence)})
	}
	if m.Role == memory.RoleUser || confirmsChange(m.Content) {
		for _, sentence := range restatementsOf(m.Content) {
			r := sentence.r
			out = append(out, chatUpdate{seq: m.Seq, at: m.CreatedAt, restated: &r, quote: updateQuote(m.Content, sentence.text)})
		}
	}
	if sets := facts.Assignments(m.Content); len(sets) <= settingsPerTurn { // more is a config dump, not a change
		short := shortQuote(m.Content) // once: a turn's settings share it
		for _, a := range sets {
			q := short
			if q == "" {
				q = settingQuote(m.Content, a.Line)
			}
			out = append(out, chatUpdate{seq: m.Seq, at: m.CreatedAt, set: &a, quote: q})
		}
	}
	for i := 1; i < len(us); i++ {
		u := &us[i]
		out = append(out, chatUpdate{seq: m.Seq, at: m.CreatedAt, u: u, quote: updateQuote(m.Content, u.Sentence), names: valueNames(m.Content, *u)})
	}
	return out
}

// namesSubject: sentence names what u changed ("scratch the nottingham
// price change, back to £8" after "put nottingham up to £10").
func namesSubject(sentence string, u facts.Update) bool {
	var ws []string
	for _, p := range u.Subject {
		ws = append(ws, valueWords(p)...)
	}
	return len(ws) > 0 && holdsAll(strings.ToLower(sentence), ws)
}

// replacement reads a user's turn that changed a choice. An assistant's
// "instead" is advice ("You don't need the certificates in the image.
// Instead, you can …"), not a choice made.
func replacement(m memory.Message) (facts.Replacement, bool) {
	if m.Role != "user" {
		return facts.Replacement{}, false
	}
	return facts.DetectReplacement(m.Content)
}

// markUpdated marks the retrieved turns of this chat that a later turn
// updated. Without the updates (a read failed) the answer goes on
// unmarked, and says so in the log.
func (s *Service) markUpdated(ctx context.Context, p *plan, rs []RAGTurn) {
	if len(rs) == 0 {
		return
	}
	ups, err := s.cache.updates.get(ctx, s.store, p.chat)
	if err != nil {
		s.obs.logger.Warn("update marks left out", "chat", p.chat.ID, "err", err)
		return
	}
	for i := range rs {
		if rs[i].lazy == 0 { // a lazy turn is marked when it is cut (shaper)
			s.cache.marks.mark(p.chat, ups, &rs[i])
		}
	}
}

// markUpdate marks r with the later turns of ups that updated what it
// says, up to updateMarksMax of the newest: a turn stating several values
// ("Harlow, start 28 Sept, tiles £600 provisional") may have had each
// changed by another turn, and one mark left the others reading as
// current.
func markUpdate(ups []chatUpdate, r *RAGTurn) {
	seq, ok := markedAt(ups, r)
	if !ok {
		return
	}
	low := strings.ToLower(r.Content)
	var marks []updateLine
	var sets turnSettings
	for j := len(ups) - 1; j >= 0 && ups[j].seq > seq && len(marks) < updateMarksMax; j-- {
		var m string
		ok := false
		switch u := ups[j]; {
		case u.set != nil:
			m, ok = sets.changed(r.Content, u)
		case u.email != "":
			m, ok = updateMark(u, u.quote), replacesEmail(u.email, r.Content)
		case u.restated != nil:
			m, ok = updateMark(u, u.quote), u.restated.restatedIn(r.Content, low)
		case u.still != nil:
			m, ok = updateMark(u, u.quote), u.still.changes(low)
		case u.meant != nil:
			m, ok = updateMark(u, u.quote), u.seq-seq <= u.meantReach() && u.corrects(r.Role, r.Content, low)
		case u.agreed != nil:
			m, ok = updateMark(u, u.quote), u.seq-seq <= agreedReach && u.agreed.settles(low)
		case u.count != nil:
			m, ok = updateMark(u, u.quote), u.count.replaces(low)
		case u.moved != nil:
			m, ok = updateMark(u, u.quote), u.seq-seq <= movedReach && u.moved.movedFrom(low, u.seq-seq == 1)
		case u.versions != nil:
			m, ok = updateMark(u, u.quote), u.versions.changes(low)
		default:
			m, ok = u.markFor(r.Content, low, u.seq-seq <= justSaidReach)
		}
		if ok && !slices.ContainsFunc(marks, func(l updateLine) bool { return l.line == m }) {
			marks = append(marks, updateLine{ups[j].seq, m}) // a short turn stating two updates (or setting two keys) is quoted once
		}
	}
	marks = append(marks, reversals(ups, seq, marks)...)
	slices.SortFunc(marks, func(a, b updateLine) int { return cmp.Compare(a.seq, b.seq) }) // in the chat's order: the newest last
	if len(marks) > updateMarksMax {
		marks = marks[len(marks)-updateMarksMax:]
	}
	lines := make([]string, len(marks))
	r.updateSeqs = r.updateSeqs[:0]
	for i, m := range marks {
		lines[i] = m.line
		r.updateSeqs = append(r.updateSeqs, m.seq)
	}
	r.update = strings.Join(lines, "\n")
}

// markedAt is the seq r is dated by (an episode's summary, or a fact,
// says what its turns said), and whether a later update may mark it: a
// turn of this chat, with an update after it.
func markedAt(ups []chatUpdate, r *RAGTurn) (int64, bool) {
	if r.ChatID != "" {
		return 0, false
	}
	seq := r.Seq
	switch {
	case r.Episode != nil:
		seq = r.Episode.ToSeq
	case r.Fact != nil && len(r.Fact.Seqs) > 0:
		seq = slices.Max(r.Fact.Seqs)
	case r.Fact != nil:
		return 0, false // no turn to date it by
	}
	if n := len(ups); n == 0 || ups[n-1].seq <= seq {
		return 0, false // no update after this turn: no lower-cased copy to make
	}
	return seq, true
}

// emailAddr is an email address as people write one (submatch 1), its
// domain ending in letters: "npm/@popperjs/core@2.9.2" is a package.
var emailAddr = regexp.MustCompile(`(?:^|[^/\w.%+-])([a-zA-Z0-9._%+-]+@[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)*\.[a-zA-Z]{2,})\b`)

// emailMoved says an address is the one to use now: "from now on",
// "going forward", "instead", "new", "changed", "changing", "updated",
// "switch".
var emailMoved = regexp.MustCompile(`(?i)\b(?:from now on|going forward|instead|changed|changing|updated|switch(?:ed|ing)?|(?:my|our) new (?:email|address|e-mail))\b`)

// movedEmail is the address a turn gives as the one to use from now on:
// one address, in a turn that says it moved ("my email is changing …
// Please use claire.whitfield@protonmail.com from now on").
func movedEmail(content string) (string, bool) {
	if !strings.Contains(content, "@") {
		return "", false
	}
	es := emailAddr.FindAllStringSubmatch(content, 3)
	if len(es) != 1 {
		return "", false
	}
	e := strings.ToLower(es[0][1])
	local, _, _ := strings.Cut(e, "@")
	if roleMailbox[local] || !emailMoved.MatchString(emailSentence(content, e)) {
		return "", false
	}
	return e, true
}

// roleMailbox: a mailbox many places have ("info@…", "accounts@…"): the
// part before the @ names no one.
var roleMailbox = map[string]bool{"info": true, "admin": true, "accounts": true, "account": true, "support": true, "hello": true, "contact": true,
	"sales": true, "office": true, "team": true, "enquiries": true, "inquiries": true, "billing": true, "noreply": true, "no-reply": true,
	"bookings": true, "booking": true, "reception": true, "hr": true, "help": true, "mail": true, "invoices": true, "orders": true}

// emailSentence is the sentence of content holding the address e.
func emailSentence(content, e string) string {
	for _, s := range lex.Sentences(content) {
		if strings.Contains(strings.ToLower(s), e) {
			return s
		}
	}
	return content
}

// replacesEmail: content gives the same person's other address: the
// part before the @ is e's ("claire.whitfield@northmail.co.uk" for
// "claire.whitfield@protonmail.com"). Another person's address is not.
func replacesEmail(e, content string) bool {
	if !strings.Contains(content, "@") {
		return false
	}
	local, _, _ := strings.Cut(e, "@")
	for _, m := range emailAddr.FindAllStringSubmatch(content, -1) {
		o := strings.ToLower(m[1])
		if l, _, _ := strings.Cut(o, "@"); l == local && o != e {
			return true
		}
	}
	return false
}

// meantReach is how many turns back a "sorry, I meant …" reaches for the
// value it corrects: the slip is just before it. A phone number, an
// email, a code, a host or an address is one of its kind in a chat's
// stretch, so a little further; a day, a time or an amount is said of
// many things, so the turn or two before.
func (c chatUpdate) meantReach() int64 {
	switch {
	case c.meant.announced:
		return announcedFixReach
	case c.meant.unit != "":
		return 2
	}
	for _, k := range c.meant.kinds {
		switch k {
		case lex.KindDay, lex.KindTime, lex.KindMoney:
			return 2
		}
	}
	return 4
}

// iMeant reads a user's correction of a value just said: "Sorry, I meant
// 07700 900 481 — swapped the last two digits", "i meant friday 🤦".
var iMeant = regexp.MustCompile(`(?i)(?:^|[.!?,;] |\b(?:sorry|oops|no|wait|typo)\b,? )i meant,? ((?:[^,.!?;—–\n]|[.,]\d){1,40})`)

// meantValue is the value a user's turn says they meant, when it is one
// of a kind (a phone number, a date, an amount …): "i meant can fionn
// come" corrects no value.
func meantValue(m memory.Message) (string, bool) {
	if m.Role != memory.RoleUser || !strings.Contains(strings.ToLower(m.Content), "meant") {
		return "", false
	}
	g := iMeant.FindStringSubmatch(m.Content)
	if g == nil || len(lex.ValueKinds(g[1])) == 0 {
		return "", false
	}
	return strings.TrimSpace(g[1]), true
}

// retraction opens a turn taking back what was just said: "scrap that,
// clubhouse has the juniors presentation night. it's the 9th now, same
// time".
var retraction = regexp.MustCompile(`(?i)^\s*(?:(?:ok|okay|oh|and|wait|sorry|no|nope|ugh|argh|actually|hmm)\b[,.!]*\s*)*(?:scrap|scratch|ignore|forget|disregard) (?:that|this|what i (?:just )?said)(?: (address|number|phone number|email|date|day|time|price|code))?\b`)

// retractedKinds are the kinds of value a retraction names by its noun:
// "scratch that address" takes back an address, whatever else the turn
// holds ("DPD always come at 8 … Unit 4B, Weyman Road …").
var retractedKinds = map[string]string{"address": lex.KindAddress, "number": lex.KindPhone, "phone number": lex.KindPhone,
	"email": lex.KindEmail, "date": lex.KindDay, "day": lex.KindDay, "time": lex.KindTime, "price": lex.KindMoney, "code": lex.KindCode}

// retractedValue is the value a person's retraction gives in place of
// what was just said, and its kinds: it corrects the value of those
// kinds said just before (meantReach), as "sorry, I meant" does.
func retractedValue(m memory.Message) (string, []string, bool) {
	if m.Role != memory.RoleUser {
		return "", nil, false
	}
	loc := retraction.FindStringSubmatchIndex(m.Content)
	if loc == nil {
		return "", nil, false
	}
	rest := m.Content[loc[1]:]
	kinds, vals := lex.ValueKinds(rest), valueTokens(strings.ToLower(rest))
	if len(kinds) == 0 || len(vals) == 0 {
		return "", nil, false
	}
	if loc[2] < 0 {
		return vals[0], kinds, true
	}
	kind := retractedKinds[strings.ToLower(m.Content[loc[2]:loc[3]])]
	fs := strings.Fields(strings.ToLower(rest))
	for i, f := range fs {
		// The value given in its place: the first whose words, with the
		// few after it, are of the kind named.
		if v := strings.Trim(f, ".,;:!?()\"'"); slices.Contains(vals, v) && slices.Contains(lex.ValueKinds(strings.Join(fs[i:min(len(fs), i+6)], " ")), kind) {
			return v, []string{kind}, true
		}
	}
	return "", nil, false
}

// madeIt opens a person's turn setting a value just said anew: "ok make
// it 10:30 at mine then" after "meet at mine at 11 … can we go earlier".
var madeIt = regexp.MustCompile(`(?i)^\W*(?:(?:ok|okay|fine|alright|right|oh|ah|then|yeah|ya)\b[,.!]*\s*)*make (?:it|that) ([^\s,.!?;]+(?: [^\s,.!?;]+)?)`)

// madeOf is the value a "make it …" turn sets and its kinds: a value of a
// kind (a time, a day, an amount …), which corrects the value of its kind
// said just before (meantReach); "make it 18" is a bare number of no kind.
func madeOf(m memory.Message) (string, []string, bool) {
	if m.Role != memory.RoleUser {
		return "", nil, false
	}
	g := madeIt.FindStringSubmatch(m.Content)
	if g == nil {
		return "", nil, false
	}
	for _, w := range strings.Fields(g[1]) {
		if ks := lex.ValueKinds(w); len(ks) > 0 {
			return strings.ToLower(strings.Trim(w, "\"'")), ks, true
		}
	}
	return "", nil, false
}

// quickFix is a person's correction of a count just said, opened by an
// interjection and ending its clause: "wait no, 36 candles. 12 of the
// 48 are seconds", "sorry, 3 bags". "sorry 2 mins late" goes on past
// its count: an apology, not a correction.
var quickFix = regexp.MustCompile(`(?i)^\s*(?:(?:wait|sorry|soz|sry|oops|no|nope|correction|typo|my bad|scratch that|scrap that)\b[,.!:;]* *){1,3}(?:it's |its |it is |make it |that's |thats |i meant |i mean )?(\d[\d.,]*) ([a-z]{3,})(?:\s*$|[,.!;)]| not\b| [-—–]|\s*[^\x00-\x7F])`)

// quickFixBare is the same correction of a number alone: "Correction,
// it's 16, we upgraded in January" after "We're on Postgres 14".
var quickFixBare = regexp.MustCompile(`(?i)^\s*(?:(?:wait|sorry|soz|sry|oops|no|nope|correction|typo|my bad)\b[,.!:;]* *){1,3}(?:it's|its|it is|it was|that's|thats) (\d[\d.,]*)(?:\s*$|[,.!;])`)

// announcedFix is a sentence saying in words that it corrects what its
// speaker said: "Small correction, I measured the studio properly …, it's
// 164 sq ft not what I said", "I was wrong earlier, the room is 14 m2".
var announcedFix = regexp.MustCompile(`(?i)\b(?:correction|i was wrong|i got (?:that|it|this) wrong|not what i (?:said|wrote|told you|put)|i misspoke|my mistake|i mis(?:read|typed|measured|counted))\b`)

// announcedValue is the count such a sentence gives, after the verb that
// states it: "it's 164 sq ft", "the room is 14 m2", "make it 36 chairs".
var announcedValue = regexp.MustCompile(`(?i)\b(?:it's|its|it is|that's|thats|is|are|make it|it was actually|is actually) (\d[\d.,]*) ?([a-z]{2,})\b`)

// announcedFixReach is how many turns back an announced correction
// reaches for the count it corrects: it names its unit and says it goes
// back on something said, so a few exchanges; further back, another
// thing's count of the same unit is as likely.
const announcedFixReach = 8

// announcedFixOf is the count a person's announced correction gives, the
// word it counts and its sentence.
func announcedFixOf(m memory.Message) (string, string, string, bool) {
	if m.Role != memory.RoleUser || !announcedFix.MatchString(m.Content) {
		return "", "", "", false
	}
	for _, s := range lex.Sentences(m.Content) {
		if !announcedFix.MatchString(s) {
			continue
		}
		if g := announcedValue.FindStringSubmatch(s); g != nil && !lex.IsRankStopword(strings.ToLower(g[2])) {
			unit := strings.ToLower(g[2])
			return g[1] + " " + unit, unit, s, true
		}
	}
	return "", "", "", false
}

// bareNumber is the meantUnit of a number corrected alone.
const bareNumber = "#"

// quickFixOf is the count a quick correction gives ("36 candles") and the
// word it counts (bareNumber for a number alone).
func quickFixOf(content string) (string, string, bool) {
	if g := quickFix.FindStringSubmatch(content); g != nil && !lex.IsRankStopword(strings.ToLower(g[2])) {
		return g[1] + " " + strings.ToLower(g[2]), strings.ToLower(g[2]), true
	}
	if g := quickFixBare.FindStringSubmatch(content); g != nil {
		return strings.TrimRight(g[1], ".,"), bareNumber, true
	}
	return "", "", false
}

// saysOtherNumber: text (lower case) holds a number other than v, as a
// word of its own ("postgres 14" for "16"; not "v2.14.3").
func saysOtherNumber(text, v string) bool {
	for _, w := range strings.Fields(text) {
		w = strings.TrimRight(w, ".,;:!?)")
		if w != "" && w != v && strings.Trim(w, "0123456789.") == "" && strings.IndexAny(w, "0123456789") >= 0 {
			return true
		}
	}
	return false
}

// countsOther: text (lower case) counts the unit with another number
// than the value v ("48 candles" for "36 candles").
func countsOther(text, v, unit string) bool {
	stem := strings.TrimSuffix(unit, "s")
	ws := strings.Fields(text)
	for i := 0; i+1 < len(ws); i++ {
		n := strings.TrimLeft(ws[i], "(~")
		u := strings.TrimRight(ws[i+1], ".,;:!?)")
		if n == "" || n[0] < '0' || n[0] > '9' || strings.TrimSuffix(u, "s") != stem {
			continue
		}
		if n+" "+unit != v && n+" "+u != v {
			return true
		}
	}
	return false
}

// firstSentence is the first sentence of content, the one a quick
// correction is in.
func firstSentence(content string) string {
	if ss := lex.Sentences(content); len(ss) > 0 {
		return ss[0]
	}
	return content
}

// corrects: content (low, its lower case) says a value of a kind c meant
// corrects, and not the value meant.
func (c chatUpdate) corrects(role, content, low string) bool {
	m := c.meant
	if strings.Contains(low, strings.ToLower(m.v)) {
		return false
	}
	switch m.unit {
	case "":
	case bareNumber:
		return role == string(m.role) && saysOtherNumber(low, m.v)
	default:
		return countsOther(low, m.v, m.unit)
	}
	ks := lex.ValueKinds(content)
	for _, k := range m.kinds {
		if slices.Contains(ks, k) || k == lex.KindTime && m.made && bareHour.MatchString(low) {
			return true
		}
	}
	return false
}

// bareHour is a time said as its hour alone after "at" ("meet at mine at
// 11, load the van"), which a correction of a time just said reaches: a
// person setting a time anew within a turn or two speaks of the one said
// ("ok make it 10:30 at mine then").
var bareHour = regexp.MustCompile(`\b(?:meet|meeting|leave|leaving|start|starting|pickup|up|arrive|arriving|there|here|come|coming|go|going|mine|yours|ours|theirs|his|home|place|house|office|station|airport)\s+at (?:[1-9]|1[0-2])(?:[,;.!)]|$| and | then )`)

// turnSettings are the settings a retrieved turn writes (read once, when a
// later turn writes one) and the keys a newer turn has set since: only a
// key's newest setting speaks for it ("max_conns: 5", then 50, then 5
// again is current).
type turnSettings struct {
	read bool
	own  []facts.Assignment
	seen map[string]bool
}

// changed is the mark under a turn saying content when c, a later
// setting, set one of its keys to another value.
func (s *turnSettings) changed(content string, c chatUpdate) (string, bool) {
	if s.seen[c.set.Key] {
		return "", false
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	s.seen[c.set.Key] = true
	if !s.read {
		s.own, s.read = facts.Assignments(content), true
	}
	for _, a := range s.own {
		if a.Key == c.set.Key {
			return updateMark(c, c.quote), !facts.SameValue(a.Value, c.set.Value)
		}
	}
	return "", false
}

// updateLine is one line under a retrieved turn, and the turn it quotes.
type updateLine struct {
	seq  int64
	line string
}

// reversals are the marks of the later turns that went back on a change
// said by turn seq itself or by one of the updates that marked it (by):
// "she's Juniper now", or "called Maple" marked by it, reads as current
// without "we've gone back to her old name".
func reversals(ups []chatUpdate, seq int64, by []updateLine) []updateLine {
	marked := func(s int64) bool { return slices.ContainsFunc(by, func(l updateLine) bool { return l.seq == s }) }
	var out []updateLine
	for j := len(ups) - 1; j >= 0 && ups[j].seq > seq; j-- {
		c := ups[j]
		if c.rev != nil && !marked(c.seq) && (c.rev.of == seq || marked(c.rev.of)) {
			out = append(out, updateLine{c.seq, updateMark(c, c.rev.quote)})
		}
	}
	return out
}

// updates reports whether text (lower case) states what u changed: it
// holds u's old value, or all of u's subject words (two or more: one word
// alone — "image", "psycopg" — is a topic, not a statement of the value)
// without u's new value.
func updates(u facts.Update, text string) bool {
	for _, n := range u.New {
		if len(u.Old) > 0 && isNumber(n) && lex.HasPhrase(text, n) { // a bare number: "2.5mg" beside "5mg" may be another drug's dose
			return false // it names the new value beside the old: a choice among both ("room 240 is the quiet one, room 204 has the balcony")
		}
	}
	for _, o := range u.Old {
		if bareOrdinal.MatchString(o) {
			// "the 3rd" written so, as a day ("Tuesday 3rd March", not "a
			// 3rd man"), or the same day said of the same thing.
			if holdsAll(text, valueWords(o)) && facts.SameDay(o, text) || sameDayStated(u, o, text) {
				return true
			}
			continue
		}
		if facts.UnitAmount(o) {
			// An amount with its unit names itself, as "£35" does; it is
			// one phrase: "30 days" is not "four days … 30 %".
			if lex.HasPhrase(text, o) || lex.HasPhrase(text, strings.Replace(o, " ", "", 1)) {
				return true
			}
			continue
		}
		if isNumber(o) && len(o) < 5 {
			// A bare number names nothing alone: it is stated where it
			// counts what the update names ("9am" on "collect thursday"
			// for "thursday … 7:30 now not 9").
			if countNear(text, o, anchorWords(u)) {
				return true
			}
			continue
		}
		if clockAMPM.MatchString(o) {
			// "6 pm" is one phrase, said of its thing anywhere in the turn:
			// not "Day 4-7 … 6 of the 7 pm slots".
			if (lex.HasPhrase(text, o) || lex.HasPhrase(text, strings.ReplaceAll(o, " ", ""))) && namesAny(text, anchorWords(u)) {
				return true
			}
			continue
		}
		if ws := valueWords(o); len(ws) > 0 && holdsAll(text, ws) && (!numbered(ws) || lex.HasPhrase(text, ws[0]+" "+ws[1])) &&
			(anchored(u, ws, text) || clockTime.MatchString(o) && lex.HasPhrase(text, o)) {
			return true // a clock time ("our 9:05 is cancelled") names its train on its own
		}
		if namesItself(o) && lex.HasPhrase(text, o) {
			return true // "192.168.178.50", "anna@old.de": a value no other thing has
		}
		if sameDayStated(u, o, text) {
			return true // "scrap the 13th" for "Saturday 13 June", "not weds" for "Wednesday 16th"
		}
	}
	if facts.MovedValue(u) { // "moved dinner to 8": a time said of dinner
		return facts.SaysOtherValue(u, text)
	}
	if givenAnew(u) && statesValueOf(text, secretOf(u), u.New) {
		return true
	}
	var subject []string
	for _, p := range u.Subject {
		subject = append(subject, valueWords(p)...)
	}
	// An update naming its old value ("from 5 to 3") stated it where the
	// old value is. A long answer states the subject's value in a sentence
	// of its own: naming "weekly meetings" in one place and "5. Delegate"
	// in another states nothing of them; a short turn is read whole ("from
	// Brightwater Care. coordinator is janine, 0118 …").
	if len(subject) < 2 || len(u.Old) > 0 || !holdsAll(text, subject) || !facts.NumberStated(u, text) {
		return false
	}
	if ss := lex.Sentences(text); len(ss) > restatedTurnSentences && len(strings.Fields(text)) > restatedTurnWords &&
		!slices.ContainsFunc(ss, func(s string) bool { return holdsAll(s, subject) && facts.NumberStated(u, s) }) {
		return false
	}
	for _, n := range u.New {
		if lex.HasPhrase(text, n) {
			return false // it states the new value: current
		}
	}
	return true
}

// givenAnew: u gives a secret a new value in so many words ("the new
// password is yellow kite", "the wifi password is now sunflower22"). A
// secret's value is any words, of no kind a pattern knows, and it is
// replaced whole: the old one stops working.
func givenAnew(u facts.Update) bool {
	if len(u.New) == 0 || len(u.Subject) == 0 {
		return false
	}
	w := secretOf(u) // "wifi password": the password
	if !secrets[w] {
		return false
	}
	low := strings.ToLower(u.Sentence)
	return strings.Contains(low, "new "+w+" is") || strings.Contains(low, "new "+w+":") || strings.Contains(low, w+" is now")
}

// secretOf is the secret u gives anew (givenAnew).
func secretOf(u facts.Update) string {
	w := u.Subject[len(u.Subject)-1]
	return w[strings.LastIndexByte(w, ' ')+1:]
}

// secrets are the things whose value is a secret word: a password said
// aloud at the school gate is "blue heron".
var secrets = lex.Set(`password passcode passphrase passwort pw`)

// statesValueOf: a sentence of text (lower case) gives thing a value in
// the same shape, not one of nw: the word, at most five words, then "is"
// or a colon and the value ("the school pickup password for this term
// is blue heron"). A question about it ("what's the password again?")
// gives none.
func statesValueOf(text, thing string, nw []string) bool {
	for _, n := range nw {
		if lex.HasPhrase(text, n) {
			return false
		}
	}
	for _, s := range lex.Sentences(text) {
		if strings.Contains(s, "?") || !lex.HasPhrase(s, thing) {
			continue
		}
		if givesValue(strings.Fields(s), thing) {
			return true
		}
	}
	return false
}

// givesValue: among ws, thing is followed within six words by "is" or a
// colon and then a value ("password for this term is blue heron", "wifi
// password: sunflower").
func givesValue(ws []string, thing string) bool {
	for i, w := range ws {
		if strings.TrimRight(w, ":,") != thing {
			continue
		}
		for j := i; j < min(len(ws)-1, i+6); j++ {
			if ws[j+1] == "is" && j+2 < len(ws) || strings.HasSuffix(ws[j], ":") {
				return true
			}
		}
	}
	return false
}

// movedReach is how far back a move of "it" reaches for what moved: the
// thing just spoken of ("install appointment 3 sept between 8:00 and
// 12:00" … "called kpn, they moved it to thursday 4 sept").
const movedReach = 2

// unnamedMove is a move of "it" onto a new day or time (nw), and the
// naming words of its turn.
type unnamedMove struct {
	nw, words []string
}

// movedFrom: an older turn (low, lower case) is what moved. It says one or
// two days (or clock times) of the new value's kind other than it (more,
// and which one moved is not said), and it is the thing the move speaks
// of: it names a thing the moving turn names ("the 7am coach" … "they
// moved it to 06:45. So coach now leaves 06:45"), or it is the question
// just before ("does that mean the opening moves?" … "Yes. They moved it
// to Thursday 21 May"). "leave by 8:15 i reckon" just before "coding club
// update … they pushed it to 5:45" is another thing's time.
// moveWords are the words of a moving turn (lower case) that may name
// what moved: three letters or more ("kpn", "op"'s "physio"), no function
// word, no word of change, no day, month or number.
func moveWords(low string) []string {
	var out []string
	for _, w := range lex.Words(low) {
		if len(w) >= 3 && !slices.Contains(changeWords, w) && !lex.IsRankStopword(w) && !lex.IsWeekday(w) && !lex.IsMonth(w) && !notMoved[w] &&
			strings.IndexAny(w, "0123456789") < 0 && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// notMoved are words a moving turn says around the move that name no
// thing moved: when ("the plumber rang this morning", "… 14:00 tomorrow")
// and who told ("work called, they moved it …").
var notMoved = lex.Set(`today tomorrow tonight yesterday morning afternoon evening night week weekend month year next last this
called rang rung emailed texted phoned messaged said says told just`)

func (mv *unnamedMove) movedFrom(low string, justBefore bool) bool {
	if n := len(facts.MovedFrom(low, mv.nw[0])); n < 1 || n > 2 {
		return false
	}
	return shared(mv.words, low) > 0 || justBefore && strings.Contains(low, "?")
}

// justSaidReach is how far back a correction of a bare number reaches
// without naming what it numbers: "wait sorry, 11.2 not 9.2" two turns
// after "walls + floor comes to 9.2 sqm" corrects that 9.2; further
// back, "9.2" alone could be anything's.
const justSaidReach = 2

// justSaid: text (lower case) holds one of u's old numbers and none of
// its new values.
func justSaid(u facts.Update, text string) bool {
	for _, n := range u.New {
		if lex.HasPhrase(text, n) {
			return false
		}
	}
	for _, o := range u.Old {
		if strings.IndexAny(o, "0123456789") >= 0 && lex.HasPhrase(text, o) {
			return true
		}
	}
	return false
}

// valueNames are the words content writes right before u's new value,
// when u changes a bare number and its sentence names nothing else: "the
// image is actually built on spark 3.5.1 … so it's 3.5.1 not 3.4" names
// spark, so "spark 3.4" is what it changed and "3.4 GB" is not.
func valueNames(content string, u facts.Update) []string {
	if len(u.Subject) > 0 || len(u.Old) == 0 || !slices.ContainsFunc(u.Old, func(o string) bool { return isNumber(o) && o != "" }) {
		return nil
	}
	ws := strings.Fields(strings.ToLower(content)) // "3.5.1" is one value: lex.Fields would split it
	for i, w := range ws {
		ws[i] = strings.TrimRight(strings.TrimLeft(w, `("'`+"`"), `.,;:!?)"'`+"`")
	}
	var out []string
	for i := 1; i < len(ws); i++ {
		w := ws[i-1]
		if !slices.Contains(u.New, ws[i]) || len(w) < 3 || isNumber(w) || lex.IsRankStopword(w) || trailing[w] || slices.Contains(out, w) {
			continue
		}
		out = append(out, w)
	}
	return out
}

// namedOld: text writes a bare old number of u right after a word the
// updating turn wrote its new value after ("spark 3.4": valueNames).
func namedOld(u facts.Update, names []string, text string) bool {
	for _, o := range u.Old {
		if !isNumber(o) {
			continue
		}
		for _, n := range names {
			if lex.HasPhrase(text, n+" "+o) {
				return true
			}
		}
	}
	return false
}

// numbered: value words naming a thing by a word and its number ("week
// 6", "room 204", "platform 3"), stated only as that phrase: "Week 1
// done … 10 km at 6:38" holds both words and names neither.
func numbered(ws []string) bool {
	return len(ws) == 2 && strings.IndexAny(ws[0], "0123456789") < 0 && isNumber(ws[1])
}

// anchored: an old value of numbers alone ("13") says nothing unless the
// text also names what it numbers ("Postgres 13", when the update says
// "Postgres 15, not 13"): a word of the new value or of the subject.
func anchored(u facts.Update, old []string, text string) bool {
	if amountOnly(old) && len(u.Subject) > 0 {
		return namesAny(text, u.Subject) // "deposit £200 not £150" changed the deposit's £150, not the train's
	}
	for _, w := range old {
		if !isNumber(w) || len(w) >= 5 {
			return true // a word, or a number long enough to name itself (a phone number, a reference)
		}
	}
	words := anchorWords(u)
	for _, w := range old {
		if countNear(text, w, words) {
			return true
		}
	}
	return false
}

// anchorWords are the words of u's new value and subject that name its
// thing (no numbers).
func anchorWords(u facts.Update) []string {
	var words []string
	for _, p := range append(append([]string(nil), u.New...), u.Subject...) {
		for _, w := range valueWords(p) {
			if !isNumber(w) {
				words = append(words, w)
			}
		}
	}
	return words
}

// listMarker numbers a list's item or a heading ("5. Delegate", "### 5.
// **Delegate**"): no count.
var listMarker = regexp.MustCompile(`(?m)^\s*(?:#+\s*)?\d{1,2}[.)]\s`)

// clockAMPM is a clock time said with am or pm ("6 pm", "1:30pm").
var clockAMPM = regexp.MustCompile(`^\d{1,2}(?::\d{2})? ?(?:am|pm)$`)

// countNear: a sentence of text (lower case) writes number n as a number
// of its own (not "5-minute", "5th" or "march 5"; "9am" is 9) and a word
// naming what it numbers: "cut my weekly meetings from 5 to 3" changed "5
// weekly meetings", not a list's "5. Delegate" in an answer about meetings.
func countNear(text, n string, words []string) bool {
	if !strings.Contains(text, n) || !namesAny(text, words) && !slices.ContainsFunc(words, func(w string) bool { return len(w) > 3 && strings.Contains(text, strings.TrimSuffix(w, "s")) }) {
		return false // the common case, without splitting a long turn into sentences
	}
	am, pm := n+"am", n+"pm"
	for _, s := range lex.Sentences(listMarker.ReplaceAllString(text, " ")) {
		if !strings.Contains(s, n) {
			continue
		}
		fs := strings.Fields(s)
		for i, f := range fs {
			if t := strings.Trim(f, `.,;:!?()"'%`); t != n && t != am && t != pm || i > 0 && lex.IsMonth(strings.Trim(fs[i-1], `.,;:!?()"'`)) {
				continue
			}
			if slices.ContainsFunc(words, func(w string) bool {
				return lex.HasPhrase(s, w) || len(w) > 3 && lex.HasPhrase(s, strings.TrimSuffix(w, "s"))
			}) {
				return true
			}
		}
	}
	return false
}

// namesItself: v is one token of a kind no two things share (a host or
// an address on a network, an email): where it is written, it is the
// thing that moved off it.
func namesItself(v string) bool {
	if strings.ContainsAny(v, " \t") {
		return false
	}
	for _, k := range lex.ValueKinds(v) {
		if k == lex.KindHost || k == lex.KindEmail {
			return true
		}
	}
	return false
}

// bareOrdinal is a day said by its ordinal alone ("the 3rd", "15th").
var bareOrdinal = regexp.MustCompile(`^(?:the )?\d{1,2}(?:st|nd|rd|th)$`)

// clockTime is a value that is a clock time alone ("9:05", "18:30").
var clockTime = regexp.MustCompile(`^(?:[01]?\d|2[0-3]):[0-5]\d$`)

// amountOnly: the old value is an amount of money and nothing else
// ("£150").
func amountOnly(old []string) bool {
	return len(old) == 1 && strings.ContainsAny(old[0], "$€£") && strings.Trim(old[0], "$€£0123456789.,k") == ""
}

// namesAny: text names one of the words.
func namesAny(text string, words []string) bool {
	for _, w := range words {
		if lex.HasPhrase(text, w) {
			return true
		}
	}
	return false
}

func isNumber(w string) bool {
	return strings.Trim(w, "0123456789.,") == ""
}

// valueWords are the words of a value phrase that name the value, at most
// three: "pgbouncer in ci after" names pgbouncer, "dairy anymore actually"
// dairy. Function words and the adverbs a clause trails ("anymore",
// "actually") name nothing.
func valueWords(phrase string) []string {
	var out []string
	for _, w := range lex.Fields(phrase) {
		if len(w) < 3 && !strings.ContainsAny(w, "0123456789") || lex.IsRankStopword(w) || trailing[w] {
			continue
		}
		if out = append(out, w); len(out) == 3 {
			break
		}
	}
	return out
}

var trailing = map[string]bool{"anymore": true, "actually": true, "now": true, "after": true, "before": true, "either": true,
	"too": true, "also": true, "still": true, "really": true, "more": true, "since": true, "instead": true, "longer": true}

func holdsAll(text string, ws []string) bool {
	for _, w := range ws {
		if !lex.HasPhrase(text, w) {
			return false
		}
	}
	return true
}

// updateQuote is what a mark quotes of the updating turn: the whole turn
// while it is short (a turn is shown whole or not at all: "ok no gin, we
// get her herbs then. basil n mint?" cut after its first sentence loses
// the new value), else its update sentence, marked as an excerpt where the
// turn goes on around it.
func updateQuote(content, sentence string) string {
	if q := shortQuote(content); q != "" {
		return q
	}
	// One line: a mark is a parenthesis under a turn, not a turn.
	content = strings.Join(strings.Fields(content), " ")
	i := strings.Index(content, sentence)
	tail := i < 0 || i+len(sentence) < len(content)
	if r := []rune(sentence); len(r) > updateMarkChars {
		sentence, tail = string(r[:updateMarkChars]), true
	}
	if i != 0 {
		sentence = rag.Elision + " " + sentence
	}
	if tail {
		sentence += " " + rag.Elision
	}
	return sentence
}

// settingQuote is a setting's line quoted as an excerpt of its long turn
// ("[…] maxReplicas: 12 […]"), without reading the whole turn again.
func settingQuote(content, line string) string {
	q := strings.Join(strings.Fields(line), " ")
	if r := []rune(q); len(r) > updateMarkChars {
		q = string(r[:updateMarkChars])
	}
	if !strings.HasPrefix(strings.TrimSpace(content), line) {
		q = rag.Elision + " " + q
	}
	if !strings.HasSuffix(strings.TrimSpace(content), line) {
		q += " " + rag.Elision
	}
	return q
}

// shortQuote is a short turn on one line (a mark is a parenthesis under a
// turn, not a turn), "" for a long one.
func shortQuote(content string) string {
	content = strings.Join(strings.Fields(content), " ")
	if utf8.RuneCountInString(content) > updateMarkChars {
		return ""
	}
	return content
}

// updateMark is the line shown under a turn an update changed.
func updateMark(c chatUpdate, quote string) string {
	when := ""
	if !c.at.IsZero() {
		when = c.at.UTC().Format(DayLayout) + ", "
	}
	return "(earlier; updated " + when + "turn " + strconv.FormatInt(c.seq, 10) + ": " + quote + ")"
}

// sameDayStated: a sentence of text names the old day o, written
// otherwise, and a word of the update's sentence ("water" in "the
// water's going off Thursday 17th now, not weds" for "Water will be off
// Wednesday 16th"), without the new day: a chat names many Wednesdays,
// and only the one said of the same thing is the one changed.
func sameDayStated(u facts.Update, o, text string) bool {
	if !facts.SameDay(o, text) {
		return false
	}
	for _, s := range lex.Sentences(text) {
		if facts.SameDay(o, s) && !saysNewDay(u, s) && sharesWord(s, strings.ToLower(u.Sentence)) {
			return true
		}
	}
	return false
}

// sharesWord: a and b (lower case) share a word naming a thing: not a
// function word, a number, a weekday or a month.
func sharesWord(a, b string) bool {
	bs := lex.Words(b)
	for _, w := range lex.Words(a) {
		if len(w) < 3 || lex.IsRankStopword(w) || trailing[w] || lex.IsWeekday(w) || strings.IndexAny(w, "0123456789") >= 0 || lex.IsMonth(w) {
			continue
		}
		if slices.Contains(bs, w) {
			return true
		}
	}
	return false
}

// saysNewDay: text names u's new day too ("the 13th or the 20th?"), a
// choice among both rather than the old day alone.
func saysNewDay(u facts.Update, text string) bool {
	for _, n := range u.New {
		if lex.HasPhrase(text, n) || facts.SameDay(n, text) {
			return true
		}
	}
	return false
}
