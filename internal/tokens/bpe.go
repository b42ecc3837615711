package tokens

import (
	"hash/maphash"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tiktoken-go/tokenizer"
)

// The codec keeps its vocabulary private, so the rank table is rebuilt once
// from its exported Decode: in cl100k a token's id is its merge rank. Keys
// are substrings of one backing string (a single allocation, ~0.7 MB).

const noRank = math.MaxUint32

var (
	ranksOnce sync.Once
	ranks     *rankMap
)

func rankTable() *rankMap {
	ranksOnce.Do(func() {
		// A private codec: Get returns a fresh instance in ErrorModeNone,
		// so Decode returns each token's raw bytes.
		c, err := tokenizer.Get(tokenizer.Cl100kBase)
		if err != nil {
			panic("tokens: cl100k codec missing: " + err.Error())
		}
		var buf strings.Builder
		ends := make([]int, 0, 100300)
		ids := make([]uint32, 0, 100300)
		// cl100k ranks are dense from 0; stop after a long gap (the
		// special tokens above the ranks are not in the merge table).
		for id, misses := uint(0), 0; misses < 1000; id++ {
			tok, err := c.Decode([]uint{id})
			if err != nil || tok == "" {
				misses++
				continue
			}
			misses = 0
			buf.WriteString(tok)
			ends = append(ends, buf.Len())
			ids = append(ids, uint32(id))
		}
		ranks = newRankMap(buf.String(), ends, ids)
	})
	return ranks
}

// rankMap is the merge table: token bytes to rank, by open addressing over
// the backing string. A slot is one word: the token's offset in all (24
// bits), its length (8 bits) and its rank (32 bits); 0 is empty, as no
// token is empty. 2 MB for cl100k's 100k tokens, where a map[string]uint32
// took ~6 MB of every server's live heap (docs/performance.md, "Ninth
// pass"), and the same hash as Go's maps.
type rankMap struct {
	seed  maphash.Seed
	all   string
	slots []uint64
	mask  uint64
}

// newRankMap indexes the tokens all[ends[k-1]:ends[k]] (ends[-1] = 0) with
// ranks ids[k].
func newRankMap(all string, ends []int, ids []uint32) *rankMap {
	size := 1
	for size < 2*len(ends)+1 { // load under one half: short probes
		size *= 2
	}
	m := &rankMap{seed: maphash.MakeSeed(), all: all, slots: make([]uint64, size), mask: uint64(size - 1)}
	start := 0
	for k, end := range ends {
		if start >= 1<<24 || end-start > 255 {
			panic("tokens: rank table exceeds its slot layout")
		}
		i := m.home(all[start:end])
		for m.slots[i] != 0 {
			i = (i + 1) & m.mask
		}
		m.slots[i] = uint64(start) | uint64(end-start)<<24 | uint64(ids[k])<<32
		start = end
	}
	return m
}

func (m *rankMap) home(s string) uint64 { return maphash.String(m.seed, s) & m.mask }

// get returns s's rank, if s is a token.
func (m *rankMap) get(s string) (uint32, bool) {
	for i := m.home(s); ; i = (i + 1) & m.mask {
		e := m.slots[i]
		if e == 0 {
			return 0, false
		}
		off, n := int(e&(1<<24-1)), int(e>>24&0xff)
		if n == len(s) && m.all[off:off+n] == s {
			return uint32(e >> 32), true
		}
	}
}

// mergeHeapThreshold mirrors the codec: pieces this long (bytes) merge
// with the heap algorithm, shorter ones with the quadratic scan. Both give
// the same parts; mirroring the choice keeps equality unconditional.
const mergeHeapThreshold = 96

// pieceParts returns the token boundaries (byte offsets, starting with 0 and
// ending with len(piece)) that byte-pair encoding splits piece into.
// buf is reused when large enough.
func pieceParts(rank *rankMap, piece string, buf []int) []int {
	if len(piece) < mergeHeapThreshold {
		return mergeScan(rank, piece, buf)
	}
	return mergeHeap(rank, piece, buf)
}

type part struct {
	off  int32
	rank uint32
}

// mergeScan is the codec's mergePairsScan: repeatedly merge the leftmost
// pair with the lowest rank.
func mergeScan(rank *rankMap, piece string, buf []int) []int {
	var stack [mergeHeapThreshold + 1]part
	parts := stack[:0]
	if len(piece)+1 > len(stack) {
		parts = make([]part, 0, len(piece)+1)
	}
	for i := 0; i <= len(piece); i++ {
		parts = append(parts, part{int32(i), noRank})
	}
	getRank := func(index, skip int) uint32 {
		if index+skip+2 < len(parts) {
			if r, ok := rank.get(piece[parts[index].off:parts[index+skip+2].off]); ok {
				return r
			}
		}
		return noRank
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i].rank = getRank(i, 0)
	}
	for len(parts) > 1 {
		minRank, minIndex := uint32(noRank), 0
		for i, p := range parts[:len(parts)-1] {
			if p.rank < minRank {
				minRank, minIndex = p.rank, i
			}
		}
		if minRank == noRank {
			break
		}
		parts[minIndex].rank = getRank(minIndex, 1)
		if minIndex > 0 {
			parts[minIndex-1].rank = getRank(minIndex-1, 1)
		}
		parts = append(parts[:minIndex+1], parts[minIndex+2:]...)
	}
	out := buf[:0]
	for _, p := range parts {
		out = append(out, int(p.off))
	}
	return out
}

