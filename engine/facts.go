package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/contextd/contextd/derive/facts"
	"github.com/contextd/contextd/filters"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// Facts pages a chat's facts in seq order (of their first source turn):
// those whose first seq is after afterSeq, up to limit (a page never splits
// the facts of one seq), superseded ones only when asked, and the
// after_seq of the next page.
func (s *Service) Facts(ctx context.Context, tenant, chatID string, afterSeq int64, limit int, includeSuperseded bool) ([]memory.Fact, int64, error) {
	if err := ValidateID("chat_id", chatID, true); err != nil {
		return nil, 0, err
	}
	if afterSeq < 0 {
		return nil, 0, invalid("after_seq", "invalid_value", "must be ≥ 0")
	}
	if limit <= 0 || limit > 1000 {
		return nil, 0, invalid("limit", "invalid_value", "must be between 1 and 1000")
	}
	key := memory.ChatKey{Tenant: tenant, ChatID: chatID}
	fs, err := s.roles.facts.Facts(ctx, key, memory.FactQuery{AfterSeq: afterSeq, Limit: limit, IncludeSuperseded: includeSuperseded})
	if err != nil {
		return nil, 0, storeErr("list facts", err)
	}
	next := afterSeq
	if len(fs) > 0 {
		next = fs[len(fs)-1].FirstSeq()
	}
	if fs == nil {
		fs = []memory.Fact{}
	}
	return fs, next, nil
}

// factsOnArrival extracts, without an LLM, the facts of turns just
// appended (what people say about themselves, plans, decisions), so that a
// chat remembers them before any episode closes; the episode that later
// owns the turns draws the same facts (same ids) and adds nothing twice.
// With an LLM the episode's call writes the facts instead. The facts job
// (Arrivals) calls it in the background with the turns past the chat's
// facts cursor, as stored (seqs and times set): never the append. An error
// leaves the cursor where it was, so the turns are drawn again.
func (s *Service) factsOnArrival(ctx context.Context, chat memory.Chat, turns []memory.Message) error {
	if s.conf.llmEpisodes {
		return nil
	}
	o := s.policy(chat.Agent).Filters
	o.MaxTurns = 0
	turns = filters.Apply(turns, o).Kept
	key := chat.Key()
	// A question an earlier append left open is answered now if someone
	// else speaks: its fact goes before this batch's are drawn.
	if _, err := facts.SupersedeAnswered(ctx, s.roles.facts, key, turns); err != nil {
		s.obs.logger.Warn("answered questions of new turns", "chat", key.ChatID, "err", err) // derived: the new facts go on
	}
	fs := facts.ForChat(key, facts.Extract(turns))
	if len(fs) == 0 {
		return nil
	}
	stored, err := s.roles.facts.AddFacts(ctx, key, fs)
	var superseded []memory.Fact
	if err == nil {
		superseded, err = facts.SupersedeStored(ctx, s.roles.facts, key, stored)
	}
	if anyStanding(stored) || anyStanding(superseded) {
		// The chat's standing turns are read again: the new one joins
		// them (a context may have read the chat past its turn before
		// this draw), the superseded one leaves ("I'm vegetarian" after
		// "I went vegan").
		s.cache.standing.drop(key)
	}
	if err == nil && chat.UserID != "" {
		err = s.profileFromFacts(ctx, chat, userFacts(stored, turns), superseded)
	}
	if err != nil {
		return fmt.Errorf("facts of new turns of %s: %w", key.ChatID, err)
	}
	return nil
}

// anyStanding: some fact is a standing instruction or a constraint.
func anyStanding(fs []memory.Fact) bool {
	for _, f := range fs {
		if facts.IsStanding(f) || facts.IsConstraint(f) {
			return true
		}
	}
	return false
}

// userFacts are the facts about the user drawn from their own turns
// (preferences, attributes): the others leave the profile unchanged, so
// they cost no profile write.
func userFacts(fs []memory.Fact, turns []memory.Message) []memory.Fact {
	role := make(map[int64]memory.Role, len(turns))
	for _, t := range turns {
		role[t.Seq] = t.Role
	}
	var out []memory.Fact
	for _, f := range fs {
		about := f.Kind == memory.FactPreference || f.Kind == memory.FactAttribute
		if about && len(f.Seqs) > 0 && role[f.Seqs[0]] == memory.RoleUser {
			out = append(out, f)
		}
	}
	return out
}

// profileFromFacts merges facts about the user into their profile, and
// takes out what superseded facts of the chat had put there
// (compare-and-swap; a concurrent writer makes it read and merge again).
func (s *Service) profileFromFacts(ctx context.Context, chat memory.Chat, fs, superseded []memory.Fact) error {
	if len(fs) == 0 && len(superseded) == 0 {
		return nil
	}
	for attempt := 0; ; attempt++ {
		st, v, err := s.roles.profiles.Profile(ctx, chat.Tenant, chat.UserID)
		if err != nil {
			return err
		}
		st.WithoutFacts(chat.ID, superseded)
		st = memory.MergeFacts(st, chat.UserID, chat.ID, current(fs, superseded), s.obs.now())
		err = s.roles.profiles.SaveProfile(ctx, chat.Tenant, chat.UserID, st, v)
		if err == nil || !errors.Is(err, memory.ErrConflict) || attempt == 3 {
			return err
		}
	}
}

// current is fs without the facts superseded names (one append can state
// a fact and its update: the stored copy of the first does not say so yet).
func current(fs, superseded []memory.Fact) []memory.Fact {
	if len(superseded) == 0 {
		return fs
	}
	out := make([]memory.Fact, 0, len(fs))
	for _, f := range fs {
		if !slices.ContainsFunc(superseded, func(o memory.Fact) bool { return o.ID == f.ID }) {
			out = append(out, f)
		}
	}
	return out
}

// ragFact turns a fact hit into a RAG candidate: one line with its date
// and source turns, ranked with the turns.
func ragFact(p *plan, t rag.Turn) RAGTurn {
	f := t.Fact
	r := RAGTurn{ChatID: chatIDIfOther(t.ChatID, p.chat.ID), Seq: t.Seq, Content: t.Content, Score: t.Score, CreatedAt: f.ValidAt,
		Fact: &FactRef{ID: f.ID, Seqs: f.Seqs, ValidAt: f.ValidAt, Superseded: f.Superseded}}
	if t.StandsIn {
		r.standsFor = t.Seq
	}
	return r
}

// passageRefs are the offsets of a long turn's matching passages.
func passageRefs(t rag.Turn) []PassageRef {
	if len(t.Passages) == 0 {
		return nil
	}
	out := make([]PassageRef, len(t.Passages))
	for i, pa := range t.Passages {
		out[i] = PassageRef{From: pa.From, To: pa.To, Len: t.TurnBytes}
	}
	return out
}
