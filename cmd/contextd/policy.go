package main

import (
	"fmt"

	"github.com/contextd/contextd/internal/tokens"

	"github.com/contextd/contextd/config"
	"github.com/contextd/contextd/engine"
	"github.com/contextd/contextd/filters"
	"github.com/contextd/contextd/truncation"
)

// policies resolves every agent's engine.Policy once, at startup, so that an
// operator's bad setting is a startup error, never a per-request failure.
// An agent not in agents[] gets the supervisor's settings, as config.Agent
// gives them.
func policies(cfg *config.Config) (func(agent string) engine.Policy, error) {
	fallback, err := policyOf(cfg.Agent(""))
	if err != nil {
		return nil, fmt.Errorf("supervisor: %w", err)
	}
	byAgent := make(map[string]engine.Policy, len(cfg.Agents))
	for _, a := range cfg.Agents {
		p, err := policyOf(a)
		if err != nil {
			return nil, fmt.Errorf("agent %s: %w", a.Name, err)
		}
		byAgent[a.Name] = p
	}
	return func(agent string) engine.Policy {
		if p, ok := byAgent[agent]; ok {
			return p
		}
		return fallback
	}, nil
}

// policyOf is one agent's effective settings in the engine's terms.
func policyOf(a config.Agent) (engine.Policy, error) {
	m := a.Memory
	st, ok := engine.ParseStrategy(m.Strategy)
	if !ok {
		return engine.Policy{}, fmt.Errorf("memory.strategy %q: want none, running_summary or rag_augmented", m.Strategy)
	}
	fo, err := filtersOf(a.Filters, m.MaxTurns)
	if err != nil {
		return engine.Policy{}, err
	}
	ts, err := truncation.ParseStrategy(m.TruncationStrategy)
	if err != nil {
		return engine.Policy{}, err
	}
	tok, err := tokens.ByName(m.Tokenizer)
	if err != nil {
		return engine.Policy{}, err
	}
	return engine.Policy{
		Strategy: st, BudgetTokens: m.BudgetTokens, RecentTurns: m.SummaryRecentTurns,
		TriggerTurns: m.SummaryTriggerTurns, StoreTurns: m.StoreTurns,
		RAGK: m.RAGK, RAGMaxHits: m.RAGMaxHits, RAGFill: m.RAGFill, RAGNeighbors: m.RAGNeighbors,
		RAGThreshold: float32(m.RAGSimilarityThreshold), RAGScope: m.RAGScope,
		RAGEpisodes: m.Episodes && m.RAGEpisodes,
		FloorTurns:  m.RecentFloorTurns,
		Tokenizer:   tok,
		UserProfile: m.UserProfile,
		Filters:     fo,
		Truncation:  truncation.Options{Strategy: ts, MaxChars: m.TruncationMaxChars},
	}, nil
}

// filtersOf builds an agent's filter options: the named preset, with the
// agent's own lists appended and its tool mode and turn cap
// (memory.max_turns / history_max_turns) laid over. The per-request
// ExcludeQuery is left for the engine to set.
func filtersOf(f config.Filters, maxTurns int) (filters.Options, error) {
	base, err := filters.Preset(f.Preset)
	if err != nil {
		return filters.Options{}, err
	}
	o := base.Merge(filters.Options{
		SkipPrefixes:  f.SkipPrefixes,
		StripPrefixes: f.StripPrefixes,
		ToolMessages:  f.ToolMessages,
		MaxTurns:      maxTurns,
	})
	if err := o.Validate(); err != nil {
		return filters.Options{}, fmt.Errorf("agent settings: %w", err)
	}
	return o, nil
}
