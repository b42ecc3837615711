package rag

import (
	"slices"

	"github.com/contextd/contextd/internal/lex"
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
// stored once). A passage of a long turn is measured against a typical
// passage instead (PassageAvgLen, EncodePassage), as BM25F measures each
// field against its own average: a passage is cut at about 160 tokens, so
// it holds 2.8 times a turn's terms (41.8 against 15.0 over the held-out
// scenario chats and BEAM 100K, 27,403 passages and 25,340 whole turns),
// and against a turn's average every passage read as verbose: "Frau
// Brandt has a new direct number … it's 030 4471 2305" matched three of
// a question's words and ranked under "my iban for her is DE44 …", which
// matched none. Query weights are 1 per unique term, the words about the
// conversation or the request left out (lex.IsRequestTerm), and half that
// for each other word of a term's family (lex.Variants). IDF is not in either
// weight: the index applies it at query time (Qdrant's sparse vectors with
// the IDF modifier; index/embedded does the same).
//
// The zero value and a nil *SparseEncoder use the defaults.
type SparseEncoder struct {
	K1, B, AvgLen, PassageAvgLen float64
}

// Default BM25 parameters.
const (
	DefaultK1            = 1.2
	DefaultB             = 0.75
	DefaultAvgLen        = 24
	DefaultPassageAvgLen = DefaultAvgLen * 41.8 / 15.0 // ≈ 67: a passage's terms to a turn's
)

// NewSparseEncoder returns an encoder with the default parameters.
func NewSparseEncoder() *SparseEncoder {
	return &SparseEncoder{K1: DefaultK1, B: DefaultB, AvgLen: DefaultAvgLen, PassageAvgLen: DefaultPassageAvgLen}
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

// TermID is the sparse index of a (stemmed) term.
func TermID(term string) uint32 { return fnv1a32(term) }

// EncodeDocument returns text's BM25-saturated term weights. The kinds
// of value text holds (lex.ValueKinds: a phone number, a code, a time …)
// are terms too, each counted once and not in the length: a question
// asking for that kind meets them (EncodeQuery). A fact's text starts
// with its date (FactText), so every dated fact holds a day: rightly, it
// answers "when" (with the date left out, held-out chats showed 3 more
// stale values and missed 2 more).
func (s *SparseEncoder) EncodeDocument(text string) SparseVector {
	_, _, avg := s.params()
	return s.encode(text, avg)
}

// EncodePassage is EncodeDocument for a passage of a longer turn: its
// length measured against a typical passage's (PassageAvgLen).
func (s *SparseEncoder) EncodePassage(text string) SparseVector {
	avg := float64(DefaultPassageAvgLen)
	if s != nil && s.PassageAvgLen > 0 {
		avg = s.PassageAvgLen
	}
	return s.encode(text, avg)
}

func (s *SparseEncoder) encode(text string, avg float64) SparseVector {
	terms := lex.Terms(text)
	if len(terms) == 0 {
		return SparseVector{}
	}
	k1, b, _ := s.params()
	tf := counts(terms)
	for _, k := range lex.ValueKinds(text) {
		tf[TermID(k)] = 1
	}
	norm := k1 * (1 - b + b*float64(len(terms))/avg)
	return build(tf, func(n int) float32 {
		f := float64(n)
		return float32(f * (k1 + 1) / (f + norm))
	})
}

// EncodeQuery returns weight 1 for each unique term of text, leaving out
// the words that point at the conversation or phrase the request rather
// than name its subject (lex.IsRequestTerm), the halves of contractions
// (lex.IsContractionHalf) and words that stem to a stopword ("whats"),
// unless nothing else is left,
// and 1 for each kind of value it asks for (lex.AskedKinds).
func (s *SparseEncoder) EncodeQuery(text string) SparseVector {
	terms := lex.Terms(text)
	content := make([]string, 0, len(terms))
	for _, t := range terms {
		// A word that stems to a stopword is one written without its
		// apostrophe ("whats", "thats", "wheres"): it names nothing, and
		// met every turn asking "whats the address again".
		if !lex.IsRequestTerm(t) && !lex.IsContractionHalf(t) && !lex.IsTermStopword(t) {
			content = append(content, t)
		}
	}
	if len(content) > 0 {
		terms = content
	}
	if len(terms) == 0 {
		return SparseVector{}
	}
	tf := counts(terms)
	for _, k := range lex.AskedKinds(text) {
		tf[TermID(k)] = 1 // the kind of value asked for, as a word
	}
	// kin adds a word of a term's family, not the word: half a term
	// (unless the query says it itself).
	kin := func(id uint32) {
		if tf[id] == 0 {
			tf[id] = -1
		}
	}
	for _, t := range content {
		lex.EachVariant(t, func(base, suffix string) { kin(termID2(base, suffix)) })
		lex.EachAbbreviation(t, func(form string) { kin(TermID(form)) }) // "ref" for "reference"
		lex.EachClipping(t, func(prefix string) { kin(TermID(prefix)) }) // "physio" for "physiotherapist"
	}

	return build(tf, func(n int) float32 {
		if n < 0 {
			return variantWeight
		}
		return 1
	})
}

// variantWeight is a query term's weight for another word of its family
// (lex.Variants): it meets "collecting" for "collection", below the word
// itself.
const variantWeight = 0.5

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
