// Package tokens counts cl100k tokens offline (the BPE tables are compiled
// into the binary; nothing is downloaded at run time).
//
// Counts equal github.com/tiktoken-go/tokenizer's cl100k Count for every
// input. The codec's regexp pre-tokenizer is slow (~5 MB/s), so the split
// is done by a hand-written scanner (split.go) and each piece is merged
// with the codec's byte-pair algorithm over its own ranks (bpe.go); pieces
// and whole strings are memoised.
package tokens

import (
	"hash/maphash"
	"strings"
	"sync"
	"unicode/utf8"
)

// counter holds the rank table and the two memos.
type counter struct {
	rank   *rankMap
	short  *shortCache
	pieces *pieceCache
	whole  *memo
}

func newCounter() *counter {
	return &counter{rank: rankTable(), short: newShortCache(), pieces: newPieceCache(), whole: newMemo()}
}

var (
	stdOnce sync.Once
	std     *counter
)

func get() *counter {
	stdOnce.Do(func() { std = newCounter() })
	return std
}

// memo remembers recent whole-string counts. Counting is a pure function and
// the same turns are counted on every /v1/context call of a chat, so a small
// two-generation cache (an LRU approximation without per-hit bookkeeping)
// skips even the scan for them. A generation rotates at max entries.
//
// It is split in shards by a hash of the string computed before any lock is
// taken, and each shard is keyed by that hash: with one lock and string
// keys, every request and the background summariser hashed kilobytes of
// text while holding it, and under load the lock was the read path's
// largest wait (16 s blocked in 9 s of a churn run's block profile).
//
// A hit is checked by a second, independent 64-bit hash of the string, not
// by the string: keeping the strings to compare took 8–9 MB of a
// 1,000-chat server's live heap (docs/performance.md, "Thirty-second
// pass"), and two strings agree on both hashes (128 bits) with a chance of
// about 1e-38 a pair, far below that of a memory error.
type memo struct {
	seed, check maphash.Seed
	shards      [memoShards]memoShard
}

const memoShards = 32

type memoShard struct {
	mu        sync.Mutex
	cur, prev map[uint64]memoEntry
	max       int
}

type memoEntry struct {
	check uint64 // the string's second hash
	n     int
}

// memoMaxKey: longer strings are counted every time (rare: a context is
// counted line by line).
const memoMaxKey = 16 << 10

func newMemo() *memo {
	m := &memo{seed: maphash.MakeSeed(), check: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i] = memoShard{cur: map[uint64]memoEntry{}, prev: map[uint64]memoEntry{}, max: 16384 / memoShards}
	}
	return m
}

func (m *memo) shard(s string) (*memoShard, uint64) {
	h := maphash.String(m.seed, s)
	return &m.shards[h%memoShards], h
}

func (m *memo) get(s string) (int, bool) {
	sh, h := m.shard(s)
	check := maphash.String(m.check, s)
	sh.mu.Lock()
	e, ok := sh.cur[h]
	if !ok {
		if e, ok = sh.prev[h]; ok && e.check == check {
			sh.putLocked(h, e)
		}
	}
	sh.mu.Unlock()
	if !ok || e.check != check { // one hash alike, the other not: another string
		return 0, false
	}
	return e.n, true
}

func (m *memo) put(s string, n int) {
	sh, h := m.shard(s)
	e := memoEntry{check: maphash.String(m.check, s), n: n}
	sh.mu.Lock()
	sh.putLocked(h, e)
	sh.mu.Unlock()
}

func (sh *memoShard) putLocked(h uint64, e memoEntry) {
	if _, ok := sh.cur[h]; ok {
		return
	}
	if len(sh.cur) >= sh.max {
		sh.prev, sh.cur = sh.cur, make(map[uint64]memoEntry, len(sh.cur))
	}
	sh.cur[h] = e
}

// Count returns the number of cl100k tokens in s. Invalid UTF-8 counts as
// replacement characters; Count never fails.
func Count(s string) int {
	if s == "" {
		return 0
	}
	c := get()
	if len(s) >= linesMin {
		return c.countLines(s)
	}
	return c.memoCount(s)
}

// memoCount counts s through the whole-string memo.
func (c *counter) memoCount(s string) int {
	if len(s) > memoMaxKey {
		return c.count(s) + dels(s)
	}
	if n, ok := c.whole.get(s); ok {
		return n
	}
	n := c.count(s) + dels(s)
	c.whole.put(s, n)
	return n
}

// linesMin: Count counts strings this long line by line.
const linesMin = 1 << 10

