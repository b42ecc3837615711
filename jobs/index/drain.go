package index

import (
	"context"
	"errors"
	"fmt"

	"github.com/contextd/contextd/internal/background"
	"github.com/contextd/contextd/internal/tracing"
	"github.com/contextd/contextd/memory"
	"github.com/contextd/contextd/rag"
)

// One drain loop serves every kind of indexed memory (kinds.go): it
// lists the kind's pending chats (memory.Backlogs), takes their index
// leases in one write, reads each chat's pending items under its lease
// and maps them to points (the kind's reader), and writes many chats at a
// time: the pending items of several chats, about BatchSize in all, have
// their stale points deleted, are embedded in one call, upserted in one
// write, read back where the kind asks it, and marked done in one write.
// Under a stream of appends a chat has an item or two pending at a time,
// and a write per chat spent most of the indexer's time on commits
// (docs/performance.md, "Sixth pass"). If the embedder or the index fails
// nothing is marked: the items stay in the backlog.

// share is one chat's share of a batch: its pending items of the kind,
// read under its lease (kept until the chat leaves the batch) and mapped.
type share struct {
	chat  memory.Chat
	lease *memory.HeldLease
	work  context.Context // cancelled, cause memory.ErrLeaseLost, if the lease is lost
	stop  func()
	mapped
}

// mapped is what a kind's reader makes of a chat's pending items.
type mapped struct {
	// read counts the items read: a read of BatchSize may leave more.
	read int
	// drop are points to delete before the upsert (a forgotten turn's, an
	// episode's about to be rebuilt).
	drop []rag.Filter
	// points are embedded from texts (one each) and upserted.
	points []rag.Point
	texts  []string
	// mark is what Done records once the points are written.
	mark memory.Mark
}

// batch is the chats whose pending items are written together.
type batch struct {
	shares []share
	items  int
}

// drain indexes the kind's backlog and returns how many items it marked.
// Chats leased by another owner, and chats emptied meanwhile, are skipped
// for the rest of the drain. A listing's chats are leased in one write,
// and given back in one once the listing's items are written: under a
// trickle of appends a pass finds one item in each of many chats, and a
// write per lease was most of its cost.
func (ix *Indexer) drain(ctx context.Context, src *indexKind) (total int, err error) {
	var b batch
	var done []share // written, their leases given back with the round's
	defer func() { releaseAll(ctx, append(done, b.shares...)) }()
	skipped := map[memory.ChatKey]bool{}
	for {
		pending, err := ix.Store.Pending(ctx, src.kind, chatsPerPass+len(skipped))
		if err != nil {
			return total, fmt.Errorf("indexer: list %s backlog: %w", src.what, err)
		}
		before := total
		chats := make([]memory.Chat, 0, len(pending))
		for _, p := range pending {
			if !skipped[p.Chat.Key()] {
				chats = append(chats, p.Chat)
			}
		}
		leases, err := ix.takeLeases(ctx, chats)
		if err != nil {
			return total, err
		}
		for i, c := range chats {
			n, err := ix.addChat(ctx, src, &b, &done, c, leases[i], skipped)
			leases[i] = nil // b or done holds it
			total += n
			if err != nil {
				_ = memory.ReleaseAll(ctx, leases) // those not reached
				return total, err
			}
		}
		for len(b.shares) > 0 {
			n, err := ix.flush(ctx, src, &b, &done)
			total += n
			if err != nil {
				return total, err
			}
		}
		releaseAll(ctx, done)
		done = nil
		if total == before {
			return total, nil
		}
	}
}

// addChat adds c's pending items to b under its lease (nil: another owner
// holds it, c is skipped), and flushes b while it holds BatchSize items.
// It returns the items marked.
func (ix *Indexer) addChat(ctx context.Context, src *indexKind, b *batch, done *[]share, c memory.Chat, lease *memory.HeldLease, skipped map[memory.ChatKey]bool) (int, error) {
	if lease == nil {
		skipped[c.Key()] = true
		return 0, nil
	}
	work, stop := lease.Keep(ctx)
	added, err := ix.refill(ctx, src, b, done, share{chat: c, lease: lease, work: work, stop: stop})
	if err == nil && !added {
		skipped[c.Key()] = true
	}
	total := 0
	for err == nil && b.items >= ix.BatchSize {
		background.Yield()
		var n int
		n, err = ix.flush(ctx, src, b, done)
		total += n
	}
	return total, err
}

// refill reads p's next pending items into b, under p's lease; when there
// are none (or the lease is lost) it stops keeping the lease and adds p to
// done instead.
func (ix *Indexer) refill(ctx context.Context, src *indexKind, b *batch, done *[]share, p share) (bool, error) {
	m, err := src.read(p.work, ix, p.chat)
	if err == nil && m.read > 0 {
		p.mapped = m
		b.shares = append(b.shares, p)
		b.items += m.read
		return true, nil
	}
	p.stop()
	*done = append(*done, p)
	if err == nil || errors.Is(err, memory.ErrNotFound) || errors.Is(context.Cause(p.work), memory.ErrLeaseLost) {
		return false, nil // emptied, deleted, or taken over meanwhile
	}
	key := p.chat.Key()
	return false, fmt.Errorf("indexer: read %s of %s/%s: %w", src.what, key.Tenant, key.ChatID, err)
}

// releaseAll gives back the shares' leases in one write.
func releaseAll(ctx context.Context, shares []share) {
	held := make([]*memory.HeldLease, len(shares))
	for i, p := range shares {
		p.stop()
		held[i] = p.lease
	}
	_ = memory.ReleaseAll(ctx, held)
}

