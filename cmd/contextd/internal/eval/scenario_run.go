package eval

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/contextd/contextd/internal/tokens"
)

// The measurements, for every probe answer (a probe at one budget):
//
//  1. missing: when budget_tokens ≥ 1.3× the chat's tokens (cl100k, each
//     turn with its role and name label), every
//     turn but routing noise and the probe's own query is in the context
//     whole ("turns missing while the chat fits").
//  2. adjacency: two turns found in the context, separated only by
//     whitespace and a role label, must be consecutive in the chat
//     (ignoring routing noise); a header line or any other text between
//     them makes it fine.
//  3. cut: a turn under 600 characters whose first 30 characters, or one
//     of its sentences, appear in the context must appear whole.
//  4. junk facts (once per chat): a fact "Unanswered question ..." about
//     a question the chat answered.
//  5. the probe's own assertions: must_contain, and stale pairs (a
//     context holding the old statement holds the new value too).

// FitFactor: a budget this many times the chat's tokens fits the chat.
const FitFactor = 1.3

// CutMaxChars: turns shorter than this must never be shown in part.
const CutMaxChars = 600

// ScenarioOptions tune a run.
type ScenarioOptions struct {
	Progress io.Writer // nil: quiet
	// Only runs the scenarios whose id contains it ("" = all).
	Only string
	// MaxDetails caps the violations listed per probe answer (0: 5).
	MaxDetails int
}

// ScenarioReport is the suite's outcome.
type ScenarioReport struct {
	Chats []*ChatResult
}

// ChatResult is one scenario's outcome.
type ChatResult struct {
	ID, Domain      string
	Turns, Tokens   int
	Answers         []*ProbeAnswer
	JunkFacts       []string // texts of violating facts
	UnansweredFacts int      // "Unanswered question" facts in all
	Unanswered      []string // their texts
	Facts           int
	Err             string
}

// ProbeAnswer is one probe at one budget.
type ProbeAnswer struct {
	Probe       string
	Query       string
	Strategy    string
	Budget      int
	UsedTokens  int
	Fits        bool // budget ≥ FitFactor × chat tokens
	Missing     []string
	Adjacent    []string
	Cut         []string
	MissingMust []string
	Stale       []string
	Context     string
}

// Violations counts each measurement over a chat.
type Violations struct {
	Missing, Adjacent, Cut, Junk, MustContain, Stale int
}

// Total is the sum of all counts.
func (v Violations) Total() int {
	return v.Missing + v.Adjacent + v.Cut + v.Junk + v.MustContain + v.Stale
}

func (v *Violations) add(o Violations) {
	v.Missing += o.Missing
	v.Adjacent += o.Adjacent
	v.Cut += o.Cut
	v.Junk += o.Junk
	v.MustContain += o.MustContain
	v.Stale += o.Stale
}

// Counts sums a chat's violations.
func (c *ChatResult) Counts() Violations {
	v := Violations{Junk: len(c.JunkFacts)}
	for _, a := range c.Answers {
		v.Missing += len(a.Missing)
		v.Adjacent += len(a.Adjacent)
		v.Cut += len(a.Cut)
		v.MustContain += len(a.MissingMust)
		v.Stale += len(a.Stale)
	}
	return v
}

// Counts sums the suite's violations.
func (r *ScenarioReport) Counts() Violations {
	var v Violations
	for _, c := range r.Chats {
		v.add(c.Counts())
	}
	return v
}

// Errors lists the chats that could not be run.
func (r *ScenarioReport) Errors() []string {
	var out []string
	for _, c := range r.Chats {
		if c.Err != "" {
			out = append(out, c.ID+": "+c.Err)
		}
	}
	return out
}

