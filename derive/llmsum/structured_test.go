package llmsum

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/contextd/contextd/derive/extractive"
	"github.com/contextd/contextd/derive/llmsum/llmtest"
	"github.com/contextd/contextd/memory"
)

const profileJSON = `{"entities":[{"name":"Casa Amora","type":"place","details":"hotel in Lisbon"}],"user_preferences":["quiet rooms"],"topics":["travel"],"open_questions":[]}`

// providerPath is one way a model reaches its server: the NewModel
// provider and the scripted server speaking its protocol.
type providerPath struct {
	name  string
	start func(testing.TB, llmtest.Script) *llmtest.Server
}

func providerPaths() []providerPath {
	return []providerPath{{"openai", llmtest.New}, {"ollama", llmtest.NewOllama}}
}

// byKind answers each kind of call (told by its system prompt) with a
// good reply of that kind.
func byKind(_ int, req llmtest.Request) llmtest.Reply {
	switch req.System() {
	case episodeSystem:
		return llmtest.Reply{Content: episodeJSON, PromptTokens: 70, CompletionTokens: 30}
	case profileSystem:
		return llmtest.Reply{Content: profileJSON, PromptTokens: 70, CompletionTokens: 30}
	}
	return llmtest.Reply{Content: goodJSON, PromptTokens: 70, CompletionTokens: 30}
}

// replyKind is one kind of call, run and checked.
type replyKind struct {
	name string
	want ReplyFormat
	run  func(t *testing.T, s *Summarizer, model string)
}

func replyKinds() []replyKind {
	return []replyKind{
		{"summary", SummaryReply(), func(t *testing.T, s *Summarizer, model string) {
			res, err := s.Summarize(context.Background(), memory.SummarizeRequest{Turns: turns(1, 4), Structured: true, Model: model})
			if err != nil || len(res.Degraded) != 0 || res.Calls != 1 || len(res.Summary.Decisions) != 1 || res.Summary.Decisions[0] != "stay in Alfama" {
				t.Errorf("summary %+v degraded %v calls %d err %v", res.Summary, res.Degraded, res.Calls, err)
			}
			if res.InputTokens != 70 || res.OutputTokens != 30 {
				t.Errorf("tokens %d/%d, want the server's 70/30", res.InputTokens, res.OutputTokens)
			}
		}},
		{"episode", EpisodeReply(), func(t *testing.T, s *Summarizer, model string) {
			res, err := s.SummarizeEpisode(context.Background(), memory.EpisodeRequest{Turns: turns(10, 12), Model: model})
			if err != nil || len(res.Degraded) != 0 || res.Short != "The user planned the Lisbon move for May." {
				t.Errorf("episode %+v err %v", res, err)
			}
		}},
		{"profile", ProfileReply(), func(t *testing.T, s *Summarizer, _ string) {
			res, err := s.MergeProfile(context.Background(), "", memory.Profile{}, memory.Summary{Narrative: "Booked Casa Amora."})
			out := res.Summary
			if err != nil || len(out.Entities) != 1 || out.Entities[0].Name != "Casa Amora" {
				t.Errorf("profile %+v err %v", out, err)
			}
		}},
	}
}

// TestRepliesAskedInSchema: through NewModel's clients, every kind of
// reply is asked in its own schema: OpenAI's response_format json_schema
// (named, strict), Ollama's format as the schema object.
func TestRepliesAskedInSchema(t *testing.T) {
	for _, p := range providerPaths() {
		for _, k := range replyKinds() {
			t.Run(p.name+"/"+k.name, func(t *testing.T) {
				srv := p.start(t, byKind)
				k.run(t, newSumFor(t, p.name, srv, Options{}), "")
				reqs := srv.Requests()
				if len(reqs) != 1 {
					t.Fatalf("%d requests, want 1", len(reqs))
				}
				r := reqs[0]
				name, schema := r.Schema()
				if !jsonEqual(t, schema, k.want.Schema) {
					t.Errorf("schema %s, want %s", schema, mustJSON(t, k.want.Schema))
				}
				if r.JSONMode() || r.Model != "test-model" {
					t.Errorf("json mode %v model %q: want the schema alone", r.JSONMode(), r.Model)
				}
				switch p.name {
				case "openai":
					if r.ResponseFormat.Type != "json_schema" || name != k.want.Name || !r.ResponseFormat.JSONSchema.Strict {
						t.Errorf("response_format %+v name %q", r.ResponseFormat, name)
					}
				case "ollama":
					if r.ResponseFormat != nil {
						t.Errorf("ollama request carries response_format %+v", r.ResponseFormat)
					}
				}
			})
		}
	}
}

