package rag

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/contextd/contextd/internal/background"
	"github.com/contextd/contextd/internal/tracing"
	"github.com/contextd/contextd/memory"
)

// The turn backlog is drained chat by chat, each under its lease, but
// written many chats at a time: the pending turns of several chats, about
// BatchSize in all, are embedded in one call, upserted in one write and
// marked in one write. Under a stream of appends a chat has a turn or two
// pending at a time, and a write per chat spent most of the indexer's time
// on commits (docs/performance.md, "Sixth pass").

// pendingChat is one chat's share of a batch: its pending turns, read
// under its lease, which is kept until the chat leaves the batch.
type pendingChat struct {
	chat  memory.Chat
	lease *memory.HeldLease
	work  context.Context // cancelled, cause memory.ErrLeaseLost, if the lease is lost
	stop  func()
	msgs  []memory.Message
}

// turnBatch is the chats whose pending turns are written together.
type turnBatch struct {
	chats []pendingChat
	turns int
}

// drainTurns indexes the turn backlog and returns how many turns it
// indexed. Chats leased by another owner, and chats emptied meanwhile, are
// skipped for the rest of the drain.
func (ix *Indexer) drainTurns(ctx context.Context) (total int, err error) {
	var b turnBatch
	defer func() { releaseAll(ctx, b.chats) }()
	skipped := map[memory.ChatKey]bool{}
	for {
		chats, err := ix.Store.UnindexedChats(ctx, chatsPerPass+len(skipped))
		if err != nil {
			err = fmt.Errorf("indexer: list backlog: %w", err)
			ix.setErr(err)
			return total, err
		}
		before := total
		chats = slices.DeleteFunc(chats, func(c memory.Chat) bool { return skipped[c.Key()] })
		leases, err := ix.takeLeases(ctx, chats)
		if err != nil {
			ix.setErr(err)
			return total, err
		}
		for i, c := range chats {
			if leases[i] == nil {
				skipped[c.Key()] = true
				continue
			}
			added, err := ix.addChat(ctx, &b, c, leases[i])
			leases[i] = nil // b holds it, or addChat gave it back
			if err == nil && !added {
				skipped[c.Key()] = true
			}
			for err == nil && b.turns >= ix.BatchSize {
				background.Yield()
				var n int
				n, err = ix.flushTurns(ctx, &b)
				total += n
			}
			if err != nil {
				_ = memory.ReleaseAll(ctx, leases) // those not reached
				ix.setErr(err)
				return total, err
			}
		}
		for len(b.chats) > 0 {
			n, err := ix.flushTurns(ctx, &b)
			total += n
			if err != nil {
				ix.setErr(err)
				return total, err
			}
		}
		if total == before {
			ix.setErr(nil)
			return total, nil
		}
	}
}

// addChat adds c's pending turns to b under its lease; false when
// nothing is pending (emptied or deleted meanwhile), the lease then given
// back.
func (ix *Indexer) addChat(ctx context.Context, b *turnBatch, c memory.Chat, lease *memory.HeldLease) (bool, error) {
	work, stop := lease.Keep(ctx)
	return ix.refill(ctx, b, pendingChat{chat: c, lease: lease, work: work, stop: stop})
}

// refill reads p's next pending turns into b, under p's lease; when there
// are none (or the lease is lost) it releases the lease instead.
func (ix *Indexer) refill(ctx context.Context, b *turnBatch, p pendingChat) (bool, error) {
	key := p.chat.Key()
	msgs, err := ix.Store.UnindexedMessages(p.work, key, ix.BatchSize)
	if err == nil && len(msgs) > 0 {
		p.msgs = msgs
		b.chats = append(b.chats, p)
		b.turns += len(msgs)
		return true, nil
	}
	p.release(ctx)
	if err == nil || errors.Is(err, memory.ErrNotFound) || errors.Is(context.Cause(p.work), memory.ErrLeaseLost) {
		return false, nil // emptied, deleted, or taken over meanwhile
	}
	return false, fmt.Errorf("indexer: read backlog of %s/%s: %w", key.Tenant, key.ChatID, err)
}

// release stops keeping p's lease and gives it back.
func (p pendingChat) release(ctx context.Context) {
	p.stop()
	_ = p.lease.Release(ctx)
}

// releaseAll gives back the chats' leases in one write.
func releaseAll(ctx context.Context, chats []pendingChat) {
	held := make([]*memory.HeldLease, len(chats))
	for i, p := range chats {
		p.stop()
		held[i] = p.lease
	}
	_ = memory.ReleaseAll(ctx, held)
}

