package engine

import (
	"cmp"
	"context"
	"slices"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/contextd/contextd/memory"
)

// turnCache keeps hot chats' turns in RAM: the recent window every
// context shows, and the turns around retrieved hits (their neighbours),
// so that a context does not read the same turns from the store on every
// call.
//
// Stored turns never change except by deletion, which moves the chat's
// DirtyMark (a chat's marks never repeat); a chat erased and re-created
// has another created_at. An entry is therefore served only to a caller
// whose chat row — read by every request anyway — has the created_at and
// the DirtyMark the entry was read under, and only up to that row's
// last_seq. So appends (new turns are read and added), erasure and
// deletions, here or by another process or replica, are all seen, on
// SQLite and on Postgres alike.
//
// An entry holds a chat's turns sorted by seq, not necessarily
// contiguous. It is never changed once published (a reader may hold its
// slice): adding turns publishes a new one. The cache is bounded by bytes
// (its turns' strings and structs), least recently used chat first; one
// chat holds at most half of it (chatShare), its newest turns kept.
type turnCache struct {
	mu       sync.Mutex
	maxBytes int
	bytes    int
	entries  map[memory.ChatKey]*turnEntry
	clock    uint64
}

type turnEntry struct {
	created time.Time
	mark    int64
	msgs    []memory.Message // sorted by seq, unique
	bytes   int
	used    uint64
}

// defaultTurnCacheBytes holds the recent windows and the neighbours of a
// few thousand hot chats (the cache it replaces held 64 turns of each of
// 2,048 chats, ~6 MB at 1,000 chats × 200 turns).
const defaultTurnCacheBytes = 8 << 20

// chatShare: one chat holds at most 1/chatShare of the cache, so that a
// hot chat's turns never take the room of every other hot chat's. Half,
// not less: a chat an agent keeps talking to asks for the neighbours of
// hits anywhere in its history, and with an eighth (1 MB) a 2,000-turn
// chat of long turns read them from the store on every request, a sixth
// of its context's CPU (docs/performance.md, "Twenty-third pass").
const chatShare = 2

// maxCachedWindow: longer windows are read from the store, not cached.
const maxCachedWindow = 64

func newTurnCache(maxBytes int) *turnCache {
	return &turnCache{maxBytes: maxBytes, entries: map[memory.ChatKey]*turnEntry{}}
}

// messageBytes is what one cached turn costs.
func messageBytes(m memory.Message) int {
	return int(unsafe.Sizeof(m)) + len(m.ID) + len(m.Name) + len(m.Content)
}

// window returns the chat's turns from..chat.LastSeq, from the cache where
// it holds them, else from the store (reading only the turns after the
// cached run that starts at from).
func (c *turnCache) window(ctx context.Context, st memory.ChatReader, chat memory.Chat, from int64) ([]memory.Message, error) {
	last := chat.LastSeq
	if last-from+1 > maxCachedWindow {
		// A long backlog the summary has not covered yet, or the verbatim
		// tail of a large budget: cached as a span (one chat holds at most
		// its share of the cache, its newest turns), so a hot chat's
		// requests do not read it again each time.
		return c.span(ctx, st, chat, from, last)
	}
	held := c.held(chat)
	i, _ := slices.BinarySearchFunc(held, from, cmpSeq)
	run := contiguous(held[i:], from, last)
	if int64(len(run)) == last-from+1 {
		return run[:len(run):len(run)], nil
	}
	have := from - 1 + int64(len(run))
	tail, err := st.Messages(ctx, chat.Key(), have, int(last-have))
	if err != nil {
		return nil, err
	}
	c.add(chat, tail)
	return append(append(make([]memory.Message, 0, len(run)+len(tail)), run...), tail...), nil
}

// span returns the chat's turns from..to (to <= chat.LastSeq), from the
// cache where it holds them as one run, else from the store (and then
// cached): the older turns the verbatim tail extends over are the same on
// every request of a hot chat, and reading them each time was most of a
// context's CPU.
func (c *turnCache) span(ctx context.Context, st memory.ChatReader, chat memory.Chat, from, to int64) ([]memory.Message, error) {
	if to < from {
		return nil, nil
	}
	held := c.held(chat)
	i, _ := slices.BinarySearchFunc(held, from, cmpSeq)
	if run := contiguous(held[i:], from, to); int64(len(run)) == to-from+1 {
		return run[:len(run):len(run)], nil
	}
	msgs, err := st.Messages(ctx, chat.Key(), from-1, int(to-from+1))
	if err != nil {
		return nil, err
	}
	c.add(chat, msgs)
	return msgs, nil
}

// contiguous is the prefix of msgs (sorted by seq) that holds from, from+1,
// ... without a gap, up to last.
func contiguous(msgs []memory.Message, from, last int64) []memory.Message {
	if len(msgs) == 0 || msgs[0].Seq != from {
		return nil
	}
	// Sorted unique seqs: msgs[j].Seq - j only grows, and equals from for
	// exactly the run.
	n := sort.Search(len(msgs), func(j int) bool { return msgs[j].Seq-int64(j) != from || msgs[j].Seq > last })
	return msgs[:n]
}