// TestSchemaRefusedFallsBackToJSONMode: a server that answers 400 to a
// schema gets the call again in JSON mode; the model's later calls go
// straight to JSON mode, while another model still tries its schema.
func TestSchemaRefusedFallsBackToJSONMode(t *testing.T) {
	refusals := map[string]string{
		"openai": `response_format.type "json_schema" is not supported by this server`,
		"ollama": "json: cannot unmarshal object into Go struct field ChatRequest.format of type string",
	}
	for _, p := range providerPaths() {
		t.Run(p.name, func(t *testing.T) {
			srv := p.start(t, func(_ int, req llmtest.Request) llmtest.Reply {
				if _, schema := req.Schema(); schema != nil {
					return llmtest.Reply{Status: http.StatusBadRequest, Error: refusals[p.name]}
				}
				return byKind(0, req)
			})
			s := newSumFor(t, p.name, srv, Options{MaxRetries: -1})
			kinds := replyKinds()
			kinds[0].run(t, s, "") // schema refused, then JSON mode
			kinds[1].run(t, s, "") // straight to JSON mode
			kinds[1].run(t, s, "other-model")
			want := []string{"schema", "json", "json", "schema", "json"}
			if got := modes(srv.Requests()); !slices.Equal(got, want) {
				t.Errorf("modes %v, want %v", got, want)
			}
		})
	}
}

// TestSchemaFallbackOnlyOnRefusal: a 400 about something else is not a
// refusal (no JSON-mode call, nothing remembered), and a refusal whose
// JSON-mode call fails too is not remembered either.
func TestSchemaFallbackOnlyOnRefusal(t *testing.T) {
	cases := []struct {
		name   string
		script llmtest.Script
		want   []string
	}{
		{"other 400", llmtest.Always(llmtest.Reply{Status: http.StatusBadRequest, Error: "This model's maximum context length is 8192 tokens"}),
			[]string{"schema", "schema"}},
		{"json mode fails too", func(_ int, req llmtest.Request) llmtest.Reply {
			if _, schema := req.Schema(); schema != nil {
				return llmtest.Reply{Status: http.StatusBadRequest, Error: "unsupported json_schema"}
			}
			return llmtest.Reply{Status: http.StatusServiceUnavailable}
		}, []string{"schema", "json", "schema", "json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New(t, c.script)
			s := newSumFor(t, "openai", srv, Options{MaxRetries: -1, Fallback: extractive.New()})
			for range 2 {
				res, err := s.Summarize(context.Background(), memory.SummarizeRequest{Turns: turns(1, 4), Structured: true})
				if err != nil || !slices.Equal(res.Degraded, []string{DegradedLLMUnavailable}) {
					t.Fatalf("degraded %v err %v, want the fallback", res.Degraded, err)
				}
			}
			if got := modes(srv.Requests()); !slices.Equal(got, c.want) {
				t.Errorf("modes %v, want %v", got, c.want)
			}
		})
	}
}

