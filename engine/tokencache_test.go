package engine

import (
	"strings"
	"testing"

	"github.com/contextd/contextd/internal/tokens"
)

// Two snippets of one long turn can have the same length; each must be
// counted as itself, not take the other's cached count.
func TestTokenCacheTellsSnippetsApart(t *testing.T) {
	c := newTokenCache(100)
	a := Turn{Role: "assistant", Content: "one two three four five six"} // 27 bytes
	b := Turn{Role: "assistant", Content: "sevenandeightandnineandten"}  // 26 bytes
	b.Content += "x"
	if len(a.Content) != len(b.Content) {
		t.Fatalf("test texts differ in length: %d, %d", len(a.Content), len(b.Content))
	}
	key := func(from int) turnKey {
		return turnKey{tenant: "t", chat: "c", seq: 7, n: len(a.Content), passages: []PassageRef{{From: from, To: from + 27, Len: 900}}}
	}
	tok := tokens.CL100K
	if got, want := c.cost(tok, key(0), a), tok.Count(renderTurn(a)); got != want {
		t.Fatalf("first snippet: %d tokens, want %d", got, want)
	}
	if got, want := c.cost(tok, key(100), b), tok.Count(renderTurn(b)); got != want {
		t.Errorf("second snippet of the same turn and length: %d tokens, want %d (the first's count was reused)", got, want)
	}
	// The same key again is a hit: the text passed is not counted.
	if got, want := c.cost(tok, key(0), Turn{Content: "ignored"}), tok.Count(renderTurn(a)); got != want {
		t.Errorf("cached count %d, want %d", got, want)
	}
}

// A set keeps its two most recently used counts: a hit makes an entry the
// newest, and a third key evicts the one used least recently.
func TestTokenCacheKeepsASetsTwoNewest(t *testing.T) {
	c := newTokenCache(4) // two sets of two ways; keys 4, 8 and 12 share set 0, key 2 is in the other
	c.putAt(4&c.mask, 4, 40)
	c.putAt(8&c.mask, 8, 80)
	for _, k := range []uint64{8, 4} { // 4 read last: the newest
		if _, ok := c.getAt(k&c.mask, k); !ok {
			t.Fatalf("key %d missing from a set holding two", k)
		}
	}
	c.putAt(12&c.mask, 12, 120)
	for _, e := range []struct {
		k    uint64
		want int32
	}{{4, 40}, {12, 120}} {
		if n, ok := c.getAt(e.k&c.mask, e.k); !ok || n != e.want {
			t.Errorf("key %d: %d, %v; want %d", e.k, n, ok, e.want)
		}
	}
	if _, ok := c.getAt(8&c.mask, 8); ok {
		t.Error("key 8, the least recently used, was kept over a newer one")
	}
	c.putAt(2&c.mask, 2, 20) // the other set (its first way is slot 2)
	for _, k := range []uint64{4, 12, 2} {
		if _, ok := c.getAt(k&c.mask, k); !ok {
			t.Errorf("key %d missing after a put in the other set", k)
		}
	}
}

// A chat's consecutive whole turns sit in adjacent sets, so a request
// counting a run of turns reads adjacent memory; a snippet's set is drawn
// from its whole identity, and another chat's run starts elsewhere.
func TestTokenCacheLaysRunsOfTurnsSideBySide(t *testing.T) {
	c := newTokenCache(1 << 10)
	key := func(chat string, seq int64, ps []PassageRef) turnKey {
		return turnKey{tok: "cl100k", tenant: "t", chat: chat, seq: seq, n: 40, passages: ps}
	}
	s1, k1 := c.hash(key("a", 7, nil))
	s2, k2 := c.hash(key("a", 8, nil))
	if s2 != (s1+2)&c.mask || k1 == k2 {
		t.Errorf("seqs 7 and 8: sets %d and %d, keys equal %v; want adjacent sets, distinct keys", s1, s2, k1 == k2)
	}
	if s, _ := c.hash(key("b", 8, nil)); s == s2 {
		t.Errorf("chat b's seq 8 in chat a's set %d", s)
	}
	sp, kp := c.hash(key("a", 7, []PassageRef{{From: 0, To: 30, Len: 900}}))
	if kp == k1 || sp != kp&c.mask {
		t.Errorf("a snippet of seq 7: set %d key %d; want its own key, its set from its key", sp, kp)
	}
	// Counts still come back as counted, whatever set they went in.
	tok := tokens.CL100K
	for seq := int64(1); seq <= 40; seq++ {
		tu := Turn{Role: "user", Content: strings.Repeat("word ", int(seq))}
		if got, want := c.cost(tok, turnKey{tenant: "t", chat: "a", seq: seq, n: len(tu.Content)}, tu), tok.Count(renderTurn(tu)); got != want {
			t.Fatalf("seq %d: %d tokens, want %d", seq, got, want)
		}
	}
	for seq := int64(1); seq <= 40; seq++ {
		tu := Turn{Role: "user", Content: strings.Repeat("word ", int(seq))}
		if got, want := c.cost(tok, turnKey{tenant: "t", chat: "a", seq: seq, n: len(tu.Content)}, Turn{Content: "ignored"}), tok.Count(renderTurn(tu)); got != want {
			t.Errorf("seq %d cached: %d tokens, want %d", seq, got, want)
		}
	}
}
