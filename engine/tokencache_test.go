package engine

import (
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
