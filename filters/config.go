package filters

import (
	"fmt"

	"github.com/contextd/contextd/config"
)

// FromConfig builds the Options of one agent from its effective agents.yaml
// settings: the named preset, with the agent's own lists appended and its
// tool mode and turn cap (memory.max_turns / history_max_turns) laid over.
// The per-request ExcludeQuery is left for the caller to set.
func FromConfig(f config.Filters, maxTurns int) (Options, error) {
	base, err := Preset(f.Preset)
	if err != nil {
		return Options{}, err
	}
	o := base.Merge(Options{
		SkipPrefixes:  f.SkipPrefixes,
		StripPrefixes: f.StripPrefixes,
		ToolMessages:  f.ToolMessages,
		MaxTurns:      maxTurns,
	})
	if err := o.Validate(); err != nil {
		return Options{}, fmt.Errorf("agent settings: %w", err)
	}
	return o, nil
}
