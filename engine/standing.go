package engine

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/contextd/contextd/derive/facts"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// Standing instructions ("Always include version numbers when I ask about
// libraries") govern every later answer, and a person's own constraints
// ("I'm vegetarian", "allergic to peanuts") every later suggestion touching
// them, yet both share few words with the questions they govern, so
// retrieval rarely finds them. Facts drawn on arrival mark them
// (facts.IsStanding, facts.IsConstraint); a context with a query offers the
// turns that state the chat's newest maxStanding of them beside what
// retrieval found, each as relevant as half the best hit: short, so they
// are packed unless the budget is tiny. A question about food
// (facts.IsAboutFood) is what a diet or an allergy governs most directly:
// there a constraint is as relevant as the best hit. The turn itself is
// shown, the user's own words.
const (
	maxStanding    = 8
	standingWeight = 0.5
)

// standingCache keeps each hot chat's standing-instruction turns, read once
// and then only for the turns appended since. An entry is valid for the
// chat it was read from (its created_at) while the chat's dirty mark is
// unchanged: a deleted turn takes its facts with it and moves the mark (the
// recent-turns cache relies on the same rule), and this process drops the
// entry when it deletes one.
type standingCache struct {
	mu      sync.Mutex
	entries map[memory.ChatKey]standingEntry
}

type standingEntry struct {
	created time.Time
	mark    int64
	upTo    int64            // facts read whose first seq is <= upTo
	turns   []memory.Message // oldest first
	diet    map[int64]bool   // the turns stating a constraint (a diet, an allergy), by seq
	said    []memory.Fact    // the standing instructions and constraints, oldest first
}

// standingCacheChats bounds the entries (cleared when full).
const standingCacheChats = 4096

func (c *standingCache) drop(key memory.ChatKey) {
	c.mu.Lock()
	delete(c.entries, key)
	c.mu.Unlock()
}

// get returns the turns that state chat's standing instructions, oldest
// first.
func (c *standingCache) get(ctx context.Context, fs memory.FactStore, st memory.ChatReader, chat memory.Chat) (standingEntry, error) {
	key := chat.Key()
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && e.created.Equal(chat.CreatedAt) && e.mark == chat.DirtyMark && e.upTo >= chat.LastSeq {
		return e, nil
	}
	if !ok || !e.created.Equal(chat.CreatedAt) || e.mark != chat.DirtyMark {
		e = standingEntry{created: chat.CreatedAt, mark: chat.DirtyMark}
	}
	more, err := fs.Facts(ctx, key, memory.FactQuery{AfterSeq: e.upTo})
	if err != nil {
		return standingEntry{}, err
	}
	said := slices.Clip(e.said) // never into a slice a reader holds
	var seqs []int64
	diet := e.diet
	for _, f := range more {
		if facts.IsConstraint(f) && !diet[f.Seqs[0]] {
			diet = maps.Clone(diet) // never into a map a reader holds
			if diet == nil {
				diet = map[int64]bool{}
			}
			diet[f.Seqs[0]] = true
		}
		if !facts.IsStanding(f) && !facts.IsConstraint(f) {
			continue
		}
		said = append(said, f)
		if len(seqs) == 0 || seqs[len(seqs)-1] != f.Seqs[0] {
			seqs = append(seqs, f.Seqs[0])
		}
	}
	e.diet, e.said = diet, said
	if len(seqs) > 0 {
		msgs, err := st.MessagesBySeq(ctx, key, seqs)
		if err != nil {
			return standingEntry{}, err
		}
		e.turns = append(slices.Clip(e.turns), msgs...) // never into a slice a reader holds
	}
	e.upTo = chat.LastSeq
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= standingCacheChats {
		c.entries = map[memory.ChatKey]standingEntry{}
	}
	c.entries[key] = e
	c.mu.Unlock()
	return e, nil
}

// withStanding adds to the retrieved turns (best first) the newest
// maxStanding standing-instruction turns they lack, outside the recent
// window. When reading them fails, the answer goes on without them.
func (s *Service) withStanding(ctx context.Context, p *plan, turns []rag.Turn) []rag.Turn {
	e, err := s.cache.standing.get(ctx, s.roles.facts, s.store, p.chat)
	if err != nil {
		s.obs.logger.Warn("standing instructions left out", "chat", p.chat.ID, "err", err)
		return turns
	}
	msgs, diet := e.turns, e.diet
	if len(msgs) == 0 {
		return turns
	}
	best := float32(0)
	have := map[int64]int{} // seq → index in turns
	for i, t := range turns {
		best = max(best, t.Score)
		if t.ChatID == p.chat.ID && (t.Kind == "" || t.Kind == memory.KindTurn) {
			have[t.Seq] = i
		}
	}
	if best == 0 {
		best = 1
	}
	food := facts.IsAboutFood(p.query)
	n := 0
	for i := len(msgs) - 1; i >= 0 && n < maxStanding; i-- {
		m := msgs[i]
		if m.Seq >= p.retrieveFrom {
			continue // always shown
		}
		worth := best * standingWeight
		if food && diet[m.Seq] {
			worth = best
		}
		n++
		if p.standing == nil {
			p.standing = map[int64]bool{}
		}
		p.standing[m.Seq] = true
		turns = appendStandIns(turns, e.said, p.chat.ID, m, worth)
		if j, ok := have[m.Seq]; ok {
			// Retrieved already, maybe only as a neighbour: it is worth
			// what a standing turn is worth, at least.
			if t := &turns[j]; t.Score < worth || t.Neighbor {
				t.Score, t.Neighbor = max(t.Score, worth), false
			}
			continue
		}
		turns = append(turns, rag.Turn{ChatID: p.chat.ID, Seq: m.Seq, Role: string(m.Role), Content: m.Content,
			CreatedAt: m.CreatedAt, Score: worth})
	}
	return turns
}

// appendStandIns adds the standing instructions turn m states, as facts
// standing in for it: its own words, a sentence, where the whole turn
// does not fit the standing share ("Never call me, even if it's urgent,
// just email." of a turn that also gives an email address and why),
// with who said it when the chat names its speakers ("me" is theirs).
func appendStandIns(turns []rag.Turn, said []memory.Fact, chat string, m memory.Message, worth float32) []rag.Turn {
	for _, f := range said {
		if f.Seqs[0] != m.Seq || len(f.Seqs) != 1 {
			continue // a fact joining turns is no stand-in for one of them
		}
		text := f.Text
		if rest, ok := strings.CutPrefix(text, facts.StandingPrefix); ok && m.Name != "" {
			text = "Standing instruction (" + m.Name + "): " + rest
		}
		turns = append(turns, rag.Turn{ChatID: chat, Seq: m.Seq, Content: text, CreatedAt: f.ValidAt, Score: worth,
			Kind: memory.KindFact, Fact: &rag.FactHit{ID: f.ID, Seqs: f.Seqs, ValidAt: f.ValidAt}, StandsIn: true})
	}
	return turns
}
