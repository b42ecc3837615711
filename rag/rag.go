// Package rag is contextd's retrieval core: the Embedder and Index
// interfaces, sparse (lexical) term vectors, the Retriever that serves
// /v1/context and /v1/search, and each kind's points (TurnPoints,
// EpisodePoint, FactPoint) and filters. The job that drains the store's
// unindexed backlogs into an Index is jobs/index. Index backends live in
// index/embedded and index/qdrant; both pass index/indextest.
package rag

import (
	"context"
	"errors"
	"time"
)

// DefaultEmbedBatch is how many texts go in one embedder call: the
// indexer's batch, and the cap of a remote embedder's requests (so that
// one indexer batch is one call).
const DefaultEmbedBatch = 64

// Embedder turns texts into dense vectors. It has the shape of langchaingo's
// embeddings.Embedder, so langchaingo embedders satisfy it as they are.
type Embedder interface {
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// SparseVector is a lexical term vector: term ids (hashes) and weights.
// Indices are sorted ascending and unique.
type SparseVector struct {
	Indices []uint32
	Values  []float32
}

// Point is one indexed item: a turn (or one passage of a long turn), an
// episode or a fact. It carries its scope, the payload shown in hits (and in
// the Qdrant dashboard), and its dense and sparse vectors.
type Point struct {
	Tenant    string
	UserID    string
	ChatID    string
	Agent     string
	Seq       int64
	Role      string
	Content   string
	CreatedAt time.Time
	Dense     []float32
	Sparse    SparseVector

	// Kind is memory.KindTurn ("" means turn), memory.KindEpisode or
	// memory.KindFact.
	Kind string

	// A turn's passage: a long turn is indexed as several points, passage
	// 0, 1, ... (identity: tenant, chat, turn, seq, passage), each with the
	// passage as Content and its byte offsets [PassageFrom, PassageTo) into
	// the turn's content, whose length is TurnBytes. A short turn is one
	// point: passage 0, the whole content (TurnBytes 0 or len(Content)).
	Passage     int
	PassageFrom int
	PassageTo   int
	TurnBytes   int

	// An episode point's Seq is its FromSeq (identity: tenant, chat, kind,
	// seq), its Content is the episode's short summary and its CreatedAt
	// is EndedAt.
	EpisodeID string
	FromSeq   int64 // episodes: first seq owned
	ToSeq     int64 // episodes: last seq owned
	StartedAt time.Time
	EndedAt   time.Time

	// A fact point (identity: tenant, chat, kind, fact id) has the fact as
	// Content, its first source seq as Seq, its source seqs in Seqs and
	// CreatedAt = ValidAt (the time of its newest source turn).
	// Superseded marks a fact a newer one updates: it stays findable, and
	// the Retriever ranks it below current facts.
	FactID     string
	Seqs       []int64
	ValidAt    time.Time
	Superseded bool
}

// IsWhole reports whether a turn point holds the whole turn (not one
// passage of a longer one).
func (p Point) IsWhole() bool {
	return p.PassageFrom == 0 && (p.TurnBytes == 0 || p.PassageTo == p.TurnBytes)
}

// Filter scopes a query, a count or a delete. Tenant is required; every
// other field narrows further when set.
type Filter struct {
	Tenant  string
	UserID  string
	ChatIDs []string
	Agent   string

	// Kinds narrows to memory.KindTurn, memory.KindEpisode and/or
	// memory.KindFact (empty: all kinds). Since/Until (zero: open) keep
	// points whose time lies in [Since, Until] — a turn's CreatedAt, a
	// fact's ValidAt; an episode whose [StartedAt, EndedAt] overlaps the
	// range. FromSeq/ToSeq (0: open) keep points with FromSeq <= seq <=
	// ToSeq (a turn's seq, every passage of it; an episode's or a fact's
	// first seq). All of them are applied inside the index, before top-k.
	Kinds   []string
	Since   time.Time
	Until   time.Time
	FromSeq int64
	ToSeq   int64

	// CitingSeq (0: unset) keeps only the fact points whose Seqs include
	// it (forgetting a turn). ItemIDs (empty: unset) keeps only the
	// episode and fact points with one of these ids.
	CitingSeq int64
	ItemIDs   []string
}

// Query is one hybrid query: dense and sparse candidates (each up to
// Prefetch, default 4*Limit, raised to Limit when less) fused by reciprocal
// rank fusion. A query answered with fewer than Limit hits has returned
// every point of its filter that qualifies (a dense cosine at or above
// ScoreThreshold, or a shared sparse term), so a narrower filter with the
// same vectors finds no other (indextest "UntruncatedIsComplete"; the
// Retriever skips its drills on it).
type Query struct {
	Filter Filter
	Dense  []float32
	Sparse SparseVector
	// Limit is the number of fused hits to return.
	Limit int
	// Prefetch is how many candidates each side contributes (0: 4*Limit;
	// at least Limit).
	Prefetch int
	// ScoreThreshold drops dense candidates whose cosine similarity is
	// below it. Sparse candidates are kept when they share any term.
	ScoreThreshold float32
}

// Candidates is how many candidates each side of q contributes: Prefetch,
// 4*Limit when unset, and never fewer than Limit, so that fewer hits than
// Limit always means no candidate was cut. The one place both indexes
// take it from.
func (q Query) Candidates() int {
	n := q.Prefetch
	if n <= 0 {
		n = 4 * q.Limit
	}
	return max(n, q.Limit)
}

// Hit is one fused result. Score is the RRF score (sum of 1/(k+rank) over
// the sides that ranked the point, k = RRFK); DenseScore is the cosine
// similarity when the dense side ranked it (else 0); SparseScore is the
// lexical side's score when it ranked it (else 0): BM25 in the embedded
// index, the sparse dot product in Qdrant. The fused rank says which
// candidates; the sides' scores say by how much (comparable within one
// query only).
type Hit struct {
	Point       // vectors left empty
	Score       float32
	DenseScore  float32
	SparseScore float32
	// Terms, when not nil, are a turn hit's sparse term ids (its sparse
	// vector's indices, sorted and unique): an index that holds them in
	// memory hands them over, so the retriever need not re-tokenise the
	// content to find near-duplicates. Nil: the retriever derives them
	// from Content. Episodes and facts leave it nil (their indexed text
	// is not their Content).
	Terms []uint32
}

// RRFK is the reciprocal rank fusion constant (Qdrant's default).
const RRFK = 60

// Index stores points and answers hybrid queries. Upsert is idempotent on a
// point's identity: (Tenant, ChatID, Seq, Passage) for a turn, (Tenant,
// ChatID, FromSeq) for an episode, (Tenant, ChatID, FactID) for a fact.
type Index interface {
	Upsert(ctx context.Context, points []Point) error
	Query(ctx context.Context, q Query) ([]Hit, error)
	// Delete removes every point matching f (Tenant required).
	Delete(ctx context.Context, f Filter) error
	Count(ctx context.Context, f Filter) (int, error)
	// Ping checks the index is reachable.
	Ping(ctx context.Context) error
	Close() error
}

// ErrDimensionMismatch: stored vectors have another size than the embedder.
var ErrDimensionMismatch = errors.New("embedding dimension mismatch")
