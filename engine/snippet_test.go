package engine

import (
	"strings"
	"testing"

	"github.com/contextd/contextd/rag"
)

// A long hit is cut to its window best matching the query, with elision
// marks where its turn goes on and refs giving the window's place in the
// turn; a short turn is shown whole.
func TestSnippet(t *testing.T) {
	filler := strings.Repeat("Nothing of note was said about the weather that day. ", 6)
	target := "The shed gets cedar boards and a green roof."
	passage := filler + target + " " + filler
	q := rag.NewWindowQuery(rag.Terms("what boards for the shed"))
	cases := []struct {
		name     string
		content  string
		turn     rag.Turn
		wantCut  bool
		from, to int // bounds the refs must lie in
		head     bool
		tail     bool
	}{
		{"short turn whole", "Cedar boards for the shed.", rag.Turn{}, false, 0, 0, false, false},
		{"long turn cut", passage, rag.Turn{}, true, 0, len(passage), true, true},
		{"passage cut inside its turn", "[…]\n" + passage + "\n[…]",
			rag.Turn{TurnBytes: 5000, Passages: []rag.Passage{{From: 1000, To: 1000 + len(passage), Text: passage}}}, true, 1000, 1000 + len(passage), true, true},
	}
	for _, c := range cases {
		got, refs := snippet(c.content, c.turn, q, 128)
		if !c.wantCut {
			if got != c.content || refs != nil {
				t.Errorf("%s: got %q %v, want it whole", c.name, got, refs)
			}
			continue
		}
		if len(refs) != 1 || refs[0].From < c.from || refs[0].To > c.to || refs[0].To-refs[0].From > 128 {
			t.Fatalf("%s: refs %v, want one window of <= 128 bytes in [%d, %d)", c.name, refs, c.from, c.to)
		}
		if !strings.Contains(got, target) {
			t.Errorf("%s: %q lacks the matching sentence", c.name, got)
		}
		if strings.HasPrefix(got, rag.Elision) != c.head || strings.HasSuffix(got, rag.Elision) != c.tail {
			t.Errorf("%s: elision marks wrong in %q", c.name, got)
		}
	}
}