// flush writes b (stale points deleted, new ones embedded and upserted,
// read back where the kind asks it), then marks every chat whose lease is
// still held. A chat that read a full batch may have more pending: it is
// read again into the emptied b, under the same lease; the others go to
// done. It returns the items marked.
func (ix *Indexer) flush(ctx context.Context, src *indexKind, b *batch, done *[]share) (int, error) {
	shares, items := b.shares, b.items
	*b = batch{}
	sctx, span := ix.batchSpan(ctx, src, shares, items)
	err := ix.write(sctx, src, shares)
	tracing.End(span, err)
	if err != nil {
		*done = append(*done, shares...)
		return 0, err
	}
	n, err := ix.mark(ctx, src, shares)
	if err != nil {
		*done = append(*done, shares...)
		return 0, err
	}
	for i, p := range shares {
		if p.read < ix.BatchSize || p.work.Err() != nil {
			p.stop()
			*done = append(*done, p)
			continue
		}
		if _, err := ix.refill(ctx, src, b, done, p); err != nil { // p is in done
			*done = append(*done, shares[i+1:]...)
			return n, err
		}
	}
	return n, nil
}

// write deletes the shares' stale points, embeds and upserts their new
// ones, and reads back what the kind checks (src.recheck).
func (ix *Indexer) write(ctx context.Context, src *indexKind, shares []share) error {
	var (
		points []rag.Point
		texts  []string
	)
	for _, p := range shares {
		for _, f := range p.drop {
			if err := ix.Index.Delete(ctx, f); err != nil {
				return fmt.Errorf("indexer: delete stale points of %s/%s: %w: %w", p.chat.Tenant, p.chat.ID, rag.ErrIndexUnavailable, err)
			}
		}
		points, texts = append(points, p.points...), append(texts, p.texts...)
	}
	if err := ix.embedUpsert(ctx, batchName(src, shares), points, texts); err != nil {
		return err
	}
	if src.recheck == nil {
		return nil
	}
	for i := range shares {
		if err := src.recheck(ctx, ix, &shares[i]); err != nil {
			return err
		}
	}
	return nil
}

// mark marks the items of the shares whose lease is still held, and takes
// the points of chats deleted meanwhile (or, for turns, erased and
// created again under their id) back out of the index: the API deletes a
// chat's rows, then its points, so a delete may have raced with the
// upsert. It returns the items marked.
func (ix *Indexer) mark(ctx context.Context, src *indexKind, shares []share) (int, error) {
	marks := make([]memory.Mark, 0, len(shares))
	n := 0
	for _, p := range shares {
		if p.work.Err() != nil {
			continue // the lease was lost: its new owner marks them
		}
		marks = append(marks, p.mark)
		n += p.read
	}
	if len(marks) == 0 {
		return 0, nil
	}
	gone, err := ix.Store.Done(ctx, src.kind, marks)
	if err != nil {
		return 0, fmt.Errorf("indexer: mark %s: %w", batchName(src, shares), err)
	}
	for _, key := range gone {
		if err := ix.Index.Delete(ctx, rag.Filter{Tenant: key.Tenant, ChatIDs: []string{key.ChatID}}); err != nil {
			return 0, fmt.Errorf("indexer: clean up deleted chat %s/%s: %w: %w", key.Tenant, key.ChatID, rag.ErrIndexUnavailable, err)
		}
		for _, p := range shares {
			if p.chat.Key() == key {
				n -= p.read
			}
		}
	}
	return n, nil
}

// embedUpsert embeds texts into points' vectors and upserts the points;
// what names them in errors ("turns of t/c").
func (ix *Indexer) embedUpsert(ctx context.Context, what string, points []rag.Point, texts []string) error {
	if len(points) == 0 {
		return nil
	}
	vecs, err := ix.Embedder.EmbedDocuments(ctx, texts)
	if err != nil {
		return fmt.Errorf("indexer: embed %s: %w", what, rag.AsEmbedderError(err))
	}
	if len(vecs) != len(points) {
		return fmt.Errorf("indexer: embed %s: %w: %d vectors for %d texts", what, rag.ErrEmbedder, len(vecs), len(points))
	}
	for i, p := range points {
		points[i].Dense = vecs[i]
		if (p.Kind == "" || p.Kind == memory.KindTurn) && !p.IsWhole() {
			points[i].Sparse = ix.Sparse.EncodePassage(texts[i]) // measured against passages, not turns
		} else {
			points[i].Sparse = ix.Sparse.EncodeDocument(texts[i])
		}
	}
	if err := ix.Index.Upsert(ctx, points); err != nil {
		return fmt.Errorf("indexer: upsert %s: %w: %w", what, rag.ErrIndexUnavailable, err)
	}
	return nil
}

// takeLeases takes the index leases of chats in one write: nil where
// another owner holds one or the chat is gone. Under a trickle of appends
// a pass finds one item in each of many chats, and a write per lease was
// most of its cost.
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

// batchName names a batch's chats in errors: "turns of t/c" for one chat,
// "turns of t/c and 4 more chats" for several.
func batchName(src *indexKind, shares []share) string {
	name := src.what + " of " + shares[0].chat.Tenant + "/" + shares[0].chat.ID
	if len(shares) > 1 {
		name += fmt.Sprintf(" and %d more chats", len(shares)-1)
	}
	return name
}
