package rag

import (
	"slices"
	"strings"
)

// SparseEncoder turns text into lexical term vectors for the sparse side of
// hybrid search. Tokens are lowercase letter/digit runs (CJK as character
// bigrams), minus a small English stopword list, lightly stemmed (plural,
// -ing, -ed); a term's id is the FNV-1a 32-bit hash of the stemmed token.
//
// Document weights are BM25's term-frequency saturation
//
//	tf*(k1+1) / (tf + k1*(1 - b + b*len/avglen))
//
// with len the document's token count after stopwords and avglen a fixed
// constant (AvgLen, default 24 — a typical chat turn; a fixed value keeps a
// point's weights independent of the rest of the index, so they can be
// stored once). Query weights are 1 per unique term, the words about the
// conversation or the request left out (queryStopwords). IDF is not in either
// weight: the index applies it at query time (Qdrant's sparse vectors with
// the IDF modifier; index/embedded does the same).
//
// The zero value and a nil *SparseEncoder use the defaults.
type SparseEncoder struct {
	K1, B, AvgLen float64
}

// Default BM25 parameters.
const (
	DefaultK1     = 1.2
	DefaultB      = 0.75
	DefaultAvgLen = 24
)

// NewSparseEncoder returns an encoder with the default parameters.
func NewSparseEncoder() *SparseEncoder {
	return &SparseEncoder{K1: DefaultK1, B: DefaultB, AvgLen: DefaultAvgLen}
}

func (s *SparseEncoder) params() (k1, b, avg float64) {
	k1, b, avg = DefaultK1, DefaultB, DefaultAvgLen
	if s == nil {
		return
	}
	if s.K1 > 0 {
		k1 = s.K1
	}
	if s.B > 0 {
		b = s.B
	}
	if s.AvgLen > 0 {
		avg = s.AvgLen
	}
	return
}

// Terms returns the stemmed, stopword-free tokens of text, in order.
func Terms(text string) []string {
	ws := words(text)
	out := ws[:0]
	for _, w := range ws {
		if stopwords[w] || (len(w) == 1 && w[0] >= 'a' && w[0] <= 'z') {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// TermID is the sparse index of a (stemmed) term.
func TermID(term string) uint32 { return fnv1a32(term) }

// EncodeDocument returns text's BM25-saturated term weights.
func (s *SparseEncoder) EncodeDocument(text string) SparseVector {
	terms := Terms(text)
	if len(terms) == 0 {
		return SparseVector{}
	}
	k1, b, avg := s.params()
	tf := counts(terms)
	norm := k1 * (1 - b + b*float64(len(terms))/avg)
	return build(tf, func(n int) float32 {
		f := float64(n)
		return float32(f * (k1 + 1) / (f + norm))
	})
}

// EncodeQuery returns weight 1 for each unique term of text, leaving out
// the words that point at the conversation or phrase the request rather
// than name its subject (queryStopwords), unless nothing else is left.
func (s *SparseEncoder) EncodeQuery(text string) SparseVector {
	terms := Terms(text)
	content := make([]string, 0, len(terms))
	for _, t := range terms {
		if !queryStopwords[t] {
			content = append(content, t)
		}
	}
	if len(content) > 0 {
		terms = content
	}
	if len(terms) == 0 {
		return SparseVector{}
	}
	return build(counts(terms), func(int) float32 { return 1 })
}

// queryStopwords (stemmed) are the words a question to a conversation
// memory uses about the conversation itself ("what did we discuss across
// our conversations", "as I mentioned earlier", "summarize") or to phrase
// the request ("list", "describe", "explain", "please"). They carry nothing
// about the turns wanted, and the rarer they are in a chat the more IDF
// weight they get, so they pull in whatever turn happens to say "summary"
// or "items". Words that are often content too ("walk", "remind", "order")
// stay. Queries only: documents keep them, so no reindex.
var queryStopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`conversation chat discuss discussed discussion mention mentioned talk talked
		brought bring earlier previously recall remember summarize summary throughout across aspects
		items list describe explain tell please`) {
		m[stem(w)] = true
	}
	return m
}()

// counts maps term ids to counts (hash collisions merge, as they would in
// any hashed vocabulary).
func counts(terms []string) map[uint32]int {
	m := make(map[uint32]int, len(terms))
	for _, t := range terms {
		m[TermID(t)]++
	}
	return m
}

func build(tf map[uint32]int, weight func(int) float32) SparseVector {
	sv := SparseVector{Indices: make([]uint32, 0, len(tf)), Values: make([]float32, len(tf))}
	for id := range tf {
		sv.Indices = append(sv.Indices, id)
	}
	slices.Sort(sv.Indices)
	for i, id := range sv.Indices {
		sv.Values[i] = weight(tf[id])
	}
	return sv
}

// stem strips common English inflections; deliberately light (no Porter
// rules) so it is predictable: "deployments"->"deployment",
// "queries"->"query", "running"->"run", "configured"->"configur",
// "configuring"->"configur". Words of other languages are mostly left alone
// by the length guards; that is fine for matching because queries and
// documents are stemmed alike.
func stem(w string) string {
	if !isASCIILower(w) {
		return w
	}
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		w = w[:len(w)-3] + "y"
	case len(w) > 4 && strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	switch {
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		w = undouble(w[:len(w)-3])
	case len(w) > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		w = undouble(w[:len(w)-2])
	}
	// "configure"/"configured"/"configuring" all meet at "configur".
	if len(w) > 4 && strings.HasSuffix(w, "e") && !strings.HasSuffix(w, "ee") {
		w = w[:len(w)-1]
	}
	return w
}

// undouble drops a doubled final consonant left by -ing/-ed ("runn" -> "run").
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeioulsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

func isASCIILower(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
		before being below between both but by can could did do does doing down during each few for from further
		had has have having he her here hers herself him himself his how i if in into is it its itself just me
		more most my myself no nor not now of off on once only or other our ours ourselves out over own same she
		should so some such than that the their theirs them themselves then there these they this those through
		to too under until up very was we were what when where which while who whom why will with would you your
		yours yourself yourselves s t don im ive id ill youre thats its let lets ok okay also`) {
		m[w] = true
	}
	return m
}()
