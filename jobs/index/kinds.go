package index

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// An indexKind is one kind of indexed memory as the drain loop (drain.go)
// sees it: its backlog (memory.WorkKind), its reader — the store's item
// reader, each item mapped to its points (TurnPoints, EpisodePoint,
// FactPoint) or to points to drop, and to the mark that records it — and,
// where an item may change while its points are written, a read-back.
type indexKind struct {
	kind memory.WorkKind
	// what names the items in errors ("turns of t/c"); point is their
	// points' Kind, the span's kind attribute.
	what, point string
	// read reads up to BatchSize pending items of the chat and maps them.
	read func(ctx context.Context, ix *Indexer, c memory.Chat) (mapped, error)
	// recheck, when set, runs after the upsert: it takes back out the
	// points of items changed or gone meanwhile, and trims the mark.
	recheck func(ctx context.Context, ix *Indexer, p *share) error
}

// kinds are the indexed kinds; DrainOnce drains them in the order of
// memory.IndexKinds. A new kind is a row: its constant, the store's item
// reader and a point mapper (and a read-back if its items can change while
// they are written).
var kinds = map[memory.WorkKind]*indexKind{
	memory.IndexTurns: {kind: memory.IndexTurns, what: "turns", point: memory.KindTurn,
		read: reader(Source.UnindexedMessages, mapTurn)},
	memory.IndexEpisodes: {kind: memory.IndexEpisodes, what: "episodes", point: memory.KindEpisode,
		read: reader(Source.UnindexedEpisodes, mapEpisode), recheck: recheckEpisodes},
	memory.IndexFacts: {kind: memory.IndexFacts, what: "facts", point: memory.KindFact,
		read: reader(Source.UnindexedFacts, mapFact), recheck: recheckFacts},
}

// reader reads up to BatchSize pending items of a chat with the store's
// item reader and maps each with mapItem into what the drain writes.
func reader[T any](items func(Source, context.Context, memory.ChatKey, int) ([]T, error),
	mapItem func(c memory.Chat, it T, passageTokens int, m *mapped)) func(context.Context, *Indexer, memory.Chat) (mapped, error) {
	return func(ctx context.Context, ix *Indexer, c memory.Chat) (mapped, error) {
		its, err := items(ix.Store, ctx, c.Key(), ix.BatchSize)
		if err != nil {
			return mapped{}, err
		}
		m := mapped{read: len(its), mark: memory.Mark{Chat: c.Key(), Created: c.CreatedAt}}
		for _, it := range its {
			mapItem(c, it, ix.PassageTokens, &m)
		}
		return m, nil
	}
}

// mapTurn maps a live turn to its points (a long one passage by passage)
// and a tombstone to the points to drop: the turn's and the facts' citing
// it. Live turns and tombstones are marked apart: a turn deleted while its
// points were being written stays in the backlog (its points come out on
// the next read); Created tells the chat from one created again under its
// id meanwhile.
func mapTurn(c memory.Chat, msg memory.Message, passageTokens int, m *mapped) {
	if msg.Deleted {
		m.drop = append(m.drop, rag.ForgetFilters(c.Key(), msg.Seq)...)
		m.mark.Forgotten = append(m.mark.Forgotten, msg.Seq)
		return
	}
	for _, p := range rag.TurnPoints(c, msg, passageTokens) {
		m.points, m.texts = append(m.points, p), append(m.texts, rag.SpokenText(msg.Name, p.Content))
	}
	m.mark.Seqs = append(m.mark.Seqs, msg.Seq)
}

// mapEpisode maps a closed episode to its point. An episode marked for
// rebuild (a turn of it was deleted) has its point dropped now — the
// rebuilt episode comes back unindexed — and one without a short summary
// (its turns were all noise) has nothing to find it by: both are marked,
// not indexed.
func mapEpisode(c memory.Chat, e memory.Episode, _ int, m *mapped) {
	m.mark.IDs = append(m.mark.IDs, e.ID)
	switch {
	case e.Rebuild:
		m.drop = append(m.drop, rag.EpisodeFilter(c.Key(), e))
	case strings.TrimSpace(e.Short) != "":
		m.points, m.texts = append(m.points, rag.EpisodePoint(c, e)), append(m.texts, rag.EpisodeText(e))
	}
}

// mapFact maps a fact to its point; a fact with no text or no turn to cite
// is marked, not indexed. A superseded fact is indexed too, flagged
// (FactPoint).
func mapFact(c memory.Chat, f memory.Fact, _ int, m *mapped) {
	m.mark.IDs = append(m.mark.IDs, f.ID)
	if strings.TrimSpace(f.Text) != "" && len(f.Seqs) > 0 {
		m.points, m.texts = append(m.points, rag.FactPoint(c, f)), append(m.texts, rag.FactText(f))
	}
}

// recheckEpisodes leaves unmarked, and takes the point back out of, an
// episode rebuilt or gone while it was embedded (its rebuild erased the
// point before this upsert wrote the old text back); a rebuilt one is
// indexed anew on the next pass.
func recheckEpisodes(ctx context.Context, ix *Indexer, p *share) error {
	if len(p.points) == 0 {
		return nil
	}
	key := p.chat.Key()
	now, err := ix.Store.UnindexedEpisodes(ctx, key, p.read+ix.BatchSize)
	if err != nil && !errors.Is(err, memory.ErrNotFound) {
		return fmt.Errorf("indexer: read episodes of %s/%s again: %w", key.Tenant, key.ChatID, err)
	}
	current := make(map[string]memory.Episode, len(now))
	for _, e := range now {
		current[e.ID] = e
	}
	changed := map[string]bool{}
	for i, pt := range p.points {
		cur, ok := current[pt.EpisodeID]
		if ok && !cur.Rebuild && rag.EpisodeText(cur) == p.texts[i] {
			continue
		}
		changed[pt.EpisodeID] = true
		if err := ix.Index.Delete(ctx, rag.EpisodeFilter(key, memory.Episode{FromSeq: pt.FromSeq})); err != nil {
			return fmt.Errorf("indexer: delete a changed episode of %s/%s: %w: %w", key.Tenant, key.ChatID, rag.ErrIndexUnavailable, err)
		}
	}
	if len(changed) > 0 {
		ids := p.mark.IDs[:0:0]
		for _, id := range p.mark.IDs {
			if !changed[id] {
				ids = append(ids, id)
			}
		}
		p.mark.IDs = ids
	}
	return nil
}

// recheckFacts takes back out the points of facts deleted while they were
// being embedded (their turn was deleted, or the chat erased and created
// again under its id): a delete after this read sweeps the points itself,
// as they are written by then. Marking a deleted fact is a no-op.
func recheckFacts(ctx context.Context, ix *Indexer, p *share) error {
	key, ids := p.chat.Key(), p.mark.IDs
	live, err := ix.Store.Facts(ctx, key, memory.FactsByID(ids))
	if errors.Is(err, memory.ErrNotFound) {
		return nil // the chat went: Done reports it gone, its points go then
	}
	if err != nil {
		return fmt.Errorf("indexer: read facts of %s/%s: %w", key.Tenant, key.ChatID, err)
	}
	if len(live) == len(ids) {
		return nil
	}
	kept := make(map[string]bool, len(live))
	for _, f := range live {
		kept[f.ID] = true
	}
	var gone []string
	for _, id := range ids {
		if !kept[id] {
			gone = append(gone, id)
		}
	}
	if err := rag.DeleteItems(ctx, ix.Index, key, gone...); err != nil {
		return fmt.Errorf("indexer: %w: %w", rag.ErrIndexUnavailable, err)
	}
	return nil
}