// bySeq returns the chat's turns among seqs that exist (in seq order), from
// the cache where it holds them, else from the store. Seqs after the
// caller's last_seq are not looked for.
func (c *turnCache) bySeq(ctx context.Context, st memory.ChatReader, chat memory.Chat, seqs []int64) ([]memory.Message, error) {
	held := c.held(chat)
	out := make([]memory.Message, 0, len(seqs))
	var missing []int64
	for _, s := range seqs {
		if i, ok := slices.BinarySearchFunc(held, s, cmpSeq); ok {
			out = append(out, held[i])
		} else if s >= 1 && s <= chat.LastSeq {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		read, err := st.MessagesBySeq(ctx, chat.Key(), slices.Compact(missing))
		if err != nil {
			return nil, err
		}
		c.add(chat, read)
		out = append(out, read...)
	}
	slices.SortFunc(out, func(a, b memory.Message) int { return cmp.Compare(a.Seq, b.Seq) })
	return slices.CompactFunc(out, func(a, b memory.Message) bool { return a.Seq == b.Seq }), nil
}

func cmpSeq(m memory.Message, seq int64) int { return cmp.Compare(m.Seq, seq) }

// held is the chat's cached turns, if the entry was read under the same
// chat row (created_at and DirtyMark), up to the row's last_seq.
func (c *turnCache) held(chat memory.Chat) []memory.Message {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[chat.Key()]
	if e == nil || !e.created.Equal(chat.CreatedAt) || e.mark != chat.DirtyMark {
		return nil
	}
	c.clock++
	e.used = c.clock
	n, _ := slices.BinarySearchFunc(e.msgs, chat.LastSeq+1, cmpSeq)
	return e.msgs[:n]
}

// add merges msgs (sorted by seq) into the chat's entry, or starts a new
// one when the entry was read under another chat row.
func (c *turnCache) add(chat memory.Chat, msgs []memory.Message) {
	if c == nil || len(msgs) == 0 {
		return
	}
	key := chat.Key()
	c.mu.Lock()
	defer c.mu.Unlock()
	var base []memory.Message
	old := c.entries[key]
	if old != nil {
		c.bytes -= old.bytes
		if old.created.Equal(chat.CreatedAt) && old.mark == chat.DirtyMark {
			base = old.msgs
		}
	}
	merged, bytes := c.trim(mergeBySeq(base, msgs))
	c.clock++
	c.entries[key] = &turnEntry{created: chat.CreatedAt, mark: chat.DirtyMark, msgs: merged, bytes: bytes, used: c.clock}
	c.bytes += bytes
	if c.bytes > c.maxBytes {
		c.evict()
	}
}

// trim keeps the newest turns that fit one chat's share of the cache.
func (c *turnCache) trim(msgs []memory.Message) ([]memory.Message, int) {
	bytes, i := 0, len(msgs)
	for i > 0 && bytes+messageBytes(msgs[i-1]) <= c.maxBytes/chatShare {
		i--
		bytes += messageBytes(msgs[i])
	}
	return msgs[i:], bytes
}

// mergeBySeq is a new slice of a's and b's turns sorted by seq, b's
// winning a tie.
func mergeBySeq(a, b []memory.Message) []memory.Message {
	out := make([]memory.Message, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || (len(a) > 0 && a[0].Seq < b[0].Seq):
			out, a = append(out, a[0]), a[1:]
		default:
			if len(a) > 0 && a[0].Seq == b[0].Seq {
				a = a[1:]
			}
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}

// drop forgets the chat's cached turns (one was deleted here: other
// processes see the new DirtyMark).
func (c *turnCache) drop(key memory.ChatKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[key]; e != nil {
		c.bytes -= e.bytes
		delete(c.entries, key)
	}
}

// evict drops the least recently used quarter of the chats (amortised
// O(1) per add), and more until the bytes fit.
func (c *turnCache) evict() {
	for c.bytes > c.maxBytes && len(c.entries) > 0 {
		var used []uint64
		for _, e := range c.entries {
			used = append(used, e.used)
		}
		cut := nth(used, len(used)/4)
		for k, e := range c.entries {
			if e.used <= cut {
				c.bytes -= e.bytes
				delete(c.entries, k)
			}
		}
	}
}

// nth is the n-th smallest value (n from 0).
func nth(xs []uint64, n int) uint64 {
	lo, hi := uint64(0), ^uint64(0)
	for lo < hi {
		mid := lo + (hi-lo)/2
		k := 0
		for _, x := range xs {
			if x <= mid {
				k++
			}
		}
		if k > n {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// chatTurns reads one request's neighbours: its own chat's through the
// cache (checked against the chat row the request read), other chats'
// (wider scopes) from the store.
type chatTurns struct {
	cache *turnCache
	store memory.ChatReader
	chat  memory.Chat
}

func (t chatTurns) MessagesBySeq(ctx context.Context, key memory.ChatKey, seqs []int64) ([]memory.Message, error) {
	if key != t.chat.Key() {
		return t.store.MessagesBySeq(ctx, key, seqs)
	}
	return t.cache.bySeq(ctx, t.store, t.chat, seqs)
}
