package api

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The TypeScript client's types (clients/typescript/src/types.ts) agree
// with docs/openapi.yaml: every field an interface declares is a property
// of its schema, and every property the schema requires is declared
// (optional in TypeScript only where the schema does not require it).
func TestTypeScriptTypesAgreeWithOpenAPI(t *testing.T) {
	pairs := map[string]string{ // TypeScript interface: OpenAPI schema
		"InputMessage": "InMessage", "AppendResult": "AppendAnswer", "LiveMessage": "StoredMessage",
		"DeletedMessage": "Tombstone", "MessagesPage": "MessagesPage", "ChatMessage": "ChatMessage",
		"Summary": "Summary", "SummaryRecord": "SummaryRecord", "Episode": "Episode", "Source": "Source",
		"ProfileItem": "ProfileItem", "Profile": "Profile", "Fact": "Fact", "Usage": "Usage",
		"Sections": "Sections", "ContextResult": "ContextAnswer", "SearchHit": "SearchHit",
		"SummaryAnswer": "SummaryAnswer", "EpisodesPage": "EpisodesPage", "FactsPage": "FactsPage",
	}
	ts := tsInterfaces(t, "../../clients/typescript/src/types.ts")
	schemas := openAPISchemas(t, "../../docs/openapi.yaml")
	for iface, schema := range pairs {
		fields, ok := ts[iface]
		if !ok {
			t.Errorf("types.ts has no interface %s", iface)
			continue
		}
		s, ok := schemas[schema]
		if !ok {
			t.Errorf("openapi.yaml has no schema %s", schema)
			continue
		}
		for name := range fields {
			if _, ok := s.Properties[name]; !ok {
				t.Errorf("%s.%s is not a property of the %s schema", iface, name, schema)
			}
		}
		for _, name := range s.Required {
			optional, ok := fields[name]
			switch {
			case !ok:
				t.Errorf("%s lacks %s, which the %s schema requires", iface, name, schema)
			case optional:
				t.Errorf("%s.%s is optional, but the %s schema requires it", iface, name, schema)
			}
		}
	}
}

type oaSchema struct {
	Required   []string       `yaml:"required"`
	Properties map[string]any `yaml:"properties"`
}

func openAPISchemas(t *testing.T, path string) map[string]oaSchema {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]oaSchema `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Components.Schemas
}

// tsInterfaces reads each exported interface's own fields (name → whether
// optional), with those of the interface it extends.
func tsInterfaces(t *testing.T, path string) map[string]map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head := regexp.MustCompile(`^export interface (\w+)(?: extends (\w+))? \{`)
	field := regexp.MustCompile(`^  (?:readonly )?(\w+)(\?)?:`)
	// "deleted?: false" tells a live message from a tombstone in
	// TypeScript's union; the wire leaves it out.
	discriminant := regexp.MustCompile(`^  \w+\?: false;`)
	out := map[string]map[string]bool{}
	extends := map[string]string{}
	var cur string
	for _, line := range strings.Split(string(b), "\n") {
		if m := head.FindStringSubmatch(line); m != nil {
			cur, out[m[1]] = m[1], map[string]bool{}
			if m[2] != "" {
				extends[m[1]] = m[2]
			}
			continue
		}
		if strings.HasPrefix(line, "}") {
			cur = ""
		}
		if m := field.FindStringSubmatch(line); m != nil && cur != "" && !discriminant.MatchString(line) {
			out[cur][m[1]] = m[2] == "?"
		}
	}
	for child, parent := range extends {
		for name, opt := range out[parent] {
			if _, own := out[child][name]; !own {
				out[child][name] = opt
			}
		}
	}
	if len(out["ContextResult"]) == 0 {
		t.Fatalf("no interfaces read from %s", path)
	}
	return out
}
