package rag_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/contextd/contextd/internal/lex"
	"github.com/contextd/contextd/rag"
)

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestHashingEmbedder(t *testing.T) {
	ctx := context.Background()
	h := rag.NewHashingEmbedder(0)
	if h.Dimensions() != 384 {
		t.Fatalf("default dim %d, want 384", h.Dimensions())
	}
	a1, _ := h.EmbedQuery(ctx, "The deployment to staging failed with a timeout")
	a2, _ := rag.NewHashingEmbedder(384).EmbedQuery(ctx, "The deployment to staging failed with a timeout")
	if len(a1) != 384 {
		t.Fatalf("len %d", len(a1))
	}
	for i := range a1 {
		if a1[i] != a2[i] {
			t.Fatalf("not deterministic at %d: %v vs %v", i, a1[i], a2[i])
		}
	}
	if n := norm(a1); math.Abs(n-1) > 1e-5 {
		t.Errorf("norm %v, want 1", n)
	}
	if z, _ := h.EmbedQuery(ctx, "  ... !!! "); norm(z) != 0 {
		t.Errorf("punctuation-only text should embed to zero, norm %v", norm(z))
	}
	docs, err := h.EmbedDocuments(ctx, []string{"one", "two", ""})
	if err != nil || len(docs) != 3 {
		t.Fatalf("EmbedDocuments: %d %v", len(docs), err)
	}

	// Case and punctuation do not matter; word order does not either.
	b, _ := h.EmbedQuery(ctx, "timeout, FAILED: staging deployment the to with a")
	if c := rag.Cosine(a1, b); c < 0.999 {
		t.Errorf("same bag of words cosine %v, want ~1", c)
	}

	for _, tc := range []struct{ q, near, far string }{
		{"deployment failed on staging", "the staging deploy failed again", "I like pancakes with maple syrup"},
		{"postgres connection pool exhausted", "the connection pool of postgres is exhausted", "let's plan the birthday party"},
		{"configuring kubernetes ingress", "how do I configure an ingress in Kubernetes?", "the cat sat on the mat"},
		{"Grüße aus München", "viele Grüße aus München", "good morning everyone"},
		{"東京の天気", "東京の天気は晴れです", "the weather in Paris"},
	} {
		q, _ := h.EmbedQuery(ctx, tc.q)
		n, _ := h.EmbedQuery(ctx, tc.near)
		f, _ := h.EmbedQuery(ctx, tc.far)
		if cn, cf := rag.Cosine(q, n), rag.Cosine(q, f); cn <= cf+0.2 {
			t.Errorf("%q: similar %v not clearly closer than unrelated %v", tc.q, cn, cf)
		}
	}
	// Word fragments: an inflected form is closer than an unrelated word.
	q, _ := h.EmbedQuery(ctx, "deployments")
	n, _ := h.EmbedQuery(ctx, "deploying")
	f, _ := h.EmbedQuery(ctx, "breakfast")
	if rag.Cosine(q, n) <= rag.Cosine(q, f) {
		t.Errorf("n-grams: deployments~deploying %v <= deployments~breakfast %v", rag.Cosine(q, n), rag.Cosine(q, f))
	}
}

