package records

import (
	"context"
	"errors"
	"slices"

	"github.com/contextd/contextd/memory"
)

// EpisodeRef names one episode of one chat.
type EpisodeRef struct {
	Key memory.ChatKey
	ID  string
}

// EpisodesToRebuild reads the marked episodes refs names with their chats
// (see memory.MessageDeleter.EpisodesToRebuild), skipping those deleted
// since they were listed; chat and episode are the store's reads.
// Rebuilds are rare: one more read per episode costs nothing.
func EpisodesToRebuild(ctx context.Context, refs []EpisodeRef,
	chat func(context.Context, memory.ChatKey) (memory.Chat, error),
	episode func(context.Context, EpisodeRef) ([]memory.Episode, error)) ([]memory.EpisodeToRebuild, error) {
	out := []memory.EpisodeToRebuild{}
	for _, r := range refs {
		c, err := chat(ctx, r.Key)
		if errors.Is(err, memory.ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		eps, err := episode(ctx, r)
		if err != nil {
			return nil, err
		}
		if len(eps) == 1 {
			out = append(out, memory.EpisodeToRebuild{Chat: c, Episode: eps[0]})
		}
	}
	return out, nil
}

// EpisodeOrder is the SQL order of the episodes q selects: from_seq, or
// from_seq descending for the newest ones (q.Latest), which InSeqOrder
// puts back in seq order.
func EpisodeOrder(q memory.EpisodeQuery) string {
	if q.Latest {
		return "from_seq DESC"
	}
	return "from_seq"
}

// InSeqOrder returns the episodes read in EpisodeOrder(q) in seq order.
func InSeqOrder(q memory.EpisodeQuery, eps []memory.Episode) []memory.Episode {
	if q.Latest {
		slices.Reverse(eps)
	}
	return eps
}

// FactReads are a store's two raw reads of a chat's facts.
type FactReads struct {
	Page func(ctx context.Context, key memory.ChatKey, afterSeq int64, limit int, includeSuperseded bool) ([]memory.Fact, error)
	ByID func(ctx context.Context, key memory.ChatKey, ids []string) ([]memory.Fact, error)
}

// Facts reads the facts q selects (see memory.FactStore.Facts).
func (r FactReads) Facts(ctx context.Context, key memory.ChatKey, q memory.FactQuery) ([]memory.Fact, error) {
	if q.ByID {
		return r.ByID(ctx, key, q.IDs)
	}
	return r.Page(ctx, key, q.AfterSeq, q.Limit, q.IncludeSuperseded)
}
