// Package tokens counts cl100k tokens offline (the BPE tables are compiled
// into the binary; nothing is downloaded at run time).
package tokens

import (
	"sync"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

var (
	once  sync.Once
	codec tokenizer.Codec
)

func get() tokenizer.Codec {
	once.Do(func() {
		c, err := tokenizer.Get(tokenizer.Cl100kBase)
		if err != nil {
			panic("tokens: cl100k codec missing: " + err.Error())
		}
		codec = c
	})
	return codec
}

// memo remembers recent counts. Counting is a pure function and the same
// turns are counted on every /v1/context call of a chat, so a small
// two-generation cache (an LRU approximation without per-hit bookkeeping)
// removes most of the BPE work from the hot path.
type memo struct {
	mu        sync.Mutex
	cur, prev map[string]int
	max       int
}

// memoMaxKey: longer strings are counted every time (rare, and keeping them
// would pin large strings in memory).
const memoMaxKey = 16 << 10

var cache = &memo{cur: map[string]int{}, prev: map[string]int{}, max: 8192}

func (m *memo) get(s string) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n, ok := m.cur[s]; ok {
		return n, true
	}
	if n, ok := m.prev[s]; ok {
		m.put(s, n)
		return n, true
	}
	return 0, false
}

func (m *memo) put(s string, n int) {
	if len(m.cur) >= m.max {
		m.prev, m.cur = m.cur, make(map[string]int, m.max)
	}
	m.cur[s] = n
}

// Count returns the number of cl100k tokens in s. Invalid UTF-8 counts as
// replacement characters; Count never fails.
func Count(s string) int {
	if s == "" {
		return 0
	}
	if len(s) <= memoMaxKey {
		if n, ok := cache.get(s); ok {
			return n
		}
		n := count(s)
		cache.mu.Lock()
		cache.put(s, n)
		cache.mu.Unlock()
		return n
	}
	return count(s)
}

func count(s string) int {
	if !utf8.ValidString(s) {
		s = toValid(s)
	}
	n, err := get().Count(s)
	if err != nil {
		// Only invalid UTF-8 errors, handled above; fall back to an
		// over-estimate so budgets stay safe.
		return len(s)
	}
	return n
}

// Truncate returns the longest prefix of s, cut at a rune boundary, whose
// token count is at most max.
func Truncate(s string, max int) string {
	if max <= 0 {
		return ""
	}
	if Count(s) <= max {
		return s
	}
	ids, _, err := get().Encode(toValid(s))
	if err != nil || len(ids) <= max {
		return s
	}
	out, err := get().Decode(ids[:max])
	if err != nil {
		return ""
	}
	// A token may end mid-rune: drop a trailing partial rune.
	for len(out) > 0 && !utf8.ValidString(out) {
		out = out[:len(out)-1]
	}
	for Count(out) > max && len(out) > 0 {
		_, size := utf8.DecodeLastRuneInString(out)
		out = out[:len(out)-size]
	}
	return out
}

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