// flushTurns writes b: tombstoned turns' points are deleted, live turns
// embedded (a long one passage by passage) and upserted, then every chat
// whose lease is still held is marked. A chat that read a full batch may
// have more pending: it is read again into the emptied b, under the same
// lease; the others are released. It returns the turns marked.
func (ix *Indexer) flushTurns(ctx context.Context, b *turnBatch) (int, error) {
	chats, turns := b.chats, b.turns
	*b = turnBatch{}
	sctx, span := ix.batchSpan(ctx, chats, turns)
	err := ix.writeTurns(sctx, chats)
	tracing.End(span, err)
	if err != nil {
		releaseAll(ctx, chats)
		return 0, err
	}
	n, err := ix.markTurns(ctx, chats)
	if err != nil {
		releaseAll(ctx, chats)
		return 0, err
	}
	var done []pendingChat // released together
	defer func() { releaseAll(ctx, done) }()
	for i, p := range chats {
		if len(p.msgs) < ix.BatchSize || p.work.Err() != nil {
			done = append(done, p)
			continue
		}
		if _, err := ix.refill(ctx, b, p); err != nil { // p is released
			done = append(done, chats[i+1:]...)
			return n, err
		}
	}
	return n, nil
}

// writeTurns takes the chats' tombstoned turns out of the index and
// embeds and upserts their live ones.
func (ix *Indexer) writeTurns(ctx context.Context, chats []pendingChat) error {
	var points []Point
	for _, p := range chats {
		key := p.chat.Key()
		var forgotten []int64
		for _, m := range p.msgs {
			if m.Deleted {
				forgotten = append(forgotten, m.Seq)
				continue
			}
			points = append(points, TurnPoints(p.chat, m, ix.PassageTokens)...)
		}
		if err := ForgetTurns(ctx, ix.Index, key, forgotten...); err != nil {
			return fmt.Errorf("indexer: forget turns of %s/%s: %w: %w", key.Tenant, key.ChatID, ErrIndexUnavailable, err)
		}
	}
	texts := make([]string, len(points))
	for i, p := range points {
		texts[i] = p.Content
	}
	return ix.embedUpsert(ctx, batchName(chats), points, texts)
}

// markTurns marks the turns of the chats whose lease is still held, and
// takes the points of chats deleted meanwhile (or erased and created again
// under their id) back out of the index: the API deletes a chat's rows,
// then its points, so a delete may have raced with the upsert.
func (ix *Indexer) markTurns(ctx context.Context, chats []pendingChat) (int, error) {
	marks := make([]memory.IndexMark, 0, len(chats))
	n := 0
	for _, p := range chats {
		if p.work.Err() != nil {
			continue // the lease was lost: its new owner marks them
		}
		// Live turns and tombstones apart: a turn deleted while its points
		// were being written stays in the backlog (its points come out on
		// the next read); Created tells the chat from one created again
		// under its id meanwhile.
		mark := memory.IndexMark{Chat: p.chat.Key(), Created: p.chat.CreatedAt}
		for _, m := range p.msgs {
			if m.Deleted {
				mark.Forgotten = append(mark.Forgotten, m.Seq)
			} else {
				mark.Seqs = append(mark.Seqs, m.Seq)
			}
		}
		marks = append(marks, mark)
		n += len(p.msgs)
	}
	if len(marks) == 0 {
		return 0, nil
	}
	gone, err := ix.Store.MarkIndexed(ctx, marks)
	if err != nil {
		return 0, fmt.Errorf("indexer: mark indexed %s: %w", batchName(chats), err)
	}
	for _, key := range gone {
		if err := ix.Index.Delete(ctx, Filter{Tenant: key.Tenant, ChatIDs: []string{key.ChatID}}); err != nil {
			return 0, fmt.Errorf("indexer: clean up deleted chat %s/%s: %w: %w", key.Tenant, key.ChatID, ErrIndexUnavailable, err)
		}
		for _, p := range chats {
			if p.chat.Key() == key {
				n -= len(p.msgs)
			}
		}
	}
	return n, nil
}

// batchName names a batch's chats in errors: "turns of t/c" for one chat,
// "turns of t/c and 4 more chats" for several.
func batchName(chats []pendingChat) string {
	name := "turns of " + chats[0].chat.Tenant + "/" + chats[0].chat.ID
	if len(chats) > 1 {
		name += fmt.Sprintf(" and %d more chats", len(chats)-1)
	}
	return name
}
