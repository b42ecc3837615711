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
// without a FactStore there are none. Like turns, the facts of many chats
// are embedded and upserted together (about BatchSize at a time), then
// marked chat by chat: under a stream of appends a chat has a fact or two
// pending at a time.
func (ix *Indexer) drainFacts(ctx context.Context) (int, error) {
	fs := ix.Facts
	if fs == nil {
		return 0, nil
	}
	chats, err := fs.UnindexedFactChats(ctx, chatsPerPass)
	if err != nil {
		return 0, fmt.Errorf("indexer: list fact backlog: %w", err)
	}
	leases, err := ix.takeLeases(ctx, chats)
	if err != nil {
		return 0, err
	}
	defer func() { _ = memory.ReleaseAll(ctx, leases) }()
	var b factBatch
	total := 0
	for i, c := range chats {
		if leases[i] == nil {
			continue
		}
		if err := b.read(ctx, fs, c, ix.BatchSize); err != nil {
			return total, err
		}
		if len(b.points) >= ix.BatchSize {
			n, err := ix.flushFacts(ctx, fs, &b)
			total += n
			if err != nil {
				return total, err
			}
		}
	}
	n, err := ix.flushFacts(ctx, fs, &b)
	return total + n, err
}

// factBatch is the pending facts of several chats, written together.
type factBatch struct {
	points []Point
	texts  []string
	chats  []memory.Chat
	ids    [][]string // by chat: the facts to mark
}

// read adds up to limit pending facts of c (none when it was deleted).
func (b *factBatch) read(ctx context.Context, fs memory.FactStore, c memory.Chat, limit int) error {
	key := c.Key()
	facts, err := fs.UnindexedFacts(ctx, key, limit)
	if errors.Is(err, memory.ErrNotFound) || err == nil && len(facts) == 0 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("indexer: read facts of %s/%s: %w", key.Tenant, key.ChatID, err)
	}
	ids := make([]string, 0, len(facts))
	for _, f := range facts {
		ids = append(ids, f.ID)
		if strings.TrimSpace(f.Text) == "" || len(f.Seqs) == 0 {
			continue // nothing to find it by, or no turn to cite: marked, not indexed
		}
		b.points = append(b.points, FactPoint(c, f))
		b.texts = append(b.texts, FactText(f))
	}
	b.chats, b.ids = append(b.chats, c), append(b.ids, ids)
	return nil
}

// flushFacts embeds and upserts b's facts, then marks them chat by chat,
// and empties b. It returns the facts marked.
func (ix *Indexer) flushFacts(ctx context.Context, fs memory.FactStore, b *factBatch) (int, error) {
	if len(b.chats) == 0 {
		return 0, nil
	}
	batch := *b
	*b = factBatch{}
	name := "facts of " + batch.chats[0].Tenant + "/" + batch.chats[0].ID
	if len(batch.chats) > 1 {
		name += fmt.Sprintf(" and %d more chats", len(batch.chats)-1)
	}
	if err := ix.embedUpsert(ctx, name, batch.points, batch.texts); err != nil {
		return 0, err
	}
	n := 0
	for i, c := range batch.chats {
		key := c.Key()
		if err := ix.marked(ctx, key, fs.MarkFactsIndexed(ctx, key, batch.ids[i])); err != nil {
			return n, fmt.Errorf("indexer: mark facts indexed %s/%s: %w", key.Tenant, key.ChatID, err)
		}
		if err := ix.dropVanishedFacts(ctx, fs, key, batch.ids[i]); err != nil {
			return n, err
		}
		n += len(batch.ids[i])
	}
	return n, nil
}

// dropVanishedFacts takes back out the points of facts deleted while they
// were being embedded (their turn was deleted, or the chat erased and
// created again under its id): a delete after this read sweeps the points
// itself, as they are written by then.
func (ix *Indexer) dropVanishedFacts(ctx context.Context, fs memory.FactStore, key memory.ChatKey, ids []string) error {
	live, err := fs.Facts(ctx, key, memory.FactsByID(ids))
	if errors.Is(err, memory.ErrNotFound) {
		return nil // the chat went: marked cleaned its points up
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
	if err := DeleteItems(ctx, ix.Index, key, gone...); err != nil {
		return fmt.Errorf("indexer: %w: %w", ErrIndexUnavailable, err)
	}
	return nil
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