func TestSparseEncoder(t *testing.T) {
	enc := rag.NewSparseEncoder()
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"The deployments are running", []string{"deployment", "run"}},
		{"Queries configured; configuring CONFIGURE", []string{"query", "configur", "configur", "configur"}},
		{"it is what it is", nil},
		{"Indexed indexes index", []string{"index", "index", "index"}},
		{"class glass bus", []string{"class", "glass", "bus"}},
		{"Grüße 東京の天気", []string{"grüße", "東京", "京の", "の天", "天気"}},
		{"I'm OK, v2 42", []string{"v2", "42"}},
	} {
		got := lex.Terms(tc.in)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("lex.Terms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}

	doc := enc.EncodeDocument("error error error timeout in the deploy")
	checkSorted(t, doc)
	if len(doc.Indices) != 3 {
		t.Fatalf("doc terms %d, want 3 (error, timeout, deploy)", len(doc.Indices))
	}
	w := weights(doc)
	we, wt := w[rag.TermID("error")], w[rag.TermID("timeout")]
	if !(we > wt) || we >= float32(rag.DefaultK1+1) {
		t.Errorf("BM25 tf saturation: w(error,tf=3)=%v w(timeout,tf=1)=%v, want w3 > w1 and w3 < k1+1", we, wt)
	}
	// tf=1 in a 5-term doc: 2.2/(1+1.2*(0.25+0.75*5/24)).
	if want := 2.2 / (1 + 1.2*(0.25+0.75*5.0/24)); math.Abs(float64(wt)-want) > 1e-5 {
		t.Errorf("w(timeout) = %v, want %v", wt, want)
	}
	long := enc.EncodeDocument("timeout " + strings.Repeat("filler words here ", 20))
	if lw := weights(long)[rag.TermID("timeout")]; lw >= wt {
		t.Errorf("longer document should weigh a tf=1 term less: %v >= %v", lw, wt)
	}
	// A passage is measured against a typical passage: the same terms
	// weigh more as a passage than as a turn.
	text := "timeout " + strings.Repeat("filler words here ", 20)
	pw, lw := weights(enc.EncodePassage(text))[rag.TermID("timeout")], weights(long)[rag.TermID("timeout")]
	if pw <= lw || pw >= float32(rag.DefaultK1+1) {
		t.Errorf("w(timeout) in a passage = %v, want more than as a turn (%v), under k1+1", pw, lw)
	}

	q := enc.EncodeQuery("Timeout timeouts? the deploy")
	checkSorted(t, q)
	qw := weights(q)
	for _, term := range []string{"timeout", "deploy"} {
		if qw[rag.TermID(term)] != 1 {
			t.Errorf("query weight of %q %v, want 1", term, qw[rag.TermID(term)])
		}
	}
	// Another word of a term's family weighs half ("deployment" for
	// "deploy"); nothing else is in the query.
	if w := qw[rag.TermID("deployment")]; w != 0.5 {
		t.Errorf("query weight of the variant deployment %v, want 0.5", w)
	}
	for id, w := range qw {
		if w != 1 && w != 0.5 {
			t.Errorf("query weight %v for term %d, want 1 or 0.5", w, id)
		}
	}
	if n := len(qw); n != 2+len(lex.Variants("timeout"))+len(lex.Variants("deploy")) {
		t.Errorf("query terms %d, want the 2 terms and their variants", n)
	}
	if e := enc.EncodeQuery("the and of"); len(e.Indices) != 0 {
		t.Errorf("stopword query gave %d terms", len(e.Indices))
	}
	// Words about the conversation or the request are left out of a query
	// (not of a document), unless nothing else is left.
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"Can you summarize what we discussed about the Postgres migration across our conversations?", []string{"postgr", "migration"}},
		{"List the items I mentioned earlier", []string{"list", "item", "mention", "earlier"}},
		{"summarize my walk", []string{"walk"}},
		{"the summary of the invoice", []string{"invoic"}},
		{"whats the vet's number", []string{"vet", "number", "#phone", "#code"}}, // "whats" stems to a stopword; the kinds asked
	} {
		want := make([]uint32, 0, len(tc.want))
		for _, w := range tc.want {
			want = append(want, rag.TermID(w))
		}
		slices.Sort(want)
		var got []uint32 // the words themselves, not their families
		for id, w := range weights(enc.EncodeQuery(tc.query)) {
			if w == 1 {
				got = append(got, id)
			}
		}
		if slices.Sort(got); !slices.Equal(got, want) {
			t.Errorf("EncodeQuery(%q) terms %v, want %v (%q)", tc.query, got, want, tc.want)
		}
	}
	// The halves of contractions are no words of a query ("re" would meet
	// every "we're"); a word's written short forms weigh half ("ref" for
	// "reference").
	qw = weights(enc.EncodeQuery("the booking reference for the place we're staying"))
	if _, ok := qw[rag.TermID("re")]; ok {
		t.Error(`query keeps "re" of "we're"`)
	}
	if w := qw[rag.TermID("ref")]; w != 0.5 {
		t.Errorf(`query weight of "ref" for "reference" %v, want 0.5`, w)
	}
	if d := enc.EncodeDocument("we discussed the summary"); len(d.Indices) != 2 {
		t.Errorf("a document keeps discuss and summary: %d terms", len(d.Indices))
	}
	var nilEnc *rag.SparseEncoder
	if got := nilEnc.EncodeDocument("error error error timeout in the deploy"); !equalSparse(got, doc) {
		t.Error("nil encoder differs from default encoder")
	}
}

func weights(s rag.SparseVector) map[uint32]float32 {
	m := map[uint32]float32{}
	for i, id := range s.Indices {
		m[id] = s.Values[i]
	}
	return m
}

func equalSparse(a, b rag.SparseVector) bool {
	if len(a.Indices) != len(b.Indices) {
		return false
	}
	for i := range a.Indices {
		if a.Indices[i] != b.Indices[i] || a.Values[i] != b.Values[i] {
			return false
		}
	}
	return true
}

func checkSorted(t *testing.T, s rag.SparseVector) {
	t.Helper()
	if len(s.Indices) != len(s.Values) {
		t.Fatalf("indices %d values %d", len(s.Indices), len(s.Values))
	}
	for i := 1; i < len(s.Indices); i++ {
		if s.Indices[i] <= s.Indices[i-1] {
			t.Fatalf("indices not sorted unique: %v", s.Indices)
		}
	}
}

func TestTruncateQuery(t *testing.T) {
	short := "hello"
	if rag.TruncateQuery(short) != short {
		t.Error("short query changed")
	}
	long := strings.Repeat("é", rag.MaxQueryBytes) // 2 bytes each
	got := rag.TruncateQuery(long + "x")
	if len(got) > rag.MaxQueryBytes || len(got) < rag.MaxQueryBytes-3 || !strings.HasPrefix(long, got) {
		t.Errorf("truncated to %d bytes", len(got))
	}
	odd := "x" + long // cut falls inside a rune
	got = rag.TruncateQuery(odd)
	if len(got) != rag.MaxQueryBytes-1 || !strings.HasPrefix(odd, got) {
		t.Errorf("mid-rune cut: %d bytes", len(got))
	}
}

func TestSentenceScorer(t *testing.T) {
	s := rag.SentenceScorer{Embedder: rag.NewHashingEmbedder(256)}
	scores, err := s.Score(context.Background(), "database migration failed",
		[]string{"We had lunch at noon.", "The database migration failed at step 3.", ""})
	if err != nil || len(scores) != 3 {
		t.Fatalf("%v %v", scores, err)
	}
	if !(scores[1] > scores[0]) || scores[2] != 0 {
		t.Errorf("scores %v: want relevant sentence highest and empty 0", scores)
	}
	bad := rag.SentenceScorer{Embedder: failingEmbedder{}}
	if _, err := bad.Score(context.Background(), "q", []string{"a"}); !errors.Is(err, rag.ErrEmbedder) {
		t.Errorf("failing embedder: %v", err)
	}
}

type failingEmbedder struct{}

func (failingEmbedder) EmbedDocuments(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("connection refused")
}
func (failingEmbedder) EmbedQuery(context.Context, string) ([]float32, error) {
	return nil, errors.New("connection refused")
}
