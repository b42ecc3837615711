package llmsum

import (
	"bytes"
	"encoding/json"

	"github.com/contextd/contextd/memory"
)

// The kinds of JSON reply the summarizer asks for, by the names their
// schemas go by on the wire (OpenAI's json_schema.name).
const (
	ReplySummary = "contextd_summary"
	ReplyEpisode = "contextd_episode"
	ReplyProfile = "contextd_profile"
)

// ReplyFormat is one kind of JSON reply: its name and schema.
type ReplyFormat struct {
	Name   string
	Schema Schema
}

// Schema is a JSON schema in the subset that OpenAI's strict structured
// outputs and Ollama's format both accept: an object lists every property
// as required and allows no other.
type Schema struct {
	Type       string     // object | array | string | integer
	Properties []Property // object: in the order the model should write them
	Items      *Schema    // array
	Enum       []string   // string
}

// Property is one property of an object schema.
type Property struct {
	Name   string
	Schema Schema
}

// SummaryReply is the running summary's reply, what ParseSummary reads.
func SummaryReply() ReplyFormat {
	return ReplyFormat{Name: ReplySummary, Schema: object(summaryProps()...)}
}

// EpisodeReply is an episode's reply, what parseEpisode and parseFacts
// read: short, the summary's fields and the facts citing turn seqs.
func EpisodeReply() ReplyFormat {
	props := append([]Property{{"short", str()}}, summaryProps()...)
	fact := object(Property{"text", str()}, Property{"seqs", array(Schema{Type: "integer"})},
		Property{"kind", Schema{Type: "string", Enum: FactKinds()}})
	props = append(props, Property{"facts", array(fact)})
	return ReplyFormat{Name: ReplyEpisode, Schema: object(props...)}
}

// ProfileReply is a profile merge's reply, the lists MergeProfile reads.
func ProfileReply() ReplyFormat {
	return ReplyFormat{Name: ReplyProfile, Schema: object(
		Property{"entities", array(entity())}, Property{"user_preferences", array(str())},
		Property{"topics", array(str())}, Property{"open_questions", array(str())})}
}

// FactKinds are the kinds a fact may have; any other becomes "other".
func FactKinds() []string {
	return []string{memory.FactPreference, memory.FactPlan, memory.FactDecision, memory.FactEvent,
		memory.FactAttribute, memory.FactOther}
}

// summaryProps are the Summary's content fields, in the prompt's order
// (summaryKeys is the set the parser looks for).
func summaryProps() []Property {
	return []Property{
		{"topics", array(str())}, {"entities", array(entity())}, {"actions_taken", array(str())},
		{"decisions", array(str())}, {"open_questions", array(str())}, {"user_preferences", array(str())},
		{"narrative", str()},
	}
}

func entity() Schema {
	return object(Property{"name", str()}, Property{"type", str()}, Property{"details", str()})
}

func str() Schema               { return Schema{Type: "string"} }
func array(items Schema) Schema { return Schema{Type: "array", Items: &items} }
func object(props ...Property) Schema {
	return Schema{Type: "object", Properties: props}
}

// MarshalJSON writes the schema with its properties in order (a map would
// sort them, and constrained decoders write fields in schema order).
func (s Schema) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"type":`)
	writeJSON(&b, s.Type)
	switch {
	case s.Type == "object":
		b.WriteString(`,"properties":{`)
		required := make([]string, 0, len(s.Properties))
		for i, p := range s.Properties {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(&b, p.Name)
			b.WriteByte(':')
			inner, err := p.Schema.MarshalJSON()
			if err != nil {
				return nil, err
			}
			b.Write(inner)
			required = append(required, p.Name)
		}
		b.WriteString(`},"required":`)
		writeJSON(&b, required)
		b.WriteString(`,"additionalProperties":false`)
	case s.Items != nil:
		b.WriteString(`,"items":`)
		inner, err := s.Items.MarshalJSON()
		if err != nil {
			return nil, err
		}
		b.Write(inner)
	case len(s.Enum) > 0:
		b.WriteString(`,"enum":`)
		writeJSON(&b, s.Enum)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// writeJSON writes a string or string list; neither can fail to encode.
func writeJSON(b *bytes.Buffer, v any) {
	out, _ := json.Marshal(v)
	b.Write(out)
}