// countLines counts s as the sum of its lines, each with its newline and
// each through the memo. A context is a few memoised sections and
// retrieved turns in a new arrangement on every request: counted whole, it
// missed the memo and was scanned again (a tenth of a rag_augmented
// request); line by line, most of it hits.
//
// Exact: s is cut only after a "\n" followed by an ASCII byte that is
// neither whitespace nor DEL, and every such cut is a boundary between two
// pre-tokenizer pieces, with the pieces on either side the same as in each
// part alone. The piece holding the "\n" can only continue over whitespace
// (`[\r\n]*`, `\s*[\r\n]+`, `\s+`), so it ends at the cut; no piece starts
// at a "\n" and takes a letter after it; the only lookahead, `\s+(?!\S)`,
// is tried after `\s*[\r\n]+`, which takes every run holding a newline;
// and nothing looks behind, so the part after the cut is split as if
// alone. Invalid UTF-8 cannot span a "\n". FuzzCountLines holds it to
// the unsegmented count.
func (c *counter) countLines(s string) int {
	n, from := 0, 0
	for i := 0; ; {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			break
		}
		cut := i + j + 1
		if cut < len(s) && lineStart(s[cut]) {
			n += c.memoCount(s[from:cut])
			from = cut
		}
		i = cut
	}
	return n + c.memoCount(s[from:])
}

// lineStart reports whether a line may be counted apart from the one
// before it when it starts with b (see countLines).
func lineStart(b byte) bool { return b < utf8.RuneSelf && asciiClass[b]&(clS|clDEL) == 0 }

// dels charges one token for every DEL (U+007F). The codec drops DEL where
// tiktoken encodes it, so without this a context full of DELs could exceed
// its budget as tiktoken counts it. Counting one per DEL errs on the safe
// side (tiktoken may merge a DEL with a neighbour byte); the codec's other
// difference (blank lines holding spaces split in two) also over-counts.
// So Count is never below tiktoken's count.
func dels(s string) int { return strings.Count(s, "\x7f") }

// count counts without the whole-string memo.
func (c *counter) count(s string) int {
	s = toValid(s)
	n := 0
	for i := 0; i < len(s); {
		start, end := nextPiece(s, i, codecQuirks)
		if end > start {
			n += c.pieceCount(s[start:end])
		}
		i = end
	}
	return n
}

// pieceCount returns the number of tokens of one pre-tokenizer piece.
func (c *counter) pieceCount(p string) int {
	if len(p) <= shortMaxLen {
		k := shortKey(p)
		if n, ok := c.short.get(k); ok {
			return n
		}
		n := c.countPiece(p)
		c.short.put(k, n)
		return n
	}
	return c.countPiece(p)
}

func (c *counter) countPiece(p string) int {
	if _, ok := c.rank.get(p); ok {
		return 1
	}
	var buf [mergeHeapThreshold + 1]int
	if len(p) > pieceCacheMaxKey {
		return len(pieceParts(c.rank, p, buf[:0])) - 1
	}
	slot := c.pieces.slot(p)
	if e := slot.Load(); e != nil && e.key == p {
		return e.n
	}
	n := len(pieceParts(c.rank, p, buf[:0])) - 1
	slot.Store(&pieceEntry{key: strings.Clone(p), n: n})
	return n
}

// Truncate returns the longest prefix of s, cut at a rune boundary, whose
// token count is at most max. For invalid UTF-8 the prefix is taken from s
// with replacement characters substituted.
func Truncate(s string, max int) string {
	if max <= 0 {
		return ""
	}
	if Count(s) <= max {
		return s
	}
	c := get()
	v := toValid(s)
	// Cut after the first max tokens of v: walk the pieces, and inside the
	// piece that crosses the limit, use its BPE token boundaries.
	cut, n := len(v), 0
	var buf [mergeHeapThreshold + 1]int
	for i := 0; i < len(v); {
		start, end := nextPiece(v, i, codecQuirks)
		p := v[start:end]
		k := 0
		if p != "" {
			k = c.pieceCount(p)
		}
		if n+k > max {
			// Cut inside the crossing piece at a BPE token boundary
			// (decoding the codec's tokens would drop DELs and return
			// a non-prefix).
			cut = start
			if max > n {
				cut += pieceParts(c.rank, p, buf[:0])[max-n]
			}
			break
		}
		n += k
		i = end
	}
	out := v[:cut]
	// A token may end mid-rune: drop a trailing partial rune.
	for len(out) > 0 {
		r, size := utf8.DecodeLastRuneInString(out)
		if r != utf8.RuneError || size != 1 {
			break
		}
		out = out[:len(out)-1]
	}
	// Re-splitting the prefix can change its tokens, and DELs cost one each
	// (see dels); shrink until it fits.
	for len(out) > 0 && c.count(out)+dels(out) > max {
		_, size := utf8.DecodeLastRuneInString(out)
		out = out[:len(out)-size]
	}
	return out
}

// toValid replaces each invalid byte with U+FFFD (as ranging over a string
// does), which is what the codec sees.
func toValid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]rune, 0, len(s))
	for _, r := range s {
		b = append(b, r)
	}
	return string(b)
}