// RunScenarios runs each scenario against the contextd at base (a fresh
// server: the chats are created under their own ids).
func RunScenarios(ctx context.Context, base string, scs []*Scenario, opts ScenarioOptions) *ScenarioReport {
	c := &scClient{base: strings.TrimRight(base, "/"), hc: &http.Client{Timeout: 60 * time.Second}}
	rep := &ScenarioReport{}
	for _, sc := range scs {
		if opts.Only != "" && !strings.Contains(sc.ID, opts.Only) {
			continue
		}
		start := time.Now()
		res := runScenario(ctx, c, sc)
		if opts.Progress != nil {
			v := res.Counts()
			fmt.Fprintf(opts.Progress, "scenario %-16s %3d turns %6d tokens  %d violations  (%s)\n", sc.ID, res.Turns, res.Tokens, v.Total(), time.Since(start).Round(time.Millisecond))
		}
		rep.Chats = append(rep.Chats, res)
	}
	return rep
}

func runScenario(ctx context.Context, c *scClient, sc *Scenario) *ChatResult {
	res := &ChatResult{ID: sc.ID, Domain: sc.Domain, Turns: len(sc.Turns)}
	for _, t := range sc.Turns { // as the context prints it: "role (name): content"
		label := t.Role
		if t.Name != "" {
			label += " (" + t.Name + ")"
		}
		res.Tokens += tokens.Count(label+": "+t.Content) + 1
	}
	if err := c.load(ctx, sc); err != nil {
		res.Err = err.Error()
		return res
	}
	for _, p := range sc.Probes {
		for _, b := range p.Budgets {
			var ans struct {
				Context string `json:"context"`
				Usage   struct {
					Total int `json:"total_tokens"`
				} `json:"usage"`
			}
			body := map[string]any{"chat_id": sc.ID, "query": p.Query, "budget_tokens": b, "strategy": p.Strategy,
				"wait_for_summary": true, "include": []string{"context"}}
			if err := c.post(ctx, "/v1/context", body, &ans); err != nil {
				res.Err = fmt.Sprintf("probe %s @%d: %v", p.Name, b, err)
				return res
			}
			a := &ProbeAnswer{Probe: p.Name, Query: p.Query, Strategy: p.Strategy, Budget: b, UsedTokens: ans.Usage.Total,
				Fits: float64(b) >= FitFactor*float64(res.Tokens), Context: ans.Context}
			judge(sc, p, a)
			res.Answers = append(res.Answers, a)
		}
	}
	facts, err := c.facts(ctx, sc.ID)
	if err != nil {
		res.Err = "facts: " + err.Error()
		return res
	}
	res.Facts = len(facts)
	res.JunkFacts, res.UnansweredFacts = junkFacts(sc, facts)
	for _, f := range facts {
		if strings.HasPrefix(f.Text, "Unanswered question") {
			res.Unanswered = append(res.Unanswered, fmt.Sprintf("%s (turns %v)", clip(f.Text, 110), f.Seqs))
		}
	}
	return res
}

// routingNoise: a supervisor's routing line ("[Supervisor] → Research
// Agent"), which filters may drop. A "[Supervisor] ..." turn without the
// arrow is content.
func routingNoise(t STurn) bool {
	s := strings.TrimLeft(t.Content, " \t\r\n")
	if !strings.HasPrefix(s, "[Supervisor") {
		return false
	}
	line, _, _ := strings.Cut(s, "\n")
	return strings.Contains(line, "→")
}

var agentLabel = regexp.MustCompile(`^\[(?:[^\]\n]{1,60} Agent|Supervisor)\][:\s]*`)

// shownTexts are the texts a turn may appear as: its content, and its
// content without a leading "[X Agent]" label (filters strip it).
func shownTexts(t STurn) []string {
	s := strings.TrimSpace(t.Content)
	out := []string{s}
	if l := agentLabel.FindString(s); l != "" {
		out = append(out, strings.TrimSpace(s[len(l):]))
	}
	return out
}

// find returns where the turn's whole text is in ctx (-1 when it is not)
// and the length found.
func find(ctx string, t STurn) (int, int) {
	for _, s := range shownTexts(t) {
		if s == "" {
			continue
		}
		if i := strings.Index(ctx, s); i >= 0 {
			return i, len(s)
		}
	}
	return -1, 0
}

