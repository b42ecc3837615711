package rag

import (
	"context"
	"fmt"
	"strings"

	"github.com/contextd/contextd/memory"
)

// Facts are indexed beside turns and episodes, in the same namespace, as
// points of Kind memory.KindFact whose identity is (tenant, chat, kind,
// fact id). A superseded fact is indexed too, flagged, so that it stays
// findable while the Retriever ranks the current one first. The indexer
// drains the store's unindexed facts after its episodes, in the one drain
// loop (jobs/index).

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

// EraseTurns takes forgotten turns out of the index: every point of each
// turn (all its passages) and every fact point citing it. The indexer
// calls it for tombstones it finds in the backlog; a forget worker may
// call it directly.
func EraseTurns(ctx context.Context, idx Index, key memory.ChatKey, seqs ...int64) error {
	for _, s := range seqs {
		for _, f := range ForgetFilters(key, s) {
			if err := idx.Delete(ctx, f); err != nil {
				return fmt.Errorf("forget turn %d: %w", s, err)
			}
		}
	}
	return nil
}

// ForgetFilters match the points of a forgotten turn: the turn's (all its
// passages) and the facts' citing it. None for seq 0, which would mean
// "any seq" to a filter.
func ForgetFilters(key memory.ChatKey, seq int64) []Filter {
	if seq <= 0 {
		return nil
	}
	chat := []string{key.ChatID}
	return []Filter{
		{Tenant: key.Tenant, ChatIDs: chat, Kinds: []string{memory.KindTurn}, FromSeq: seq, ToSeq: seq},
		{Tenant: key.Tenant, ChatIDs: chat, Kinds: []string{memory.KindFact}, CitingSeq: seq},
	}
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
