package engine

// Forgetting one message. DeleteMessage tombstones the turn and leaves
// durable marks (memory.MessageDeleter); the background worker rebuilds
// what was derived from it (jobs/worker/rebuild.go). Until then the read
// path serves nothing derived from the turn:
//
//   - a chat whose summary is dirty gets the last clean record of its
//     chain instead of the head: the newest one ending before the first
//     turn deleted since the summary was clean (memory.MessageDeleter's
//     CleanSummary), which cannot hold a deleted turn, or none; its context
//     shows the turns after that record verbatim (or counts them as
//     dropped, the tombstones as filtered) and says summary_rebuilding;
//     GET …/summary answers a null summary and an empty chain;
//   - an episode marked for rebuild is left out of the RAG section and of
//     the summary's newest episodes; the episodes endpoint lists it with
//     its range and "rebuild": true but without its summaries;
//   - retrieval hits are checked against the store: a tombstoned turn is
//     dropped, an episode hit takes the stored short summary (the index may
//     still hold the old one) or is dropped while marked;
//   - the export leaves out a dirty summary chain and a marked episode's
//     summaries.
//
// A tombstone in the recent window is shown as nothing and counted in
// usage.filtered_turns (it is empty), so no turn is silently lost.

import (
	"context"
	"errors"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// DegradedSummaryRebuilding: a message the running summary may hold was
// deleted; the summary is not served until it is rebuilt without it.
const DegradedSummaryRebuilding = memory.DegradedSummaryRebuilding

// MessageDeleter deletes one message, leaving marks for the rebuild
// (memory.MessageDeleter). A MessageDeleter that is also a CleanSummaries
// lets a dirty chat's contexts keep the clean start of its summary.
type MessageDeleter interface {
	DeleteMessage(ctx context.Context, key memory.ChatKey, messageID string) (memory.Message, error)
}

// CleanSummaries finds the newest summary record of a dirty chat that
// cannot hold a deleted turn (memory.MessageDeleter's CleanSummary).
type CleanSummaries interface {
	CleanSummary(ctx context.Context, key memory.ChatKey) (*memory.SummaryRecord, error)
}

// DeleteMessage deletes one message of a chat: not_found for an unknown
// chat or message, or one already deleted. The turn's points and the
// profile items sourced from it go at once when the backends answer (the
// worker does it again from the durable mark otherwise); the rest is
// rebuilt in the background.
func (s *Service) DeleteMessage(ctx context.Context, tenant, chatID, messageID string) error {
	if err := ValidateID("chat_id", chatID, true); err != nil {
		return err
	}
	if err := ValidateID("message_id", messageID, true); err != nil {
		return err
	}
	key := memory.ChatKey{Tenant: tenant, ChatID: chatID}
	chat, err := s.store.Chat(ctx, key)
	if err != nil {
		return storeErr("read chat", err)
	}
	m, err := s.roles.forget.DeleteMessage(ctx, key, messageID)
	if errors.Is(err, memory.ErrNotFound) {
		return notFound("message")
	}
	if err := s.full.wrote("delete message", err); err != nil {
		return err
	}
	s.cache.turns.drop(key)
	s.cache.standing.drop(key)
	s.cache.updates.drop(key)
	s.forgetNow(ctx, chat, m.Seq)
	if s.jobs.indexer != nil {
		s.jobs.indexer.Kick()
	}
	s.jobs.summaries.Kick()
	return nil
}

// forgetNow deletes the turn's points and its profile items right away,
// best effort: the Deletion row makes the worker do both again.
func (s *Service) forgetNow(ctx context.Context, chat memory.Chat, seq int64) {
	if s.vec.index != nil {
		if err := s.vec.index.Delete(ctx, rag.TurnFilter(chat.Key(), seq)); err != nil {
			s.obs.logger.Warn("delete message: vectors left to the worker", "chat", chat.ID, "err", err)
		}
	}
	if chat.UserID != "" {
		var gone []memory.ProfileItem
		err := s.updateProfile(ctx, chat.Tenant, chat.UserID, func(st *memory.ProfileState) error {
			gone = st.WithoutTurn(chat.ID, seq)
			return nil
		})
		if err != nil {
			s.obs.logger.Warn("delete message: profile left to the worker", "chat", chat.ID, "err", err)
			return
		}
		// Other chats that gave the items state them again, merged anew
		// (the worker does this chat once it is rebuilt).
		var again []memory.Mark // ToSeq 0: merge the chat's summary again
		for _, c := range memory.SourceChats(gone) {
			if c != chat.ID {
				again = append(again, memory.Mark{Chat: memory.ChatKey{Tenant: chat.Tenant, ChatID: c}})
			}
		}
		if _, err := s.roles.profiles.Done(ctx, memory.MergeProfile, again); err != nil {
			s.obs.logger.Warn("delete message: profile sources not merged again", "chats", len(again), "err", err)
		}
	}
}

// cleanChat is chat's id when its summary is not dirty (its hits need no
// check), else "".
func cleanChat(chat memory.Chat) string {
	if chat.SummaryDirty {
		return ""
	}
	return chat.ID
}

// unlessRebuilding hides a dirty summary: the plan goes on with its last
// clean record (cleanHead), or as if the chat had none. The chat is read
// again first, once a head was read: the rebuild may have finished since
// the request read it.
func (s *Service) unlessRebuilding(ctx context.Context, p *plan) error {
	if !p.chat.SummaryDirty {
		return nil
	}
	if p.head != nil {
		c, err := s.store.Chat(ctx, p.chat.Key())
		if err != nil {
			return storeErr("read chat", err)
		}
		if !c.SummaryDirty {
			p.chat.SummaryDirty = false
			return nil
		}
	}
	p.head, p.cursor, p.rebuilding = nil, 0, true
	if rec := s.cleanHead(ctx, p.chat.Key()); rec != nil {
		p.head, p.cursor = rec, rec.CoveredToSeq
	}
	p.lags = s.lagging(p.chat, p.cursor)
	return nil
}

// cleanHead is the dirty chat's last clean summary record, read with the
// chat's mark in one statement (nil: none, or the store cannot say; a
// failed read serves no summary rather than an unchecked one).
func (s *Service) cleanHead(ctx context.Context, key memory.ChatKey) *memory.SummaryRecord {
	cs, ok := s.roles.forget.(CleanSummaries)
	if !ok {
		return nil
	}
	rec, err := cs.CleanSummary(ctx, key)
	if err != nil {
		s.obs.logger.Warn("read the clean summary of a chat being rebuilt", "chat", key.ChatID, "err", err)
		return nil
	}
	return rec
}

// dropForgotten checks retrieval hits against the store: tombstoned turns
// go, an episode hit shows the stored short summary, or goes while marked
// for rebuild. A chat whose state cannot be read loses its hits (nothing
// unchecked is served). The hits of clean, a chat the caller read without
// a dirty summary, are kept as they are: the rebuild erases a deleted
// turn's points and rebuilds its episodes before it clears the mark.
// unchecked is the first store failure among the checks (a chat deleted
// meanwhile is none): its hits are left out all the same, and the caller
// says so rather than answer as if nothing matched.
func (s *Service) dropForgotten(ctx context.Context, tenant string, hits []rag.Turn, clean string) (_ []rag.Turn, unchecked error) {
	if len(hits) == 0 {
		return hits, nil
	}
	failed := func(what, chat string, err error) {
		s.obs.logger.Warn("check retrieved "+what, "chat", chat, "err", err)
		if unchecked == nil && !errors.Is(err, memory.ErrNotFound) {
			unchecked = err
		}
	}
	seqs := map[string][]int64{}
	factIDs := map[string][]string{}
	for _, h := range hits {
		switch {
		case h.ChatID == clean || h.Kind == memory.KindEpisode:
		case h.Kind == memory.KindFact:
			factIDs[h.ChatID] = append(factIDs[h.ChatID], h.Fact.ID)
		default:
			seqs[h.ChatID] = append(seqs[h.ChatID], h.Seq)
		}
	}
	facts := s.storedFacts(ctx, tenant, factIDs, failed)
	live := map[string]map[int64]bool{}
	for chat, ss := range seqs {
		msgs, err := s.store.MessagesBySeq(ctx, memory.ChatKey{Tenant: tenant, ChatID: chat}, ss)
		if err != nil {
			failed("turns", chat, err)
			continue
		}
		live[chat] = map[int64]bool{}
		for _, m := range msgs {
			live[chat][m.Seq] = !m.Deleted
		}
	}
	out := hits[:0]
	for _, h := range hits {
		if h.ChatID == clean {
			out = append(out, h)
			continue
		}
		if h.Kind == memory.KindEpisode {
			if ep, ok := s.storedEpisode(ctx, tenant, h, failed); ok {
				h.Content = ep.Short
				out = append(out, h)
			}
			continue
		}
		if h.Kind == memory.KindFact { // a fact citing a deleted turn is gone from the store
			if facts[h.Fact.ID] {
				out = append(out, h)
			}
			continue
		}
		if live[h.ChatID][h.Seq] {
			out = append(out, h)
		}
	}
	return out, unchecked
}

// storedFacts reports which of the facts named still exist in the store.
func (s *Service) storedFacts(ctx context.Context, tenant string, ids map[string][]string, failed func(what, chat string, err error)) map[string]bool {
	out := map[string]bool{}
	for chat, fids := range ids {
		fs, err := s.roles.facts.Facts(ctx, memory.ChatKey{Tenant: tenant, ChatID: chat}, memory.FactsByID(fids))
		if err != nil {
			failed("facts", chat, err)
			continue
		}
		for _, f := range fs {
			out[f.ID] = true
		}
	}
	return out
}

// storedEpisode is the episode an episode hit names, unless it is marked
// for rebuild, gone, or without a short summary.
func (s *Service) storedEpisode(ctx context.Context, tenant string, h rag.Turn, failed func(what, chat string, err error)) (memory.Episode, bool) {
	eps, err := s.roles.episodes.Episodes(ctx, memory.ChatKey{Tenant: tenant, ChatID: h.ChatID}, memory.EpisodeQuery{AfterSeq: h.Episode.FromSeq - 1, Limit: 1})
	if err != nil {
		failed("episode", h.ChatID, err)
		return memory.Episode{}, false
	}
	if len(eps) == 0 || eps[0].FromSeq != h.Episode.FromSeq || eps[0].Rebuild || eps[0].Short == "" {
		return memory.Episode{}, false
	}
	return eps[0], true
}

// withoutRebuilding leaves out the episodes marked for rebuild.
func withoutRebuilding(eps []memory.Episode) []memory.Episode {
	out := eps[:0]
	for _, e := range eps {
		if !e.Rebuild {
			out = append(out, e)
		}
	}
	return out
}

// blankRebuilding keeps the episodes marked for rebuild with their range
// only.
func blankRebuilding(eps []memory.Episode) []memory.Episode {
	for i, e := range eps {
		if e.Rebuild {
			eps[i] = blankEpisode(e)
		}
	}
	return eps
}

func blankEpisode(e memory.Episode) memory.Episode {
	e.Short, e.Facts = "", nil
	e.Summary = memory.Summary{CoveredFromSeq: e.FromSeq, CoveredToSeq: e.ToSeq}
	e.Summary.Normalize()
	return e
}

// ExportFilter leaves out of a dump what waits for a rebuild: a dirty
// chat's summary records and a marked episode's summaries (they may hold
// a deleted turn). Every export goes through it: the API's and the
// export command's.
func ExportFilter(emit func(memory.DumpRecord) error) func(memory.DumpRecord) error {
	dirty := map[string]bool{}
	return func(r memory.DumpRecord) error {
		switch {
		case r.Type == memory.DumpChat && r.Chat != nil:
			dirty[r.Chat.ID] = r.Chat.SummaryDirty
		case r.Type == memory.DumpSummaryRecord && dirty[r.ChatID]:
			return nil
		case r.Type == memory.DumpEpisode && r.Episode != nil && r.Episode.Rebuild:
			e := blankEpisode(*r.Episode)
			r.Episode = &e
		}
		return emit(r)
	}
}
