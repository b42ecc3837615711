package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// BEAMChat is one BEAM conversation (github.com/mohammadtavakoli78/BEAM,
// chats/<size>/<n>/) with its probing questions.
type BEAMChat struct {
	ID        string
	Turns     []BEAMTurn
	Questions []BEAMQuestion
}

// BEAMTurn is one message; ID is BEAM's message id, the one
// source_chat_ids cite.
type BEAMTurn struct {
	ID      int
	Role    string
	Content string
	Time    time.Time
}

// BEAMQuestion is one probing question: its ability (the file's key), the
// gold answer when the ability has one, and the ids of its evidence
// messages (source_chat_ids, flattened).
type BEAMQuestion struct {
	Ability  string
	Question string
	Answer   string
	Evidence []int
}

// LoadBEAM reads every chat under dir (dir/<n>/chat.json and
// dir/<n>/probing_questions/probing_questions.json), or dir itself when it
// is one chat. Like BEAM's own answer generation, chat_trunecated.json is
// read instead of chat.json when it exists.
func LoadBEAM(dir string) ([]BEAMChat, error) {
	if _, err := os.Stat(filepath.Join(dir, "chat.json")); err == nil {
		c, err := loadBEAMChat(dir)
		if err != nil {
			return nil, err
		}
		return []BEAMChat{c}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read beam data: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), "chat.json")); err == nil {
				names = append(names, e.Name())
			}
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("beam data %s: no <n>/chat.json under it", dir)
	}
	sort.Slice(names, func(i, j int) bool {
		a, errA := strconv.Atoi(names[i])
		b, errB := strconv.Atoi(names[j])
		if errA == nil && errB == nil {
			return a < b
		}
		return names[i] < names[j]
	})
	out := make([]BEAMChat, 0, len(names))
	for _, n := range names {
		c, err := loadBEAMChat(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

type beamBatch struct {
	TimeAnchor string `json:"time_anchor"`
	Turns      [][]struct {
		Role       string          `json:"role"`
		ID         json.RawMessage `json:"id"`
		Content    string          `json:"content"`
		TimeAnchor string          `json:"time_anchor"`
	} `json:"turns"`
}

func loadBEAMChat(dir string) (BEAMChat, error) {
	c := BEAMChat{ID: "beam-" + filepath.Base(dir)}
	path := filepath.Join(dir, "chat_trunecated.json")
	if _, err := os.Stat(path); err != nil {
		path = filepath.Join(dir, "chat.json")
	}
	var batches []beamBatch
	if err := readJSON(path, &batches); err != nil {
		return c, err
	}
	// BEAM dates batches only: a message gets its batch's date plus a
	// minute per message, so turns keep their order and a batch is one
	// sitting.
	var day time.Time
	for _, b := range batches {
		if t, ok := beamDate(b.TimeAnchor); ok {
			day = t
		} else if !day.IsZero() {
			day = day.AddDate(0, 0, 1)
		} else {
			day = time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC)
		}
		k := 0
		for _, turn := range b.Turns {
			for _, m := range turn {
				id, err := intOf(m.ID)
				if err != nil {
					return c, fmt.Errorf("%s: message id %s: %w", path, m.ID, err)
				}
				c.Turns = append(c.Turns, BEAMTurn{ID: id, Role: m.Role, Content: m.Content, Time: day.Add(time.Duration(k) * time.Minute)})
				k++
			}
		}
	}
	qs, err := loadProbing(filepath.Join(dir, "probing_questions", "probing_questions.json"))
	if err != nil {
		return c, err
	}
	c.Questions = qs
	return c, nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read beam data: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("parse beam data %s: %w", path, err)
	}
	return nil
}

// beamDate parses BEAM's "March-15-2024" (a day, at 9:00 UTC).
func beamDate(s string) (time.Time, bool) {
	for _, layout := range []string{"January-02-2006", "January-2-2006", "Jan-02-2006"} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t.Add(9 * time.Hour), true
		}
	}
	return time.Time{}, false
}