// queryTurn is the seq of the turn the probe's query repeats (the last
// user turn whose content is the query), 0 when none.
func queryTurn(sc *Scenario, p ScProbe) int {
	q := strings.TrimSpace(p.Query)
	for i := len(sc.Turns) - 1; i >= 0; i-- {
		t := sc.Turns[i]
		if t.Role == "user" && strings.TrimSpace(t.Content) == q {
			return t.seq
		}
	}
	return 0
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// sectionAt names the context section holding byte i.
func sectionAt(ctx string, i int) string {
	name := "top"
	for _, h := range []struct{ title, name string }{
		{"## Relevant earlier turns", "retrieved"}, {"## Conversation summary", "summary"}, {"## Recent turns", "recent"}} {
		if j := strings.Index(ctx, h.title); j >= 0 && j <= i {
			name = h.name
		}
	}
	return name
}

var updateNote = regexp.MustCompile(`(?m)^\(earlier; updated [^\n]*\)$`)

var scRoleLabel = regexp.MustCompile(`^(?:user|assistant|tool|system)(?: \([^)\n]*\))?:$`)

// onlyLabel: the text between two turns is whitespace and at most one
// role label.
func onlyLabel(gap string) bool {
	g := strings.TrimSpace(gap)
	return g == "" || scRoleLabel.MatchString(g)
}

var scSentenceEnd = regexp.MustCompile(`[.!?…](?:\s+|$)|\n+`)

// sentences splits a turn into its sentences of 25 characters or more
// (shorter ones, "Thanks!", "ok.", say nothing about a cut).
func scSentences(s string) []string {
	var out []string
	last := 0
	for _, m := range scSentenceEnd.FindAllStringIndex(s, -1) {
		if x := strings.TrimSpace(s[last:m[1]]); len(x) >= 25 {
			out = append(out, x)
		}
		last = m[1]
	}
	if x := strings.TrimSpace(s[last:]); len(x) >= 25 {
		out = append(out, x)
	}
	return out
}

// judge fills a's findings: what the context a.Context misses, places
// side by side, cuts or contradicts of the scenario's turns and the
// probe's assertions.
func judge(sc *Scenario, p ScProbe, a *ProbeAnswer) {
	skip := skippedTurns(sc, p)
	judgeMissing(sc, skip, a)
	judgeAdjacent(sc, skip, a)
	judgeCut(sc, skip, a)
	judgeAssertions(p, a)
}

// skippedTurns are the turns a context need not show: routing noise and
// the probe's own query.
func skippedTurns(sc *Scenario, p ScProbe) map[int]bool {
	skip := map[int]bool{}
	for _, t := range sc.Turns {
		if routingNoise(t) {
			skip[t.seq] = true
		}
	}
	if q := queryTurn(sc, p); q > 0 {
		skip[q] = true
	}
	return skip
}

func judgeMissing(sc *Scenario, skip map[int]bool, a *ProbeAnswer) {
	ctx := a.Context
	// 1. every turn, when the chat fits.
	if a.Fits {
		for _, t := range sc.Turns {
			if skip[t.seq] {
				continue
			}
			if i, _ := find(ctx, t); i < 0 {
				a.Missing = append(a.Missing, fmt.Sprintf("turn %d (%s, %d chars): %q", t.seq, t.Role, len(t.Content), clip(t.Content, 70)))
			}
		}
	}
}

func judgeAdjacent(sc *Scenario, skip map[int]bool, a *ProbeAnswer) {
	ctx := a.Context
	// 2. adjacency of non-consecutive turns. Only turns whose text is
	// found once and is no part of another turn's text are placed.
	type placed struct{ seq, pos, end int }
	var ps []placed
	for _, t := range sc.Turns {
		i, n := find(ctx, t)
		if i < 0 || strings.Count(ctx, ctx[i:i+n]) != 1 || partOfAnother(sc, t) {
			continue
		}
		ps = append(ps, placed{t.seq, i, i + n})
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].pos < ps[j].pos })
	for k := 1; k < len(ps); k++ {
		x, y := ps[k-1], ps[k]
		if y.pos < x.end || !onlyLabel(ctx[x.end:y.pos]) {
			continue
		}
		if !skippedBetween(skip, x.seq, y.seq) {
			a.Adjacent = append(a.Adjacent, fmt.Sprintf("turn %d then turn %d with nothing between them (in %s)", x.seq, y.seq, sectionAt(ctx, y.pos)))
		}
	}
}

