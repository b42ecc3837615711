package engine

import (
	"hash/maphash"
	"slices"
	"sync"

	"github.com/contextd/contextd/memory"
)

// markMemo keeps the update marks of retrieved turns: the same turns come
// back query after query against the same updates, and reading each turn
// against every later restatement was 8% of a rag_augmented request's
// CPU. A mark is a pure function of the chat's updates and the turn as
// shown (its seq, role and text), so an entry is keyed by those: the
// updates by their chat, the chat's created_at and dirty mark, and their
// count, first and last seq (a list only grows while those stay, and a
// delete moves the mark). Keys are two independent 64-bit hashes, the
// first the map key, the second checked: a wrong mark would need both
// to collide. Bounded: past markMemoSize entries it starts over.
type markMemo struct {
	mu          sync.Mutex
	seed, check maphash.Seed
	m           map[uint64]markEntry
}

type markEntry struct {
	check  uint64
	update string
	seqs   []int64 // never written after it is stored
}

type markKey struct {
	tenant, chat    string
	created, dirty  int64
	n               int
	first, last, at int64
	role, content   string
}

const markMemoSize = 50_000

func newMarkMemo() *markMemo {
	return &markMemo{seed: maphash.MakeSeed(), check: maphash.MakeSeed(), m: map[uint64]markEntry{}}
}

// mark sets r's update mark as markUpdate(ups, r) does, computing it once
// per turn (the seq it is dated by, its role and text) and version of the
// chat's updates.
func (c *markMemo) mark(chat memory.Chat, ups []chatUpdate, r *RAGTurn) {
	at, ok := markedAt(ups, r)
	if !ok {
		return
	}
	k := markKey{tenant: chat.Tenant, chat: chat.ID, created: chat.CreatedAt.UnixNano(), dirty: chat.DirtyMark,
		n: len(ups), first: ups[0].seq, last: ups[len(ups)-1].seq, at: at, role: r.Role, content: r.Content}
	h, check := maphash.Comparable(c.seed, k), maphash.Comparable(c.check, k)
	c.mu.Lock()
	e, ok := c.m[h]
	c.mu.Unlock()
	if ok && e.check == check {
		r.update = e.update
		r.updateSeqs = append(r.updateSeqs[:0], e.seqs...)
		return
	}
	markUpdate(ups, r)
	e = markEntry{check: check, update: r.update, seqs: slices.Clone(r.updateSeqs)}
	c.mu.Lock()
	if len(c.m) >= markMemoSize {
		c.m = make(map[uint64]markEntry, 1024)
	}
	c.m[h] = e
	c.mu.Unlock()
}
