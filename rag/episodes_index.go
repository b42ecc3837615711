package rag

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/contextd/contextd/memory"
)

// Episodes are indexed beside the turns, in the same namespace, as points
// of Kind memory.KindEpisode whose identity is (tenant, chat, kind,
// from_seq) and whose content is the episode's short summary. The indexer
// drains the store's unindexed episodes after its turns, the same way:
// embed, upsert, then mark; a failure leaves them in the backlog.

// maxEpisodeTextRunes caps the text an episode is embedded from.
const maxEpisodeTextRunes = 2000

// EpisodeText is what an episode is embedded and matched from: its short
// summary, then its topics, entities, decisions and narrative, so that a
// query in the summary's words finds it.
func EpisodeText(e memory.Episode) string {
	parts := []string{e.Short}
	parts = append(parts, e.Summary.Topics...)
	for _, en := range e.Summary.Entities {
		parts = append(parts, strings.TrimSpace(en.Name+" "+en.Details))
	}
	parts = append(parts, e.Summary.Decisions...)
	parts = append(parts, e.Summary.Narrative)
	text := strings.Join(strings.Fields(strings.Join(parts, " \n")), " ")
	if r := []rune(text); len(r) > maxEpisodeTextRunes {
		text = string(r[:maxEpisodeTextRunes])
	}
	return text
}

// EpisodePoint is an episode's point, vectors left to the caller.
func EpisodePoint(c memory.Chat, e memory.Episode) Point {
	return Point{
		Tenant: c.Tenant, UserID: c.UserID, ChatID: c.ID, Agent: c.Agent,
		Seq: e.FromSeq, Content: e.Short, CreatedAt: e.EndedAt,
		Kind: memory.KindEpisode, EpisodeID: e.ID, FromSeq: e.FromSeq, ToSeq: e.ToSeq,
		StartedAt: e.StartedAt, EndedAt: e.EndedAt,
	}
}

// drainEpisodes indexes every pending episode of chats not leased
// elsewhere; stores without episodes have none.
func (ix *Indexer) drainEpisodes(ctx context.Context) (int, error) {
	es := ix.Episodes
	if es == nil {
		return 0, nil
	}
	chats, err := es.UnindexedEpisodeChats(ctx, chatsPerPass)
	if err != nil {
		return 0, fmt.Errorf("indexer: list episode backlog: %w", err)
	}
	return ix.eachLeased(ctx, chats, func(c memory.Chat) (int, error) { return ix.indexEpisodes(ctx, es, c) })
}

// eachLeased runs fn for each of chats whose index lease it takes (those
// another owner holds, or deleted, are left out) and returns the sum. The
// leases are taken in one write and given back in one: under a trickle of
// appends a pass finds one item in each of many chats, and a write per
// lease was most of its cost.
func (ix *Indexer) eachLeased(ctx context.Context, chats []memory.Chat, fn func(memory.Chat) (int, error)) (int, error) {
	leases, err := ix.takeLeases(ctx, chats)
	if err != nil {
		return 0, err
	}
	defer func() { _ = memory.ReleaseAll(ctx, leases) }()
	total := 0
	for i, c := range chats {
		if leases[i] == nil {
			continue
		}
		n, err := fn(c)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// takeLeases takes the index leases of chats in one write: nil where
// another owner holds one or the chat is gone.
func (ix *Indexer) takeLeases(ctx context.Context, chats []memory.Chat) ([]*memory.HeldLease, error) {
	keys := make([]memory.ChatKey, len(chats))
	for i, c := range chats {
		keys[i] = c.Key()
	}
	leases, err := memory.TakeLeases(ctx, ix.Store, keys, memory.LeaseIndex, ix.Owner, ix.LeaseTTL)
	if err != nil {
		return nil, fmt.Errorf("indexer: leases of %d chats: %w", len(chats), err)
	}
	return leases, nil
}

func (ix *Indexer) indexEpisodes(ctx context.Context, es memory.EpisodeBacklog, c memory.Chat) (int, error) {
	key := c.Key()
	bs := ix.BatchSize
	eps, err := es.UnindexedEpisodes(ctx, key, bs)
	if errors.Is(err, memory.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("indexer: read episodes of %s/%s: %w", key.Tenant, key.ChatID, err)
	}
	var (
		points []Point
		texts  []string
		ids    []string
	)
	for _, e := range eps {
		ids = append(ids, e.ID)
		if e.Rebuild {
			// A turn of it was deleted: its point goes now, and the
			// rebuilt episode comes back unindexed.
			if err := ix.Index.Delete(ctx, episodeFilter(key, e)); err != nil {
				return 0, fmt.Errorf("indexer: delete episode of %s/%s to rebuild: %w: %w", key.Tenant, key.ChatID, ErrIndexUnavailable, err)
			}
			continue
		}
		if strings.TrimSpace(e.Short) == "" {
			continue // nothing to find it by (its turns were all noise)
		}
		points = append(points, EpisodePoint(c, e))
		texts = append(texts, EpisodeText(e))
	}
	if len(points) > 0 {
		sctx, span := ix.indexSpan(ctx, c, memory.KindEpisode, len(points))
		err := ix.embedUpsert(sctx, "episodes of "+key.Tenant+"/"+key.ChatID, points, texts)
		span.End()
		if err != nil {
			return 0, err
		}
		if ids, err = ix.unchangedEpisodes(ctx, es, key, eps, ids); err != nil {
			return 0, err
		}
	}
	if err := ix.marked(ctx, key, es.MarkEpisodesIndexed(ctx, key, ids)); err != nil {
		return 0, fmt.Errorf("indexer: mark episodes indexed %s/%s: %w", key.Tenant, key.ChatID, err)
	}
	return len(eps), nil
}

// unchangedEpisodes are the ids of eps to mark indexed: those still as
// they were embedded. An episode rebuilt meanwhile (a turn of it deleted:
// its rebuild erased the point before this upsert wrote the old text back)
// or gone has its point taken out and is left unmarked; a rebuilt one is
// indexed anew on the next pass.
func (ix *Indexer) unchangedEpisodes(ctx context.Context, es memory.EpisodeBacklog, key memory.ChatKey, eps []memory.Episode, ids []string) ([]string, error) {
	now, err := es.UnindexedEpisodes(ctx, key, len(eps)+ix.BatchSize)
	if err != nil && !errors.Is(err, memory.ErrNotFound) {
		return nil, fmt.Errorf("indexer: read episodes of %s/%s again: %w", key.Tenant, key.ChatID, err)
	}
	current := make(map[string]memory.Episode, len(now))
	for _, e := range now {
		current[e.ID] = e
	}
	keep := ids[:0:0]
	for _, e := range eps {
		cur, ok := current[e.ID]
		if e.Rebuild || strings.TrimSpace(e.Short) == "" || (ok && !cur.Rebuild && EpisodeText(cur) == EpisodeText(e)) {
			keep = append(keep, e.ID)
			continue
		}
		if err := ix.Index.Delete(ctx, episodeFilter(key, e)); err != nil {
			return nil, fmt.Errorf("indexer: delete a changed episode of %s/%s: %w: %w", key.Tenant, key.ChatID, ErrIndexUnavailable, err)
		}
	}
	return keep, nil
}