func judgeCut(sc *Scenario, skip map[int]bool, a *ProbeAnswer) {
	ctx := a.Context
	// 3. short turns shown in part. The "(earlier; updated …: <update
	// text>)" note after a stale statement quotes its update: no cut.
	cutCtx := updateNote.ReplaceAllStringFunc(ctx, func(s string) string { return strings.Repeat(" ", len(s)) })
	// Turns are shown in turn lines: the summary and the fact and episode
	// lines ("[3 June 2026] ... (turn 23)") say what was said in their
	// own words (or quote a sentence as a fact); they do not show a turn.
	cutCtx = blankNonTurnText(cutCtx)
	for _, t := range sc.Turns {
		if len(t.Content) >= CutMaxChars || skip[t.seq] {
			continue
		}
		if i, _ := find(ctx, t); i >= 0 {
			continue
		}
		texts := shownTexts(t)
		s := texts[len(texts)-1]
		hit, where := "", -1
		// Another turn holding the same 30 characters (tool results of one
		// shape, `{"vendor": "Mixpanel", "quote_…`; a reminder repeating a
		// deadline) shows them whole: that is no cut of this one.
		if r := []rune(s); len(r) >= 30 && !sentenceElsewhere(sc, t, string(r[:30])) {
			if j := strings.Index(cutCtx, string(r[:30])); j >= 0 {
				hit, where = "its first 30 characters", j
			}
		}
		if hit == "" {
			for _, sen := range scSentences(s) {
				if j := strings.Index(cutCtx, sen); j >= 0 && !sentenceElsewhere(sc, t, sen) {
					hit, where = fmt.Sprintf("its sentence %q", clip(sen, 50)), j
					break
				}
			}
		}
		if hit != "" {
			a.Cut = append(a.Cut, fmt.Sprintf("turn %d (%d chars): %s in %s, not the whole turn", t.seq, len(t.Content), hit, sectionAt(ctx, where)))
		}
	}
}

func judgeAssertions(p ScProbe, a *ProbeAnswer) {
	ctx := a.Context
	// 5. the probe's assertions.
	for _, m := range p.MustContain {
		if !strings.Contains(ctx, m) {
			a.MissingMust = append(a.MissingMust, m)
		}
	}
	for _, st := range p.Stale {
		if strings.Contains(ctx, st.Old) && !strings.Contains(ctx, st.New) {
			a.Stale = append(a.Stale, fmt.Sprintf("%q without %q", st.Old, st.New))
		}
	}
}

// blankNonTurnText blanks, keeping offsets, the summary section and every
// line that is a fact or an episode: a bracketed head with text after it
// on the same line (a block header is a bracketed line alone).
func blankNonTurnText(ctx string) string {
	b := []byte(ctx)
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	if i := strings.Index(ctx, "## Conversation summary"); i >= 0 {
		end := len(ctx)
		if j := strings.Index(ctx[i+1:], "\n## "); j >= 0 {
			end = i + 1 + j
		}
		blank(i, end)
	}
	pos := 0
	for _, line := range strings.SplitAfter(ctx, "\n") {
		if strings.HasPrefix(line, "[") {
			if k := strings.Index(line, "] "); k > 0 && strings.TrimSpace(line[k+1:]) != "" {
				blank(pos, pos+len(line))
			}
		}
		pos += len(line)
	}
	return string(b)
}

// sentenceElsewhere: the sentence is also in another turn (a config
// pasted twice), so finding it says nothing about this turn.
func sentenceElsewhere(sc *Scenario, t STurn, sen string) bool {
	for _, o := range sc.Turns {
		if o.seq != t.seq && strings.Contains(o.Content, sen) {
			return true
		}
	}
	return false
}

// partOfAnother: the turn's text occurs inside another turn's (a short
// "ok" or a quoted line), so where it is found says nothing.
func partOfAnother(sc *Scenario, t STurn) bool {
	s := shownTexts(t)[0]
	for _, o := range sc.Turns {
		if o.seq != t.seq && strings.Contains(o.Content, s) {
			return true
		}
	}
	return false
}

