// Package eval runs contextd's LLM-free evaluations. LoCoMo (see
// ../shared/bench/locomo/README.md): each conversation is ingested through
// the service's own append path, every question is asked through the same
// /v1/context assembly the server runs, and evidence recall is measured
// against recency and BM25-fill baselines computed in the same run.
package eval

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Conversation is one LoCoMo sample.
type Conversation struct {
	SampleID string
	SpeakerA string
	SpeakerB string
	Sessions []Session
	QA       []QA
	// Observations and SessionSummaries are the memory LoCoMo's authors'
	// LLM wrote (observation, session_summary): the replay LLM's material.
	Observations     []Observation
	SessionSummaries map[int]string
}

// Observation is one LLM-written fact about a speaker, with the turns it
// came from (normalised dia_ids).
type Observation struct {
	Session  int
	Speaker  string
	Text     string
	Evidence []string
}

// Session is one dated session of turns.
type Session struct {
	N     int
	Date  time.Time
	Turns []DialTurn
}

// DialTurn is one LoCoMo turn.
type DialTurn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

// QA is one question with its evidence turn ids (normalised).
type QA struct {
	Question string
	Answer   string // the gold answer ("" for adversarial questions)
	Evidence []string
	Category int
}

type rawSample struct {
	SampleID       string                                  `json:"sample_id"`
	Conversation   map[string]json.RawMessage              `json:"conversation"`
	Observation    map[string]map[string][]json.RawMessage `json:"observation"`
	SessionSummary map[string]string                       `json:"session_summary"`
	QA             []struct {
		Question string          `json:"question"`
		Answer   json.RawMessage `json:"answer"`
		Evidence json.RawMessage `json:"evidence"`
		Category int             `json:"category"`
	} `json:"qa"`
}

var (
	sessionKey     = regexp.MustCompile(`^session_(\d+)$`)
	observationKey = regexp.MustCompile(`^session_(\d+)_observation$`)
	summaryKey     = regexp.MustCompile(`^session_(\d+)_summary$`)
)

// LoadLoCoMo reads a LoCoMo JSON file (the data stays outside the repo).
func LoadLoCoMo(path string) ([]Conversation, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read locomo data: %w", err)
	}
	var raw []rawSample
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("parse locomo data %s: %w", path, err)
	}
	out := make([]Conversation, 0, len(raw))
	for _, r := range raw {
		c := Conversation{SampleID: r.SampleID}
		_ = json.Unmarshal(r.Conversation["speaker_a"], &c.SpeakerA)
		_ = json.Unmarshal(r.Conversation["speaker_b"], &c.SpeakerB)
		for k, v := range r.Conversation {
			m := sessionKey.FindStringSubmatch(k)
			if m == nil {
				continue
			}
			n, _ := strconv.Atoi(m[1])
			var turns []DialTurn
			if err := json.Unmarshal(v, &turns); err != nil {
				return nil, fmt.Errorf("%s %s: %w", r.SampleID, k, err)
			}
			if len(turns) == 0 {
				continue
			}
			var ds string
			_ = json.Unmarshal(r.Conversation[k+"_date_time"], &ds)
			date, err := ParseSessionDate(ds)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", r.SampleID, k, err)
			}
			c.Sessions = append(c.Sessions, Session{N: n, Date: date, Turns: turns})
		}
		sort.Slice(c.Sessions, func(i, j int) bool { return c.Sessions[i].N < c.Sessions[j].N })
		for _, q := range r.QA {
			c.QA = append(c.QA, QA{Question: q.Question, Answer: answerText(q.Answer), Evidence: ParseEvidence(q.Evidence), Category: q.Category})
		}
		c.Observations = observations(r.Observation)
		c.SessionSummaries = map[int]string{}
		for k, v := range r.SessionSummary {
			if m := summaryKey.FindStringSubmatch(k); m != nil {
				n, _ := strconv.Atoi(m[1])
				c.SessionSummaries[n] = v
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// ParseSessionDate parses LoCoMo's "1:56 pm on 8 May, 2023".
func ParseSessionDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"3:04 pm on 2 January, 2006", "3:04 pm on 2 Jan, 2006", "3:04 PM on 2 January, 2006"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("unrecognised session date %q", s)
}

var evidenceID = regexp.MustCompile(`^D:?(\d+):0*(\d+)$`)

// ParseEvidence normalises LoCoMo's evidence ids: entries may hold several
// ids split by ';', ',' or spaces; "D:11:26" has an extra ':'; "D30:05" has
// a leading zero.
func ParseEvidence(raw json.RawMessage) []string {
	var items []string
	if err := json.Unmarshal(raw, &items); err != nil {
		var one string
		if json.Unmarshal(raw, &one) == nil {
			items = []string{one}
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, it := range items {
		for _, f := range strings.FieldsFunc(it, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
			m := evidenceID.FindStringSubmatch(strings.TrimSpace(f))
			if m == nil {
				continue
			}
			s, _ := strconv.Atoi(m[1])
			t, _ := strconv.Atoi(m[2])
			id := fmt.Sprintf("D%d:%d", s, t)
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}

// TurnText is the protocol's text of a turn.
func TurnText(t DialTurn) string {
	s := t.Speaker + ": " + t.Text
	if t.BlipCaption != "" {
		s += " [shares " + t.BlipCaption + "]"
	}
	return s
}

// answerText reads an answer that is a string or a number.
func answerText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// observations flattens session_N_observation ({speaker: [[fact, dia_id or
// list], ...]}) in conversation order: by their first evidence turn, so the
// order does not depend on JSON map order.
func observations(raw map[string]map[string][]json.RawMessage) []Observation {
	var out []Observation
	for k, bySpeaker := range raw {
		m := observationKey.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		for speaker, items := range bySpeaker {
			for _, it := range items {
				var pair []json.RawMessage
				if json.Unmarshal(it, &pair) != nil || len(pair) != 2 {
					continue
				}
				var text string
				if json.Unmarshal(pair[0], &text) != nil || strings.TrimSpace(text) == "" {
					continue
				}
				if ev := ParseEvidence(pair[1]); len(ev) > 0 {
					out = append(out, Observation{Session: n, Speaker: speaker, Text: strings.TrimSpace(text), Evidence: ev})
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := diaOrder(out[i].Evidence[0]), diaOrder(out[j].Evidence[0])
		if a != b {
			return a < b
		}
		if out[i].Speaker != out[j].Speaker {
			return out[i].Speaker < out[j].Speaker
		}
		return out[i].Text < out[j].Text
	})
	return out
}

// diaOrder orders normalised dia_ids "D<session>:<turn>".
func diaOrder(id string) int {
	var s, t int
	if _, err := fmt.Sscanf(id, "D%d:%d", &s, &t); err != nil {
		return 0
	}
	return s*100000 + t
}