func intOf(raw json.RawMessage) (int, error) {
	var n int
	if err := json.Unmarshal(raw, &n); err == nil {
		return n, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, errors.New("not a number")
	}
	return strconv.Atoi(strings.TrimSpace(s))
}

// The fields a probing question's gold answer is under, by ability.
var beamAnswerKeys = []string{"answer", "ideal_answer", "ideal_summary", "ideal_response"}

func loadProbing(path string) ([]BEAMQuestion, error) {
	var raw map[string][]map[string]json.RawMessage
	if err := readJSON(path, &raw); err != nil {
		return nil, err
	}
	abilities := make([]string, 0, len(raw))
	for a := range raw {
		abilities = append(abilities, a)
	}
	sort.Strings(abilities)
	var out []BEAMQuestion
	for _, a := range abilities {
		for _, q := range raw[a] {
			bq := BEAMQuestion{Ability: a, Evidence: beamEvidence(q["source_chat_ids"])}
			_ = json.Unmarshal(q["question"], &bq.Question)
			for _, k := range beamAnswerKeys {
				if s := answerText(q[k]); s != "" {
					bq.Answer = s
					break
				}
			}
			out = append(out, bq)
		}
	}
	return out, nil
}

// beamEvidence flattens source_chat_ids: a list of ids, or an object of
// lists ({"first_statement": [58], ...}), nested any way; ids in order of
// first appearance.
func beamEvidence(raw json.RawMessage) []int {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []int
	seen := map[int]bool{}
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case float64:
			if n := int(t); !seen[n] && float64(n) == t {
				seen[n] = true
				out = append(out, n)
			}
		case string:
			if n, err := strconv.Atoi(strings.TrimSpace(t)); err == nil && !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(t[k])
			}
		}
	}
	walk(v)
	return out
}

// RunBEAM evaluates BEAM chats: each is ingested with its roles and times,
// every probing question with evidence is asked at every budget, beside a
// BM25 fill over whole turns and one over passages.
func RunBEAM(ctx context.Context, chats []BEAMChat, newSystem NewSystem, o Options) (*Report, error) {
	o.Replay = false // BEAM ships no LLM-written memory to replay
	samples := beamSamples(chats)
	cats := map[string]bool{}
	for _, s := range samples {
		for _, q := range s.questions {
			cats[q.cat] = true
		}
	}
	d := beamDataset
	for c := range cats {
		d.cats = append(d.cats, c)
	}
	sort.Strings(d.cats)
	return run(ctx, d, samples, newSystem, o)
}

// beamSamples are the chats as the harness's samples.
func beamSamples(chats []BEAMChat) []*sample {
	samples := make([]*sample, 0, len(chats))
	for _, c := range chats {
		s := &sample{id: c.ID}
		for _, t := range c.Turns {
			s.turns = append(s.turns, sampleTurn{id: beamTurnID(t.ID), role: t.Role, text: t.Content, at: t.Time})
		}
		for _, q := range c.Questions {
			ev := make([]string, 0, len(q.Evidence))
			for _, id := range q.Evidence {
				ev = append(ev, beamTurnID(id))
			}
			s.questions = append(s.questions, sampleQuestion{text: q.Question, answer: q.Answer, evidence: ev, cat: q.Ability})
		}
		samples = append(samples, s)
	}
	return samples
}

func beamTurnID(id int) string { return "m" + strconv.Itoa(id) }

var beamDataset = dataset{
	name:     "BEAM",
	headline: func(string) bool { return true },
	label:    "all",
	baselines: func(s *sample, kept []sampleTurn, o Options) []baseline {
		turns := turnCorpus(kept)
		return []baseline{{name: sysBM25, corpus: turns}, {name: sysBM25Passage, corpus: passageCorpus(kept, o.PassageTokens)},
			{name: sysRecency, corpus: turns, recent: true}}
	},
}
