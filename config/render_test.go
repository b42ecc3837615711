package config

import (
	"os"
	"reflect"
	"slices"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// Settings speaks agents.yaml: its YAML parses back to the same config, and
// every section lists exactly the keys the decoder accepts.
func TestSettingsRoundTrip(t *testing.T) {
	repo, err := os.ReadFile("../agents.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{
		"defaults":         "",
		"repo agents.yaml": string(repo),
		"overrides": `server:
  body_limit: 512KB
  request_timeout: 90s
  max_message_bytes: 1000
  trusted_proxies: [10.0.0.0/8]
  auth: {api_keys: [{key: key-0123456789abcdef, tenant: acme}]}
  rate_limit: {requests_per_second: 2.5}
  metrics: {tenant_labels: true}
supervisor:
  memory: {episode_gap: 90m, summary_cooldown: 1500ms, rag_similarity_threshold: 0.25}
  filters: {skip_prefixes: ["[route]"]}
agents:
  - name: research
    memory: {strategy: rag_augmented, episode_gap: 24h, episode_max_turns: 12}
    prompt_sections: {episode_summary_prompt: "Summarise {transcript}"}
`,
	} {
		t.Run(name, func(t *testing.T) {
			want := mustParse(t, src, env())
			out, err := yaml.Marshal(want.Settings())
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(out, env())
			if err != nil {
				t.Fatalf("Settings' YAML does not parse:\n%v\n%s", err, out)
			}
			want.Warnings, got.Warnings = nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip differs:\n got %+v\nwant %+v\n%s", got, want, out)
			}
		})
	}
	var nd *decoder
	c := Default()
	for section, pair := range map[string]struct {
		rendered map[string]any
		schema   fields
	}{
		"server":          {c.Settings()["server"].(map[string]any), nd.serverFields(&Server{})},
		"memory":          {c.Supervisor.Memory.Settings(), nd.memoryFields(&Memory{})},
		"filters":         {c.Supervisor.Filters.Settings(), nd.filterFields(&Filters{})},
		"prompt_sections": {c.Supervisor.Prompts.Settings(), nd.promptFields(&PromptSections{})},
	} {
		var got []string
		for k := range pair.rendered {
			got = append(got, k)
		}
		slices.Sort(got)
		if want := keysOf(pair.schema); !slices.Equal(got, want) {
			t.Errorf("%s keys = %v, want the schema's %v", section, got, want)
		}
	}
}

func TestDurationAndSizeInAgentsYAMLUnits(t *testing.T) {
	for d, want := range map[time.Duration]string{2 * time.Hour: "2h", 90 * time.Minute: "1h30m", 30 * time.Second: "30s",
		1500 * time.Millisecond: "1.5s", 0: "0s", time.Hour + time.Second: "1h0m1s"} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int64]string{4 << 20: "4MB", 512 << 10: "512KB", 1000: "1000", 1 << 30: "1GB", 0: "0"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