type mergeNode struct {
	prev, next int32
	rank       uint32
}

type mergeCandidate struct {
	rank   uint32
	offset int32
}

// mergeHeap is the codec's mergePairsHeap: the same merges in O(n log n),
// ties broken by the leftmost offset.
func mergeHeap(rank *rankMap, piece string, buf []int) []int {
	n := int32(len(piece))
	nodes := make([]mergeNode, n+1)
	for i := range nodes {
		nodes[i] = mergeNode{prev: int32(i) - 1, next: int32(i) + 1, rank: noRank}
	}
	nodes[n].next = -1
	rankOf := func(i int32) uint32 {
		j := nodes[i].next
		if j < 0 {
			return noRank
		}
		k := nodes[j].next
		if k < 0 {
			return noRank
		}
		if r, ok := rank.get(piece[i:k]); ok {
			return r
		}
		return noRank
	}
	h := make(candHeap, 0, n)
	for i := int32(0); i+2 <= n; i++ {
		if r := rankOf(i); r != noRank {
			nodes[i].rank = r
			h = append(h, mergeCandidate{r, i})
		}
	}
	h.init()
	for len(h) > 0 {
		top := h.pop()
		i := top.offset
		if nodes[i].rank != top.rank {
			continue
		}
		j := nodes[i].next
		k := nodes[j].next
		nodes[j].rank = noRank
		nodes[i].next = k
		if k >= 0 {
			nodes[k].prev = i
		}
		for _, b := range [2]int32{i, nodes[i].prev} {
			if b < 0 {
				continue
			}
			nodes[b].rank = rankOf(b)
			if nodes[b].rank != noRank {
				h.push(mergeCandidate{nodes[b].rank, b})
			}
		}
	}
	out := buf[:0]
	for i := int32(0); i >= 0; i = nodes[i].next {
		out = append(out, int(i))
	}
	return out
}

type candHeap []mergeCandidate

func (h candHeap) less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].offset < h[b].offset
}

func (h candHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *candHeap) push(c mergeCandidate) {
	*h = append(*h, c)
	h.up(len(*h) - 1)
}

func (h *candHeap) pop() mergeCandidate {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	h.down(0)
	return top
}

func (h candHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			return
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (h candHeap) down(i int) {
	for {
		child := 2*i + 1
		if child >= len(h) {
			return
		}
		if right := child + 1; right < len(h) && h.less(right, child) {
			child = right
		}
		if !h.less(child, i) {
			return
		}
		h[i], h[child] = h[child], h[i]
		i = child
	}
}

// pieceCache remembers the token count of multi-token pieces (single-token
// pieces are one rank lookup already). It is direct-mapped and lock-free:
// each slot holds an immutable entry behind an atomic pointer, a colliding
// insert simply replaces the slot, and a hit compares the full key, so a
// collision can only cost a recount, never a wrong count. Memory is bounded
// by slots × (entry + pieceCacheMaxKey).
type pieceCache struct {
	seed  maphash.Seed
	slots []atomic.Pointer[pieceEntry]
}

type pieceEntry struct {
	key string
	n   int
}

const (
	pieceCacheSlots  = 1 << 15
	pieceCacheMaxKey = 64
)

func newPieceCache() *pieceCache {
	return &pieceCache{seed: maphash.MakeSeed(), slots: make([]atomic.Pointer[pieceEntry], pieceCacheSlots)}
}

func (c *pieceCache) slot(p string) *atomic.Pointer[pieceEntry] {
	return &c.slots[maphash.String(c.seed, p)&(pieceCacheSlots-1)]
}

// shortCache is a small direct-mapped cache in front of everything else for
// pieces of at most 7 bytes (most English words with their leading space).
// A slot is one atomic word: the piece's bytes (56 bits), its length (3
// bits) and its token count (5 bits; a 7-byte piece has at most 7 tokens),
// so readers can never see a torn entry, and a hit compares the whole
// piece. 2^15 slots = 256 KB, small enough to stay in cache, unlike the
// 100k-entry rank map.
type shortCache struct {
	slots []atomic.Uint64
}

const (
	shortCacheBits = 15
	shortMaxLen    = 7
	shortKeyMask   = 1<<59 - 1
)

func newShortCache() *shortCache {
	return &shortCache{slots: make([]atomic.Uint64, 1<<shortCacheBits)}
}

// shortKey packs p (1..7 bytes) with its length; never 0.
func shortKey(p string) uint64 {
	k := uint64(len(p)) << 56
	for i := 0; i < len(p); i++ {
		k |= uint64(p[i]) << (8 * i)
	}
	return k
}

func (c *shortCache) slot(k uint64) *atomic.Uint64 {
	return &c.slots[(k*0x9E3779B97F4A7C15)>>(64-shortCacheBits)]
}

func (c *shortCache) get(k uint64) (int, bool) {
	w := c.slot(k).Load()
	if w&shortKeyMask != k {
		return 0, false
	}
	return int(w >> 59), true
}

func (c *shortCache) put(k uint64, n int) {
	c.slot(k).Store(k | uint64(n)<<59)
}
