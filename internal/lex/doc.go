// Package lex owns what a word is: the tokenizers, the stopword lists and
// the sentence splitting that lexical retrieval (rag: BM25 terms, the
// hashing embedder, passage windows), ranking (engine), fact drawing and
// the extractive summariser (internal/prose, derive/...) and the
// evaluation read text with.
//
// One package, not one splitter: the readers want different things, and
// some of what they produce is persisted, so each difference is a named
// function here rather than a flag somewhere else:
//
//   - Runs: lowercased runs of letters, digits and combining marks; Han,
//     Hiragana and Katakana as character bigrams; ', - and _ split words.
//     What lexical retrieval matches on. Terms are Runs without the
//     TermStopwords and single ASCII letters, lightly stemmed (Stem): the
//     BM25 terms, whose hashes the embedded index stores, and the hashing
//     embedder's words (its vectors are stored too). Changing either means
//     rebuilding every index.
//   - Words: lowercased runs that start with a letter or digit and go on
//     through ', - and _ ("don't", "e-mail" stay whole); no bigrams, no
//     stemming. What prose is read with (facts, the extractive summary):
//     its Keywords drop a long list of stopwords and small talk, and
//     contractions in it.
//   - Fields: lowercased runs of ASCII letters and digits and any
//     non-ASCII rune (so "don’t" with a curly apostrophe is one field,
//     "don't" two). What ranking scores coverage with (QueryTerms,
//     Coverage): a prefix match on fields, no stemming, the short
//     RankStopwords list.
//     ASCIIRuns are the evaluation protocol's answer tokens (runs of
//     a-z0-9 only) for containment, with IsContainmentStopword; the rank
//     stopwords are those and the words of asking.
//   - Sentences: prose sentences (., !, ?, … with closing quotes, then
//     space; line breaks). SentenceBreaks: the byte offsets passage
//     windows cut at, which also know the CJK terminators.
//   - Clip cuts text to a byte cap at a sentence, clause or word end
//     (internal/tokens.Clip does the same to a token cap).
//
// What stays outside: the evaluation's own sentence splits (a protocol's
// definitions, in cmd/contextd/internal/eval) and the entity and
// contraction rules of internal/prose, which read prose rather than say
// what a word is.
package lex
