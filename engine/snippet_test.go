package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/rag"
)

// A long hit is cut to its window best matching the query, with elision
// marks where its turn goes on and refs giving the window's place in the
// turn; a short turn is shown whole.
func TestSnippet(t *testing.T) {
	filler := strings.Repeat("Nothing of note was said about the weather that day. ", 6)
	target := "The shed gets cedar boards and a green roof."
	passage := filler + target + " " + filler
	q := rag.NewWindowQuery(lex.Terms("what boards for the shed"))
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

// Through Context: the best rag_k hits are shown as retrieved, the hits
// beyond them by a window of at most snippetTokens, and a neighbour by a
// shorter one of at most neighborSnippetTokens. (The hits are of another
// chat: this chat's unsummarised turns are all shown verbatim.)
func TestRAGWindowsByPlace(t *testing.T) {
	s := newTestService(t)
	appendN(t, s, "old", 1, 20, 1) // the hits' turns must be live
	appendN(t, s, "c", 1, 40, 1)
	filler := strings.Repeat("Nothing of note was said about the weather that day. ", 12)
	long := filler + "The shed gets cedar boards and a green roof. " + filler
	k := DefaultPolicy().RAGK
	var hits []rag.Turn
	for i := range k + 2 { // k whole, two cut
		hits = append(hits, rag.Turn{ChatID: "old", Seq: int64(2*i + 2), Role: "assistant", Content: long, Score: 0.9 - 0.01*float32(i)})
	}
	hits = append(hits, rag.Turn{ChatID: "old", Seq: 1, Role: "user", Content: long, Score: 0.9, Neighbor: true})
	s.vec.retriever = &fakeRetriever{turns: hits}
	budget := 8000
	res, err := s.Context(context.Background(), "default", ContextInput{ChatID: "c", Query: "what boards for the shed", Strategy: string(StrategyRAG), BudgetTokens: &budget})
	if err != nil {
		t.Fatal(err)
	}
	var whole, cut, neighbour int
	for _, r := range res.Sections.RAG {
		switch {
		case r.Neighbor:
			if len(r.Passages) != 1 || r.Passages[0].To-r.Passages[0].From > rag.PassageBytes(neighborSnippetTokens) {
				t.Errorf("neighbour %d: passages %v, want one window of <= %d bytes", r.Seq, r.Passages, rag.PassageBytes(neighborSnippetTokens))
			}
			neighbour++
		case len(r.Passages) == 0:
			whole++
		default:
			if w := r.Passages[0].To - r.Passages[0].From; w > rag.PassageBytes(snippetTokens) || w <= rag.PassageBytes(neighborSnippetTokens) {
				t.Errorf("hit %d: window of %d bytes, want (%d, %d]", r.Seq, w, rag.PassageBytes(neighborSnippetTokens), rag.PassageBytes(snippetTokens))
			}
			cut++
		}
		if len(r.Passages) == 1 && !strings.Contains(r.Content, "cedar boards") { // (whole turns are truncated)
			t.Errorf("seq %d: %q lacks the matching sentence", r.Seq, r.Content)
		}
	}
	if whole != k || cut != 2 || neighbour != 1 {
		t.Errorf("whole %d, cut %d, neighbours %d: want %d, 2, 1", whole, cut, neighbour, k)
	}
}

// A neighbour is paired with its hit when the two make one exchange: the
// user turn before an assistant hit, the assistant turn after a user hit
// (in the same chat), the options a choice by place chose among; the
// packer counts it above other neighbours.
func TestMarkPairs(t *testing.T) {
	rs := []RAGTurn{
		{Seq: 5, Role: "assistant"},
		{Seq: 4, Role: "user", Neighbor: true},       // the question before the answer
		{Seq: 6, Role: "user", Neighbor: true},       // the next question
		{Seq: 10, Role: "user"},                      //
		{Seq: 11, Role: "assistant", Neighbor: true}, // the answer after the question
		{Seq: 9, Role: "assistant", Neighbor: true},  // the answer before it
		{ChatID: "o", Seq: 4, Role: "user", Neighbor: true},
		{Seq: 20, Role: "user", Neighbor: true, chosen: true}, // the options a hit chose among by place
	}
	markPairs(rs)
	want := []bool{false, true, false, false, true, false, false, true}
	for i, r := range rs {
		if r.pair != want[i] {
			t.Errorf("%s %d (chat %q): pair %v, want %v", r.Role, r.Seq, r.ChatID, r.pair, want[i])
		}
	}
	p := &packer{in: AssemblyInput{RAG: []RAGTurn{{Score: 1, Tokens: 20}, rs[1], rs[2]}}, rag: ragPicks{cost: make([]int, 3)}}
	p.in.RAG[1].Score, p.in.RAG[1].Tokens = 1, 20
	p.in.RAG[2].Score, p.in.RAG[2].Tokens = 1, 20
	c := p.ragCandidates()
	if !(c[0].value > c[1].value && c[1].value > c[2].value) {
		t.Errorf("values hit %.3f, paired %.3f, other %.3f: want decreasing", c[0].value, c[1].value, c[2].value)
	}
}

// A turn cut to whole sentences keeps the text's own line breaks where
// the opening and the best run touch: a code block cut after its fixture
// must not run two lines of code into one ("return x() def test_…").
func TestCutSentencesKeepsLineBreaks(t *testing.T) {
	code := "```python\nimport fakeredis\n\n@pytest.fixture\ndef r() -> fakeredis.FakeRedis:\n    return fakeredis.FakeRedis()\n\ndef test_claim_is_idempotent(r: fakeredis.FakeRedis) -> None:\n" +
		strings.Repeat("    assert claim_notification(r, item) is True\n", 40) + "```"
	for _, q := range []string{"", "fixture fakeredis", "claim notification"} {
		got := cutSentences(code, q, 700)
		if strings.Contains(got, "FakeRedis() def") || strings.Contains(got, ") def ") {
			t.Errorf("query %q: lines run together:\n%s", q, got)
		}
		if !strings.HasSuffix(got, rag.Elision) {
			t.Errorf("query %q: a cut turn ends with an elision mark:\n%s", q, got)
		}
		for _, line := range strings.Split(got, "\n") {
			if line != rag.Elision && !strings.Contains(code, line) {
				t.Errorf("query %q: line %q is not a line of the turn", q, line)
			}
		}
	}
}
