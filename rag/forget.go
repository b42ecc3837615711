package rag

import (
	"context"
	"fmt"

	"github.com/contextd/contextd/memory"
)

// A deleted message (memory.MessageForgetter) leaves a tombstone in the
// unindexed backlog and a Forget row: the indexer deletes the tombstone's
// points instead of embedding it, and the rebuild (memory/worker) deletes
// them once more through an Eraser before it drops the Forget row, so a
// crash between the two loses nothing. The rebuild erases an episode's
// point before it writes the episode anew, which the indexer then indexes.

// TurnFilter matches every point of one turn of a chat (not its episode's,
// which the rebuild re-indexes).
func TurnFilter(key memory.ChatKey, seq int64) Filter {
	return Filter{Tenant: key.Tenant, ChatIDs: []string{key.ChatID}, Kinds: []string{memory.KindTurn}, FromSeq: seq, ToSeq: seq}
}

// episodeFilter matches an episode's point (identity: its from_seq).
func episodeFilter(key memory.ChatKey, e memory.Episode) Filter {
	return Filter{Tenant: key.Tenant, ChatIDs: []string{key.ChatID}, Kinds: []string{memory.KindEpisode}, FromSeq: e.FromSeq, ToSeq: e.FromSeq}
}

// Eraser removes what a deleted turn left in an Index (the worker's
// memory/worker.PointEraser).
type Eraser struct{ Index Index }

// EraseTurn deletes the points of the forgotten turn. Facts citing it are
// already gone from the store; their points go with the turn's once fact
// points are indexed (the hook: a Filter on fact points citing the seq).
func (e Eraser) EraseTurn(ctx context.Context, f memory.Forget) error {
	if err := e.Index.Delete(ctx, TurnFilter(f.Chat, f.Seq)); err != nil {
		return fmt.Errorf("erase turn %d of %s/%s: %w: %w", f.Seq, f.Chat.Tenant, f.Chat.ChatID, ErrIndexUnavailable, err)
	}
	return nil
}

// EraseEpisode deletes the point of an episode about to be rebuilt (its
// old summaries); the rebuilt episode is indexed again.
func (e Eraser) EraseEpisode(ctx context.Context, key memory.ChatKey, ep memory.Episode) error {
	if err := e.Index.Delete(ctx, episodeFilter(key, ep)); err != nil {
		return fmt.Errorf("erase episode %d..%d of %s/%s: %w: %w", ep.FromSeq, ep.ToSeq, key.Tenant, key.ChatID, ErrIndexUnavailable, err)
	}
	return nil
}

// eraseTombstones deletes the points of the batch's tombstones and returns
// the live messages, which are embedded as usual.
func (ix *Indexer) eraseTombstones(ctx context.Context, key memory.ChatKey, msgs []memory.Message) ([]memory.Message, error) {
	live := msgs[:0:0]
	for _, m := range msgs {
		if !m.Deleted {
			live = append(live, m)
			continue
		}
		if err := ix.Index.Delete(ctx, TurnFilter(key, m.Seq)); err != nil {
			return nil, fmt.Errorf("indexer: delete tombstone %d of %s/%s: %w: %w", m.Seq, key.Tenant, key.ChatID, ErrIndexUnavailable, err)
		}
	}
	return live, nil
}
