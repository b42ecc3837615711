package eval

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// material is what the replay LLM knows of one conversation: its turns in
// ingestion order, the seq each got, and the observations citing them.
type material struct {
	user     string // the speaker ingested with role user: the profile's subject
	speakers []string
	turns    []matTurn
	byDia    map[string]int // dia_id → turn index
	obs      []Observation
	obsOf    map[int][]int // turn index → observations citing it
	sums     map[int]string

	mu    sync.Mutex
	bySeq map[int64]int // seq → turn index, as ingestion assigns them
}

type matTurn struct {
	dia     string
	text    string // as ingested (TurnText)
	session int
	seq     int64 // 0 until registered
}

func newMaterial(c Conversation) *material {
	m := &material{user: c.SpeakerA, speakers: []string{c.SpeakerA, c.SpeakerB}, byDia: map[string]int{},
		obsOf: map[int][]int{}, sums: c.SessionSummaries, bySeq: map[int64]int{}}
	for _, s := range c.Sessions {
		for _, t := range s.Turns {
			if _, dup := m.byDia[t.DiaID]; dup {
				continue
			}
			m.byDia[t.DiaID] = len(m.turns)
			m.turns = append(m.turns, matTurn{dia: t.DiaID, text: TurnText(t), session: s.N})
		}
	}
	for _, o := range c.Observations {
		cited := false
		for _, d := range o.Evidence {
			if i, ok := m.byDia[d]; ok {
				m.obsOf[i] = append(m.obsOf[i], len(m.obs))
				cited = true
			}
		}
		if cited {
			m.obs = append(m.obs, o)
		}
	}
	return m
}

// register records the seq contextd gave a turn.
func (m *material) register(dia string, seq int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if i, ok := m.byDia[dia]; ok {
		m.turns[i].seq = seq
		m.bySeq[seq] = i
	}
}

func (m *material) seqOf(i int) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.turns[i].seq
}

var (
	seqPrefix    = regexp.MustCompile(`^\[\s*(?:seq\s*)?#?(\d+)\s*\]`)
	roleLabel    = regexp.MustCompile(`^(?:\[[^\]]*\]\s*)*[A-Za-z_]+(?:\s*\([^)]*\))?\s*:\s*`)
	episodeRange = regexp.MustCompile(`(?i)the episode \(turns\s+(\d+)\s*[-–]\s*(\d+)\)`)
	// episodeBlock heads a closed episode's summary in a running-summary
	// request: the episode stands for its turns (read from the dataset).
	episodeBlock = regexp.MustCompile(`^\[episode, turns (\d+)-(\d+)`)
	earlierHead  = regexp.MustCompile(`(?i)^earlier context`)
)

// sentTurn is one transcript line the replay recognised as a turn.
type sentTurn struct {
	turn    int  // index into material.turns
	context bool // earlier context, not part of what is summarised
	// episode: the turn stands behind an episode's summary in the request
	// (a running-summary call); its text was not sent.
	episode bool
}

// identify finds the turns a request's text carries, one per line: by the
// line's "[seq]" prefix when it names a turn whose text fits, else by the
// text after the speaker's "Name: " (contextd may add role labels, cut a
// long turn short, or leave turns out). Lines of an "Earlier context"
// block, and turns outside an episode header's "turns a-b", are context.
// Ambiguous texts ("Thanks!") resolve to the first match after the
// previous line's turn. unknown counts turn-like lines it could not place.
func (m *material) identify(text string) (out []sentTurn, unknown int) {
	lo, hi := int64(0), int64(0)
	if r := episodeRange.FindStringSubmatch(text); r != nil {
		lo, _ = strconv.ParseInt(r[1], 10, 64)
		hi, _ = strconv.ParseInt(r[2], 10, 64)
	}
	inContext, last := false, -1
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			inContext = false
			continue
		case earlierHead.MatchString(line):
			inContext = true
			continue
		case episodeBlock.MatchString(line):
			r := episodeBlock.FindStringSubmatch(line)
			from, _ := strconv.ParseInt(r[1], 10, 64)
			to, _ := strconv.ParseInt(r[2], 10, 64)
			for seq := from; seq <= to; seq++ {
				if i, ok := m.bySeq[seq]; ok {
					out = append(out, sentTurn{turn: i, episode: true})
				}
			}
			continue
		}
		i, ok := m.place(line, last)
		if !ok {
			if seqPrefix.MatchString(line) {
				unknown++
			}
			continue
		}
		ctx := inContext
		if s := m.turns[i].seq; hi > 0 && s > 0 && (s < lo || s > hi) {
			ctx = true
		}
		out = append(out, sentTurn{turn: i, context: ctx})
		last = i
	}
	return out, unknown
}

// place finds the turn a line shows (m.mu held).
func (m *material) place(line string, last int) (int, bool) {
	hint := -1
	if s := seqPrefix.FindStringSubmatch(line); s != nil {
		seq, _ := strconv.ParseInt(s[1], 10, 64)
		if i, ok := m.bySeq[seq]; ok {
			hint = i
		}
	}
	body := m.body(line)
	if hint >= 0 && (body == "" || shows(m.turns[hint].text, body)) {
		return hint, true
	}
	if len([]rune(body)) < 3 {
		return 0, false
	}
	// Whole texts first: a full turn is also a prefix of a longer one.
	for _, exact := range []bool{true, false} {
		first := -1
		for i, t := range m.turns {
			if exact && t.text != body || !exact && !shows(t.text, body) {
				continue
			}
			if i > last {
				return i, true
			}
			if first < 0 {
				first = i
			}
		}
		if first >= 0 {
			return first, true
		}
	}
	return 0, false
}

// body is a line's turn text: from the first "Speaker: " on, else the line
// without its "[seq] role (name):" labels.
func (m *material) body(line string) string {
	at := -1
	for _, s := range m.speakers {
		if s == "" {
			continue
		}
		if k := strings.Index(line, s+": "); k >= 0 && (at < 0 || k < at) {
			at = k
		}
	}
	if at >= 0 {
		return strings.TrimSpace(line[at:])
	}
	return strings.TrimSpace(roleLabel.ReplaceAllString(line, ""))
}

// shows reports whether body is the turn's text, whole or cut short (a
// prefix of at least 12 characters, any trailing ellipsis aside).
func shows(turn, body string) bool {
	if turn == body {
		return true
	}
	cut := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(body), ".…"))
	return len(cut) >= 12 && len(cut) < len(turn) && strings.HasPrefix(turn, cut)
}
