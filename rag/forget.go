package rag

import (
	"context"
	"fmt"

	"github.com/contextd/contextd/memory"
)

// A deleted message (memory.MessageDeleter) leaves a tombstone in the
// unindexed backlog and a Deletion row: the indexer deletes the tombstone's
// points instead of embedding it, and the rebuild (jobs/worker) deletes
// them once more through an Eraser before it drops the Deletion row, so a
// crash between the two loses nothing. The rebuild erases an episode's
// point before it writes the episode anew, which the indexer then indexes.

// TurnFilter matches every point of one turn of a chat (not its episode's,
// which the rebuild re-indexes).
func TurnFilter(key memory.ChatKey, seq int64) Filter {
	return Filter{Tenant: key.Tenant, ChatIDs: []string{key.ChatID}, Kinds: []string{memory.KindTurn}, FromSeq: seq, ToSeq: seq}
}

// EpisodeFilter matches an episode's point (identity: its from_seq).
func EpisodeFilter(key memory.ChatKey, e memory.Episode) Filter {
	return Filter{Tenant: key.Tenant, ChatIDs: []string{key.ChatID}, Kinds: []string{memory.KindEpisode}, FromSeq: e.FromSeq, ToSeq: e.FromSeq}
}

// PointEraser removes what a deleted turn left in an Index (the worker's
// jobs/worker.PointEraser).
type PointEraser struct{ Index Index }

// EraseTurn deletes the points of the forgotten turn (every passage) and
// of the facts citing it (already gone from the store).
func (e PointEraser) EraseTurn(ctx context.Context, f memory.Deletion) error {
	if err := EraseTurns(ctx, e.Index, f.Chat, f.Seq); err != nil {
		return fmt.Errorf("erase turn %d of %s/%s: %w: %w", f.Seq, f.Chat.Tenant, f.Chat.ChatID, ErrIndexUnavailable, err)
	}
	return nil
}

// EraseEpisode deletes the point of an episode about to be rebuilt (its
// old summaries); the rebuilt episode is indexed again.
func (e PointEraser) EraseEpisode(ctx context.Context, key memory.ChatKey, ep memory.Episode) error {
	if err := e.Index.Delete(ctx, EpisodeFilter(key, ep)); err != nil {
		return fmt.Errorf("erase episode %d..%d of %s/%s: %w: %w", ep.FromSeq, ep.ToSeq, key.Tenant, key.ChatID, ErrIndexUnavailable, err)
	}
	return nil
}