// TestSchemaRepliesDegradeAsBefore: on both schema paths, a reply that is
// prose, fenced JSON or JSON with no summary field is read as it always
// was: the previous root's lists stay, the text becomes the narrative.
func TestSchemaRepliesDegradeAsBefore(t *testing.T) {
	prev := memory.Summary{Topics: []string{"prev topic"}, Decisions: []string{"prev decision"}, Narrative: "prev", CoveredFromSeq: 1, CoveredToSeq: 4}
	cases := []struct {
		name, reply   string
		wantDegraded  []string
		wantDecision  string
		wantNarrative string
	}{
		{"prose", "The user and the assistant reviewed the budget.", []string{DegradedNarrativeOnly}, "prev decision", "The user and the assistant reviewed the budget."},
		{"fenced json", "```json\n" + goodJSON + "\n```", nil, "stay in Alfama", "The user planned a trip to Lisbon."},
		{"no summary field", `{"answer":"The budget was reviewed."}`, []string{DegradedNarrativeOnly}, "prev decision", `{"answer":"The budget was reviewed."}`},
	}
	for _, p := range providerPaths() {
		for _, c := range cases {
			t.Run(p.name+"/"+c.name, func(t *testing.T) {
				srv := p.start(t, llmtest.Always(llmtest.Reply{Content: c.reply}))
				s := newSumFor(t, p.name, srv, Options{Fallback: extractive.New()})
				pv := prev.Clone()
				res, err := s.Summarize(context.Background(), memory.SummarizeRequest{Prev: &pv, Turns: turns(5, 8), Structured: true})
				if err != nil {
					t.Fatal(err)
				}
				sum := res.Summary
				if !slices.Equal(res.Degraded, c.wantDegraded) || sum.Decisions[0] != c.wantDecision || sum.Narrative != c.wantNarrative || sum.CoveredToSeq != 8 {
					t.Errorf("degraded %v summary %+v", res.Degraded, sum)
				}
				ep, err := s.SummarizeEpisode(context.Background(), memory.EpisodeRequest{Turns: turns(10, 12)})
				if c.wantDegraded != nil && (err != nil || !slices.Equal(ep.Degraded, c.wantDegraded) || ep.Short == "") {
					t.Errorf("episode %+v err %v, want a degraded episode", ep, err)
				}
				_, err = s.MergeProfile(context.Background(), "", memory.Profile{}, memory.Summary{Narrative: "n"})
				if c.wantDegraded != nil && !errors.Is(err, memory.ErrProfileReply) {
					t.Errorf("profile err %v, want ErrProfileReply", err)
				}
			})
		}
	}
}

// modes names what each request asked for: "schema", "json" or "text".
func modes(reqs []llmtest.Request) []string {
	out := make([]string, 0, len(reqs))
	for _, r := range reqs {
		_, schema := r.Schema()
		switch {
		case schema != nil:
			out = append(out, "schema")
		case r.JSONMode():
			out = append(out, "json")
		default:
			out = append(out, "text")
		}
	}
	return out
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jsonEqual compares raw JSON with v's encoding, as values.
func jsonEqual(t *testing.T, raw json.RawMessage, v any) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(raw, &a); err != nil {
		return false
	}
	if err := json.Unmarshal(mustJSON(t, v), &b); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(a, b)
}

// TestReplySchemasShape checks the schemas against what strict structured
// outputs demand and what the parsers read, written out independently.
func TestReplySchemasShape(t *testing.T) {
	cases := []struct {
		f         ReplyFormat
		wantProps []string
	}{
		{SummaryReply(), summaryKeys},
		{EpisodeReply(), append(append([]string{"short"}, summaryKeys...), "facts")},
		{ProfileReply(), []string{"entities", "user_preferences", "topics", "open_questions"}},
	}
	for _, c := range cases {
		t.Run(c.f.Name, func(t *testing.T) {
			var root map[string]any
			if err := json.Unmarshal(mustJSON(t, c.f.Schema), &root); err != nil {
				t.Fatal(err)
			}
			strictObjects(t, c.f.Name, root)
			if got := root["required"]; !reflect.DeepEqual(got, anyList(c.wantProps)) {
				t.Errorf("properties %v, want %v in this order", got, c.wantProps)
			}
			ent := dig(root, "properties", "entities", "items", "properties")
			if ent == nil || len(ent) != 3 || ent["name"] == nil || ent["type"] == nil || ent["details"] == nil {
				t.Errorf("entity properties %v", ent)
			}
		})
	}
	fact := dig(mustMap(t, EpisodeReply().Schema), "properties", "facts", "items", "properties")
	if dig(fact, "seqs", "items")["type"] != "integer" || dig(fact, "text")["type"] != "string" {
		t.Errorf("fact properties %v", fact)
	}
	kinds := dig(fact, "kind")["enum"]
	if !reflect.DeepEqual(kinds, anyList([]string{"preference", "plan", "decision", "event", "attribute", "other"})) {
		t.Errorf("kind enum %v", kinds)
	}
}

