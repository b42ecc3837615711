package rag

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/contextd/contextd/memory"
)

// Facts are indexed beside turns and episodes, in the same namespace, as
// points of Kind memory.KindFact whose identity is (tenant, chat, kind,
// fact id). A superseded fact is indexed too, flagged, so that it stays
// findable while the Retriever ranks the current one first. The indexer
// drains the store's unindexed facts after its episodes, the same way:
// embed, upsert, then mark; a failure leaves them in the backlog.

// FactText is what a fact is embedded and matched from: the fact, dated by
// its valid_at, so that a question about "March" or "2024" can find it.
func FactText(f memory.Fact) string {
	text := strings.Join(strings.Fields(f.Text), " ")
	if f.ValidAt.IsZero() {
		return text
	}
	return f.ValidAt.UTC().Format("2006-01-02") + ": " + text
}

// FactPoint is a fact's point, vectors left to the caller.
func FactPoint(c memory.Chat, f memory.Fact) Point {
	return Point{
		Tenant: c.Tenant, UserID: c.UserID, ChatID: c.ID, Agent: c.Agent,
		Seq: f.FirstSeq(), Content: f.Text, CreatedAt: f.ValidAt,
		Kind: memory.KindFact, FactID: f.ID, Seqs: f.Seqs, ValidAt: f.ValidAt, Superseded: f.SupersededBy != "",
	}
}

// drainFacts indexes every pending fact of chats not leased elsewhere;
// without a FactStore there are none.
func (ix *Indexer) drainFacts(ctx context.Context) (int, error) {
	fs := ix.Facts
	if fs == nil {
		return 0, nil
	}
	chats, err := fs.UnindexedFactChats(ctx, chatsPerPass)
	if err != nil {
		return 0, fmt.Errorf("indexer: list fact backlog: %w", err)
	}
	total := 0
	for _, c := range chats {
		n, err := ix.withLease(ctx, c, func() (int, error) { return ix.indexFacts(ctx, fs, c) })
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func (ix *Indexer) indexFacts(ctx context.Context, fs memory.FactStore, c memory.Chat) (int, error) {
	key := c.Key()
	bs := ix.BatchSize
	facts, err := fs.UnindexedFacts(ctx, key, bs)
	if errors.Is(err, memory.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("indexer: read facts of %s/%s: %w", key.Tenant, key.ChatID, err)
	}
	var (
		points []Point
		texts  []string
		ids    []string
	)
	for _, f := range facts {
		ids = append(ids, f.ID)
		if strings.TrimSpace(f.Text) == "" || len(f.Seqs) == 0 {
			continue // nothing to find it by, or no turn to cite
		}
		points = append(points, FactPoint(c, f))
		texts = append(texts, FactText(f))
	}
	if err := ix.embedUpsert(ctx, "facts of "+key.Tenant+"/"+key.ChatID, points, texts); err != nil {
		return 0, err
	}
	if err := ix.marked(ctx, key, fs.MarkFactsIndexed(ctx, key, ids)); err != nil {
		return 0, fmt.Errorf("indexer: mark facts indexed %s/%s: %w", key.Tenant, key.ChatID, err)
	}
	return len(facts), nil
}

// ForgetTurns takes forgotten turns out of the index: every point of each
// turn (all its passages) and every fact point citing it. The indexer
// calls it for tombstones it finds in the backlog; a forget worker may
// call it directly.
func ForgetTurns(ctx context.Context, idx Index, key memory.ChatKey, seqs ...int64) error {
	chat := []string{key.ChatID}
	for _, s := range seqs {
		if s <= 0 {
			continue // 0 would mean "any seq" to a filter
		}
		if err := idx.Delete(ctx, Filter{Tenant: key.Tenant, ChatIDs: chat, Kinds: []string{memory.KindTurn}, FromSeq: s, ToSeq: s}); err != nil {
			return fmt.Errorf("forget turn %d: %w", s, err)
		}
		if err := idx.Delete(ctx, Filter{Tenant: key.Tenant, ChatIDs: chat, Kinds: []string{memory.KindFact}, CitingSeq: s}); err != nil {
			return fmt.Errorf("forget the facts citing turn %d: %w", s, err)
		}
	}
	return nil
}

// DeleteItems deletes a chat's episode and fact points with these ids
// (the forget worker's call when it drops derived items). No ids: no-op.
func DeleteItems(ctx context.Context, idx Index, key memory.ChatKey, ids ...string) error {
	if len(ids) == 0 {
		return nil // an empty ItemIDs would match every point
	}
	if err := idx.Delete(ctx, Filter{Tenant: key.Tenant, ChatIDs: []string{key.ChatID}, ItemIDs: ids}); err != nil {
		return fmt.Errorf("delete items of %s/%s: %w", key.Tenant, key.ChatID, err)
	}
	return nil
}
