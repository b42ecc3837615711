package eval

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// The scenario suite: hand-written chats of the shapes contextd serves
// (coding with code blocks, customer support, coaching over weeks,
// co-writing, a supervisor with agents and tool output, casual texting),
// each with probes that judge the context text as a model reads it. See
// scenario_run.go for the measurements.

//go:embed scenarios/*.yaml
var scenarioFS embed.FS

// Scenario is one chat and its probes.
type Scenario struct {
	ID     string `yaml:"id"`
	Title  string `yaml:"title"`
	Domain string `yaml:"domain"`
	UserID string `yaml:"user_id"`
	Agent  string `yaml:"agent"`
	// Start is the first turn's time; a turn without `at` comes Step
	// after the one before it.
	Start  time.Time     `yaml:"start"`
	Step   time.Duration `yaml:"step"`
	Turns  []STurn       `yaml:"turns"`
	Probes []ScProbe     `yaml:"probes"`
}

// STurn is one turn of a scenario chat. Its seq is its 1-based position.
type STurn struct {
	Role    string    `yaml:"role"`
	Name    string    `yaml:"name"`
	Content string    `yaml:"content"`
	At      time.Time `yaml:"at"`
	// Question marks a turn that asks a question: "answered" when a
	// later turn answers it, "unanswered" when none does.
	Question string `yaml:"question"`

	seq int
	at  time.Time
}

// ScProbe is one query to /v1/context at one or more budgets, with
// assertions on the answer's context text.
type ScProbe struct {
	Name        string   `yaml:"name"`
	Query       string   `yaml:"query"`
	Strategy    string   `yaml:"strategy"` // default rag_augmented
	Budgets     []int    `yaml:"budgets"`
	MustContain []string `yaml:"must_contain"`
	Stale       []Stale  `yaml:"stale"`
}

// Stale is an updated value: a context holding Old must also hold New.
type Stale struct {
	Old string `yaml:"old"`
	New string `yaml:"new"`
}

// LoadScenarios reads the embedded suite, in file-name order.
func LoadScenarios() ([]*Scenario, error) {
	return LoadScenarioFS(scenarioFS, "scenarios")
}

// LoadScenarioFS reads the scenario chats of dir in fsys (its *.yaml
// files), in file-name order: the built-in suite, or a user's own chats.
func LoadScenarioFS(fsys fs.FS, dir string) ([]*Scenario, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []*Scenario
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		sc, err := ParseScenario(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path.Base(n), err)
		}
		out = append(out, sc)
	}
	return out, nil
}

// ParseScenario decodes one scenario file and checks it.
func ParseScenario(b []byte) (*Scenario, error) {
	var sc Scenario
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&sc); err != nil {
		return nil, err
	}
	if sc.ID == "" || len(sc.Turns) == 0 {
		return nil, fmt.Errorf("scenario needs an id and turns")
	}
	if sc.Start.IsZero() {
		sc.Start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	}
	if sc.Step == 0 {
		sc.Step = time.Minute
	}
	prev := sc.Start.Add(-sc.Step)
	for i := range sc.Turns {
		t := &sc.Turns[i]
		t.seq = i + 1
		t.Content = strings.TrimRight(t.Content, "\n")
		if t.Content == "" {
			return nil, fmt.Errorf("turn %d: empty content", t.seq)
		}
		switch t.Role {
		case "user", "assistant", "tool", "system":
		default:
			return nil, fmt.Errorf("turn %d: role %q", t.seq, t.Role)
		}
		switch t.Question {
		case "", "answered", "unanswered":
		default:
			return nil, fmt.Errorf("turn %d: question %q (answered|unanswered)", t.seq, t.Question)
		}
		if !t.At.IsZero() {
			if t.At.Before(prev) {
				return nil, fmt.Errorf("turn %d: at %s is before the turn before it", t.seq, t.At)
			}
			t.at = t.At
		} else {
			t.at = prev.Add(sc.Step)
		}
		prev = t.at
	}
	for i, p := range sc.Probes {
		if p.Query == "" || len(p.Budgets) == 0 {
			return nil, fmt.Errorf("probe %d: needs a query and budgets", i+1)
		}
		if p.Name == "" {
			sc.Probes[i].Name = fmt.Sprintf("p%d", i+1)
		}
		if p.Strategy == "" {
			sc.Probes[i].Strategy = "rag_augmented"
		}
	}
	return &sc, nil
}