// skippedBetween: turn y follows turn x with only turns the context need
// not show between them (none, or routing lines left out). A routing line
// shown in its place (its label stripped) is consecutive with both
// neighbours.
func skippedBetween(skip map[int]bool, x, y int) bool {
	if y <= x {
		return false
	}
	for s := x + 1; s < y; s++ {
		if !skip[s] {
			return false
		}
	}
	return true
}

type scFact struct {
	ID   string  `json:"id"`
	Text string  `json:"text"`
	Seqs []int64 `json:"seqs"`
}

// junkFacts: "Unanswered question" facts citing (or quoting) a question
// the chat answered.
func junkFacts(sc *Scenario, facts []scFact) (junk []string, unanswered int) {
	for _, f := range facts {
		if !strings.HasPrefix(f.Text, "Unanswered question") {
			continue
		}
		unanswered++
		bad := false
		for _, s := range f.Seqs {
			if s >= 1 && int(s) <= len(sc.Turns) && sc.Turns[s-1].Question == "answered" {
				bad = true
			}
		}
		if !bad {
			if _, q, ok := strings.Cut(f.Text, `: "`); ok {
				q = strings.TrimSuffix(q, `"`)
				for _, t := range sc.Turns {
					if t.Question == "answered" && len(q) > 10 && strings.Contains(t.Content, strings.TrimSuffix(q, "…")) {
						bad = true
					}
				}
			}
		}
		if bad {
			junk = append(junk, fmt.Sprintf("%s (turns %v)", clip(f.Text, 110), f.Seqs))
		}
	}
	return junk, unanswered
}

// scClient speaks contextd's HTTP API.
type scClient struct {
	base string
	hc   *http.Client
}

func (c *scClient) do(ctx context.Context, method, path string, body, out any) (int, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, clip(string(raw), 300))
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

func (c *scClient) post(ctx context.Context, path string, body, out any) error {
	_, err := c.do(ctx, "POST", path, body, out)
	return err
}

// load appends the chat, lets the server index it, summarises it, and
// waits for the index again (episodes closed by the summary are indexed
// too): what a server that has been running a while would hold.
func (c *scClient) load(ctx context.Context, sc *Scenario) error {
	var msgs []map[string]any
	for _, t := range sc.Turns {
		m := map[string]any{"id": fmt.Sprintf("%s-t%03d", sc.ID, t.seq), "role": t.Role, "content": t.Content,
			"created_at": t.at.UTC().Format(time.RFC3339)}
		if t.Name != "" {
			m["name"] = t.Name
		}
		msgs = append(msgs, m)
	}
	body := map[string]any{"messages": msgs}
	if sc.UserID != "" {
		body["user_id"] = sc.UserID
	}
	if sc.Agent != "" {
		body["agent"] = sc.Agent
	}
	id := url.PathEscape(sc.ID)
	if err := c.post(ctx, "/v1/chats/"+id+"/messages", body, nil); err != nil {
		return err
	}
	c.waitIndexed(ctx)
	if st, err := c.do(ctx, "POST", "/v1/chats/"+id+"/summary/refresh", nil, nil); err != nil && st != 501 {
		return err
	}
	c.waitIndexed(ctx)
	return nil
}

// waitIndexed waits (up to 20 s) until /metrics shows no unindexed turn;
// without the metric it returns at once.
func (c *scClient) waitIndexed(ctx context.Context) {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		n, ok := c.metric(ctx, "contextd_backlog_unindexed_turns")
		if !ok || n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *scClient) metric(ctx context.Context, name string) (float64, bool) {
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+"/metrics", nil)
	if err != nil {
		return 0, false
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, name+" ") || strings.HasPrefix(l, name+"{") {
			f := strings.Fields(l)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			return v, err == nil
		}
	}
	return 0, false
}