// strictObjects checks that every object in a schema requires all of its
// properties and allows no other (OpenAI's strict mode refuses otherwise).
func strictObjects(t *testing.T, at string, s map[string]any) {
	t.Helper()
	if s["type"] == "object" {
		props, _ := s["properties"].(map[string]any)
		req, _ := s["required"].([]any)
		if len(props) == 0 || len(req) != len(props) || s["additionalProperties"] != false {
			t.Errorf("%s: object not strict: %v", at, s)
		}
		for name, p := range props {
			strictObjects(t, at+"."+name, p.(map[string]any))
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		strictObjects(t, at+"[]", items)
	}
}

// TestSchemaInstancesParse: a reply that fills every field of a schema is
// read whole by that kind's parser: nothing the schema asks for is lost.
func TestSchemaInstancesParse(t *testing.T) {
	reply := func(f ReplyFormat) string { return string(mustJSON(t, instance(f.Schema, ""))) }
	sum, err := ParseSummary(reply(SummaryReply()))
	if err != nil || sum.Topics[0] != "v-topics" || sum.ActionsTaken[0] != "v-actions_taken" || sum.Decisions[0] != "v-decisions" ||
		sum.OpenQuestions[0] != "v-open_questions" || sum.UserPreferences[0] != "v-user_preferences" || sum.Narrative != "v-narrative" ||
		sum.Entities[0] != (memory.Entity{Name: "v-name", Type: "v-type", Details: "v-details"}) {
		t.Errorf("summary %+v err %v", sum, err)
	}
	ep := reply(EpisodeReply())
	short, esum, ok := parseEpisode(ep)
	if !ok || short != "v-short" || esum.Narrative != "v-narrative" || len(esum.Entities) != 1 {
		t.Errorf("episode %q %+v ok %v", short, esum, ok)
	}
	facts, dropped := parseFacts(ep, memory.EpisodeRequest{Turns: turns(12, 12)})
	if dropped != 0 || len(facts) != 1 || facts[0].Text != "v-text" || !slices.Equal(facts[0].Seqs, []int64{12}) || facts[0].Kind != "preference" {
		t.Errorf("facts %+v dropped %d", facts, dropped)
	}
	prof, err := ParseSummary(reply(ProfileReply()))
	if err != nil || len(prof.Entities) != 1 || prof.UserPreferences[0] != "v-user_preferences" || prof.Topics[0] != "v-topics" || prof.OpenQuestions[0] != "v-open_questions" {
		t.Errorf("profile %+v err %v", prof, err)
	}
}

// instance is a value of schema s: strings "v-<property>", one-item
// arrays, integer 12, an enum's first value.
func instance(s Schema, name string) any {
	switch s.Type {
	case "object":
		m := map[string]any{}
		for _, p := range s.Properties {
			m[p.Name] = instance(p.Schema, p.Name)
		}
		return m
	case "array":
		return []any{instance(*s.Items, name)}
	case "integer":
		return 12
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	return "v-" + name
}

func mustMap(t *testing.T, v any) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(mustJSON(t, v), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// dig follows keys through nested objects; nil when one is missing.
func dig(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		next, _ := m[k].(map[string]any)
		if next == nil {
			return nil
		}
		m = next
	}
	return m
}

func anyList(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// TestSchemaPropertyOrder: properties go out in the prompt's order, which
// constrained decoders follow (the episode's short first, facts last).
func TestSchemaPropertyOrder(t *testing.T) {
	raw := string(mustJSON(t, EpisodeReply().Schema))
	at := func(k string) int { return strings.Index(raw, `"`+k+`":`) }
	if !(at("short") < at("topics") && at("topics") < at("narrative") && at("narrative") < at("facts")) {
		t.Errorf("property order in %s", raw)
	}
}
