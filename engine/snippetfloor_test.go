package engine

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/internal/tokens"
	"github.com/contextd/contextd/rag"
	"github.com/contextd/contextd/truncation"
)

// pieceMarks bounds the tokens of a text and of every span of it, for
// both tokenizers the engine counts with: the packer skips a candidate
// whose floor does not fit, so a floor above the real count would leave
// out a turn that fits.
func FuzzPieceFloor(f *testing.F) {
	for _, s := range []string{"Hello, world.", "don't stop 2024-10-05 $1,200!", "a\x7f\x7fb \x7f", "日本語の文。もう一つ", "x'y 'quoted' rock'n'roll",
		"tab\tsep\r\nline\v\fpage", "ab12cd34 -5 +6e7 [1]…", "  lead and trail  ", "\u00a0nbsp\u2003em"} {
		f.Add(s, 0, 100)
	}
	f.Fuzz(func(t *testing.T, s string, from, to int) {
		if len(s) > 4000 {
			t.Skip()
		}
		marks := pieceMarks(s, nil)
		if pieceFloor(s) != len(marks) {
			t.Fatalf("pieceFloor %d, %d marks", pieceFloor(s), len(marks))
		}
		from, to = min(max(from, 0), len(s)), min(max(to, 0), len(s))
		if from > to {
			from, to = to, from
		}
		inside := 0
		for _, m := range marks {
			if m >= from && m < to {
				inside++
			}
		}
		for _, tok := range []tokens.Counter{tokens.CL100K, tokens.O200K()} {
			if n := tok.Count(s); n < len(marks) {
				t.Fatalf("%s: %q has %d tokens, floor %d (marks %v)", tok.Name(), s, n, len(marks), marks)
			}
			if n := tok.Count(s[from:to]); n < inside {
				t.Fatalf("%s: %q has %d tokens, %d marks inside", tok.Name(), s[from:to], n, inside)
			}
		}
	})
}

// snippetFloor is at most the tokens of what ragTurns shows of a cut
// turn, whatever the query: random long turns and passages of them, hit
// and neighbour windows, queries of their words.
func TestSnippetFloorBoundsTheSnippet(t *testing.T) {
	words := strings.Fields("We moved the cedar boards to Berlin, and the roof's budget ($1,200) was approved on 2024-05-06; don't ask why. 日本語の文 ok?")
	r := rand.New(rand.NewPCG(3, 9))
	svc := &Service{}
	var marks []int
	tight := 0 // cases where the floor is the count itself
	for n := range 2000 {
		var b strings.Builder
		for range 1 + r.IntN(14) {
			for w := range 1 + r.IntN(30) {
				if w > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(words[r.IntN(len(words))])
			}
			b.WriteString([]string{". ", "? ", "\n", "! "}[r.IntN(4)])
		}
		content := b.String()
		turn := rag.Turn{Role: "user", Neighbor: r.IntN(2) == 0}
		if r.IntN(3) == 0 && len(content) > 40 { // one passage of a longer turn
			from := r.IntN(len(content) / 2)
			for from > 0 && content[from-1] != ' ' {
				from--
			}
			turn.TurnBytes = len(content) + r.IntN(2)*100
			turn.Passages = []rag.Passage{{From: from, To: len(content), Text: content[from:]}}
		}
		maxBytes := rag.PassageBytes(snippetTokens)
		if turn.Neighbor {
			maxBytes = rag.PassageBytes(neighborSnippetTokens)
		}
		query := words[r.IntN(len(words))] + " " + words[r.IntN(len(words))]
		shown, refs := snippet(content, turn, rag.NewWindowQuery(lex.Terms(query)), maxBytes)
		if len(turn.Passages) == 0 && len(refs) == 0 {
			shown, _ = svc.truncate(context.Background(), content, truncation.Options{Query: query, MaxChars: 200 + r.IntN(2)*1000})
		}
		floor := snippetFloor(content, turn, maxBytes, &marks)
		for _, tok := range []tokens.Counter{tokens.CL100K, tokens.O200K()} {
			got := tok.Count(renderTurn(Turn{Role: turn.Role, Content: shown}))
			if floor > got {
				t.Fatalf("case %d (%s): floor %d over %d tokens of %q", n, tok.Name(), floor, got, shown)
			}
			if floor == got {
				tight++
			}
		}
	}
	if tight == 0 {
		t.Log("no floor was tight (fine, but the bound may be weaker than it needs to be)")
	}
}