func (c *scClient) facts(ctx context.Context, chat string) ([]scFact, error) {
	var all []scFact
	after := int64(0)
	for {
		var page struct {
			Facts []scFact `json:"facts"`
			Next  *int64   `json:"next_after_seq"`
		}
		p := fmt.Sprintf("/v1/chats/%s/facts?limit=1000&after_seq=%d", url.PathEscape(chat), after)
		if _, err := c.do(ctx, "GET", p, nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Facts...)
		if page.Next == nil || *page.Next <= after || len(page.Facts) == 0 {
			return all, nil
		}
		after = *page.Next
	}
}

// Write prints the report: a table of counts per chat, then each probe
// answer's violations.
func (r *ScenarioReport) Write(w io.Writer, maxDetails int) {
	if maxDetails <= 0 {
		maxDetails = 5
	}
	fmt.Fprintf(w, "\nScenario suite: %d chats\n\n", len(r.Chats))
	fmt.Fprintf(w, "%-16s %-10s %5s %6s | %7s %8s %4s %4s %5s %5s\n", "chat", "domain", "turns", "tokens", "missing", "adjacent", "cut", "junk", "stale", "must")
	for _, c := range r.Chats {
		v := c.Counts()
		fmt.Fprintf(w, "%-16s %-10s %5d %6d | %7d %8d %4d %4d %5d %5d\n", c.ID, c.Domain, c.Turns, c.Tokens, v.Missing, v.Adjacent, v.Cut, v.Junk, v.Stale, v.MustContain)
	}
	v := r.Counts()
	fmt.Fprintf(w, "%-16s %-10s %5s %6s | %7d %8d %4d %4d %5d %5d\n", "TOTAL", "", "", "", v.Missing, v.Adjacent, v.Cut, v.Junk, v.Stale, v.MustContain)
	fmt.Fprintln(w, "\nmissing: turns missing while the chat fits · adjacent: non-consecutive turns shown as adjacent · cut: turns under 600 chars shown in part · junk: \"Unanswered question\" facts for answered questions · stale: stale values unmarked · must: must_contain strings absent")
	for _, c := range r.Chats {
		fmt.Fprintf(w, "\n== %s (%s): %d turns, %d tokens; %d facts, %d \"Unanswered question\"\n", c.ID, c.Domain, c.Turns, c.Tokens, c.Facts, c.UnansweredFacts)
		if c.Err != "" {
			fmt.Fprintf(w, "  ERROR: %s\n", c.Err)
		}
		for _, j := range list(c.JunkFacts, maxDetails) {
			fmt.Fprintf(w, "  junk fact: %s\n", j)
		}
		if len(c.JunkFacts) == 0 {
			for _, u := range list(c.Unanswered, maxDetails) {
				fmt.Fprintf(w, "  unanswered-question fact (for a question left open: fine): %s\n", u)
			}
		}
		for _, a := range c.Answers {
			fit := ""
			if a.Fits {
				fit = " (chat fits)"
			}
			status := "ok"
			n := len(a.Missing) + len(a.Adjacent) + len(a.Cut) + len(a.MissingMust) + len(a.Stale)
			if n > 0 {
				status = fmt.Sprintf("FAIL missing=%d adjacent=%d cut=%d stale=%d must=%d", len(a.Missing), len(a.Adjacent), len(a.Cut), len(a.Stale), len(a.MissingMust))
			}
			fmt.Fprintf(w, "  probe %-14s %-15s @%-6d used %5d%s: %s\n", a.Probe, a.Strategy, a.Budget, a.UsedTokens, fit, status)
			for _, m := range a.MissingMust {
				fmt.Fprintf(w, "      must_contain absent: %q\n", m)
			}
			for _, s := range a.Stale {
				fmt.Fprintf(w, "      stale: %s\n", s)
			}
			for _, s := range list(a.Missing, maxDetails) {
				fmt.Fprintf(w, "      missing: %s\n", s)
			}
			for _, s := range list(a.Adjacent, maxDetails) {
				fmt.Fprintf(w, "      adjacent: %s\n", s)
			}
			for _, s := range list(a.Cut, maxDetails) {
				fmt.Fprintf(w, "      cut: %s\n", s)
			}
		}
	}
}

func list(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return append(xs[:n:n], fmt.Sprintf("… and %d more", len(xs)-n))
}
