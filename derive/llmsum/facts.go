package llmsum

import (
	"slices"
	"strings"
	"time"

	"github.com/contextd/contextd/memory"
)

// DegradedFactsDropped: some facts of an episode reply cited no turn of
// the episode (or had no text) and were dropped.
const DegradedFactsDropped = "facts_dropped"

// MaxFactsPerEpisode caps the facts kept from one reply.
const MaxFactsPerEpisode = 40

// parseFacts reads the reply's "facts": [{"text", "seqs", "kind"}]. A fact
// is kept only when it has text and cites at least one of the episode's own
// turns; seqs outside the episode are removed, and a fact left with none
// is dropped (counted). A reply without facts yields none.
func parseFacts(reply string, req memory.EpisodeRequest) (facts []memory.Fact, dropped int) {
	obj, err := firstObject(Clean(reply))
	if err != nil {
		return nil, 0
	}
	raw, _ := obj["facts"].([]any)
	own := make(map[int64]time.Time, len(req.Turns))
	for _, t := range req.Turns {
		own[t.Seq] = t.CreatedAt
	}
	seen := map[string]bool{}
	for _, r := range raw {
		f, ok := factOf(r, own, req.Chat)
		if !ok {
			dropped++
			continue
		}
		if seen[f.ID] || len(facts) >= MaxFactsPerEpisode {
			continue
		}
		seen[f.ID] = true
		facts = append(facts, f)
	}
	return facts, dropped
}

func factOf(r any, own map[int64]time.Time, chat memory.Chat) (memory.Fact, bool) {
	m, ok := r.(map[string]any)
	if !ok {
		return memory.Fact{}, false
	}
	text := capRunes(strings.Join(strings.Fields(narrativeOf(m["text"])), " "), MaxItemChars)
	if text == "" {
		return memory.Fact{}, false
	}
	var seqs []int64
	var valid time.Time
	list, _ := m["seqs"].([]any)
	for _, v := range list {
		n, ok := v.(float64)
		if !ok || n != float64(int64(n)) {
			continue
		}
		at, mine := own[int64(n)]
		if !mine || slices.Contains(seqs, int64(n)) {
			continue
		}
		seqs = append(seqs, int64(n))
		if at.After(valid) {
			valid = at
		}
	}
	if len(seqs) == 0 {
		return memory.Fact{}, false
	}
	slices.Sort(seqs)
	kind, _ := m["kind"].(string)
	if kind = strings.ToLower(strings.TrimSpace(kind)); !slices.Contains(FactKinds(), kind) {
		kind = memory.FactOther
	}
	return memory.Fact{ID: memory.FactID(chat.Tenant, chat.ID, seqs, text), ChatID: chat.ID, Text: text,
		Seqs: seqs, ValidAt: valid.UTC(), Kind: kind, Source: memory.FactSourceLLM}, true
}
